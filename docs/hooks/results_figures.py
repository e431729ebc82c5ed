"""MkDocs hook: serve the figures the benchmarks write under ``results/`` from the site.

The results pages show ``results/**/*.png`` as ``figures/results/...`` without a copy in
``docs/``, so a rerun of a study updates the site. Tables come the same way, through
``pymdownx.snippets`` (``--8<-- "results/.../summary.md"``).
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
FIGURES = (
    "results/bo/regret.png",
    "results/bo/time.png",
    "results/mo/hypervolume.png",
    "results/split_prior/regression.png",
    "results/split_prior/bo_regret.png",
)


def on_files(files, config):
    for rel in FIGURES:
        path = ROOT / rel
        if not path.is_file():
            raise FileNotFoundError(f"{rel} is missing; rerun the study that writes it")
        files.append(File.generated(config, f"figures/{rel}", abs_src_path=str(path)))
    return files
