"""The BARK strategy in BoFire's ask/tell loop."""

from __future__ import annotations

import json
from pathlib import Path

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.constraints.api import (
    LinearEqualityConstraint,
    NChooseKConstraint,
    NonlinearInequalityConstraint,
)
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective
from bofire.data_models.strategies.api import RandomStrategy
from pydantic import TypeAdapter

import bofire_bark  # noqa: F401  (registration)
from bofire_bark.data_models import BARKSettings, BARKStrategy

SPECS = Path(__file__).parents[1] / "specs"
FAST = BARKSettings(n_trees=15, n_chains=2, n_samples=2, thinning=10, burn_in=150)


def fast_strategy(domain: Domain, seed: int = 0, **kwargs):
    options = {"surrogate_specs": FAST, "time_limit": 10.0, "n_start_points": 500, **kwargs}
    spec = BARKStrategy(domain=domain, seed=seed, **options)
    return strategies.map(spec)


def mixed_constrained_domain(objective=None) -> Domain:
    """Mixture of three fractions (sum 1, at most two used), a temperature, a catalyst."""
    fractions = ["f1", "f2", "f3"]
    return Domain(
        inputs=Inputs(features=[
            *(ContinuousInput(key=k, bounds=(0.0, 1.0)) for k in fractions),
            ContinuousInput(key="temp", bounds=(20.0, 80.0)),
            DiscreteInput(key="eq", values=[1.0, 1.5, 2.5]),
            CategoricalInput(key="cat", categories=["A", "B", "C"]),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="y", objective=objective or MaximizeObjective())]),
        constraints=Constraints(constraints=[
            LinearEqualityConstraint(features=fractions, coefficients=[1.0, 1.0, 1.0],
                                     rhs=1.0),
            NChooseKConstraint(features=fractions, min_count=1, max_count=2,
                               none_also_valid=False),
            NonlinearInequalityConstraint(expression="f1 * temp - 40",
                                          features=["f1", "temp"]),
        ]),
    )


def mixed_truth(df: pd.DataFrame) -> np.ndarray:
    cat = df["cat"].map({"A": 0.0, "B": 1.0, "C": -0.5}).to_numpy()
    return (df["f2"] * 2 + np.sin(df["temp"] / 15) + cat + 0.3 * df["eq"]).to_numpy(float)


def initial(domain: Domain, n: int, seed: int, truth) -> pd.DataFrame:
    X = strategies.map(RandomStrategy(domain=domain, seed=seed)).ask(n)
    X = X[domain.inputs.get_keys()]
    return X.assign(y=truth(X), valid_y=1)


@pytest.fixture(scope="module")
def told():
    domain = mixed_constrained_domain()
    strategy = fast_strategy(domain, seed=1)
    strategy.tell(initial(domain, 10, 0, mixed_truth))
    return domain, strategy


def test_ask_one_and_four_are_valid_and_distinct(told):
    domain, strategy = told
    one = strategy.ask(1)
    assert len(one) == 1
    four = strategy.ask(4)
    assert len(four) == 4
    for cands in (one, four):
        domain.validate_candidates(cands, raise_validation_error=True)
        assert set(cands["cat"]) <= {"A", "B", "C"}
        assert set(cands["eq"]) <= {1.0, 1.5, 2.5}
        for col in ("y_pred", "y_sd", "y_des"):
            assert col in cands and np.isfinite(cands[col]).all()
    inputs = four[domain.inputs.get_keys()].round(9).astype(str)
    assert not inputs.duplicated().any()
    for r in strategy.last_results:
        # every candidate comes with a proof: a finite bound no lower than its UCB
        assert r.solver == "bnb" and r.status in {"optimal", "gap", "time_limit", "unresolved"}
        assert np.isfinite(r.bound) and r.bound >= r.ucb - 1e-12
        assert r.gap == pytest.approx((r.bound - r.ucb) / abs(r.ucb))
    # the first of the batch is scored by the engine as reported (nothing pending yet)
    first = strategy.last_results[0]
    ucb = strategy.surrogate.posterior.systems().integrated_ucb(
        first.x[None], strategy.kappa, strategy.sign)[0]
    assert ucb == pytest.approx(first.ucb, rel=1e-9, abs=1e-12)


def test_same_seed_same_candidates():
    domain = mixed_constrained_domain()
    data = initial(domain, 8, 3, mixed_truth)
    asked = []
    for _ in range(2):
        strategy = fast_strategy(domain, seed=5)
        strategy.tell(data)
        asked.append(strategy.ask(2))
    pd.testing.assert_frame_equal(asked[0], asked[1])


def test_pending_candidates_condition_the_batch(told):
    domain, strategy = told
    first = strategy.ask(1, add_pending=True)
    second = strategy.ask(1)
    strategy.set_candidates(pd.DataFrame(columns=domain.inputs.get_keys()))
    keys = domain.inputs.get_keys()
    assert not first[keys].round(9).equals(second[keys].round(9))
    # the pending point entered as a believer: the second solve saw it
    pend = strategy.space.encode(first)
    sys_pending = strategy.surrogate.posterior.systems(pend)
    _, var = sys_pending.predict_each(pend)
    assert var.max() < strategy.surrogate.posterior.systems().predict_each(pend)[1].max()


def test_failed_experiments_are_kept_and_skipped_in_the_fit():
    domain = mixed_constrained_domain()
    data = initial(domain, 8, 4, mixed_truth)
    data.loc[2, "valid_y"] = 0
    data.loc[5, "y"] = np.nan
    strategy = fast_strategy(domain, seed=2)
    strategy.tell(data)
    assert len(strategy.experiments) == 8  # nothing told is lost
    assert len(strategy.surrogate.posterior.y) == 6
    domain.validate_candidates(strategy.ask(1), raise_validation_error=True)


def toy_1d(objective) -> Domain:
    return Domain(
        inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0.0, 1.0))]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=objective)]),
    )


@pytest.mark.parametrize(("objective", "side"),
                         [(MaximizeObjective(), "high"), (MinimizeObjective(), "low")])
def test_direction_is_honoured(objective, side):
    domain = toy_1d(objective)
    x = np.linspace(0.05, 0.95, 10)
    data = pd.DataFrame({"x": x, "y": x, "valid_y": 1})
    strategy = fast_strategy(domain, seed=0, kappa=0.5)
    strategy.tell(data)
    cand = float(strategy.ask(1)["x"].iloc[0])
    assert cand > 0.7 if side == "high" else cand < 0.3


def test_warm_start_continues_chains(told):
    domain, strategy = told
    chains = strategy.surrogate.chains
    states = [c.state.copy() for c in chains]
    strategy.tell(initial(domain, 1, 9, mixed_truth))
    assert strategy.surrogate.chains is chains  # same chains, continued
    assert all((c.state != s).any() for c, s in zip(chains, states, strict=True))


def test_reloaded_surrogate_predicts_the_same(told):
    import bofire.surrogates.api as surrogates

    domain, strategy = told
    sur = strategy.surrogate
    X = domain.inputs.sample(20, seed=3)
    data_model = sur.settings.model_copy(update={"dump": sur.dumps()})
    reloaded = surrogates.map(data_model)
    pd.testing.assert_frame_equal(sur.predict(X), reloaded.predict(X))


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.json")), ids=lambda p: p.stem)
def test_specs_ask(path):
    import bofire.data_models.strategies.api as strategy_models

    spec = TypeAdapter(strategy_models.AnyStrategy).validate_python(json.loads(path.read_text()))
    spec = spec.model_copy(update={"surrogate_specs": FAST, "time_limit": 10.0,
                                   "n_start_points": 300})
    strategy = strategies.map(spec)
    domain = spec.domain
    X = strategies.map(RandomStrategy(domain=domain, seed=0)).ask(6)[domain.inputs.get_keys()]
    rng = np.random.default_rng(0)
    for key in domain.outputs.get_keys():
        X = X.assign(**{key: rng.normal(size=len(X)), f"valid_{key}": 1})
    strategy.tell(X)
    cands = strategy.ask(2)
    domain.validate_candidates(cands, raise_validation_error=True)
    assert len(cands) == 2


def bo_toy_domain() -> Domain:
    return Domain(
        inputs=Inputs(features=[
            ContinuousInput(key="x1", bounds=(0.0, 1.0)),
            ContinuousInput(key="x2", bounds=(0.0, 1.0)),
            CategoricalInput(key="c", categories=["p", "q", "r", "s"]),
        ]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MinimizeObjective())]),
    )


def bo_toy(df: pd.DataFrame) -> np.ndarray:
    """Minimum 0 at x = (0.7, 0.2), category 'r'; other categories add an offset."""
    offset = df["c"].map({"p": 1.0, "q": 0.6, "r": 0.0, "s": 1.4}).to_numpy()
    return ((df["x1"] - 0.7) ** 2 + (df["x2"] - 0.2) ** 2).to_numpy() * 4 + offset


def test_fifteen_iterations_beat_fifteen_random_points():
    domain = bo_toy_domain()
    wins = 0
    seeds = (0, 1, 2)
    for seed in seeds:
        data = initial(domain, 5, seed, bo_toy)
        strategy = fast_strategy(domain, seed=seed, time_limit=5.0)
        strategy.tell(data)
        for _ in range(15):
            cand = strategy.ask(1)[domain.inputs.get_keys()]
            strategy.tell(cand.assign(y=bo_toy(cand), valid_y=1))
        bark_best = strategy.experiments["y"].min()
        more = strategies.map(RandomStrategy(domain=domain, seed=100 + seed)).ask(15)
        random_best = min(data["y"].min(), bo_toy(more).min())
        wins += bark_best < random_best
    assert wins >= 2, f"BARK beat random search on {wins} of {len(seeds)} seeds"


def recording_solver(monkeypatch) -> list:
    """Record the seed of every acquisition solve; the real optimizer still answers."""
    import bofire_bark.optimize as optimize

    real = optimize.solve_acquisition
    seeds = []

    def record(*args, **kwargs):
        settings = kwargs["settings"] if "settings" in kwargs else args[5]
        seeds.append(settings.seed)
        return real(*args, **kwargs)

    # _solve imports the name from the package at call time, so patching the package suffices
    monkeypatch.setattr(optimize, "solve_acquisition", record)
    return seeds


def told_toy(seed: int) -> tuple[Domain, object]:
    domain = bo_toy_domain()
    strategy = fast_strategy(domain, seed=seed, time_limit=5.0, n_start_points=200)
    strategy.tell(initial(domain, 6, 0, bo_toy))
    return domain, strategy


def test_successive_asks_draw_new_seeds(monkeypatch):
    seeds = recording_solver(monkeypatch)
    _, strategy = told_toy(seed=3)
    strategy.ask(1)
    strategy.ask(1)
    assert len(seeds) == 2
    assert seeds[0] != seeds[1], "every ask(1) of a seeded strategy reused the same seed"


def test_same_seed_replays_the_whole_run(monkeypatch):
    seeds = recording_solver(monkeypatch)
    runs = []
    for _ in range(2):
        domain, strategy = told_toy(seed=7)
        start = len(seeds)
        asked = [strategy.ask(1) for _ in range(2)]
        runs.append((seeds[start:], pd.concat(asked, ignore_index=True)))
    (seeds_a, cands_a), (seeds_b, cands_b) = runs
    assert len(seeds_a) == 2 and seeds_a == seeds_b
    pd.testing.assert_frame_equal(cands_a, cands_b)
