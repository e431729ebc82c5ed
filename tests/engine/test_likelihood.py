"""The low-rank likelihood state stays equal to a from-scratch computation.

After every sweep we route the training points through the forest with an independent numpy
router, build K = (shared-leaf counts) / m + sigma2 I, and compare y^T K^-1 y and log|K|
(Cholesky) with ``Chain.loglik()``. The noise is held fixed and refreshes are disabled, so
only the rank-2 updates of grow, prune and change keep the state: 1,000 proposals in a row
with no refactorization. sigma2 = 0.05 makes K ill-conditioned enough for drift to show.
"""

from __future__ import annotations

import numpy as np
import pytest
from forest_np import kernel_from_leaves, quad_logdet, route_np

from bofire_bark.engine import Chain, MCMCSettings, standardize
from bofire_bark.engine.rng import seed_states

REL_TOL = 1e-8
N_SWEEPS = 20
N_TREES = 50


def mixed_problem(n: int, seed: int, pure_noise: bool = False):
    """Continuous x0 in [0, 1], discrete x1 (6 values, as indices), categorical x2 (5).

    ``pure_noise``: y is iid noise, which a small sigma2 can only explain with many leaves.
    """
    space = (
        np.array([0, 1, 2], np.int64),
        np.array([0.0, 0.0, 0.0]),
        np.array([1.0, 5.0, 4.0]),
        np.array([0, 6, 5], np.int64),
    )
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.integers(0, 6, n), rng.integers(0, 5, n)])
    y = (
        np.sin(6.0 * X[:, 0])
        + 0.4 * X[:, 1]
        + np.isin(X[:, 2], [1, 3]) * 1.5
        + 0.1 * rng.standard_normal(n)
    )
    if pure_noise:
        y = rng.standard_normal(n)
    return space, X.astype(float), standardize(y)[0]


def make_chain(
    likelihood: str,
    n: int,
    seed: int = 0,
    noise_step: float = 0.0,
    capacity: int = 32,
    pure_noise: bool = False,
    **kw,
) -> Chain:
    space, X, y = mixed_problem(n, seed=100 + n, pure_noise=pure_noise)
    kw.setdefault("n_trees", N_TREES)
    kw.setdefault("refresh_every", 10**9)
    settings = MCMCSettings(likelihood=likelihood, noise_step=noise_step, **kw)
    chain = Chain(space, settings, seed_states(seed, 1)[0], capacity=capacity)
    chain.set_data(X, y)
    return chain


def rel_err(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1.0)


def check_against_full(chain: Chain) -> float:
    """Relative error of chain.loglik() against routing + kernel + Cholesky from scratch."""
    leaves = route_np(chain.forest, chain.kinds, chain.X)
    np.testing.assert_array_equal(leaves, chain.leaf_of)
    K = kernel_from_leaves(leaves) + chain.sigma2[0] * np.eye(len(chain.y))
    quad, logdet = quad_logdet(K, chain.y)
    q_chain, ld_chain = chain.loglik()
    err = max(rel_err(q_chain, quad), rel_err(ld_chain, logdet))
    assert err < REL_TOL, (q_chain, quad, ld_chain, logdet)
    return err


@pytest.mark.parametrize("likelihood", ["n", "leaf"])
@pytest.mark.parametrize(("n", "split_prior"), [(40, "uniform"), (400, "uniform"),
                                                (40, "dirichlet"), (400, "dirichlet")])
def test_low_rank_state_matches_full_recomputation(likelihood, n, split_prior):
    chain = make_chain(likelihood, n, split_prior=split_prior)
    chain.sigma2[0] = 0.05
    chain.refresh()
    worst = 0.0
    for _ in range(N_SWEEPS):
        chain.run(1)
        worst = max(worst, check_against_full(chain))
    assert chain.sigma2[0] == 0.05  # noise held fixed, no refresh in between
    proposed, accepted = chain.stats[:3].T
    assert proposed.sum() == N_SWEEPS * N_TREES
    assert np.all(accepted > 0), f"grow/prune/change accepted: {accepted}"
    print(f"{likelihood} N={n}: worst relative error {worst:.1e}, accepted {accepted}")


@pytest.mark.parametrize("likelihood", ["n", "leaf"])
def test_state_survives_storage_growth(likelihood):
    """Start with 4 node slots per tree, and with 10 trees, whose leaf-space arrays are first
    sized for 64 leaf columns; beta=0.5 and noise-only outputs make the trees grow deep, so
    both must grow. The state stays exact throughout."""
    chain = make_chain(likelihood, 120, seed=3, capacity=4, pure_noise=True, n_trees=10, beta=0.5)
    chain.sigma2[0] = 0.05
    chain.refresh()
    for _ in range(30):
        chain.run(3)
        check_against_full(chain)
    assert chain.forest["feat"].shape[1] > 4
    if likelihood == "leaf":
        assert chain.lik.leaf.Ginv.shape[0] > 64  # the leaf-column storage had to grow


@pytest.mark.parametrize("n", [40, 400])
def test_n_and_leaf_forms_make_identical_decisions(n):
    """Same seed and data, noise steps on: both forms accept and reject the same moves."""
    a = make_chain("n", n, seed=7, noise_step=0.5)
    b = make_chain("leaf", n, seed=7, noise_step=0.5)
    assert a.mode != b.mode
    for _ in range(N_SWEEPS):
        a.run(1)
        b.run(1)
        np.testing.assert_array_equal(a.stats, b.stats)
    assert np.all(a.stats[:, 1] > 0)
    for key in a.forest:
        np.testing.assert_array_equal(a.forest[key], b.forest[key], err_msg=key)
    assert a.sigma2[0] == b.sigma2[0]
    np.testing.assert_array_equal(a.state, b.state)
    np.testing.assert_allclose(a.loglik(), b.loglik(), rtol=1e-9)


def refreshed_each_sweep(noise_step: float) -> bool:
    """Whether, with refresh_every=1, every sweep ends on a full refactorization: the state
    then equals, bit for bit, a refresh from the exact counts done right after the sweep."""
    chain = make_chain("n", 60, seed=1, noise_step=noise_step, refresh_every=1)
    chain.sigma2[0] = 0.05
    chain.refresh()
    all_equal = True
    for _ in range(5):
        chain.run(1)
        after_sweep = chain.loglik()
        chain.refresh()
        all_equal &= after_sweep == chain.loglik()
    assert chain.stats[:3, 1].sum() > 5  # tree moves were accepted, so there was drift
    return all_equal


def test_refresh_every_bounds_drift_with_noise_steps():
    assert refreshed_each_sweep(noise_step=0.5)


def test_refresh_every_bounds_drift_with_fixed_noise():
    assert refreshed_each_sweep(noise_step=0.0)
