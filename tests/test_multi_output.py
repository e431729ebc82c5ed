"""BARKStrategy on several outputs: specs, candidates, per-output data, output limits and a BO
loop that beats random search on a known Pareto front."""

from __future__ import annotations

import json
from pathlib import Path

import bofire.data_models.strategies.api as strategy_models
import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
)
from bofire.data_models.objectives.api import (
    MaximizeObjective,
    MinimizeObjective,
    MinimizeSigmoidObjective,
)
from bofire.data_models.strategies.api import RandomStrategy
from pydantic import TypeAdapter, ValidationError

import bofire_bark  # noqa: F401
from bofire_bark.data_models import BARKSettings, BARKStrategy
from bofire_bark.optimize.result import InfeasibleOutputLimitError

SPEC = Path(__file__).parents[1] / "specs" / "pipeline.json"
FAST = BARKSettings(n_trees=10, n_chains=2, n_samples=2, thinning=10, burn_in=100)


def toy_domain(limit: float = 0.7) -> Domain:
    """Two objectives with a known front, an impurity limit and a logged output."""
    return Domain(
        inputs=Inputs(features=[
            ContinuousInput(key="x1", bounds=(0, 1)),
            ContinuousInput(key="x2", bounds=(0, 1)),
            ContinuousInput(key="x3", bounds=(0, 1)),
            CategoricalInput(key="c", categories=["a", "b", "c"]),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="f1", objective=MaximizeObjective()),
            ContinuousOutput(key="f2", objective=MinimizeObjective()),
            ContinuousOutput(key="imp", objective=MinimizeSigmoidObjective(tp=limit,
                                                                         steepness=20)),
            ContinuousOutput(key="log", objective=None),
        ]))


def toy(X: pd.DataFrame) -> pd.DataFrame:
    """Pareto front: x2 = x3 = 0.5 and c = 'a', x1 trading f1 against f2."""
    off = (X["x2"] - 0.5) ** 2 + (X["x3"] - 0.5) ** 2 + 0.3 * (X["c"] != "a")
    out = pd.DataFrame({
        "f1": X["x1"] - off,
        "f2": X["x1"] ** 2 + off,
        "imp": 0.5 * X["x1"] + X["x2"],
        "log": X["x1"] * 10.0,
    }, index=X.index)
    for key in out:
        out[f"valid_{key}"] = 1
    return out


def measured(X: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([X, toy(X)], axis=1)


def start(domain: Domain, n: int, seed: int) -> pd.DataFrame:
    X = strategies.map(RandomStrategy(domain=domain, seed=seed)).ask(n)
    return measured(X[domain.inputs.get_keys()])


def test_pipeline_spec_round_trips_and_asks():
    data = json.loads(SPEC.read_text())
    spec = TypeAdapter(strategy_models.AnyStrategy).validate_python(data)
    assert isinstance(spec, BARKStrategy)
    assert json.loads(spec.model_dump_json()) == data
    objectives = {f.key: f.objective for f in spec.domain.outputs.get()}
    assert objectives["colour"] is None and len(objectives) == 4
    spec = spec.model_copy(update={"surrogate_specs": FAST, "time_limit": 0.5})
    strategy = strategies.map(spec)
    rng = np.random.default_rng(0)
    X = strategies.map(RandomStrategy(domain=spec.domain, seed=0)).ask(8)
    X = X[spec.domain.inputs.get_keys()]
    for key in objectives:
        X[key] = rng.uniform(0.1, 1.0, len(X))
        X[f"valid_{key}"] = 1
    strategy.tell(X)
    cand = strategy.ask(1)
    for key in ("yield", "cost", "impurity"):
        assert {f"{key}_pred", f"{key}_sd", f"{key}_des"} <= set(cand.columns)
    assert "colour_pred" in cand.columns and "colour_des" not in cand.columns


def test_candidates_valid_distinct_and_predicted():
    domain = toy_domain()
    strategy = strategies.map(BARKStrategy(domain=domain, seed=1, surrogate_specs=FAST,
                                           time_limit=0.5))
    strategy.tell(start(domain, 10, seed=1))
    cand = strategy.ask(3)
    domain.validate_candidates(cand, only_inputs=True)
    keys = domain.inputs.get_keys()
    assert len(cand[keys].drop_duplicates()) == 3
    for key in ("f1", "f2", "imp", "log"):
        assert np.isfinite(cand[f"{key}_pred"]).all() and (cand[f"{key}_sd"] > 0).all()
    assert len(strategy.last_results) == 3
    # every candidate of the batch aims with its own weights
    assert len({r.ucb for r in strategy.last_results}) == 3


def test_failed_measurement_keeps_the_other_outputs():
    domain = toy_domain()
    strategy = strategies.map(BARKStrategy(domain=domain, seed=2, surrogate_specs=FAST))
    data = start(domain, 10, seed=2)
    data.loc[data.index[3], "f2"] = np.nan
    data.loc[data.index[5], "valid_imp"] = 0
    strategy.tell(data)
    n = {k: len(s.posterior.y) for k, s in strategy.surrogates.items()}
    assert n == {"f1": 10, "f2": 9, "imp": 9, "log": 10}
    # nothing told is lost or changed
    pd.testing.assert_frame_equal(strategy.experiments[data.columns].reset_index(drop=True),
                                  data.reset_index(drop=True), check_dtype=False)


def test_outputs_get_their_own_seeds_and_runs_replay():
    domain = toy_domain()
    data = start(domain, 8, seed=3)
    answers = []
    for _ in range(2):
        strategy = strategies.map(BARKStrategy(domain=domain, seed=4, surrogate_specs=FAST,
                                               time_limit=0.5))
        seeds = {k: s.settings.seed for k, s in strategy.surrogates.items()}
        assert len(set(seeds.values())) == 4 and seeds["f1"] == 4
        strategy.tell(data)
        answers.append(strategy.ask(1)[domain.inputs.get_keys()])
    pd.testing.assert_frame_equal(answers[0], answers[1])


def test_unreachable_output_limit_is_a_clear_error():
    domain = toy_domain(limit=-50.0)
    strategy = strategies.map(BARKStrategy(domain=domain, seed=5, surrogate_specs=FAST,
                                           time_limit=0.5))
    strategy.tell(start(domain, 8, seed=5))
    with pytest.raises(InfeasibleOutputLimitError, match="'imp' <= -50"):
        strategy.ask(1)


def test_mip_solver_refused_for_several_objectives():
    with pytest.raises(ValidationError, match="solver 'scip'"):
        BARKStrategy(domain=toy_domain(), solver="scip")


def _hypervolume(df: pd.DataFrame, limit: float) -> float:
    """Area dominated by the feasible points, (f1 up, f2 down), from the reference (-1, 2)."""
    ok = df[df["imp"] <= limit]
    pts = sorted(zip(ok["f1"], ok["f2"], strict=True), key=lambda p: -p[0])
    area, best_f2 = 0.0, 2.0
    for i, (f1, f2) in enumerate(pts):
        best_f2 = min(best_f2, f2)
        nxt = pts[i + 1][0] if i + 1 < len(pts) else -1.0
        area += max(0.0, f1 - max(nxt, -1.0)) * max(0.0, 2.0 - best_f2)
    return area


def test_bo_beats_random_search_on_a_known_front():
    """15 BO iterations against 15 more random points, same 8 starting points per seed:
    higher hypervolume of the points meeting the limit on most seeds."""
    domain = toy_domain()
    keys = domain.inputs.get_keys()
    wins = 0
    for seed in range(5):
        data = start(domain, 8, seed=10 + seed)
        strategy = strategies.map(BARKStrategy(domain=domain, seed=seed, surrogate_specs=FAST,
                                               time_limit=0.3))
        strategy.tell(data)
        for _ in range(15):
            strategy.tell(measured(strategy.ask(1)[keys]))
        rand = pd.concat([data, start(domain, 15, seed=100 + seed)], ignore_index=True)
        wins += _hypervolume(strategy.experiments, 0.7) > _hypervolume(rand, 0.7)
    assert wins >= 4


def test_models_and_diagnostics_by_output_default_to_the_first_goal_declared(
        monkeypatch, caplog):
    """Outputs declared yield, impurity, cost: BoFire's outputs.get() sorts them (cost first),
    yet the default model is yield's; every output's model, relevance and last fit is there
    by key, and a warning of a fit names its output."""
    import logging

    from bofire_bark import diagnostics

    dom = Domain(inputs=toy_domain().inputs, outputs=Outputs(features=[
        ContinuousOutput(key="yield", objective=MaximizeObjective()),
        ContinuousOutput(key="impurity", objective=MinimizeObjective()),
        ContinuousOutput(key="cost", objective=MinimizeObjective())]))
    assert dom.outputs.get_keys()[0] == "cost"
    X = start(toy_domain(), 8, seed=3).rename(columns={
        "f1": "yield", "f2": "impurity", "imp": "cost", "valid_f1": "valid_yield",
        "valid_f2": "valid_impurity", "valid_imp": "valid_cost"})
    # every fit warns (no R-hat is below 0), so each output's warning can be read
    monkeypatch.setattr(diagnostics, "RHAT_WARN", -1.0)
    with caplog.at_level(logging.INFO, logger="bofire_bark"):
        strategy = strategies.map(BARKStrategy(domain=dom, seed=0, surrogate_specs=FAST.model_copy(
            update={"max_sampling_sweeps": 0})))
        strategy.tell(X)
    assert strategy.surrogate is strategy.surrogates["yield"] is strategy.model_of()
    assert "use 'yield', the first goal declared" in caplog.text
    pd.testing.assert_frame_equal(strategy.feature_relevance(),
                                  strategy.surrogates["yield"].feature_relevance())
    pd.testing.assert_frame_equal(strategy.feature_relevance(output="cost"),
                                  strategy.surrogates["cost"].feature_relevance())
    assert strategy.last_fit() is strategy.surrogates["yield"].last_fit
    assert strategy.last_fit("cost") is strategy.surrogates["cost"].last_fit
    summary = strategy.fit_summary()
    assert sorted(summary.index) == ["cost", "impurity", "yield"]
    assert summary.loc["cost", "seconds"] == strategy.last_fit("cost").seconds
    assert "fitted 3 outputs in" in caplog.text
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
              and "chains have not mixed" in r.getMessage()]
    assert sorted(m.split(":")[0] for m in warned) == [
        "BARK 'cost'", "BARK 'impurity'", "BARK 'yield'"], warned
    with pytest.raises(ValueError, match="output: no model of output 'colour'"):
        strategy.last_fit("colour")
