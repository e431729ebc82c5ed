"""``tie_break="farthest"``: the candidate moves within its grid cell (same acquisition) to
the point farthest from the data, never to a point of another value, never out of the
constraints; brute force over the cell's corners and fine grids checks the choice."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from bofire.data_models.constraints.api import LinearEqualityConstraint, NChooseKConstraint
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.features.api import CategoricalInput, ContinuousInput

from bofire_bark.optimize.constraints import constraint_specs, feasible, input_box
from bofire_bark.optimize.incumbent import farthest_in_cell
from bofire_bark.space import SplitSpace

THRESHOLDS = (np.array([0.5]), np.array([0.3, 0.7]), np.array([]))


def _toy():
    domain = Domain(inputs=Inputs(features=[
        ContinuousInput(key="a", bounds=(0.0, 1.0)),
        ContinuousInput(key="b", bounds=(0.0, 1.0)),
        CategoricalInput(key="c", categories=["p", "q"])]))
    space = SplitSpace.from_domain(domain)
    return domain, space, input_box(domain, space)


def _cell_score(X):
    """Constant on the cells of THRESHOLDS (x <= t goes left), different on each."""
    ia = (X[:, 0] > 0.5).astype(float)
    ib = (X[:, 1] > 0.3).astype(float) + (X[:, 1] > 0.7)
    return ia + 2 * ib + 6 * X[:, 2]


def _nearest(P, data):
    d = P[:, None, :] - data[None, :, :]
    d[:, :, 2] = d[:, :, 2] != 0
    return np.sqrt((d ** 2).sum(axis=2).min(axis=1))


def test_far_corner_of_the_cell():
    domain, space, box = _toy()
    x = np.array([0.75, 0.5, 1.0])
    data = np.array([[0.6, 0.4, 1.0], [0.1, 0.9, 0.0]])
    v = float(_cell_score(x[None, :])[0])
    y, w = farthest_in_cell(x, v, box, THRESHOLDS, _cell_score,
                            lambda X: feasible(domain, space, box, X), (), data,
                            np.random.default_rng(0))
    assert w == v
    np.testing.assert_array_equal(y, [1.0, 0.7, 1.0])  # b <= 0.7 stays in the cell


@pytest.mark.parametrize("seed", range(20))
def test_no_corner_and_no_grid_point_of_the_cell_is_farther(seed):
    """Against brute force: the cell's 4 corners and a 41 x 41 grid of it (the 128 uniform
    points may miss the interior optimum by little: within 10 % of its distance)."""
    domain, space, box = _toy()
    rng = np.random.default_rng(seed)
    x = np.array([rng.uniform(0.5, 1.0), rng.uniform(0.3, 0.7), float(rng.integers(2))])
    data = np.column_stack([rng.uniform(size=(6, 2)), rng.integers(0, 2, 6)])
    v = float(_cell_score(x[None, :])[0])
    y, w = farthest_in_cell(x, v, box, THRESHOLDS, _cell_score,
                            lambda X: feasible(domain, space, box, X), (), data, rng)
    assert w == v and float(_cell_score(y[None, :])[0]) == v and y[2] == x[2]
    far = _nearest(y[None, :], data)[0]
    assert far >= _nearest(x[None, :], data)[0]
    corners = np.array([[a, b, x[2]] for a, b in itertools.product([0.5 + box.margin[0], 1.0],
                                                                   [0.3 + box.margin[1], 0.7])])
    assert far >= _nearest(corners, data).max() - 1e-12
    g = np.array([[a, b, x[2]] for a in np.linspace(0.5 + 1e-9, 1.0, 41)
                  for b in np.linspace(0.3 + 1e-9, 0.7, 41)])
    assert far >= 0.9 * _nearest(g, data).max()


def test_constraints_hold_and_zeros_stay():
    """A sum-to-one mixture with at most two ingredients: the point moves (along the
    equality, in its cell) and keeps its zero."""
    inputs = [ContinuousInput(key=f"x{i}", bounds=(0.0, 1.0)) for i in range(3)]
    domain = Domain(inputs=Inputs(features=inputs), constraints=[
        LinearEqualityConstraint(features=["x0", "x1", "x2"], coefficients=[1, 1, 1], rhs=1),
        NChooseKConstraint(features=["x0", "x1", "x2"], min_count=0, max_count=2,
                           none_also_valid=False)])
    space = SplitSpace.from_domain(domain)
    box = input_box(domain, space)
    specs = constraint_specs(domain, space)
    thresholds = (np.array([0.2]), np.array([0.9]), np.array([0.5]))

    def score(X):
        return (X[:, 0] > 0.2) + 2.0 * (X[:, 1] > 0.9) + 4.0 * (X[:, 2] > 0.5)

    x = np.array([0.4, 0.6, 0.0])
    data = np.array([[0.45, 0.55, 0.0], [0.0, 0.5, 0.5]])
    y, w = farthest_in_cell(x, 1.0, box, thresholds, score,
                            lambda X: feasible(domain, space, box, X), specs, data,
                            np.random.default_rng(1))
    assert w == 1.0 and y[2] == 0.0 and abs(y.sum() - 1.0) < 1e-6
    assert feasible(domain, space, box, y[None, :])[0]

    def near(p):
        return np.sqrt(((data - p[None, :]) ** 2).sum(axis=1)).min()

    assert near(y) > near(x)


def test_the_ask_keeps_its_value_and_moves_away(continuous3):
    """Through the public entry: the same acquisition, no nearer the data, the bound kept."""
    from bofire_bark.optimize.entry import optimize_acquisition

    domain, space, post = continuous3
    kw = dict(time_limit=5.0, seed=0)
    a = optimize_acquisition(post, domain, space, **kw)
    b = optimize_acquisition(post, domain, space, tie_break="farthest", **kw)
    assert b.ucb >= a.ucb - 1e-9 * max(1.0, abs(a.ucb))
    assert b.bound == pytest.approx(a.bound)

    def near(x):
        return np.sqrt(((post.X - x[None, :]) ** 2).sum(axis=1)).min()

    assert near(b.x) >= near(a.x)


def test_an_unknown_tie_break_is_refused_by_name():
    from bofire_bark.settings import SearchSettings

    with pytest.raises(ValueError, match="tie_break"):
        SearchSettings(tie_break="nearest")


@pytest.mark.parametrize("seed", range(10))
def test_cell_bounds_hold_exactly_the_points_routed_like_x(seed):
    """Every value of [lo, hi] routes like x at every threshold, and a step past either end
    (outside the feature's range or across a threshold) routes otherwise."""
    from bofire_bark.optimize.incumbent import cell_bounds

    domain, space, box = _toy()
    rng = np.random.default_rng(seed)
    thresholds = (np.sort(rng.uniform(0, 1, rng.integers(0, 4))),
                  np.sort(rng.uniform(0, 1, rng.integers(0, 4))), np.array([]))
    x = np.array([rng.uniform(), rng.uniform(), float(rng.integers(0, 2))])
    lo, hi = cell_bounds(x, box, thresholds)
    assert lo[2] == hi[2] == x[2]
    for j in (0, 1):
        t = thresholds[j]
        assert lo[j] <= x[j] <= hi[j]
        for v in np.linspace(lo[j], hi[j], 101):
            np.testing.assert_array_equal(v <= t, x[j] <= t)
        for v in (lo[j] - 1e-6, hi[j] + 1e-6):
            assert np.any((v <= t) != (x[j] <= t)) or not 0.0 <= v <= 1.0
