"""Interrupted calls: a KeyboardInterrupt during ``tell`` or ``ask`` leaves the strategy usable,
with every posterior whole (the one before or the new one, never half of one) and nothing it
was told lost."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_strategy import fast_strategy, initial, mixed_constrained_domain, mixed_truth

import bofire_bark.optimize as optimize
import bofire_bark.surrogate as surrogate_module


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
