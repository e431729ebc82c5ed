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

from typing import NamedTuple

import numpy as np
from numba import njit

from bofire_bark.engine.blas import single_threaded_blas
from bofire_bark.engine.forest import Forest, assign_columns, route, route_all


class LeafSystem(NamedTuple):
    """Leaf-space GP of one sample with ``P`` leaves: lcol (m, C) int64, the leaf column of each
    leaf node (-1 elsewhere); Ginv (P, P) float64; beta (P,) float64, the leaves' mean
    contributions; leaf_of (m, N) int64, the leaf node of each of the GP's N inputs (training
    points, then pending ones) in every tree, kept so that the searches need not route them
    again."""

    lcol: np.ndarray
    Ginv: np.ndarray
    beta: np.ndarray
    leaf_of: np.ndarray


@njit(cache=True, nogil=True)
def leaf_system(forest, kinds, X, y, sigma2):
    """Leaf-space GP (a ``LeafSystem``) of one sample.

    Args:
        forest: the sample's ``Forest``.
        kinds: (D,) feature kinds; X: (N, D) encoded training inputs; y: (N,) standardized.
        sigma2: noise variance (standardized units).
    """
    m, cap = forest.feat.shape
    lcol = np.full((m, cap), -1, dtype=np.int64)
    P = assign_columns(forest.feat, lcol, np.empty((m * cap, 2), dtype=np.int64))
    leaf_of = np.empty((m, X.shape[0]), dtype=np.int64)
    route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, X,
              leaf_of)
    Ginv, beta = _solve_leaves(lcol, P, leaf_of, y, sigma2)
    return LeafSystem(lcol, Ginv, beta, leaf_of)


@njit(cache=True, nogil=True)
def _solve_leaves(lcol, P, leaf_of, y, sigma2):
    """(Ginv, beta) of the points whose leaf nodes are ``leaf_of`` (m, N), outputs ``y``."""
    m = leaf_of.shape[0]
    G = np.zeros((P, P))
    b = np.zeros(P)
    cols = np.empty(m, dtype=np.int64)
    for i in range(leaf_of.shape[1]):
        for t in range(m):
            cols[t] = lcol[t, leaf_of[t, i]]
        for t in range(m):
            b[cols[t]] += y[i]
            for s in range(m):
                G[cols[t], cols[s]] += 1.0
    for i in range(P):
        G[i, i] += m * sigma2
    Ginv = np.linalg.inv(G)
    Ginv = 0.5 * (Ginv + Ginv.T)
    return Ginv, Ginv @ b


@njit(cache=True, nogil=True)
def predict_sample(forest, kinds, X, y, sigma2, Xnew):
    """Per-sample GP mean and latent variance at ``Xnew`` (n, D), standardized units."""
    lcol, Ginv, beta, _ = leaf_system(forest, kinds, X, y, sigma2)
    mean = np.zeros(Xnew.shape[0])
    var = np.zeros(Xnew.shape[0])
    _score_sample(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, lcol,
                  Ginv, beta, sigma2, Xnew, mean, var)
    return mean, var


def predict_samples(samples: dict[str, np.ndarray], kinds: np.ndarray, X: np.ndarray,
                    y: np.ndarray, Xnew: np.ndarray, smooth=None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Means and latent variances of every sample, (S, n) each, standardized units
    (``smooth``: the ``engine.smooth.SmoothKernel`` of samples with a smooth share)."""
    S = len(samples["sigma2"])
    Xnew = np.ascontiguousarray(Xnew, dtype=np.float64)
    if smooth is not None:
        return SampleSystems(samples, kinds, X, y, smooth=smooth).predict_each(Xnew)
    means = np.empty((S, len(Xnew)))
    variances = np.empty((S, len(Xnew)))
    with single_threaded_blas():
        _predict_all(samples, kinds, X, y, Xnew, means, variances)
    return means, variances


def _predict_all(samples, kinds, X, y, Xnew, means, variances):
    for s in range(len(samples["sigma2"])):
        means[s], variances[s] = predict_sample(Forest.of_sample(samples, s), kinds, X, y,
                                                float(samples["sigma2"][s]), Xnew)


@njit(cache=True, nogil=True)
def leaf_system_pending(forest, kinds, X, y, sigma2, Xp):
    """Leaf system after conditioning on pending points ``Xp`` (n_p, D) as a kriging believer.

    Each pending point is added with the sample's own mean there as its observation, which
    leaves the mean unchanged everywhere and shrinks the variance exactly as a real
    observation at that point would.
    """
    system = leaf_system(forest, kinds, X, y, sigma2)
    if Xp.shape[0] == 0:
        return system
    m = forest.feat.shape[0]
    leaf_p = np.empty((m, Xp.shape[0]), dtype=np.int64)
    route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, Xp,
              leaf_p)
    yp = np.zeros(Xp.shape[0])
    for i in range(Xp.shape[0]):
        for t in range(m):
            yp[i] += system.beta[system.lcol[t, leaf_p[t, i]]]
    leaf_of = np.concatenate((system.leaf_of, leaf_p), axis=1)
    Ginv, beta = _solve_leaves(system.lcol, system.Ginv.shape[0], leaf_of,
                               np.concatenate((y, yp)), sigma2)
    return LeafSystem(system.lcol, Ginv, beta, leaf_of)


# The noise variance of a point taken as known (``leaf_system_known``), as a share of the
# sample's noise variance: its latent sd then falls to at most 1 % of the noise sd, and the
# systems stay well conditioned where f was nearly known already.
KNOWN_NOISE = 1e-4


def bordered_inverse(Kinv: np.ndarray, k: np.ndarray, c: float) -> np.ndarray:
    """The inverse of K bordered by one point, [[K, k], [k^T, c]], from ``Kinv`` = K^-1 (n, n),
    k (n,) and c = k(x, x) plus the point's noise variance."""
    u = Kinv @ k
    d = c - float(k @ u)
    n = len(u)
    out = np.empty((n + 1, n + 1))
    out[:n, :n] = Kinv + np.outer(u, u) / d
    out[:n, n] = out[n, :n] = -u / d
    out[n, n] = 1.0 / d
    return out


def leaf_system_known(system: LeafSystem, forest, kinds, Xk: np.ndarray) -> LeafSystem:
    """``system`` also conditioned on the latent values at ``Xk`` (n_k, D) taken as known, each
    at the sample's own mean there with noise ``KNOWN_NOISE`` sigma^2: the mean stays
    everywhere and the variance shrinks as if f(Xk) were measured almost exactly. Per point,
    the rank-one update of the leaf weights' covariance, Ginv - u u^T / (phi^T u + KNOWN_NOISE)
    with u = Ginv phi (phi: the point's leaf indicator)."""
    m = forest.feat.shape[0]
    leaf_k = np.empty((m, len(Xk)), dtype=np.int64)
    route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds,
              np.ascontiguousarray(Xk, dtype=np.float64), leaf_k)
    Ginv = system.Ginv.copy()
    for i in range(len(Xk)):
        cols = system.lcol[np.arange(m), leaf_k[:, i]]
        u = Ginv[:, cols].sum(axis=1)
        Ginv -= np.outer(u, u) / (float(u[cols].sum()) + KNOWN_NOISE)
    Ginv = 0.5 * (Ginv + Ginv.T)
    return LeafSystem(system.lcol, Ginv, system.beta,
                      np.concatenate((system.leaf_of, leaf_k), axis=1))


@njit(cache=True, nogil=True)
def _score_sample(feat, thr, mask, left, right, kinds, lcol, Ginv, beta, sigma2, Xnew, mean,
                  var):
    """Mean and latent variance of one sample at ``Xnew`` into ``mean``, ``var`` (n,).

    Takes the forest's and the ``LeafSystem``'s arrays one by one: ``predict_each`` calls it
    from Python once per sample, and numba types a tuple argument in Python at every call,
    which made scoring one point 30 % slower.
    """
    m = feat.shape[0]
    cols = np.empty(m, dtype=np.int64)
    for i in range(Xnew.shape[0]):
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


class SampleSystems:
    """Per-sample leaf systems of a posterior (optionally conditioned on pending points).

    ``systems[s] = (lcol, Ginv, beta, leaf_of)`` (a ``LeafSystem``); mean_s(x) = sum_t
    beta[lcol[t, leaf_t(x)]] and latent var_s(x) = sigma2_s * phi^T Ginv phi, in standardized
    units. The acquisition MIP is built from exactly these arrays, so it optimizes the
    function scored here.
    """

    def __init__(self, samples: dict[str, np.ndarray], kinds: np.ndarray, X: np.ndarray,
                 y: np.ndarray, X_pending: np.ndarray | None = None, smooth=None):
        self.samples = samples
        self.kinds = kinds
        self.smooth = smooth  # an ``engine.smooth.SmoothKernel`` when samples have a share
        # points conditioned on as known (``condition_known``), after the pending ones
        self.X_known = np.zeros((0, X.shape[1]))
        self._forests = [Forest.of_sample(samples, s) for s in range(len(samples["sigma2"]))]
        d = X.shape[1]
        Xp = np.zeros((0, d)) if X_pending is None else np.ascontiguousarray(X_pending, float)
        if smooth is not None:
            # N-space systems (``engine.smooth.SmoothSystem``): no leaf form holds the share
            from bofire_bark.engine.smooth import smooth_system

            share = samples["smooth_share"]
            with single_threaded_blas():
                self.systems = [
                    smooth_system(f, kinds, smooth, X, y, float(samples["sigma2"][s]),
                                  float(share[s]), Xp)
                    for s, f in enumerate(self._forests)]
            return
        with single_threaded_blas():
            self.systems = [
                leaf_system_pending(f, kinds, X, y, float(samples["sigma2"][s]), Xp)
                for s, f in enumerate(self._forests)
            ]

    def condition_known(self, Xk: np.ndarray) -> None:
        """Condition every sample, in place, on its latent values at ``Xk`` (n_k, D) taken as
        known: each at the sample's own mean, almost without noise (``leaf_system_known``,
        ``engine.smooth.SmoothSystem.known``). The points join the systems' data after the
        pending ones (``X_known``)."""
        Xk = np.ascontiguousarray(Xk, dtype=np.float64).reshape(-1, self.kinds.shape[0])
        if len(Xk) == 0:
            return
        with single_threaded_blas():
            if self.smooth is not None:
                self.systems = [system.known(f, self.kinds, self.smooth, Xk)
                                for f, system in zip(self._forests, self.systems, strict=True)]
            else:
                self.systems = [leaf_system_known(system, f, self.kinds, Xk)
                                for f, system in zip(self._forests, self.systems, strict=True)]
        self.X_known = np.concatenate((self.X_known, Xk))

    def predict_each(self, Xnew: np.ndarray, binned: bool = True
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Per-sample (mean, latent variance), (S, n) each, standardized units. ``binned=False``
        evaluates a smooth share's continuous extension (``SmoothKernel.coords``); without a
        smooth share it changes nothing."""
        Xnew = np.ascontiguousarray(Xnew, dtype=np.float64)
        S = len(self.systems)
        means = np.empty((S, len(Xnew)))
        variances = np.empty((S, len(Xnew)))
        if self.smooth is not None:
            for s, (f, system) in enumerate(zip(self._forests, self.systems, strict=True)):
                means[s], variances[s] = system.predict(f, self.kinds, self.smooth, Xnew, binned)
            return means, variances
        sigma2 = self.samples["sigma2"]
        for s, (f, (lcol, Ginv, beta, _)) in enumerate(zip(self._forests, self.systems,
                                                         strict=True)):
            _score_sample(f.feat, f.thr, f.mask, f.left, f.right, self.kinds, lcol, Ginv, beta,
                          float(sigma2[s]), Xnew, means[s], variances[s])
        return means, variances

    def integrated_ucb(self, Xnew: np.ndarray, kappa: float, sign: float = 1.0) -> np.ndarray:
        """(1/S) sum_s [sign * mean_s(x) + kappa * sd_s(x)], standardized units (n,).

        ``sign`` is +1 to maximize the output, -1 to minimize it (the acquisition is always
        maximized).
        """
        means, variances = self.predict_each(Xnew)
        return (sign * means + kappa * np.sqrt(variances)).mean(axis=0)
