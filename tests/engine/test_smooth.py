"""The smooth share of the kernel (``engine.smooth``): its chain keeps an exact likelihood
state, samples its prior when the likelihood is flat, and predicts as the dense GP of each
sample's kernel."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from forest_np import kernel_from_leaves, quad_logdet, route_np
from scipy import stats

from bofire_bark.engine import Chain, MCMCSettings, fit_posterior
from bofire_bark.engine.rng import seed_states
from bofire_bark.engine.smooth import SmoothKernel, category_d2

P_MIN = 1e-3


# a categorical coordinate's table over 4 codes: a one-hot encoding's distances
CAT_D2 = category_d2(np.eye(4), np.array([0.5, 1.0, 2.0, 0.8]))[None]
KERNELS = {
    "binned": {},
    "binned and categorical": {"cat_cols": [2], "cat_d2": CAT_D2},
    "categorical only": {"cols": [], "lower": [], "upper": [], "lengths": [],
                         "cat_cols": [2], "cat_d2": CAT_D2},
}


def problem(n: int = 30, seed: int = 0, kind: str = "binned"):
    """Continuous x0, x1 in [0, 1] and a categorical x2 (4); the smooth coordinates as
    ``KERNELS[kind]`` says (default x0, x1)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.random(n), rng.integers(0, 4, n)]).astype(float)
    y = np.sin(5.0 * X[:, 0]) + X[:, 1] + 0.5 * (X[:, 2] == 1) + 0.05 * rng.standard_normal(n)
    space = (np.array([0, 0, 2], np.int64), np.zeros(3), np.array([1.0, 1.0, 3.0]),
             np.array([0, 0, 4], np.int64))
    kernel = SmoothKernel(**{"cols": [0, 1], "lower": [0.0, 0.0], "upper": [1.0, 1.0],
                             "lengths": [0.3, 0.6], "n_bins": 16, **KERNELS[kind]})
    return space, X, (y - y.mean()) / y.std(), kernel


def dense_K(chain: Chain, share: float) -> np.ndarray:
    leaves = route_np(chain.forest, chain.kinds, chain.X)
    U = chain.smooth.coords(chain.X)
    return ((1.0 - share) * kernel_from_leaves(leaves) + share * chain.smooth.gram(U, U)
            + chain.sigma2[0] * np.eye(len(chain.y)))


def test_bins_put_an_edge_in_the_left_bin():
    kernel = SmoothKernel(cols=[0], lower=[0.0], upper=[2.0], lengths=[1.0], n_bins=4)
    np.testing.assert_allclose(kernel.edges(0), [0.5, 1.0, 1.5])
    X = np.array([[0.0], [0.5], [0.5000001], [1.0], [2.0], [-1.0], [3.0]])
    np.testing.assert_array_equal(kernel.bins(X)[:, 0], [0, 0, 1, 1, 3, 0, 3])
    np.testing.assert_allclose(kernel.coords(X)[:, 0], (np.array([0, 0, 1, 1, 3, 0, 3]) + 0.5)
                               / 4)


def test_categorical_coordinates_multiply_the_rbf_by_their_tables():
    _, X, _, kernel = problem(12, kind="binned and categorical")
    U = kernel.coords(X)
    np.testing.assert_array_equal(U[:, 2], X[:, 2])
    codes = X[:, 2].astype(int)
    one_hot = np.eye(4)[codes] / np.array([0.5, 1.0, 2.0, 0.8])
    d2 = 0.5 * ((one_hot[:, None] - one_hot[None]) ** 2).sum(-1)
    rbf = np.exp(-0.5 * (((U[:, None, :2] - U[None, :, :2]) / kernel.lengths) ** 2).sum(-1))
    np.testing.assert_allclose(kernel.gram(U, U), rbf * np.exp(-d2), rtol=1e-12)
    only = problem(12, kind="categorical only")[3]
    np.testing.assert_allclose(only.gram(only.coords(X), only.coords(X)), np.exp(-d2))
    with pytest.raises(ValueError, match="cat_d2"):
        SmoothKernel(cols=[0], lower=[0.0], upper=[1.0], lengths=[1.0],
                     cat_cols=[2], cat_d2=-CAT_D2)
    with pytest.raises(ValueError, match="outside"):
        only.codes(np.array([[0.0, 0.0, 4.0]]))


@pytest.mark.parametrize("kind", list(KERNELS))
def test_share_and_tree_updates_keep_the_exact_likelihood(kind):
    """Rank-2 tree updates scaled by (1 - s) and the share's refactorizations: after each
    sweep (noise fixed, no refresh) the state equals a dense Cholesky of (1 - s) A / m + s E
    + sigma2 I."""
    space, X, y, kernel = problem(kind=kind)
    settings = MCMCSettings(n_trees=20, likelihood="n", noise_step=0.0, refresh_every=10**9)
    chain = Chain(space, settings, seed_states(0, 1)[0], smooth=kernel)
    chain.set_data(X, y)
    chain.sigma2[0] = 0.02
    chain.refresh()
    shares = set()
    for _ in range(40):
        chain.run(1)
        share = float(chain.smooth_hyp[1])
        shares.add(round(share, 12))
        quad, logdet = quad_logdet(dense_K(chain, share), chain.y)
        q, ld = chain.loglik()
        assert abs(q - quad) / max(abs(quad), 1.0) < 1e-8, (q, quad)
        assert abs(ld - logdet) / max(abs(logdet), 1.0) < 1e-8, (ld, logdet)
    assert len(shares) > 5, "the share never moved"
    assert np.all(chain.stats[:3, 1] > 0), "no tree move was accepted"
    # the same check fails on the forest's kernel alone: the share is in the state
    quad, _ = quad_logdet(dense_K(chain, 0.0), chain.y)
    assert abs(chain.loglik()[0] - quad) / max(abs(quad), 1.0) > 1e-4


@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (2.0, 5.0)])
def test_flat_likelihood_samples_the_share_prior(a, b):
    """With no likelihood the share's chain targets its Beta(a, b) prior (KS on a thinned
    series; the same series fails against the Beta of a Jacobian error, Beta(a - 1, b - 1)
    shifted as the missing s (1 - s) would make it)."""
    space, X, y, kernel = problem(5)
    settings = MCMCSettings(n_trees=1, likelihood="flat", share_a=a, share_b=b, share_step=1.5)
    chain = Chain(space, settings, seed_states(7, 1)[0], smooth=kernel)
    chain.set_data(X, y)
    chain.run(500)
    draws = np.empty(40_000)
    for i in range(len(draws)):
        chain.run(1)
        draws[i] = chain.smooth_hyp[1]
    thin = draws[::20]
    p = stats.kstest(thin, stats.beta(a, b).cdf).pvalue
    assert p > P_MIN, f"share draws differ from Beta({a}, {b}) (KS p={p:.2e})"
    wrong = stats.kstest(thin, stats.beta(a + 1.0, b + 1.0).cdf).pvalue
    assert wrong < P_MIN, wrong
    assert 0.2 < chain.share_acceptance < 0.95


@pytest.mark.parametrize("kind", list(KERNELS))
def test_prediction_is_the_dense_gp_of_each_sample_and_pending_points_shrink_it(kind):
    space, X, y, kernel = problem(20, seed=3, kind=kind)
    post = fit_posterior(X, y, space, MCMCSettings(n_trees=10), n_chains=1, n_samples=3,
                         burn_in=50, thinning=5, seed=2, smooth=kernel)
    shares = post.samples["smooth_share"]
    assert shares.shape == (3,) and np.all((shares > 0) & (shares < 1))
    rng = np.random.default_rng(1)
    Xn = np.column_stack([rng.random(6), rng.random(6), rng.integers(0, 4, 6)]).astype(float)
    means, variances = post.predict_each(Xn)
    for s in range(3):
        forest = {k: post.samples[k][s] for k in ("feat", "thr", "mask", "left", "right")}
        Xa = np.concatenate((post.X, Xn))
        leaves = route_np(forest, post.kinds, Xa)
        Ua = kernel.coords(Xa)
        Kall = ((1 - shares[s]) * kernel_from_leaves(leaves)
                + shares[s] * kernel.gram(Ua, Ua))
        n = len(post.X)
        K = Kall[:n, :n] + post.samples["sigma2"][s] * np.eye(n)
        k = Kall[n:, :n]
        np.testing.assert_allclose(means[s], k @ np.linalg.solve(K, post.y), atol=1e-9)
        var = np.diag(Kall[n:, n:]) - np.einsum("ij,ji->i", k, np.linalg.solve(K, k.T))
        np.testing.assert_allclose(variances[s], var, atol=1e-9)
    # a pending point: the mean stays, the variance there shrinks to the kriging believer's
    # v - v^2 / (v + sigma2)
    sys = post.systems(Xn[:1])
    m2, v2 = sys.predict_each(Xn)
    np.testing.assert_allclose(m2, means, atol=1e-9)
    s2 = post.samples["sigma2"][:, None]
    np.testing.assert_allclose(v2[:, 0], (variances - variances**2 / (variances + s2))[:, 0],
                               atol=1e-9)
    # a share of 0 is the forest's own GP
    zero = dataclasses.replace(post, samples={**post.samples, "smooth_share": np.zeros(3)})
    plain = dataclasses.replace(post, smooth=None)
    np.testing.assert_allclose(zero.predict_each(Xn)[0], plain.predict_each(Xn)[0], atol=1e-9)
