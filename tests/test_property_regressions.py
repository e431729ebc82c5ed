"""Minimal examples of what the property tests (test_properties.py) found, one test each."""

from __future__ import annotations

import logging

import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import ContinuousInput, ContinuousOutput
from bofire.data_models.objectives.api import MaximizeObjective
from test_properties import tiny_strategy


def semicontinuous_only() -> tuple[Domain, pd.DataFrame]:
    """One input, 0 or in [0.5, 0.501] (allow_zero); three equal measurements at 0.5."""
    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key="x1", bounds=(0.5, 0.501),
                                                allow_zero=True)]),
        outputs=Outputs(features=[ContinuousOutput(key="y0", objective=MaximizeObjective())]))
    return domain, pd.DataFrame({"x1": [0.5] * 3, "y0": [0.0] * 3, "valid_y0": 1})


def test_a_batch_that_repeats_zero_says_so(caplog):
    """The acquisition peaks at the one-point cell {0} again after conditioning on it: the
    strategy returns the repeat and warns (found by the long profile, seed 0, ask(2))."""
    domain, data = semicontinuous_only()
    strategy = tiny_strategy(domain, 0)
    strategy.tell(data)
    with caplog.at_level(logging.WARNING, logger="bofire_bark.strategy"):
        cands = strategy.ask(2)
    if cands["x1"].duplicated().any():
        assert "repeats an earlier candidate" in caplog.text


def test_a_batch_from_a_continuous_domain_is_distinct(caplog):
    """The best cell after conditioning still holds the first candidate: the second is
    another point of that cell (the same acquisition), not a repeat."""
    domain, data = semicontinuous_only()
    strategy = tiny_strategy(domain, 0)
    strategy.tell(data)
    with caplog.at_level(logging.WARNING, logger="bofire_bark.strategy"):
        cands = strategy.ask(3)
    assert not cands["x1"].duplicated().any(), cands
    assert "repeats an earlier candidate" not in caplog.text
    x = cands["x1"].to_numpy(float)
    assert ((x == 0.0) | ((x >= 0.5) & (x <= 0.501))).all(), x


# One TargetObjective is two limits (value >= lo, -value >= -hi) with one text. When the
# search proved them jointly unreachable the error listed the text twice and claimed "each
# reachable alone, not together with the domain's constraints" on a domain without any
# (found by the property tests, on the example the new-process test draws; minimal: one
# input, Maximize y0, TargetObjective y1 told a constant -2.5, seed 1).
TARGET = "-1 <= 'y1' <= 1 (TargetObjective)"


def target_limits():
    from types import SimpleNamespace

    from bofire_bark.optimize.outputs import Limit

    return SimpleNamespace(limits=[Limit("y1", 0, -1.0, TARGET), Limit("y1", 1, -1.0, TARGET)],
                           channels=[SimpleNamespace(sign=1.0), SimpleNamespace(sign=-1.0)])


def test_a_target_proven_out_of_reach_is_named_once():
    from types import SimpleNamespace

    from bofire_bark.optimize.entry import _explain_infeasible
    from bofire_bark.optimize.result import InfeasibleOutputLimitError

    # the root box's bound lets both sides through; the search proved them jointly out
    grid = SimpleNamespace(root=lambda: (), channel_bounds=lambda: [(5.0,), (5.0,)])
    with pytest.raises(InfeasibleOutputLimitError) as err:
        _explain_infeasible(grid, target_limits(), {}, proven=True)
    message = str(err.value)
    assert message.count(TARGET) == 1, message
    assert "each reachable alone" not in message and "proved" in message


def test_a_target_out_of_reach_of_a_finite_domain_is_named_once():
    import numpy as np

    from bofire_bark.optimize.library import _raise_limits
    from bofire_bark.optimize.result import InfeasibleOutputLimitError

    # each side met by some point, never both by one
    U = np.array([[0.0, -2.0], [-2.0, 0.0]])
    with pytest.raises(InfeasibleOutputLimitError) as err:
        _raise_limits(target_limits(), {}, U)
    assert str(err.value).count(TARGET) == 1, str(err.value)


def test_a_target_out_of_reach_end_to_end():
    from bofire.data_models.objectives.api import TargetObjective

    from bofire_bark.optimize.result import InfeasibleOutputLimitError

    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0.0, 1.0))]),
        outputs=Outputs(features=[
            ContinuousOutput(key="y0", objective=MaximizeObjective()),
            ContinuousOutput(key="y1", objective=TargetObjective(
                target_value=0.0, tolerance=1.0, steepness=10.0))]))
    data = pd.DataFrame({"x": [0.1, 0.4, 0.6, 0.9], "y0": [0.0, 1.0, 0.0, 1.0],
                         "y1": [-2.5] * 4, "valid_y0": 1, "valid_y1": 1})
    strategy = tiny_strategy(domain, 1)
    strategy.tell(data)
    try:
        strategy.ask(1)  # a candidate is fine; an error must name the limit once
    except InfeasibleOutputLimitError as err:
        assert str(err).count(TARGET) == 1, str(err)


# A nonlinear inequality tight at the bounds leaves a feasible set of one face or corner of
# the box; the grid search tried the box's centre and random points only, and raised
# InfeasibleDomainError (found by the long profile: a product inequality x1**3 * temp**2 <=
# rhs met only at temp's upper bound).
@pytest.mark.parametrize("expression", ["1 - x * z", "1 - x**2 + 0 * z", "1 - x + 0 * z"])
def test_a_feasible_set_on_the_bounds_is_found(expression):
    from bofire.data_models.constraints.api import NonlinearInequalityConstraint
    from bofire.data_models.domain.api import Constraints

    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0.0, 1.0)),
                                ContinuousInput(key="z", bounds=(0.0, 1.0))]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())]),
        constraints=Constraints(constraints=[NonlinearInequalityConstraint(
            expression=expression, features=["x", "z"])]))
    data = pd.DataFrame({"x": [0.2, 0.5, 0.9], "z": [0.1, 0.5, 0.7], "y": [0.0, 1.0, 0.5],
                         "valid_y": 1})
    strategy = tiny_strategy(domain, 0)
    strategy.tell(data)
    cands = strategy.ask(1)
    assert domain.constraints.is_fulfilled(cands, tol=1e-5).all(), cands
