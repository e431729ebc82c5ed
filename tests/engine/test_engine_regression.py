"""End-to-end regression: BARK fits a step function with a categorical input.

The predictive distribution is the mixture over posterior samples s of
N(sample_mean_s, sample_var_s + sigma2_s * y_std^2) in the user's units (``sample_var`` is the
latent variance; ``samples["sigma2"]`` is the noise in standardized units). We score held-out
points by the mixture's log density (NLPD) and by the coverage of its central 90 % interval,
whose ends we find by bisection on the mixture CDF.
"""

from __future__ import annotations

import numpy as np
from forest_np import route_np
from scipy import special, stats

from bofire_bark.engine import fit_posterior

SPACE = (
    np.array([0, 2], np.int64),
    np.array([0.0, 0.0]),
    np.array([1.0, 3.0]),
    np.array([0, 4], np.int64),
)
NOISE_SD = 0.2


def step_data(n: int, rng: np.random.Generator):
    x1 = rng.random(n)
    x2 = rng.integers(0, 4, n)
    y = 2.0 * (x1 > 0.4) + 1.5 * np.isin(x2, [1, 3]) + NOISE_SD * rng.standard_normal(n)
    return np.column_stack([x1, x2]).astype(float), y


def mixture_logpdf(y, means, sds):
    """log (1/S) sum_s N(y; means[s], sds[s]^2), per column; means and sds (S, n)."""
    comp = stats.norm.logpdf(y[None, :], means, sds)
    return special.logsumexp(comp, axis=0) - np.log(len(means))


def mixture_quantile(q, means, sds, n_iter=80):
    """Quantile q of each column's equal-weight Gaussian mixture, by bisection on the CDF."""
    lo = (means - 10.0 * sds).min(axis=0)
    hi = (means + 10.0 * sds).max(axis=0)
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        below = stats.norm.cdf(mid[None, :], means, sds).mean(axis=0) < q
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def test_step_function_with_categorical_input():
    rng = np.random.default_rng(2024)
    X, y = step_data(100, rng)
    Xt, yt = step_data(500, rng)
    post = fit_posterior(X, y, SPACE, n_chains=2, n_samples=4, thinning=20, burn_in=300, seed=17)
    pred = post.predict(Xt)
    noise_var = post.samples["sigma2"][:, None] * y.std() ** 2
    assert post.y_std == y.std()
    means = pred["sample_mean"]
    sds = np.sqrt(pred["sample_var"] + noise_var)
    assert means.shape == (8, 500)
    # the mixture's moments agree with predict's summary
    np.testing.assert_allclose(means.mean(axis=0), pred["mean"], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        (sds**2 + means**2).mean(axis=0) - pred["mean"] ** 2, pred["var"], rtol=1e-8
    )

    nlpd = -mixture_logpdf(yt, means, sds).mean()
    nlpd_const = -stats.norm.logpdf(yt, y.mean(), y.std()).mean()
    # best possible: the noise alone, 0.5 log(2 pi e 0.04) = -0.19
    nlpd_oracle = 0.5 * np.log(2.0 * np.pi * np.e * NOISE_SD**2)
    print(f"NLPD {nlpd:.3f}, constant {nlpd_const:.3f}, noise-only oracle {nlpd_oracle:.3f}")
    assert nlpd < nlpd_const - 1.0

    lower = mixture_quantile(0.05, means, sds)
    upper = mixture_quantile(0.95, means, sds)
    for q, bound in ((0.05, lower), (0.95, upper)):  # the bisection found the quantile
        cdf = stats.norm.cdf(bound[None, :], means, sds).mean(axis=0)
        np.testing.assert_allclose(cdf, q, atol=1e-9)
    coverage = np.mean((yt >= lower) & (yt <= upper))
    print(f"90 % interval coverage {coverage:.3f}")
    assert 0.80 <= coverage <= 0.98
    # the noise posterior, in user units, is near the true noise (0.2)
    noise_sd = float(np.sqrt(np.median(noise_var)))
    print(f"posterior median noise sd {noise_sd:.3f}")
    assert 0.15 < noise_sd < 0.3


def shared_leaves(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(1/m) #trees where row i of ``a`` and row k of ``b`` share a leaf; a (m, n), b (m, k)."""
    return (a[:, :, None] == b[:, None, :]).mean(axis=0)


def test_predictions_equal_direct_gp_formulas():
    """Per sample, the leaf-space predictions equal the textbook GP formulas in N-space:
    mean = k*^T K^-1 y, latent variance = 1 - k*^T K^-1 k* (standardized units), with
    kernels from our own routing; predict() rescales them to the user's units."""
    rng = np.random.default_rng(5)
    X, y = step_data(50, rng)
    Xt, _ = step_data(30, rng)
    post = fit_posterior(X, y, SPACE, n_chains=2, n_samples=2, thinning=10, burn_in=50, seed=3)
    means, lat = post.predict_each(Xt)
    ys = (y - y.mean()) / y.std()
    for s in range(post.n_samples):
        forest = {k: v[s] for k, v in post.samples.items() if k != "sigma2"}
        tr = route_np(forest, SPACE[0], X)
        te = route_np(forest, SPACE[0], Xt)
        K = shared_leaves(tr, tr) + post.samples["sigma2"][s] * np.eye(len(X))
        Ks = shared_leaves(te, tr)
        np.testing.assert_allclose(means[s], Ks @ np.linalg.solve(K, ys), rtol=1e-8, atol=1e-8)
        direct_var = 1.0 - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
        np.testing.assert_allclose(lat[s], direct_var, rtol=1e-8, atol=1e-8)
    pred = post.predict(Xt)
    np.testing.assert_allclose(pred["sample_mean"], y.mean() + y.std() * means, rtol=1e-12)
    np.testing.assert_allclose(pred["sample_var"], y.var() * lat, rtol=1e-12)
