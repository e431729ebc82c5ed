"""The start's array check of the constraints (``specs_fulfilled``) gives BoFire's
``is_fulfilled`` answer on every point: random points, points projected onto the linear
constraints, points on the tolerance's edge, undefined expressions."""

from __future__ import annotations

import numpy as np
import pytest
from bofire.data_models.constraints.api import (
    LinearEqualityConstraint,
    LinearInequalityConstraint,
    NChooseKConstraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
    ProductEqualityConstraint,
    ProductInequalityConstraint,
)
from bofire.data_models.domain.api import Constraints, Domain, Inputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    DiscreteInput,
)

from bofire_bark.optimize.constraints import (
    active_delta,
    constraint_specs,
    feasible,
    input_box,
)
from bofire_bark.optimize.incumbent import random_points
from bofire_bark.space import SplitSpace

INPUTS = [
    ContinuousInput(key="a", bounds=(0.0, 1.0)),
    ContinuousInput(key="b", bounds=(0.0, 1.0)),
    ContinuousInput(key="c", bounds=(0.2, 2.0), allow_zero=True),
    ContinuousInput(key="t", bounds=(-1.0, 3.0)),
    DiscreteInput(key="d", values=[0.0, 0.5, 2.0]),
    CategoricalInput(key="s", categories=["x", "y", "z"]),
]

CASES = {
    "linear": [LinearEqualityConstraint(features=["a", "b", "c"], coefficients=[1, 1, 1],
                                        rhs=1.0),
               LinearInequalityConstraint(features=["a", "t"], coefficients=[2.0, -1.0],
                                          rhs=0.3)],
    "linear_discrete": [LinearInequalityConstraint(features=["a", "d"],
                                                   coefficients=[1.0, 1.0], rhs=1.2)],
    "nchoosek": [NChooseKConstraint(features=["a", "b", "c"], min_count=1, max_count=2,
                                    none_also_valid=True)],
    "nonlinear": [NonlinearInequalityConstraint(
        expression="exp(a / 2) - b**2 + log(c + 0.1) - 1", features=["a", "b", "c"]),
        NonlinearInequalityConstraint(expression="t**0.5 - 1.2 + 0 * a",
                                      features=["t", "a"])],
    "division": [NonlinearInequalityConstraint(expression="-1 / a + b", features=["a", "b"])],
    "nonlinear_equality": [NonlinearEqualityConstraint(expression="a + b**2 - 0.5",
                                                       features=["a", "b"])],
    "product": [ProductInequalityConstraint(features=["t", "c"], exponents=[3.0, 1.0],
                                            rhs=0.5, sign=-1),
                ProductEqualityConstraint(features=["a", "b"], exponents=[1.0, 2.0],
                                          rhs=0.1, sign=1)],
}


# a in terms of b on the equality constraints' surfaces
ON_SURFACE = {"nonlinear_equality": lambda b: 0.5 - b**2,
              "product": lambda b: 0.1 / np.maximum(b, 0.3) ** 2}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_array_check_is_bofires(case):
    domain = Domain(inputs=Inputs(features=INPUTS),
                    constraints=Constraints(constraints=CASES[case]))
    space = SplitSpace.from_domain(domain)
    box = input_box(domain, space)
    specs = constraint_specs(domain, space)
    rng = np.random.default_rng(0)
    X = random_points(box, specs, 4000, active_delta(box), rng)  # projected, thinned
    Y = random_points(box, (), 4000, active_delta(box), rng)  # plain draws
    # the tolerance's edge: a and b moved by about 1e-6 from the projected points
    Z = X[:500].copy()
    Z[:, [0, 1]] += rng.choice([-1.2e-6, -0.8e-6, 0.8e-6, 1.2e-6], size=(500, 2))
    # on an equality's surface (a from b), and within round-off of it
    W = Y[:500].copy()
    W[:, 0] = ON_SURFACE.get(case, lambda b: W[:, 0])(W[:, 1]) + rng.choice(
        [0.0, 1e-12, -1e-12], size=500)
    Z = np.vstack([X, Y, Z, W, np.zeros((1, X.shape[1]))])
    exact = feasible(domain, space, box, Z, tol=1e-6)
    fast = feasible(domain, space, box, Z, tol=1e-6, specs=specs)
    assert 0 < exact.sum() < len(Z) or case == "division"  # both answers occur
    np.testing.assert_array_equal(fast, exact)


def test_a_check_that_disagrees_with_bofire_is_caught(caplog):
    """The start confirms its point with BoFire: an array check that accepts everything
    costs a second draw, never an infeasible candidate."""
    import logging

    from bofire_bark.optimize.entry import _checked_start
    from bofire_bark.optimize.incumbent import Incumbent

    domain = Domain(inputs=Inputs(features=INPUTS[:2]), constraints=Constraints(
        constraints=[LinearInequalityConstraint(features=["a", "b"], coefficients=[1, 1],
                                                rhs=0.5)]))
    space = SplitSpace.from_domain(domain)
    box = input_box(domain, space)

    def find(check):
        X = np.array([[0.9, 0.9], [0.1, 0.1]])
        x = X[check(X)][0]
        return Incumbent(x, 0.0, 1, x[None, :])

    with caplog.at_level(logging.WARNING, logger="bofire_bark.optimize.entry"):
        start = _checked_start(find, lambda X: np.ones(len(X), dtype=bool),
                               lambda X: feasible(domain, space, box, X))
    np.testing.assert_array_equal(start.x, [0.1, 0.1])
    assert "outside the domain's constraints" in caplog.text


def test_distinct_point_stays_in_the_cell_when_it_can():
    """A pending point's cell (x0 < 0.5, any x1) holds other points of the same value: one is
    taken; the best cell of one point (x0 = 0 of an allow-zero input) leaves it."""
    from bofire_bark.optimize.incumbent import distinct_point

    domain = Domain(inputs=Inputs(features=[
        ContinuousInput(key="a", bounds=(0.0, 1.0)),
        ContinuousInput(key="c", bounds=(0.2, 2.0), allow_zero=True)]))
    space = SplitSpace.from_domain(domain)
    box = input_box(domain, space)
    thresholds = (np.array([0.5]), np.array([1.0]))

    def score(X):  # constant on the grid's cells; the zero of c best
        return (X[:, 0] <= 0.5) * 1.0 + (X[:, 1] == 0.0) * 2.0 + (X[:, 1] > 1.0) * 0.5

    def check(X):
        return feasible(domain, space, box, X)

    x = np.array([0.25, 1.5])
    y, v = distinct_point(x, box, thresholds, lambda X: (X[:, 0] <= 0.5) * 1.0, check,
                          x[None, :])
    assert v == 1.0 and not np.array_equal(y, x)  # another point of x's cell
    x = np.array([0.25, 0.0])
    y, v = distinct_point(x, box, thresholds, score, check, x[None, :])
    assert v == 3.0 and y[1] == 0.0 and y[0] != 0.25  # the cell is a segment along a
    # c alone: its zero is a cell of one point, the move leaves it for the best other cell
    one = Domain(inputs=Inputs(features=[domain.inputs.get_by_key("c")]))
    space1 = SplitSpace.from_domain(one)
    box1 = input_box(one, space1)
    x = np.array([0.0])
    y, v = distinct_point(x, box1, thresholds[1:], lambda X: score(
        np.column_stack([np.ones(len(X)), X[:, 0]])), lambda X: feasible(one, space1, box1, X),
        x[None, :])
    assert v == 0.5 and y[0] > 1.0 and feasible(one, space1, box1, y[None, :])[0]
