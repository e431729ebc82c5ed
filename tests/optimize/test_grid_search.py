"""The numba box loop (``grid.loop``) of the branch-and-bound: the enumerated optimum on small
grids, a valid bound wherever it stops, and the Python loop's answer box for box."""

from __future__ import annotations

import time

import numpy as np
import pytest
from acq_helpers import cells, continuous_domain, fit, mixed_domain, search_settings

from bofire_bark.optimize import grid as gr
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.optimize.grid import driver as gs
from bofire_bark.optimize.grid import loop
from bofire_bark.optimize.grid.points import centre
from bofire_bark.optimize.problem import build_problem

KAPPA = 1.96


def _f(seed):
    w = np.random.default_rng(seed).normal(size=5)
    return lambda X: (w[0] * np.sin(3 * X[:, 0]) + w[1] * X[:, 1] + w[2] * X[:, 2]
                      + w[3] * (X[:, -1] == 1) + w[4] * X[:, 0] * X[:, 1])


@pytest.fixture(scope="module", params=["mixed0", "mixed1", "mixed2", "continuous3"])
def small(request):
    """Small posteriors on random responses: continuous, discrete and categorical features,
    or three continuous ones."""
    seed = int(request.param[-1])
    domain = mixed_domain() if request.param.startswith("mixed") else continuous_domain(3)
    space, post = fit(domain, _f(seed), n=14, n_trees=5, seed=seed)
    return domain, space, post


def grid_of(small, sign=1.0, kappa=KAPPA):
    """A fresh grid (the search fits multipliers into it) and the engine's systems."""
    domain, space, post = small
    problem, systems = build_problem(post, domain, space, kappa, sign, gps=False)
    grid = gr.Grid(gr.grid_model(problem, systems, post), problem.box)
    cons = gr.Constraints(problem.constraints, problem.box, problem.delta)
    return problem, systems, grid, cons


def _no_python_loop(*args, **kwargs):
    raise AssertionError("the Python loop ran")


@pytest.mark.parametrize(("sign", "kappa"), [(1.0, KAPPA), (-1.0, KAPPA), (1.0, 0.0)])
def test_numba_search_proves_the_enumerated_optimum(small, sign, kappa, monkeypatch):
    """No start: the numba loop (the Python one is disabled) returns the best cell, proven,
    and its value is the engine's at the returned point; with room for 2 open boxes at first
    (the slots grow)."""
    problem, systems, grid, cons = grid_of(small, sign, kappa)
    best = systems.integrated_ucb(np.array(list(cells(grid, problem.box))), kappa, sign).max()
    monkeypatch.setattr(gs, "_search", _no_python_loop)
    res = gr.search(grid, cons, None, -np.inf, search_settings(grid=gr.GridSettings(slots=2)),
                    numba_loop=True)
    assert res.status == "optimal" and res.nodes >= 1
    assert res.value == pytest.approx(best, abs=1e-10)
    assert res.bound == pytest.approx(best, abs=1e-10)
    assert systems.integrated_ucb(res.x[None], kappa, sign)[0] == pytest.approx(res.value,
                                                                                abs=1e-10)


@pytest.mark.parametrize("gaps", [(0.02, 0.0), (0.2, 0.0), (1.0, 0.0), (0.0, 0.3)])
def test_numba_bound_holds_where_it_stops(small, gaps, monkeypatch):
    """Stopped at a relative or absolute gap from a random start, the bound is >= the
    enumerated maximum, the value <= it and equal to the engine's at the point."""
    problem, systems, grid, cons = grid_of(small)
    X = np.array(list(cells(grid, problem.box)))
    values = systems.integrated_ucb(X, KAPPA, 1.0)
    x0 = X[np.random.default_rng(len(X)).integers(len(X))]
    v0 = float(systems.integrated_ucb(x0[None], KAPPA, 1.0)[0])
    monkeypatch.setattr(gs, "_search", _no_python_loop)
    res = gr.search(grid, cons, x0, v0, search_settings(60.0, *gaps), numba_loop=True)
    assert res.status in ("gap", "optimal")
    assert res.bound >= values.max() - 1e-10
    assert v0 <= res.value <= values.max() + 1e-10
    assert systems.integrated_ucb(res.x[None], KAPPA, 1.0)[0] == pytest.approx(res.value,
                                                                              abs=1e-10)
    assert res.bound - res.value <= max(gaps[0] * abs(res.value), gaps[1]) + 1e-12


def test_numba_bound_holds_at_the_time_limit(small):
    """Stopped by the clock after a few one-box chunks: still a valid bound."""
    problem, systems, grid, cons = grid_of(small)
    best = systems.integrated_ucb(np.array(list(cells(grid, problem.box))), KAPPA, 1.0).max()
    settings = gr.GridSettings(chunk_seconds=0.0, n_lagrange=0)
    for limit in (1e-9, 1e-3, 3e-3):
        grid.gm.lam[:] = 0.0
        res = gr.search(grid, cons, None, -np.inf, search_settings(limit, grid=settings),
                        numba_loop=True)
        assert res.bound >= best - 1e-10
        if res.x is not None:
            assert res.value <= best + 1e-10
            assert systems.integrated_ucb(res.x[None], KAPPA, 1.0)[0] == pytest.approx(
                res.value, abs=1e-10)


@pytest.mark.parametrize("mip_gap", [0.0, 0.05, 0.3])
@pytest.mark.parametrize("start", [False, True])
@pytest.mark.parametrize("dives", [(25, False), (3, True)])
def test_numba_loop_matches_the_python_loop(small, mip_gap, start, dives):
    """Same boxes, bound, value and point as the Python loop (one thread) from the same
    start, with dives every 25 boxes, or every 3 and skipped after fruitless ones; room for
    one open box at first (the slots grow)."""
    out = []
    for numba_loop in (True, False):
        problem, systems, grid, cons = grid_of(small)
        x0, v0 = None, -np.inf
        if start:
            x0 = problem.box.lower + 0.3 * (problem.box.upper - problem.box.lower)
            x0 = np.array([round(v) if k else v for v, k in zip(x0, problem.box.kinds,
                                                                  strict=True)])
            x0[problem.box.kinds == CATEGORICAL] = [
                problem.box.allowed[j][0] for j in np.flatnonzero(
                    problem.box.kinds == CATEGORICAL)]
            v0 = float(systems.integrated_ucb(x0[None], KAPPA, 1.0)[0])
        settings = gr.GridSettings(slots=1, threads=1, dive_every=dives[0],
                                   dive_backoff=dives[1])
        out.append(gr.search(grid, cons, x0, v0, search_settings(mip_gap=mip_gap, grid=settings),
                             numba_loop=numba_loop))
    a, b = out
    assert (a.status, a.nodes) == (b.status, b.nodes)
    assert a.bound == b.bound and a.value == b.value
    np.testing.assert_array_equal(a.x, b.x)


def test_centre_cell_is_the_cell_of_the_centre(small):
    """The numba centre of random boxes lies in the cell ``Grid.cell_of`` gives
    ``points.centre``'s point: the loop scores the point the caller returns."""
    problem, systems, grid, cons = grid_of(small)
    geo = loop.geometry(grid)
    rng = np.random.default_rng(0)
    for _ in range(200):
        lo, hi, cat = grid.root()
        for _ in range(int(rng.integers(0, 12))):
            _ub, n_und, split = grid.bound(lo, hi, cat)
            if n_und == 0:
                break
            lo, hi, cat = grid.branch(lo, hi, cat, split)[rng.integers(2)]
        c_lo, c_cat = np.zeros_like(lo), np.zeros_like(cat)
        loop.centre_cell(geo, lo, hi, cat, c_lo, c_cat)
        e_lo, e_hi, e_cat = grid.cell_of(centre(grid, lo, hi, cat))
        np.testing.assert_array_equal(c_lo, e_lo)
        np.testing.assert_array_equal(c_cat, e_cat)


def test_compile_time_is_left_out_of_the_time_limit(small):
    """A kernel compiling during the search (numba's compile event, here 0.5 s around the
    first bound) does not spend the 0.3 s limit: the search still proves the optimum."""
    from numba.core import event

    problem, systems, grid, cons = grid_of(small)
    best = systems.integrated_ucb(np.array(list(cells(grid, problem.box))), KAPPA, 1.0).max()
    real = grid.bound
    calls = []

    def bound(*args):
        if not calls:
            event.start_event("numba:compile")
            time.sleep(0.5)
            event.end_event("numba:compile")
        calls.append(1)
        return real(*args)

    grid.bound = bound
    res = gr.search(grid, cons, None, -np.inf, search_settings(0.3, grid=gr.GridSettings(
        n_lagrange=0, threads=1)))
    assert res.status == "optimal" and res.value == pytest.approx(best, abs=1e-10)
