"""The start's coordinate ascent under a linear equality (fractions summing to one): pair moves
reach what single-feature moves cannot, and every point it returns keeps the constraints."""

import numpy as np

from bofire_bark.optimize.ensemble import CONTINUOUS, InputBox
from bofire_bark.optimize.incumbent import coordinate_ascent, pair_moves
from bofire_bark.optimize.specs import LinearSpec, NChooseKSpec

D = 4
BOX = InputBox(kinds=np.full(D, CONTINUOUS), lower=np.zeros(D), upper=np.ones(D),
               values=(None,) * D, allowed=(None,) * D, semicontinuous=np.zeros(D, bool),
               active_lower=np.zeros(D), margin=np.full(D, 1e-9))
SUM = LinearSpec("sum", tuple(range(D)), (1.0,) * D, 1.0, True)
THREE = NChooseKSpec("three", tuple(range(D)), 1, 3, False)
GRID = tuple(np.linspace(0.05, 0.95, 19) for _ in range(D))
TARGET = np.array([0.0, 0.55, 0.1, 0.35])


def score(X):
    return -((np.atleast_2d(X) - TARGET) ** 2).sum(axis=1)


def feasible(X):
    X = np.atleast_2d(X)
    return ((np.abs(X.sum(axis=1) - 1.0) <= 1e-6) & (X >= 0).all(axis=1)
            & (X <= 1).all(axis=1) & ((X > 1e-6).sum(axis=1) <= 3))


def test_pair_moves_reach_the_best_mixture_that_single_moves_cannot():
    x = np.array([0.7, 0.0, 0.0, 0.3])  # ingredient 0 must give way for 1 and 2
    single, v_single = coordinate_ascent(x, float(score(x)[0]), BOX, GRID, score, feasible)
    assert np.array_equal(single, x)  # no single feature moves under the equality
    best, v = coordinate_ascent(x, float(score(x)[0]), BOX, GRID, score, feasible, sweeps=6,
                                specs=(SUM, THREE))
    assert feasible(best)[0] and v > v_single
    # the best of a fine simplex grid with at most three ingredients, as brute force
    ticks = np.linspace(0, 1, 41)
    grid = np.array([(a, b, c, 1 - a - b - c) for a in ticks for b in ticks for c in ticks
                     if a + b + c <= 1 + 1e-12])
    grid = grid[feasible(grid)]
    assert v >= score(grid).max() - 0.01


def test_pair_moves_keep_the_equality_and_the_bounds():
    rng = np.random.default_rng(0)
    pairs = [(j, k, 1.0, 1.0) for j in range(D) for k in range(D) if j != k]
    for _ in range(20):
        x = rng.dirichlet(np.ones(D))
        X = pair_moves(x, BOX, GRID, pairs)
        assert len(X) > 0
        assert np.allclose(X.sum(axis=1), 1.0, atol=1e-12)
        assert (X >= 0).all() and (X <= 1).all()
        # moves differ from x in exactly two features, and one of them hands over all of k
        changed = (np.abs(X - x) > 1e-15).sum(axis=1)
        assert (changed <= 2).all()
        assert (X == 0.0).any(axis=1).sum() >= len(pairs)
