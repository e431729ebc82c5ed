"""The MAX-phase study's bookkeeping: runs resume from their rows and the summary reads them
(random picks only: no model is fitted here)."""

from __future__ import annotations

import pandas as pd
import pytest

from benchmarks import max_phases

pytestmark = pytest.mark.skipif(not max_phases.DEFAULT_DATA.exists(),
                                reason="the MAX data lives in ../shared/data/max")


def test_random_run_resumes_and_summarizes(tmp_path):
    data = max_phases.load()
    assert len(data) == 402 and data.compound.is_unique
    max_phases.run_one(data, "random", 0, 3, tmp_path)
    max_phases.run_one(data, "random", 0, 5, tmp_path)  # resumes at iteration 4
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert list(runs.iteration) == [0] * max_phases.N_INIT + [1, 2, 3, 4, 5]
    assert runs.compound.is_unique  # nothing picked twice
    assert (runs.regret == data.y.max() - runs.best).all()
    assert "| random | 1 |" in max_phases.summary(tmp_path)


def test_a_run_that_holds_the_best_compound_stops(tmp_path):
    data = max_phases.load()
    max_phases.run_one(data, "random", 1, 5, tmp_path)  # seed 1's initial design holds it
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert (runs.iteration == 0).all() and runs.regret.min() == 0
    table = max_phases.summary(tmp_path)
    assert "0.0 (n=1) | 1 of 1 (the others end at iteration -)" in table  # counted at @100


def test_measured_compounds_are_not_allowed():
    data = max_phases.load()
    domain = max_phases.domain_of(data, {data.compound[0]})
    feature = domain.inputs.get_by_key("compound")
    assert feature.allowed[0] is False and sum(feature.allowed) == 401
    assert len(feature.descriptors) == 25
