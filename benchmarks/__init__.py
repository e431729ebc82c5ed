"""The study lab behind results/: not part of the installed package (the wheel holds
bofire_bark only). Run from the repository root, ``python -m benchmarks ...`` or
``python -m benchmarks.<study> ...``; the tests are in ``benchmarks/tests``."""
