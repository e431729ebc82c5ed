"""The first use of numba kernels is announced, with what compiled and how long it took."""

from __future__ import annotations

import importlib.util
import logging
import sys

from bofire_bark.jit import compiling

PROBE = '''
from numba import njit


@njit(cache=True)
def double(x):
    return 2 * x
'''


def load_probe(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_first_use_is_announced_then_cached(tmp_path, caplog):
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    name = "bofire_bark.probe_jit"
    try:
        probe = load_probe(path, name)
        with caplog.at_level(logging.INFO, logger="bofire_bark"):
            with compiling("the probe", "probe_jit"):
                assert probe.double(21) == 42
            first = [r.getMessage() for r in caplog.records]
            caplog.clear()
            with compiling("the probe", "probe_jit"):
                probe.double(1)
            assert not caplog.records  # compiled already: nothing to say
            # a new process (here: a fresh load of the module) reads numba's cache
            probe = load_probe(path, name)
            with compiling("the probe", "probe_jit"):
                probe.double(2)
            assert not caplog.records
    finally:
        sys.modules.pop(name, None)
    assert first[0].startswith("BARK: the probe compiles numba kernels first")
    assert first[1].startswith("BARK: the probe compiled 1 numba kernels; it took")
