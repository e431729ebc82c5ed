"""A batch's searches share their work (``entry.Batch``): the next candidate's grid search
starts from the partition the one before left (``grid.Frontier``), whose bounds must still
hold once one more point is pending. Checked against brute force over every cell, with a
frontier whose bounds are broken on purpose as the control."""

from __future__ import annotations

import numpy as np
import pytest
from acq_helpers import cells, continuous_domain, fit, mixed_domain, search_settings
from bofire.data_models.constraints.api import LinearInequalityConstraint

from bofire_bark.optimize import grid as gr
from bofire_bark.optimize.grid.driver import Frontier, build_grid
from bofire_bark.optimize.problem import build_problem
from bofire_bark.optimize.rules import BATCH_RULES, PI, SINGLE_OUTPUT_RULES, Rule, rule_value

KAPPA = 1.96


def _f(seed):
    w = np.random.default_rng(seed).normal(size=4)
    return lambda X: (w[0] * np.sin(3 * X[:, 0]) + w[1] * X[:, 1] + w[2] * X[:, 2]
                      + w[3] * X[:, 0] * X[:, 1])


@pytest.fixture(scope="module", params=["mixed0", "mixed1", "constrained2"])
def small(request):
    """Small posteriors: mixed features, or three continuous ones under a linear
    inequality (the constrained search's polish runs)."""
    seed = int(request.param[-1])
    if request.param.startswith("mixed"):
        domain = mixed_domain()
    else:
        domain = continuous_domain(3, [LinearInequalityConstraint(
            features=["x0", "x1"], coefficients=[1.0, 1.0], rhs=1.2)])
    space, post = fit(domain, _f(seed), n=14, n_trees=5, seed=seed)
    return domain, space, post


def _setup(small, rule, pending):
    domain, space, post = small
    problem, systems = build_problem(post, domain, space, KAPPA, 1.0, pending, gps=False,
                                     rule=rule)
    grid, cons = build_grid(problem, systems, post, search_settings(), pending)
    X = np.array(list(cells(grid, problem.box)))
    if cons:  # the feasible cell centres: a lower bound of the feasible maximum
        X = X[[cons.satisfied(x) for x in X]]
    values = Rule(rule, KAPPA).score(systems, X, 1.0, problem.incumbents)
    return grid, cons, X, values


def _batch(small, rule, n, frontier, gaps=(0.0, 0.0), break_bounds=False):
    """``n`` candidates, each searched with the ones before pending and ``frontier`` carried;
    yields (result, the brute-force values of that search's acquisition)."""
    pending = None
    for _ in range(n):
        grid, cons, _X, values = _setup(small, rule, pending)
        res = gr.search(grid, cons, None, -np.inf, search_settings(60.0, *gaps),
                        frontier=frontier)
        yield res, values
        if break_bounds:  # every kept bound far below the truth: the control
            frontier.boxes = [(b[0] - 10.0, *b[1:]) for b in frontier.boxes]
        pending = res.x[None] if pending is None else np.vstack([pending, res.x])


@pytest.mark.parametrize("rule", BATCH_RULES)
def test_batch_searches_prove_the_brute_force_optimum(small, rule):
    """Gap 0: every candidate of a 4-batch, searched from the frontier, is the best cell of
    its (conditioned) acquisition and its bound is that maximum (under the constraint: at
    least the best feasible cell centre); the frontier was used."""
    frontier = Frontier()
    exact = small[0].constraints.constraints == []
    for i, (res, values) in enumerate(_batch(small, rule, 4, frontier)):
        assert res.status == "optimal"
        if exact:
            assert res.value == pytest.approx(values.max(), abs=1e-9)
        else:
            assert res.value >= values.max() - 1e-9
        assert res.bound >= values.max() - 1e-9
        assert frontier.boxes, "the search left no partition"
        if i == 0:
            first_nodes = res.nodes
        else:  # the later searches start from a partition, not the root
            assert res.nodes <= first_nodes + len(frontier.boxes)


@pytest.mark.parametrize("rule", BATCH_RULES)
def test_batch_bound_holds_at_a_gap(small, rule):
    """Stopped at a 20 % relative gap, every later search's bound is >= the brute-force
    maximum and its value within the gap of it."""
    for res, values in _batch(small, rule, 5, Frontier(), gaps=(0.2, 0.0)):
        assert res.bound >= values.max() - 1e-9
        assert res.value <= values.max() + 1e-9
        assert res.bound - res.value <= 0.2 * abs(res.value) + 1e-9


def test_a_broken_frontier_is_caught(small):
    """The control: with the kept bounds lowered by 10 sds, the later searches' bounds fall
    below the brute-force maximum (this is what the tests above would see)."""
    broken = [res.bound < values.max() - 1e-6
              for res, values in _batch(small, "ucb", 3, Frontier(), break_bounds=True)]
    assert not broken[0] and any(broken[1:])


def test_a_frontier_of_another_grid_is_not_used(small):
    """A frontier cut on another posterior's grid is ignored (the search starts at the root
    and proves its own optimum)."""
    domain, space, post = small
    frontier = Frontier()
    other_space, other = fit(domain, lambda X: -X[:, 0], n=10, n_trees=3, seed=7)
    problem, systems = build_problem(other, domain, other_space, KAPPA, 1.0, gps=False)
    grid, cons = build_grid(problem, systems, other, search_settings())
    gr.search(grid, cons, None, -np.inf, search_settings(), frontier=frontier)
    grid, cons, _X, values = _setup(small, "ucb", None)
    assert not frontier.fits(grid)
    res = gr.search(grid, cons, None, -np.inf, search_settings(), frontier=frontier)
    assert res.value == pytest.approx(values.max(), abs=1e-9)


@pytest.mark.parametrize("rule", BATCH_RULES)
def test_batch_rules_only_fall_as_points_are_pending(small, rule):
    """What the reuse rests on: with one more pending point the acquisition of
    ``BATCH_RULES`` is nowhere higher (every cell, 3 pending points added one by one, the
    first at the best cell)."""
    pending, rises = None, []
    _grid, _cons, X, before = _setup(small, rule, pending)
    for i in range(3):
        x = X[np.argmax(before)] if i == 0 else X[(7 * i) % len(X)]
        pending = x[None] if pending is None else np.vstack([pending, x])
        _grid, _cons, X2, after = _setup(small, rule, pending)
        assert np.array_equal(X, X2)
        rises.append(float((after - before).max()))
        before = after
    assert max(rises) <= 1e-9 * max(1.0, float(np.abs(before).max()))


def test_pi_is_not_a_batch_rule():
    """PI rises as the sd shrinks above its incumbent, so a pending point can raise it:
    its searches do not reuse bounds."""
    assert set(BATCH_RULES) < set(SINGLE_OUTPUT_RULES) and "pi" not in BATCH_RULES
    assert rule_value(PI, 1.0, 0.5, 0.0) > rule_value(PI, 1.0, 1.0, 0.0)


def test_batch_settings_polish_the_first_search_only():
    """``Batch.search_settings``: the first search keeps the polish, the later ones run
    without it unless ``GridSettings.batch_polish``; the start's draws are made once."""
    from bofire_bark.optimize.entry import Batch
    from bofire_bark.settings import GridSettings

    batch = Batch()
    s = search_settings(grid=GridSettings(polish=0.5))
    assert batch.search_settings(s).grid.polish == 0.5
    assert batch.search_settings(s).grid.polish == 0.0
    keep = search_settings(grid=GridSettings(polish=0.5, batch_polish=True))
    assert batch.search_settings(keep).grid.polish == 0.5
    domain = continuous_domain(2)
    from bofire_bark.optimize.constraints import active_delta, input_box
    from bofire_bark.space import SplitSpace

    box = input_box(domain, SplitSpace.from_domain(domain))
    first = batch.draws(box, (), active_delta(box), search_settings(seed=1))
    assert batch.draws(box, (), active_delta(box), search_settings(seed=2)) is first


@pytest.mark.parametrize(("function", "n_search", "shared"), [
    ({"type": "qUCB"}, 1, False), ({"type": "qUCB"}, 3, True),
    ({"type": "qLogNEI"}, 3, True), ({"type": "qPI"}, 3, False)])
def test_which_searches_of_an_ask_share_a_frontier(monkeypatch, function, n_search, shared):
    """Without domain constraints ask(1) runs the plan's numba loop; ask(n > 1) under the
    batch rules runs every search in the Python loop with one frontier; PI does not."""
    import bofire.strategies.api as strategies
    from bofire.data_models.domain.api import Domain, Outputs
    from bofire.data_models.features.api import ContinuousOutput

    from bofire_bark.data_models import BARKSettings, BARKStrategy
    from bofire_bark.optimize.grid import driver

    domain = Domain(inputs=continuous_domain(2).inputs,
                    outputs=Outputs(features=[ContinuousOutput(key="y")]))
    fast = BARKSettings(n_trees=5, n_chains=2, n_samples=2, thinning=2, burn_in=20)
    data_model = BARKStrategy.model_validate({
        "domain": domain.model_dump(), "surrogate_specs": fast.model_dump(), "seed": 0,
        "acquisition_function": function})
    strategy = strategies.map(data_model)
    X = domain.inputs.sample(8, seed=0)
    X["y"], X["valid_y"] = np.sin(3 * X["x0"]) + X["x1"], 1
    strategy.tell(X)
    calls = []
    search = driver.search

    def spy(grid, cons, x0, v0, settings=None, numba_loop=False, frontier=None):
        calls.append((numba_loop, frontier))
        return search(grid, cons, x0, v0, settings, numba_loop, frontier)

    monkeypatch.setattr(driver, "search", spy)
    monkeypatch.setattr(gr, "search", spy)
    strategy.ask(n_search)
    assert len(calls) >= n_search
    if shared:
        assert all(not numba and f is calls[0][1] and f is not None for numba, f in calls)
    else:
        assert all(f is None for _numba, f in calls)
        if n_search == 1:
            assert calls[0][0]  # the plan's numba loop
