"""Prediction from posterior samples, in leaf space.

For one sample (forest + noise sigma^2) and standardized training data, Woodbury gives
``K^-1 = sigma^-2 (I - Phi G^-1 Phi^T)`` with ``G = Phi^T Phi + m sigma^2 I`` (P, P), so for a
point x with leaf indicator phi(x) (one leaf per tree):

- mean:            mu(x)      = phi(x)^T beta,             beta = G^-1 Phi^T y
- latent variance: var(x)     = sigma^2 phi(x)^T G^-1 phi(x)
  (= k(x, x) - k_x^T K^-1 k_x with k(x, x) = 1, equivalently
  1 - phi^T Q phi / m with Q = I - m sigma^2 G^-1 positive semi-definite).

The same quantities drive the acquisition MIP, so optimizer and predictor share one kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bofire_bark.engine.forest import LEAF, route


@njit(cache=True, nogil=True)
def leaf_system(feat, thr, mask, left, right, kinds, X, y, sigma2):
    """Leaf-space GP of one sample.

    Args:
        feat, thr, mask, left, right: one forest (m, C[, W]).
        kinds: (D,) feature kinds; X: (N, D) encoded training inputs; y: (N,) standardized.
        sigma2: noise variance (standardized units).

    Returns:
        lcol (m, C) int64: leaf column of each leaf node (-1 elsewhere); Ginv (P, P);
        beta (P,) per-leaf mean contributions.
    """
    m, cap = feat.shape
    lcol = np.full((m, cap), -1, dtype=np.int64)
    P = 0
    for t in range(m):
        for k in range(cap):
            if feat[t, k] == LEAF:
                lcol[t, k] = P
                P += 1
    G = np.zeros((P, P))
    b = np.zeros(P)
    cols = np.empty(m, dtype=np.int64)
    for i in range(X.shape[0]):
        for t in range(m):
            cols[t] = lcol[t, route(feat, thr, mask, left, right, kinds, t, X[i])]
        for t in range(m):
            b[cols[t]] += y[i]
            for s in range(m):
                G[cols[t], cols[s]] += 1.0
    for i in range(P):
        G[i, i] += m * sigma2
    Ginv = np.linalg.inv(G)
    Ginv = 0.5 * (Ginv + Ginv.T)
    beta = Ginv @ b
    return lcol, Ginv, beta


@njit(cache=True, nogil=True)
def predict_sample(feat, thr, mask, left, right, kinds, X, y, sigma2, Xnew):
    """Per-sample GP mean and latent variance at ``Xnew`` (n, D), standardized units."""
    lcol, Ginv, beta = leaf_system(feat, thr, mask, left, right, kinds, X, y, sigma2)
    m = feat.shape[0]
    n = Xnew.shape[0]
    mean = np.zeros(n)
    var = np.zeros(n)
    cols = np.empty(m, dtype=np.int64)
    for i in range(n):
        for t in range(m):
            cols[t] = lcol[t, route(feat, thr, mask, left, right, kinds, t, Xnew[i])]
        mu = 0.0
        q = 0.0
        for t in range(m):
            mu += beta[cols[t]]
            row = Ginv[cols[t]]
            for s in range(m):
                q += row[cols[s]]
        mean[i] = mu
        var[i] = max(sigma2 * q, 0.0)
    return mean, var


def predict_samples(samples: dict[str, np.ndarray], kinds: np.ndarray, X: np.ndarray,
                    y: np.ndarray, Xnew: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means and latent variances of every sample, (S, n) each, standardized units."""
    S = len(samples["sigma2"])
    Xnew = np.ascontiguousarray(Xnew, dtype=np.float64)
    means = np.empty((S, len(Xnew)))
    variances = np.empty((S, len(Xnew)))
    for s in range(S):
        means[s], variances[s] = predict_sample(
            samples["feat"][s], samples["thr"][s], samples["mask"][s], samples["left"][s],
            samples["right"][s], kinds, X, y, float(samples["sigma2"][s]), Xnew)
    return means, variances
