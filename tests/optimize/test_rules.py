"""Acquisition rules (``optimize.rules``): each rule's value at a point is the engine's, its box
bound is never below the best value inside the box, the grid search finds the brute-force
optimum, the library enumeration its best point, and a bound broken on purpose is caught."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from acq_helpers import (
    cells,
    cells_in,
    continuous_domain,
    fit,
    mixed_domain,
    mixed_f,
    random_box,
    search_settings,
)
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import CategoricalInput, DiscreteInput
from scipy.stats import norm

from bofire_bark.optimize import grid as gr
from bofire_bark.optimize.entry import optimize_acquisition
from bofire_bark.optimize.library import build_library, optimize_library
from bofire_bark.optimize.outputs import output_acquisition
from bofire_bark.optimize.problem import build_problem
from bofire_bark.optimize.rules import EI, PI, SINGLE_OUTPUT_RULES, Rule, region_max
from bofire_bark.settings import AcquisitionSettings

ALL = [(r, s) for r in SINGLE_OUTPUT_RULES for s in (1.0, -1.0)]


def grid_of(domain, space, post, rule, sign, pending=None, kappa=1.96):
    problem, systems = build_problem(post, domain, space, kappa, sign, pending, gps=False,
                                     rule=rule)
    grid = gr.Grid(gr.grid_model(problem, systems, post, pending), problem.box)
    cons = gr.Constraints(problem.constraints, problem.box, problem.delta)
    return problem, systems, grid, cons


def _score(problem, systems, X):
    return problem.acquisition_rule.score(systems, X, problem.sign, problem.incumbents)



def bound_violations(grid, problem, systems, boxes: int = 30, seed: int = 1) -> int:
    """Boxes (random dives from the root) whose bound is below the best cell inside, or
    differs from the exact value on a decided box."""
    rng = np.random.default_rng(seed)
    bad = 0
    for _ in range(boxes):
        lo, hi, cat = random_box(grid, rng, depth=int(rng.integers(0, 10)))
        ub, n_und, _ = grid.bound(lo, hi, cat)
        X = cells_in(grid, problem.box, lo, hi, cat)
        values = _score(problem, systems, X)
        if values.max() > ub + 1e-9 or (n_und == 0 and abs(values.max() - ub) > 1e-9):
            bad += 1
    return bad


@pytest.fixture(scope="module")
def small():
    domain = mixed_domain()
    space, post = fit(domain, mixed_f, n=12, n_trees=3)
    return domain, space, post


def test_rule_values_match_their_definitions():
    """EI and PI against scipy's normal; the limits at sd 0; UCB is mean + kappa sd."""
    rng = np.random.default_rng(0)
    means, variances = rng.normal(size=(3, 5)), rng.uniform(0, 1, size=(3, 5))
    variances[0, 0] = 0.0
    best = rng.normal(size=3)
    sd = np.sqrt(variances)
    z = (means - best[:, None]) / np.where(sd > 0, sd, 1)
    ei = np.where(sd > 0, sd * (z * norm.cdf(z) + norm.pdf(z)),
                  np.maximum(means - best[:, None], 0))
    np.testing.assert_allclose(Rule("ei").values(means, variances, 1.0, best), ei, atol=1e-12)
    pi = np.where(sd > 0, norm.cdf(z), (means > best[:, None]).astype(float))
    np.testing.assert_allclose(Rule("pi").values(means, variances, 1.0, best), pi, atol=1e-12)
    np.testing.assert_allclose(Rule("ucb", 2.0).values(means, variances, -1.0, best),
                               -means + 2.0 * sd)


@pytest.mark.parametrize("code", [EI, PI])
def test_region_max_is_the_maximum_over_the_region(code):
    """The three-point formula against a dense search of {m <= A, L <= s <= B, m + k s <= C}
    (g nondecreasing in m: the best m is min(A, C - k s) for each s)."""
    rng = np.random.default_rng(code)
    for _ in range(300):
        A, f = rng.normal(size=2)
        L = rng.uniform(0, 0.5) * rng.integers(2)
        B = L + rng.uniform(0, 1)
        k = rng.uniform(0.2, 3)
        C = A + k * rng.uniform(-0.2, 1.2) * B
        s = np.linspace(L, B, 20001)
        m = np.minimum(A, C - k * s)
        dense = Rule("ei" if code == EI else "pi").values(m[None], (s**2)[None], 1.0,
                                                           np.array([f]))[0].max()
        ours = region_max(code, k, A, L, B, C, f)
        assert ours >= dense - 1e-12
        assert ours <= dense + 1e-3 * max(1.0, abs(dense))


@pytest.mark.parametrize(("rule", "sign"), ALL)
def test_value_at_points_is_the_engines(mixed, rule, sign):
    """A point is a decided box: its bound is the rule's exact value (with pending points)."""
    domain, space, post = mixed
    pend = space.encode(domain.inputs.sample(2, seed=5))
    problem, systems, grid, _ = grid_of(domain, space, post, rule, sign, pend)
    X = space.encode(domain.inputs.sample(200, seed=1))
    ours = np.array([grid.value(x) for x in X])
    np.testing.assert_allclose(ours, _score(problem, systems, X), atol=1e-10)


@pytest.mark.parametrize(("rule", "sign"), ALL)
def test_bound_holds_on_random_boxes(small, rule, sign):
    domain, space, post = small
    problem, systems, grid, _ = grid_of(domain, space, post, rule, sign)
    assert bound_violations(grid, problem, systems) == 0


@pytest.mark.parametrize("rule", ["ei", "nei", "pi"])
def test_a_broken_bound_is_caught(small, rule):
    """The same check on a grid whose incumbents are raised by 1 sd (the model solved is not
    the one scored): its bounds fall below values inside boxes, and the check says so."""
    domain, space, post = small
    problem, systems, _, _ = grid_of(domain, space, post, rule, 1.0)
    wrong = dataclasses.replace(problem, incumbents=problem.incumbents + 1.0)
    grid = gr.Grid(gr.grid_model(wrong, systems, post), problem.box)
    assert bound_violations(grid, problem, systems) > 0


@pytest.mark.parametrize(("rule", "sign"), ALL)
@pytest.mark.parametrize("case", ["mixed", "continuous"])
def test_search_proves_the_brute_force_optimum(rule, sign, case):
    """No start, gap 0: the best of every cell, proven, by the numba loop (no constraints)."""
    if case == "mixed":
        domain = mixed_domain()
        space, post = fit(domain, mixed_f, n=12, n_trees=3, seed=2)
    else:
        domain = continuous_domain(2)
        space, post = fit(domain, lambda X: np.sin(6 * X[:, 0]) * X[:, 1], n=15, n_trees=4)
    problem, systems, grid, cons = grid_of(domain, space, post, rule, sign)
    best = _score(problem, systems, np.array(list(cells(grid, problem.box)))).max()
    res = gr.search(grid, cons, None, -np.inf, search_settings(), numba_loop=True)
    assert res.status == "optimal"
    assert res.value == pytest.approx(best, abs=1e-10)
    assert res.bound == pytest.approx(best, abs=1e-10)
    assert _score(problem, systems, res.x[None])[0] == pytest.approx(best, abs=1e-10)


@pytest.mark.parametrize("rule", ["ei", "nei", "pi"])
def test_entry_point_answers_with_the_rule(mixed, rule):
    """``optimize_acquisition`` with a rule: the result's value is the rule's at the point,
    at least the best of 2000 random points, and the MIP refuses the rule."""
    domain, space, post = mixed
    res = optimize_acquisition(post, domain, space, rule=rule, time_limit=5.0, mip_gap=0.0)
    problem, systems = build_problem(post, domain, space, rule=rule, gps=False)
    X = space.encode(domain.inputs.sample(2000, seed=3))
    assert res.ucb == pytest.approx(_score(problem, systems, res.x[None])[0], abs=1e-10)
    assert res.ucb >= _score(problem, systems, X).max() - 1e-10
    assert res.bound >= res.ucb
    with pytest.raises(ValueError, match=f"rule '{rule}'.*MIP solver 'scip'"):
        optimize_acquisition(post, domain, space, rule=rule, solver="scip")


@pytest.mark.parametrize(("rule", "sign"), ALL)
def test_library_returns_the_best_point(rule, sign):
    """A finite domain: the enumeration's point is the best of all library points under the
    rule (scored by the engine), with pending points."""
    from bofire.data_models.features.api import ContinuousOutput
    from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective

    obj = MaximizeObjective() if sign > 0 else MinimizeObjective()
    domain = Domain(inputs=Inputs(features=[
        DiscreteInput(key="a", values=[0.0, 1.0, 2.0, 3.0, 4.0]),
        DiscreteInput(key="b", values=[0.0, 0.5, 1.0]),
        CategoricalInput(key="c", categories=["p", "q", "r"])]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=obj)]))
    space, post = fit(domain, lambda X: X[:, 0] * (X[:, 2] == 1) - X[:, 1], n=10, n_trees=4)
    lib = build_library(domain, space)
    pend = lib.X[[3, 17]]
    acq = output_acquisition(domain, {"y": post})
    res = optimize_library(lib, {"y": post}, acq, space, AcquisitionSettings(rule=rule),
                           pending=pend)
    problem, systems = build_problem(post, domain, space, sign=sign, pending=pend, gps=False,
                                     rule=rule)
    values = _score(problem, systems, lib.X)
    assert res.ucb == pytest.approx(values.max(), abs=1e-10)
    assert _score(problem, systems, res.x[None])[0] == pytest.approx(values.max(), abs=1e-10)


def test_nei_incumbents_are_each_samples_best_mean(mixed):
    """NEI's f_s: each sample's best mean at the measured and pending points; EI's the best
    measurement for every sample."""
    domain, space, post = mixed
    pend = space.encode(domain.inputs.sample(2, seed=5))
    systems = post.systems(pend)
    means, _ = systems.predict_each(np.concatenate((post.X, pend)))
    np.testing.assert_allclose(Rule("nei").incumbents(post, systems, -1.0, pend),
                               (-means).max(axis=1))
    np.testing.assert_allclose(Rule("ei").incumbents(post, systems, -1.0, pend),
                               np.max(-post.y))
