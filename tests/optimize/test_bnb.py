"""The grid branch-and-bound: exact values, sound bounds, the true optimum, and constraints held
by the search's own point (no starting point to fall back on)."""

from __future__ import annotations

import numpy as np
import pytest
from acq_helpers import (
    cells,
    continuous_domain,
    fit,
    mixed_domain,
    mixed_f,
    random_box,
    search_settings,
)
from bofire.data_models.constraints.api import (
    LinearEqualityConstraint,
    LinearInequalityConstraint,
    NChooseKConstraint,
    NonlinearInequalityConstraint,
    ProductInequalityConstraint,
)
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.features.api import ContinuousInput

from bofire_bark.optimize import grid as bnb
from bofire_bark.optimize.constraints import feasible
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.optimize.entry import optimize_acquisition
from bofire_bark.optimize.grid.bound import LAM_UNDECIDED
from bofire_bark.optimize.grid.model import _words
from bofire_bark.optimize.grid.pruning import _interval
from bofire_bark.optimize.incumbent import random_points
from bofire_bark.optimize.problem import build_problem


def grid_of(domain, space, post, kappa=1.96, sign=1.0, pending=None):
    problem, systems = build_problem(post, domain, space, kappa, sign, pending, gps=False)
    # the numba loop's relaxation (n_dual 3, product score) for every case, as these cases
    # were chosen with it; any relaxation gives valid bounds
    gm = bnb.grid_model(problem, systems, post, pending, numba_loop=True)
    grid = bnb.Grid(gm, problem.box)
    cons = bnb.Constraints(problem.constraints, problem.box, problem.delta)
    return problem, systems, grid, cons


@pytest.mark.parametrize("kappa", [0.0, 1.96])
@pytest.mark.parametrize("pending", [False, True])
def test_value_is_the_engine_ucb(mixed, kappa, pending):
    domain, space, post = mixed
    rng = np.random.default_rng(0)
    pend = space.encode(domain.inputs.sample(3, seed=5)) if pending else None
    problem, systems, grid, _ = grid_of(domain, space, post, kappa, -1.0, pend)
    X = random_points(problem.box, (), 300, problem.delta, rng)
    ours = np.array([grid.value(x) for x in X])
    np.testing.assert_allclose(ours, systems.integrated_ucb(X, kappa, -1.0), atol=1e-10)


def _points_in(grid, problem, lo, hi, cat, rng, n):
    X = random_points(problem.box, (), 20 * n, problem.delta, rng)
    keep = []
    for x in X:
        c_lo, c_hi, c_cat = grid.cell_of(x)
        inside = np.all((c_lo >= lo) & (c_lo <= hi) | (problem.box.kinds == CATEGORICAL))
        inside &= all((cat[j] & c_cat[j]).any() for j in range(grid.d)
                      if problem.box.kinds[j] == CATEGORICAL)
        if inside:
            keep.append(x)
    return np.array(keep[:n])


@pytest.mark.parametrize("lagrange", [False, True])
@pytest.mark.parametrize("pending", [False, True])
def test_bound_holds_on_every_box(mixed, lagrange, pending):
    """The bound of a box is >= the exact value of every point in it, and equals it on a
    decided box; also with multipliers on the categorical copies (any with zero weighted sums
    hold: random ones, far from zero, after a fit has run) and with pending points."""
    domain, space, post = mixed
    pend = space.encode(domain.inputs.sample(2, seed=3)) if pending else None
    problem, systems, grid, _ = grid_of(domain, space, post, pending=pend)
    if lagrange:
        trace = grid.fit_multipliers(0.0, 50)
        assert min(trace) <= trace[0]
        lam = grid.gm.lam
        lam[:] = grid.gm.lagrange.project(np.random.default_rng(2).normal(0.0, 0.5, len(lam)))
        assert np.abs(lam).max() > 0.1
        sums = np.bincount(grid.gm.lagrange.j * 64 + grid.gm.lagrange.c,
                           weights=grid.gm.lagrange.w * lam)
        np.testing.assert_allclose(sums, 0.0, atol=1e-9)
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(40):
        lo, hi, cat = random_box(grid, rng, depth=int(rng.integers(0, 8)))
        ub, n_und, _ = grid.bound(lo, hi, cat)
        X = _points_in(grid, problem, lo, hi, cat, rng, 50)
        if len(X) == 0:
            continue
        values = systems.integrated_ucb(X, 1.96, 1.0)
        assert values.max() <= ub + 1e-9
        if n_und == 0:
            np.testing.assert_allclose(values, ub, atol=1e-10)
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_search_finds_the_best_cell_without_a_start(sign):
    """On a grid small enough to enumerate, the search alone (no start) returns the best cell
    and proves it."""
    domain = Domain(inputs=Inputs(features=[
        ContinuousInput(key="x0", bounds=(0, 1)), ContinuousInput(key="x1", bounds=(0, 1))]))
    space, post = fit(domain, lambda X: np.sin(6 * X[:, 0]) * X[:, 1], n=15, n_trees=5)
    problem, systems, grid, cons = grid_of(domain, space, post, 1.0, sign)
    X = np.array(list(cells(grid, problem.box)))
    best = systems.integrated_ucb(X, 1.0, sign).max()
    res = bnb.search(grid, cons, None, -np.inf, search_settings(), numba_loop=not cons)
    assert res.status == "optimal"
    assert res.value == pytest.approx(best, abs=1e-10)
    assert res.bound == pytest.approx(best, abs=1e-10)
    assert systems.integrated_ucb(res.x[None], 1.0, sign)[0] == pytest.approx(best, abs=1e-10)


def test_search_on_a_mixed_domain_matches_enumeration():
    """Continuous, discrete and categorical features: the enumerated best cell again."""
    domain = mixed_domain()
    space, post = fit(domain, mixed_f, n=12, n_trees=3)
    problem, systems, grid, cons = grid_of(domain, space, post)
    X = np.array(list(cells(grid, problem.box)))
    best = systems.integrated_ucb(X, 1.96, 1.0).max()
    res = bnb.search(grid, cons, None, -np.inf, search_settings(), numba_loop=not cons)
    assert res.status == "optimal"
    assert res.value == pytest.approx(best, abs=1e-10)


def test_binned_ordered_multipliers_match_enumeration():
    """With multipliers on bins of the ordered features too (``GridSettings.lagrange_bins``)
    the search proves the enumerated best cell, and its point scores that value in the
    engine."""
    domain = mixed_domain()
    space, post = fit(domain, mixed_f, n=12, n_trees=3)
    problem, systems, grid, cons = grid_of(domain, space, post)
    settings = bnb.GridSettings(lagrange_bins=True)
    binned = bnb.Grid(bnb.grid_model(problem, systems, post, settings=settings), problem.box)
    assert len(binned.gm.lam) > len(grid.gm.lam)  # the ordered features have multipliers
    X = np.array(list(cells(grid, problem.box)))
    best = systems.integrated_ucb(X, 1.96, 1.0).max()
    res = bnb.search(binned, cons, None, -np.inf, search_settings(grid=settings),
                     numba_loop=not cons)
    assert res.status == "optimal"
    assert res.value == pytest.approx(best, abs=1e-10)
    assert res.bound == pytest.approx(best, abs=1e-10)
    assert systems.integrated_ucb(res.x[None], 1.96, 1.0)[0] == pytest.approx(best, abs=1e-10)


KEYS = ["x0", "x1", "x2"]
CONSTRAINTS = {
    "linear_eq": [LinearEqualityConstraint(features=KEYS, coefficients=[1, 1, 1], rhs=1.0)],
    "linear_ineq": [LinearInequalityConstraint(features=["x0", "x1"], coefficients=[1, 1],
                                               rhs=0.5)],
    "linear_gap": [LinearInequalityConstraint(features=["x0", "x1"], coefficients=[1, -1],
                                              rhs=-0.5)],
    "nchoosek": [NChooseKConstraint(features=KEYS, min_count=1, max_count=1,
                                    none_also_valid=False)],
    "mixture": [LinearEqualityConstraint(features=KEYS, coefficients=[1, 1, 1], rhs=1.0),
                NChooseKConstraint(features=KEYS, min_count=1, max_count=2,
                                   none_also_valid=False)],
    "nonlinear": [NonlinearInequalityConstraint(expression="x0**2 + x2**2 - 0.25",
                                                features=["x0", "x2"])],
    "product": [ProductInequalityConstraint(features=["x0", "x2"], exponents=[1, 2],
                                            rhs=0.05)],
}


@pytest.fixture(scope="module")
def increasing():
    """A posterior whose acquisition grows with every input: any constraint binds."""
    domain = continuous_domain(3)
    space, post = fit(domain, lambda X: X.sum(axis=1) + X[:, 0] ** 2, n=20, n_trees=6)
    return domain, space, post


@pytest.mark.parametrize("name", list(CONSTRAINTS))
def test_search_point_holds_each_constraint(increasing, name):
    """Without a start, the search's own point satisfies the constraint (BoFire's check),
    scores the engine's UCB, and beats every one of 5,000 random feasible points."""
    domain, space, post = increasing
    domain = Domain(inputs=domain.inputs, constraints=CONSTRAINTS[name])
    problem, systems, grid, cons = grid_of(domain, space, post)
    res = bnb.search(grid, cons, None, -np.inf, search_settings(), numba_loop=not cons)
    assert res.x is not None and res.status == "optimal"
    assert feasible(domain, space, problem.box, res.x[None], tol=1e-6)[0]
    assert systems.integrated_ucb(res.x[None], 1.96, 1.0)[0] == pytest.approx(res.value,
                                                                              abs=1e-10)
    X = random_points(problem.box, problem.constraints, 5000, problem.delta,
                      np.random.default_rng(0))
    X = X[feasible(domain, space, problem.box, X, tol=1e-6)]
    assert len(X) > 0
    assert systems.integrated_ucb(X, 1.96, 1.0).max() <= res.value + 1e-10
    assert res.bound >= res.value


def test_unconstrained_optimum_violates_the_constraints(increasing):
    """The constraint tests are not vacuous: the unconstrained optimum breaks each one."""
    domain, space, post = increasing
    problem, systems, grid, cons = grid_of(domain, space, post)
    free = bnb.search(grid, cons, None, -np.inf, search_settings(), numba_loop=not cons).x
    for name, constraints in CONSTRAINTS.items():
        d = Domain(inputs=domain.inputs, constraints=constraints)
        assert not feasible(d, space, problem.box, free[None], tol=1e-6)[0], name


def test_under_constraints_the_search_goes_on_after_the_proof(increasing):
    """Under constraints the first point within mip_gap is not always the best: once the gap
    is proven the search goes on towards POLISH_GAP (a share of the time left) and returns the
    proven optimum's value; stopped at the proof (polish 0) it returns a worse point."""
    domain, space, post = increasing
    domain = Domain(inputs=domain.inputs, constraints=CONSTRAINTS["product"])
    problem, systems, grid, cons = grid_of(domain, space, post)
    best = bnb.search(grid, cons, None, -np.inf, search_settings(), numba_loop=not cons)
    assert best.status == "optimal"
    stopped = bnb.search(grid, cons, None, -np.inf,
                         search_settings(mip_gap=0.3, grid=bnb.GridSettings(polish=0.0)))
    assert stopped.status == "gap" and stopped.value < best.value - 0.05
    res = bnb.search(grid, cons, None, -np.inf, search_settings(mip_gap=0.3))
    polish_gap = bnb.GridSettings().polish_gap
    assert res.value >= best.value - polish_gap * abs(best.value)
    assert res.bound - res.value <= polish_gap * abs(res.value) + 1e-12
    assert feasible(domain, space, problem.box, res.x[None], tol=1e-6)[0]
    assert systems.integrated_ucb(res.x[None], 1.96, 1.0)[0] == pytest.approx(res.value,
                                                                              abs=1e-10)


def test_infeasible_domain_is_reported(increasing):
    domain, space, post = increasing
    domain = Domain(inputs=domain.inputs, constraints=[LinearInequalityConstraint(
        features=KEYS, coefficients=[1, 1, 1], rhs=-1.0)])
    problem, systems, grid, cons = grid_of(domain, space, post)
    res = bnb.search(grid, cons, None, -np.inf, search_settings(), numba_loop=not cons)
    assert res.x is None and res.status == "infeasible"


@pytest.mark.parametrize("expr", [
    ("add", ("mul", ("var", 0), ("var", 1)), ("const", -0.3)),
    ("pow", ("add", ("var", 0), ("const", -0.5)), ("const", 2.0)),
    ("pow", ("var", 1), ("const", 0.5)),
    ("pow", ("add", ("var", 0), ("const", 0.1)), ("const", -1.0)),
    ("func", "exp", ("mul", ("const", -2.0), ("var", 0))),
    ("func", "log", ("add", ("var", 1), ("const", 0.01))),
    ("func", "sin", ("var", 0)),
    ("func", "abs", ("add", ("var", 0), ("const", -0.4))),
    ("func", "acos", ("var", 1)),
    ("func", "cosh", ("add", ("var", 0), ("const", -0.5))),
])
def test_interval_arithmetic_encloses_the_values(expr):
    from bofire_bark.expressions import evaluate

    rng = np.random.default_rng(0)
    for _ in range(50):
        a = np.sort(rng.uniform(0, 1, (2, 2)), axis=0)
        lo, hi = _interval(expr, a[0], a[1])
        for x in rng.uniform(a[0], a[1], (40, 2)):
            v = evaluate(expr, x)
            assert lo - 1e-12 <= v <= hi + 1e-12


def test_optimize_acquisition_reports_the_proof(mixed):
    domain, space, post = mixed
    res = optimize_acquisition(post, domain, space, seed=0, mip_gap=0.0, abs_gap=0.0,
                               time_limit=60.0)
    assert res.solver == "bnb"
    assert res.status == "optimal" and res.gap == 0.0
    assert res.bound == pytest.approx(res.ucb)
    assert "proven optimal" in res.summary()


def test_ordered_features_are_cut_in_the_middle(continuous3):
    """With ``bisect`` a box is cut on the same feature as by the largest impact, at a
    threshold inside the box and no farther from the middle of its cells; on some boxes
    nearer (the two rules differ)."""
    domain, space, post = continuous3
    problem, systems = build_problem(post, domain, space, 1.96, 1.0, None, gps=False)
    grids = [bnb.Grid(bnb.grid_model(problem, systems, post,
                                     settings=bnb.GridSettings(bisect=b)), problem.box)
             for b in (False, True)]
    node_feat, node_thr = grids[0].gm.bm.node_feat, grids[0].gm.bm.node_thr
    rng = np.random.default_rng(3)
    nearer = 0
    for depth in range(12):
        for _ in range(5):
            lo, hi, cat = random_box(grids[0], rng, depth)
            (_, n_a, s_a), (_, n_b, s_b) = (g.bound(lo, hi, cat) for g in grids)
            assert n_a == n_b
            if n_a == 0:
                continue
            j = node_feat[s_b]
            assert j == node_feat[s_a]
            assert lo[j] <= node_thr[s_b] < hi[j]
            mid = 0.5 * (lo[j] + hi[j])
            d_a, d_b = (abs(node_thr[s] + 0.5 - mid) for s in (s_a, s_b))
            assert d_b <= d_a
            nearer += d_b < d_a
    assert nearer > 0


def test_feature_score_favours_cuts_that_lower_both_children():
    """Feature 0's two splits would lower only the left child (1 each), feature 1's one split
    both (0.5 each): the sum picks feature 0, the product feature 1; a feature without an
    undecided split scores 0."""
    from bofire_bark.optimize.grid.bound import feature_scores

    node_feat = np.array([0, 0, 1, 2])
    undecided = np.array([0, 1, 2])
    impact = np.array([[1.0, 0.0], [1.0, 0.0], [0.5, 0.5]])
    summed = feature_scores(node_feat, undecided, 3, impact, 3, False)
    product = feature_scores(node_feat, undecided, 3, impact, 3, True)
    assert np.argmax(summed) == 0 and summed[0] == pytest.approx(2.0)
    assert np.argmax(product) == 1 and product[1] == pytest.approx(0.25)
    assert product[0] == pytest.approx(2e-9) and summed[2] == product[2] == 0.0


@pytest.mark.parametrize("kappa", [0.0, 1.96])
def test_multiplier_bound_holds_on_tight_boxes(kappa):
    """Boxes that are one cell wide in the ordered feature and open in the categorical one
    (four codes, so leaves hold several): the bound with multipliers far from zero stays >=
    the best of their points."""
    from bofire.data_models.features.api import CategoricalInput

    domain = Domain(inputs=Inputs(features=[
        ContinuousInput(key="x", bounds=(0, 1)),
        CategoricalInput(key="c", categories=["a", "b", "c", "d"])]))
    effect = np.array([0.0, 1.0, -0.5, 0.7])
    space, post = fit(domain, lambda X: np.sin(4 * X[:, 0]) + effect[X[:, 1].astype(int)],
                      n=24, n_trees=8)
    problem, systems, grid, _ = grid_of(domain, space, post, kappa)
    rng = np.random.default_rng(2)
    # any multipliers with zero weighted sums keep the bound valid: draw them at random
    grid.gm.lam[:] = grid.gm.lagrange.project(rng.normal(0.0, 0.3, len(grid.gm.lam)))
    grid.use_lam = LAM_UNDECIDED
    assert np.abs(grid.gm.lam).max() > 1e-3
    codes = np.array(problem.box.allowed[1], dtype=float)
    open_boxes = 0
    for x in random_points(problem.box, (), 200, problem.delta, rng):
        lo, hi, cat = grid.cell_of(x)
        cat[1] = _words(problem.box.allowed[1], grid.gm.n_words)
        ub, n_und, _ = grid.bound(lo, hi, cat)
        pts = np.repeat(x[None], len(codes), axis=0)
        pts[:, 1] = codes
        best = systems.integrated_ucb(pts, kappa, 1.0).max()
        assert best <= ub + 1e-9
        open_boxes += n_und > 0
    assert open_boxes > 100  # the categorical split is still open: the multipliers apply


def test_search_goes_on_past_time_limit_only_while_the_gap_is_wide():
    """With max_time the search passes time_limit while the gap exceeds extend_gap (here
    always), and proves the enumerated best cell; without it, it stops at time_limit."""
    domain = Domain(inputs=Inputs(features=[
        ContinuousInput(key="x0", bounds=(0, 1)), ContinuousInput(key="x1", bounds=(0, 1))]))
    space, post = fit(domain, lambda X: np.sin(6 * X[:, 0]) * X[:, 1], n=15, n_trees=5)
    problem, systems, grid, cons = grid_of(domain, space, post, 1.0, 1.0)
    best = systems.integrated_ucb(np.array(list(cells(grid, problem.box))), 1.0, 1.0).max()
    no_lagrange = bnb.GridSettings(n_lagrange=0)
    stopped = bnb.search(grid, cons, None, -np.inf, search_settings(1e-9, grid=no_lagrange),
                         numba_loop=True)
    assert stopped.status == "time_limit"
    extended = search_settings(1e-9, grid=no_lagrange, max_time=60.0, extend_gap=0.0)
    res = bnb.search(grid, cons, None, -np.inf, extended, numba_loop=True)
    assert res.status == "optimal" and res.value == pytest.approx(best, abs=1e-10)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_ranges_are_tight(name):
    """Enclosing, and tight (within a fine grid's resolution), over intervals of any place
    and width: a range of [-1, 1] everywhere would prune no box (the earlier bound)."""
    f = getattr(np, name)
    rng = np.random.default_rng(1)
    for _ in range(500):
        lo = rng.uniform(-10, 10)
        hi = lo + rng.exponential(2.0)
        b, t = _interval(("func", name, ("var", 0)), np.array([lo]), np.array([hi]))
        v = f(np.linspace(lo, hi, 4001))
        assert b - 1e-12 <= v.min() and v.max() <= t + 1e-12
        assert v.min() - b < 1e-3 and t - v.max() < 1e-3


def test_an_exhausted_search_with_unresolved_boxes_says_so(increasing):
    """Feasible points only in a disk of radius 0.002: the boxes around it are neither
    proven empty nor given a feasible point by random tries, so the search ends with every
    box taken and the gap open; that is not a time limit."""
    domain, space, post = increasing
    disk = NonlinearInequalityConstraint(
        expression="(x0 - 0.3)**2 + (x1 - 0.7)**2 - 0.000004", features=["x0", "x1"])
    domain = Domain(inputs=domain.inputs, constraints=[disk])
    _, _, grid, cons = grid_of(domain, space, post)
    res = bnb.search(grid, cons, None, -np.inf, search_settings(), numba_loop=not cons)
    assert res.unresolved > 0 and res.bound > res.value
    assert res.status == "unresolved" and res.seconds < 30.0
