"""Every public path into numba refuses bad data with a ValueError naming it: predictions on
user data, tell with odd values, pending points of the acquisition (dumps: engine/test_store)."""

from __future__ import annotations

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MaximizeObjective

from bofire_bark.data_models import BARKSettings, BARKStrategy

FAST = BARKSettings(n_trees=10, n_chains=2, n_samples=2, thinning=5, burn_in=50)
INPUTS = Inputs(features=[
    ContinuousInput(key="x", bounds=(0, 1)), DiscreteInput(key="k", values=[1.0, 2.0, 4.0]),
    CategoricalInput(key="c", categories=["a", "b", "c"])])
DOMAIN = Domain(inputs=INPUTS, outputs=Outputs(features=[
    ContinuousOutput(key="yield", objective=MaximizeObjective())]))


def experiments() -> pd.DataFrame:
    X = INPUTS.sample(12, seed=1)
    return X.assign(**{"yield": np.arange(12.0), "valid_yield": 1})


@pytest.fixture(scope="module")
def told():
    strategy = strategies.map(BARKStrategy(domain=DOMAIN, surrogate_specs=FAST, seed=0,
                                           time_limit=0.5))
    strategy.tell(experiments())
    return strategy


@pytest.mark.parametrize(("change", "match"), [
    ({"x": np.nan}, "null values"),
    ({"x": np.inf}, "'x' contains non-finite"),
    ({"x": "abc"}, "`x` are numerical"),
    ({"c": "zzz"}, "invalid values for `c`"),
    ({"k": 3.0}, "Discrete feature 'k'"),
])
def test_predict_refuses_bad_inputs(told, change, match):
    X = INPUTS.sample(3, seed=2).assign(**change)
    with pytest.raises(ValueError, match=match):
        told.surrogate.predict(X)


def test_predict_outside_the_bounds_is_finite(told):
    pred = told.surrogate.predict(INPUTS.sample(3, seed=2).assign(x=500.0))
    assert np.isfinite(pred.to_numpy()).all()


def test_tell_refuses_an_infinite_output_by_name():
    strategy = strategies.map(BARKStrategy(domain=DOMAIN, surrogate_specs=FAST, seed=0))
    data = experiments()
    data.loc[4, "yield"] = np.inf
    with pytest.raises(ValueError, match=r"output 'yield' has a non-finite value \(inf\) in "
                                         r"row 4"):
        strategy.tell(data)


def test_pending_points_are_checked(told):
    post = told.surrogate.posterior
    bad = post.X[:1].copy()
    bad[0, 2] = 7.0  # category code 7 of 3
    with pytest.raises(ValueError, match=r"X_pending\[0, 2\] = 7.0 is not a valid category"):
        post.systems(bad)


def test_ask_needs_a_positive_count(told):
    with pytest.raises(ValueError, match="at least 1"):
        told.ask(0)


def test_experiments_outside_the_bounds_kept_with_one_warning(caplog):
    """BoFire accepts a temperature of 500 on bounds 25-120: BARK keeps the rows, says so once
    (naming the feature and the count) and still proposes inside the bounds."""
    temps = ContinuousInput(key="temperature", bounds=(25.0, 120.0))
    inputs = Inputs(features=[temps, CategoricalInput(key="c", categories=["a", "b"])])
    domain = Domain(inputs=inputs, outputs=Outputs(features=[
        ContinuousOutput(key="yield", objective=MaximizeObjective()),
        ContinuousOutput(key="cost", objective=None)]))
    X = inputs.sample(10, seed=3)
    X.loc[[0, 1], "temperature"] = [500.0, 10.0]
    # the best yields sit far above the upper bound: the optimum is pulled there
    data = X.assign(**{"yield": X["temperature"] / 5.0, "valid_yield": 1,
                       "cost": 1.0 + np.arange(10), "valid_cost": 1})
    strategy = strategies.map(BARKStrategy(domain=domain, surrogate_specs=FAST, seed=0,
                                           time_limit=0.5))
    with caplog.at_level("WARNING", logger="bofire_bark"):
        strategy.tell(data)
    warned = [r.getMessage() for r in caplog.records if "outside the inputs' bounds" in
              r.getMessage()]
    assert warned == ["BARK: experiments outside the inputs' bounds are kept (temperature: 2 "
                      "of 10 rows); the trees split inside the bounds, so they count as at the "
                      "nearest bound"]
    assert len(strategy.experiments) == 10  # nothing dropped
    candidates = strategy.ask(3)
    assert candidates["temperature"].between(25.0, 120.0).all()
    assert candidates["temperature"].max() > 100.0  # the data's message: go hot
