"""Helpers of the optimizer tests: small posteriors (2 chains x 2 samples, few trees)."""

from __future__ import annotations

import itertools

import numpy as np
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.features.api import CategoricalInput, ContinuousInput, DiscreteInput

from bofire_bark.engine import MCMCSettings, fit_posterior
from bofire_bark.space import SplitSpace


def fit(domain: Domain, f, n: int = 12, n_trees: int = 6, seed: int = 0, X=None):
    """(space, posterior) of BARK fitted to ``f`` on ``n`` random points of ``domain``."""
    space = SplitSpace.from_domain(domain)
    if X is None:
        X = space.encode(domain.inputs.sample(n, seed=seed))
    y = f(X)
    # the uniform split prior (the engine's default before issue 24) and no label swaps (the
    # engine before them): the posteriors these tests were written on
    settings = MCMCSettings(n_trees=n_trees, split_prior="uniform", label_swap_every=0)
    post = fit_posterior(X, y, space.engine_arrays(), settings, n_chains=2, n_samples=2,
                         thinning=10, burn_in=100, seed=seed)
    return space, post


def mixed_domain(constraints=()) -> Domain:
    inputs = Inputs(features=[
        ContinuousInput(key="x1", bounds=(0, 1)),
        ContinuousInput(key="x2", bounds=(-1, 2)),
        DiscreteInput(key="d", values=[0.5, 1.0, 3.0]),
        CategoricalInput(key="c", categories=["a", "b", "c"], allowed=[True, True, False]),
    ])
    return Domain(inputs=inputs, constraints=list(constraints))


def mixed_f(X):
    return np.sin(3 * X[:, 0]) + X[:, 1] + 0.5 * X[:, 2] + (X[:, 3] == 1)


def continuous_domain(d: int = 3, constraints=()) -> Domain:
    inputs = Inputs(features=[ContinuousInput(key=f"x{i}", bounds=(0, 1)) for i in range(d)])
    return Domain(inputs=inputs, constraints=list(constraints))



def cells_in(grid, box, lo, hi, cat):
    """Every cell of a small grid inside the box (lo, hi, cat), as encoded points (centres)."""
    from bofire_bark.optimize.ensemble import CATEGORICAL

    keep = []
    for x in cells(grid, box):
        c_lo, _c_hi, c_cat = grid.cell_of(x)
        ordered = box.kinds != CATEGORICAL
        if np.any(ordered & ((c_lo < lo) | (c_lo > hi))):
            continue
        if all((cat[j] & c_cat[j]).any() for j in range(grid.d) if not ordered[j]):
            keep.append(x)
    return np.array(keep)


def cells(grid, box):
    """Every cell of a small grid (``grid.Grid`` or ``MultiGrid``) as an encoded point (its
    centre)."""
    from bofire_bark.optimize.ensemble import CATEGORICAL
    from bofire_bark.optimize.grid.model import _words
    from bofire_bark.optimize.grid.points import centre

    axes = []
    for j in range(grid.d):
        if box.kinds[j] == CATEGORICAL:
            axes.append([("cat", c) for c in box.allowed[j]])
        else:
            axes.append([("cell", c) for c in range(grid.n_cells[j] + 1)])
    for combo in itertools.product(*axes):
        lo = np.array([c if k == "cell" else 0 for k, c in combo], dtype=np.int64)
        cat = np.zeros((grid.d, grid.gm.n_words), dtype=np.uint64)
        for j, (k, c) in enumerate(combo):
            if k == "cat":
                cat[j] = _words([c], grid.gm.n_words)
        yield centre(grid, lo, lo.copy(), cat)


def random_box(grid, rng, depth):
    """A box reached from the root by ``depth`` random branchings (fewer once decided), for
    bound tests; ``grid`` a ``grid.Grid`` or a several-output grid."""
    lo, hi, cat = grid.root()
    for _ in range(depth):
        _ub, n_und, split = grid.bound(lo, hi, cat)
        if n_und == 0 or split < 0:
            break
        lo, hi, cat = grid.branch(lo, hi, cat, split)[rng.integers(2)]
    return lo, hi, cat


def search_settings(time_limit: float = 60.0, mip_gap: float = 0.0, abs_gap: float = 0.0,
                    grid=None, **more):
    """The ``AcquisitionSettings`` a direct ``grid.search`` call stops by (gap 0 by default:
    the search proves the optimum), with ``grid`` a ``GridSettings``."""
    from bofire_bark.settings import AcquisitionSettings, GridSettings

    return AcquisitionSettings(time_limit=time_limit, mip_gap=mip_gap, abs_gap=abs_gap,
                               grid=grid or GridSettings(), **more)
