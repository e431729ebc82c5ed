"""The first use of numba kernels is announced, with what compiled and how long it took."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
import textwrap

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


NESTED = PROBE + '''

@njit(cache=True)
def outer(x):
    return double(x) + 1


@njit(cache=True)
def elsewhere(x):  # a kernel of the layer this call never uses: never cached
    return x - 1
'''


def test_new_process_with_a_warm_cache_says_nothing(tmp_path):
    """A new process that loads the kernels it calls from numba's cache compiles nothing and
    says nothing, though the layer has kernels it never calls, which have no cache entry."""
    path = tmp_path / "probe.py"
    path.write_text(NESTED)
    code = textwrap.dedent(f"""
        import importlib.util, logging, sys
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        from bofire_bark.jit import compiling

        spec = importlib.util.spec_from_file_location("bofire_bark.probe_jit", {str(path)!r})
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        with compiling("the probe", "probe_jit"):
            assert module.outer(20) == 41
    """)

    def run():
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=600, env={**os.environ, "BOFIRE_BARK_NO_REGISTRATION": "1"})
        assert out.returncode == 0, out.stderr
        return [line for line in out.stderr.splitlines() if line.startswith("BARK:")]

    cold = run()
    assert cold[0].startswith("BARK: the probe compiles numba kernels first"), cold
    assert cold[1].startswith("BARK: the probe compiled 2 numba kernels; it took"), cold
    assert run() == []  # loaded from numba's cache: nothing compiled, nothing said


def test_stale_numba_caches_dropped_when_a_kernel_source_changes(tmp_path, monkeypatch):
    """numba checks a cached kernel against its own file only; a change to any kernel module
    (a callee elsewhere) must drop the package's cached kernels."""
    from bofire_bark import jit

    (tmp_path / "engine" / "__pycache__").mkdir(parents=True)
    (tmp_path / "kinds.py").write_text("CONTINUOUS = 0\n")
    callee = tmp_path / "engine" / "priors.py"
    callee.write_text("def f(): return 1\n")
    (tmp_path / "benchmarks").mkdir()
    study = tmp_path / "benchmarks" / "study.py"
    study.write_text("x = 1\n")
    cached = [tmp_path / "engine" / "__pycache__" / name
              for name in ("sampler.run-1.py311.nbi", "sampler.run-1.py311.1.nbc")]
    monkeypatch.setattr(jit, "PACKAGE", tmp_path)
    monkeypatch.setattr(jit, "MARKER", tmp_path / "__pycache__" / "numba_sources.sha256")

    def cache_present():
        for path in cached:
            path.write_text("compiled")
        jit.drop_stale_caches()
        return [p.exists() for p in cached]

    assert cache_present() == [False, False]  # no marker yet: nothing vouches for the cache
    assert cache_present() == [True, True]    # unchanged sources: the cache stays
    study.write_text("x = 2\n")
    assert cache_present() == [True, True]    # a study is no kernel source
    callee.write_text("def f(): return 2\n")
    assert cache_present() == [False, False]  # the callee changed: every kernel recompiles
    assert cache_present() == [True, True]
