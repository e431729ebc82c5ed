"""One settings object from the data model to the search, and one plan of which search runs."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from bofire.data_models.acquisition_functions.api import qEI, qUCB
from bofire.data_models.constraints.api import (
    LinearInequalityConstraint,
    NonlinearEqualityConstraint,
    ProductEqualityConstraint,
)
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective
from pydantic import ValidationError

import bofire_bark.optimize.entry as entry
import bofire_bark.optimize.grid as grid_package
from bofire_bark.data_models import BARKSettings, BARKStrategy
from bofire_bark.loading import load_spec
from bofire_bark.settings import AcquisitionSettings, GridSettings, SearchSettings
from bofire_bark.space.finite import SearchPlan, plan_search
from bofire_bark.strategy import BARKStrategy as Functional

FAST = BARKSettings(n_trees=5, n_chains=2, n_samples=2, burn_in=20, thinning=2,
                    max_sampling_sweeps=0)


def domain(inputs=None, constraints=(), outputs=None) -> Domain:
    inputs = inputs or [ContinuousInput(key="x1", bounds=(0, 1)),
                        ContinuousInput(key="x2", bounds=(0, 1))]
    outputs = outputs or [ContinuousOutput(key="y", objective=MaximizeObjective())]
    return Domain(inputs=Inputs(features=inputs), outputs=Outputs(features=outputs),
                  constraints=Constraints(constraints=list(constraints)))


def test_top_level_keys_move_into_acquisition_optimizer():
    flat = BARKStrategy(domain=domain(), time_limit=4.0, n_start_points=300, solver="bnb")
    assert flat.acquisition_optimizer == SearchSettings(time_limit=4.0, n_start_points=300,
                                                        solver="bnb")
    # the same value in both places is one setting; different values are refused by name
    both = BARKStrategy(domain=domain(), time_limit=4.0,
                        acquisition_optimizer=SearchSettings(time_limit=4.0, mip_gap=0.2))
    assert both.acquisition_optimizer == SearchSettings(time_limit=4.0, mip_gap=0.2)
    with pytest.raises(ValidationError, match="time_limit=4.0 and acquisition_optimizer"):
        BARKStrategy(domain=domain(), time_limit=4.0,
                     acquisition_optimizer={"time_limit": 3.0})


def test_grid_settings_come_from_a_spec_and_misspellings_are_refused():
    spec = BARKStrategy(domain=domain(), acquisition_optimizer={
        "time_limit": 1.5, "grid": {"n_dual": 2, "numba_loop": False}})
    text = spec.model_dump_json()
    assert json.loads(text)["acquisition_optimizer"]["grid"]["n_dual"] == 2
    again = load_spec(text)
    assert again.acquisition_optimizer == SearchSettings(
        time_limit=1.5, grid=GridSettings(n_dual=2, numba_loop=False))
    for bad, where in [({"grid": {"n_dul": 2}}, "n_dul"), ({"time_limt": 2}, "time_limt"),
                       ({"time_limit": -1}, "time_limit must be positive"),
                       ({"solver": "cplex"}, "acquisition_optimizer.solver")]:
        with pytest.raises(ValidationError, match=where):
            BARKStrategy(domain=domain(), acquisition_optimizer=bad)


def test_the_same_settings_reach_the_start_and_the_grid_search(monkeypatch):
    """The data model's settings, with the rule and the solve's seed, are the object the
    starting point and the box loop read (nothing unpacked and repacked on the way)."""
    seen = []
    real_start, real_search = entry.find_incumbent, grid_package.search

    def start(*args, **kwargs):
        seen.append(("start", args[6]))
        return real_start(*args, **kwargs)

    def search(*args, **kwargs):
        seen.append(("search", args[4]))
        return real_search(*args, **kwargs)

    monkeypatch.setattr(entry, "find_incumbent", start)
    monkeypatch.setattr(grid_package, "search", search)
    opt = SearchSettings(time_limit=3.0, n_start_points=150, n_sweeps=2,
                         grid=GridSettings(n_dual=2, dive_every=10))
    model = BARKStrategy(domain=domain(), surrogate_specs=FAST, seed=4,
                         acquisition_function=qUCB(beta=4.0), acquisition_optimizer=opt)
    strategy = Functional(model)
    rng = np.random.default_rng(0)
    X = rng.random((8, 2))
    strategy.tell(pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": X.sum(axis=1),
                                "valid_y": 1}))
    strategy.ask(1)
    assert [name for name, _ in seen] == ["start", "search"]
    (_, a), (_, b) = seen
    assert a is b
    assert replace(a, seed=None) == AcquisitionSettings.from_search(opt, rule="ucb", kappa=2.0,
                                                                    seed=None)


LINEAR = LinearInequalityConstraint(features=["x1", "x2"], coefficients=[1, 1], rhs=1.5)
NONLINEAR_EQ = NonlinearEqualityConstraint(expression="x1 - x2", features=["x1", "x2"])
PRODUCT_EQ = ProductEqualityConstraint(features=["x1", "x2"], exponents=[1, 1], rhs=0.25)
TWO = [ContinuousOutput(key="y", objective=MaximizeObjective()),
       ContinuousOutput(key="z", objective=MinimizeObjective())]
FINITE = [CategoricalInput(key="c", categories=["a", "b", "c"]),
          DiscreteInput(key="d", values=[1.0, 2.0, 3.0, 4.0])]
SEMI = [ContinuousInput(key="x1", bounds=(0.2, 1), allow_zero=True),
        ContinuousInput(key="x2", bounds=(0, 1))]


@pytest.mark.parametrize(("case", "settings", "plan"), [
    (domain(), SearchSettings(), ("grid", "bnb", True, False)),
    (domain(), SearchSettings(grid=GridSettings(numba_loop=False)),
     ("grid", "bnb", False, False)),
    (domain(constraints=[LINEAR]), SearchSettings(), ("grid", "bnb", False, False)),
    (domain(inputs=SEMI), SearchSettings(), ("grid", "bnb", False, False)),
    (domain(outputs=TWO), SearchSettings(), ("grid", "bnb", False, True)),
    (domain(constraints=[NONLINEAR_EQ]), SearchSettings(), ("mip", "auto", False, False)),
    (domain(constraints=[PRODUCT_EQ]), SearchSettings(), ("mip", "auto", False, False)),
    (domain(), SearchSettings(solver="scip"), ("mip", "scip", False, False)),
    (domain(inputs=FINITE), SearchSettings(), ("library", "auto", False, False)),
    (domain(inputs=FINITE), SearchSettings(solver="bnb"), ("grid", "bnb", True, False)),
])
def test_one_plan_decides_the_search(case, settings, plan):
    got = plan_search(case, settings)
    assert (got.search, got.solver, got.numba_loop, got.several) == plan
    assert got.size == (12 if set(case.inputs.get_keys()) == {"c", "d"} else None)


def test_the_validator_and_the_strategy_follow_the_plan():
    """A product equality needs the MIP (the plan), so qEI is refused at validation, as a
    nonlinear equality is; on a finite domain the plan enumerates, which holds either."""
    for equality in (NONLINEAR_EQ, PRODUCT_EQ):
        with pytest.raises(ValidationError, match=f"constraint 0 \\({type(equality).__name__}"):
            BARKStrategy(domain=domain(constraints=[equality]), acquisition_function=qEI())
    finite = BARKStrategy(domain=domain(inputs=FINITE), acquisition_function=qEI())
    strategy = Functional(finite)
    assert strategy.search_plan() == SearchPlan("library", "auto", False, False, 12)
