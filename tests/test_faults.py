"""Faults: a KeyboardInterrupt during ``tell`` or ``ask`` leaves the strategy usable, with every
posterior whole (the one before or the new one, never half of one) and nothing it was told
lost; a SCIP worker killed from outside mid-solve costs one search, not the ask; a disk that
cannot take numba's cache files costs compile time, not the call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pandas as pd
import pytest
from test_strategy import fast_strategy, initial, mixed_constrained_domain, mixed_truth

import bofire_bark.optimize as optimize
import bofire_bark.surrogate as surrogate_module
from bofire_bark.optimize.mip import solvers as solvers_module


def _interrupt_on_call(monkeypatch, module, name: str, call: int) -> list:
    """Replace ``module.name`` by a wrapper that raises KeyboardInterrupt at its ``call``-th
    call (from 1) and calls the real function otherwise; returns the call log."""
    real = getattr(module, name)
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def test_interrupted_tell_keeps_the_last_posterior_and_the_data(monkeypatch):
    domain = mixed_constrained_domain()
    data = initial(domain, 12, 0, mixed_truth)
    strategy = fast_strategy(domain, seed=2)
    strategy.tell(data.iloc[:8])
    before = strategy.surrogate.posterior
    _interrupt_on_call(monkeypatch, surrogate_module, "fit_posterior", 1)
    with pytest.raises(KeyboardInterrupt):
        strategy.tell(data.iloc[8:])
    monkeypatch.undo()
    # the model is the last whole one; the experiments told are all kept (BoFire adds them
    # before fitting), so telling them again refits on all of them
    assert strategy.surrogate.posterior is before
    pd.testing.assert_frame_equal(strategy.experiments[data.columns].reset_index(drop=True),
                                  data.reset_index(drop=True), check_dtype=False)
    assert len(strategy.ask(1)) == 1  # the last posterior still answers
    strategy.tell(strategy.experiments, replace=True)
    assert strategy.surrogate.posterior is not before
    assert len(strategy.surrogate.posterior.X) == len(data)


def test_interrupted_ask_adds_no_candidate_and_the_next_ask_works(monkeypatch):
    domain = mixed_constrained_domain()
    strategy = fast_strategy(domain, seed=3)
    strategy.tell(initial(domain, 10, 0, mixed_truth))
    _interrupt_on_call(monkeypatch, optimize, "solve_acquisition", 2)
    with pytest.raises(KeyboardInterrupt):
        strategy.ask(2, add_pending=True)
    monkeypatch.undo()
    assert strategy.candidates is None or len(strategy.candidates) == 0
    out = strategy.ask(2)
    assert len(out) == 2 and len(strategy.last_results) == 2
    assert np.isfinite([r.ucb for r in strategy.last_results]).all()


def _kill_when_solving(pid_of, after: float = 0.5) -> threading.Thread:
    """A thread that SIGKILLs the SCIP worker ``after`` seconds once it holds a job."""

    def run():
        deadline = time.monotonic() + 120.0
        while time.monotonic() < deadline:
            worker = solvers_module._worker
            if worker is not None and worker._jobs >= 1 and worker.alive():
                time.sleep(after)
                pid_of.append(worker.proc.pid)
                os.kill(worker.proc.pid, signal.SIGKILL)
                return
            time.sleep(0.01)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_scip_worker_killed_mid_solve_costs_one_search(tmp_path, monkeypatch, caplog):
    """The worker reads its job and solves (a stand-in that sleeps, so the kill always lands
    mid-solve); SIGKILL from outside: the ask still answers, with the start point and status
    "incumbent", nothing told is lost, and the next ask starts a new worker that solves."""
    domain = mixed_constrained_domain()
    data = initial(domain, 10, 0, mixed_truth)
    strategy = fast_strategy(domain, seed=4, solver="scip", time_limit=5.0)
    strategy.tell(data)
    script = tmp_path / "slow_solver.py"
    script.write_text("import struct, sys, time\n"
                      "n = struct.unpack('<Q', sys.stdin.buffer.read(8))[0]\n"
                      "sys.stdin.buffer.read(n)\ntime.sleep(600)\n")
    solvers_module.shutdown_worker()
    monkeypatch.setattr(solvers_module, "child_command", lambda: [sys.executable, str(script)])
    killed: list[int] = []
    thread = _kill_when_solving(killed)
    try:
        with caplog.at_level("WARNING", logger="bofire_bark"):
            cand = strategy.ask(1)
    finally:
        thread.join(5.0)
        monkeypatch.undo()
    assert killed, "the worker never received a job"
    res = strategy.last_results[0]
    assert res.status == "incumbent" and res.ucb == res.incumbent_ucb
    assert "solver scip failed" in caplog.text and "exit code -9" in caplog.text
    assert len(cand) == 1 and domain.constraints.is_fulfilled(cand, tol=1e-6).all()
    assert len(strategy.experiments) == len(data)
    # the next ask replaces the dead worker
    strategy.ask(1)
    assert strategy.last_results[0].status in ("optimal", "gap")
    assert solvers_module._worker.proc.pid != killed[0]
    solvers_module.shutdown_worker()


PROBE = """
import errno, logging, sys
from numba import njit
from numba.core import caching

def full(self, key, data):
    raise OSError(errno.ENOSPC, "No space left on device")

caching.IndexDataCacheFile.save = full
logging.basicConfig(level=logging.WARNING, stream=sys.stdout)

@njit(cache=True)
def bare(x):
    return x + 1

@njit(cache=True)
def guarded(x):
    return x + 2

try:
    print("bare", bare(41))
except OSError as err:
    print("bare failed:", err)

import bofire_bark.jit as jit

with jit.compiling("the probe", "engine"):
    print("guarded", guarded(40))
"""


def test_a_full_disk_costs_compile_time_not_the_call(tmp_path):
    """numba raises a failed cache write out of a kernel's first call (the control, before the
    guard); within the package's ``compiling`` (every fit and ask) the kernel runs and a
    warning says why the next process compiles again."""
    module = tmp_path / "probe.py"
    module.write_text(textwrap.dedent(PROBE))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "BOFIRE_BARK_NO_REGISTRATION": "1"}
    out = subprocess.run([sys.executable, str(module)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "bare failed: [Errno 28] No space left on device" in out.stdout
    assert "guarded 42" in out.stdout and "could not write its cache" in out.stdout
