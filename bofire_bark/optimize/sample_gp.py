"""Each posterior sample as a GP over its leaves: mu_s, sigma_s and their data (paper eq.
acq_func), numpy only; the MIP (``mip.objective``) turns them into Pyomo components.

For posterior sample s with leaf system (lcol, Ginv, beta) (see ``bofire_bark.engine.predict``)
and leaf indicator phi(x) (one leaf per tree, m trees):

- mean ``mu[s] = sum_t beta[col_t]`` is linear in the leaf variables z;
- latent variance ``var_s(x) = 1 - k_s(x)^T K_s^-1 k_s(x)`` with k(x, x) = 1 (null trees
  included), which the MIP bounds from above by the factored cone (``cone``)
  ``sigma[s]^2 + ||y[s]||^2 <= 1`` where ``y[s]`` (``factor``) is one of

  - N-space form: C y = k_s(x), C the Cholesky factor of K_s = Phi Phi^T / m + sigma_s^2 I over
    the N training (and pending) points, and k_s(x)_n = (1/m) #{t: x shares X_n's leaf in t};
  - leaf-space form: y = R^T phi(x) / sqrt(m) with Q = I - m sigma_s^2 Ginv = R R^T;

  chosen per sample by the smaller number of nonzeros.

Objective: maximize (1/S) sum_s w_s (sign * mu[s] + kappa * sigma[s]) (sign -1 minimizes the
output), the engine's ``SampleSystems.integrated_ucb`` at the optimum. Identical samples are
merged with weight w_s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

from bofire_bark.optimize.ensemble import TreeEnsemble, distinct_samples

Terms = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class SampleGP:
    """What the MIP needs of one posterior sample.

    Attributes:
        weight: number of identical samples this one stands for.
        mean_const: mean contribution of constant trees.
        mean_terms: (row 0, u, p, coef) of the mean over leaf variables z[u, p].
        form: "N" (C y = rhs) or "leaf" (y = rhs).
        chol: (r, r) lower-triangular C for the N form, None for the leaf form.
        factor_terms: sparse (r, .) right-hand side rows over z.
        factor_const: (r,) constant part of the right-hand side.
    """

    weight: float
    mean_const: float
    mean_terms: Terms
    form: str
    chol: np.ndarray | None
    factor_terms: Terms
    factor_const: np.ndarray

    @property
    def rank(self) -> int:
        return len(self.factor_const)


def _terms(rows: list[int], us: list[int], ps: list[int], coefs: list[float]) -> Terms:
    """Sum duplicate (row, u, p) entries into COO arrays."""
    if not rows:
        return (np.zeros(0, np.int64),) * 3 + (np.zeros(0),)
    acc: dict[tuple[int, int, int], float] = {}
    for key in zip(rows, us, ps, strict=True):
        acc[key] = 0.0
    for key, c in zip(zip(rows, us, ps, strict=True), coefs, strict=True):
        acc[key] += c
    keys = np.array(list(acc), dtype=np.int64)
    return keys[:, 0], keys[:, 1], keys[:, 2], np.array(list(acc.values()))


def sample_gps(ens: TreeEnsemble, samples: dict[str, np.ndarray], systems, X: np.ndarray,
               leaf_of_points: np.ndarray, form: str = "auto") -> tuple[SampleGP, ...]:
    """Per-sample mean and cone data from the engine's leaf systems.

    Args:
        ens: the reduced ensemble of the same samples.
        samples: the posterior's forest arrays (S, m, ...) and ``sigma2`` (S,).
        systems: per sample (lcol (m, C), Ginv (P, P), beta (P,)), conditioned on pending points.
        X: (N, D) the training points followed by the pending points (the GP's inputs).
        leaf_of_points: (S, m, N) engine leaf node of every row of X in every tree.
        form: "auto" (fewest nonzeros), "N" or "leaf".
    """
    m = ens.tree_of.shape[1]
    n = X.shape[0]
    keep, weights = distinct_samples(samples)
    return tuple(SampleGP(w, *_one_sample(ens, s, m, n, float(samples["sigma2"][s]), systems[s],
                                          leaf_of_points[s], form)[1:])
                 for s, w in zip(keep, weights, strict=True))


def _one_sample(ens, s, m, n, sigma2, system, leaf_of, form):
    lcol, Ginv, beta, _ = system
    mean_const = 0.0
    mrow, mu_, mp, mc = [], [], [], []
    col_var: dict[int, tuple[int, int]] = {}  # leaf column -> (u, p) of a reachable leaf
    const_cols: list[int] = []
    position: list[dict[int, int]] = []
    for t in range(m):
        u = int(ens.tree_of[s, t])
        nodes = ens.leaf_nodes[s][t]
        position.append({int(node): p for p, node in enumerate(nodes)})
        cols = lcol[t, nodes]
        if ens.trees[u].constant:
            mean_const += float(beta[cols[0]])
            const_cols.append(int(cols[0]))
            continue
        for p, col in enumerate(cols):
            mrow.append(0)
            mu_.append(u)
            mp.append(p)
            mc.append(float(beta[col]))
            col_var[int(col)] = (u, p)
    mean_terms = _terms(mrow, mu_, mp, mc)
    # N form: k_n(x) = (1/m) sum_t [x in X_n's leaf of tree t]
    nrow, nu_, np_, nc = [], [], [], []
    nconst = np.zeros(n)
    for t in range(m):
        u = int(ens.tree_of[s, t])
        for i in range(n):
            p = position[t].get(int(leaf_of[t, i]))
            if p is None:
                continue
            if ens.trees[u].constant:
                nconst[i] += 1.0 / m
            else:
                nrow.append(i)
                nu_.append(u)
                np_.append(p)
                nc.append(1.0 / m)
    n_terms = _terms(nrow, nu_, np_, nc)
    n_cost = n * (n + 1) // 2 + len(n_terms[0])
    cols = sorted(col_var) + const_cols
    leaf_cost = len(cols) * min(len(cols), n)
    if form == "N" or (form == "auto" and n_cost <= leaf_cost):
        onehot = np.zeros((n, n))
        for t in range(m):
            onehot += leaf_of[t][:, None] == leaf_of[t][None, :]
        K = onehot / m + sigma2 * np.eye(n)
        chol = np.linalg.cholesky(K)
        return (1.0, mean_const, mean_terms, "N", chol, n_terms, nconst)
    Q = np.eye(len(cols)) - m * sigma2 * Ginv[np.ix_(cols, cols)]
    lam, V = np.linalg.eigh(0.5 * (Q + Q.T))
    keep = lam > 1e-12 * max(1.0, float(lam.max(initial=0.0)))
    R = V[:, keep] * np.sqrt(lam[keep])  # (cols, r)
    Rt = R.T / np.sqrt(m)
    n_var = len(col_var)
    r = Rt.shape[0]
    rows = np.repeat(np.arange(r), n_var)
    us = np.tile([col_var[c][0] for c in cols[:n_var]], r)
    ps = np.tile([col_var[c][1] for c in cols[:n_var]], r)
    coefs = Rt[:, :n_var].ravel()
    lconst = Rt[:, n_var:].sum(axis=1)
    leaf_terms = (rows.astype(np.int64), np.asarray(us, np.int64), np.asarray(ps, np.int64),
                  coefs)
    return (1.0, mean_const, mean_terms, "leaf", None, leaf_terms, lconst)


def _dense(terms: Terms, n_rows: int, zval: dict[tuple[int, int], float]) -> np.ndarray:
    rows, us, ps, coefs = terms
    out = np.zeros(n_rows)
    vals = np.array([zval.get((int(u), int(p)), 0.0) for u, p in zip(us, ps, strict=True)])
    np.add.at(out, rows, coefs * vals)
    return out


def acquisition_values(gps: tuple[SampleGP, ...], zval: dict[tuple[int, int], float],
                       kappa: float) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """mu (S,), sigma (S,) and y per sample at leaf values ``zval`` ((u, p) -> 0/1)."""
    mus, sigmas, ys = [], [], []
    for gp in gps:
        mus.append(gp.mean_const + _dense(gp.mean_terms, 1, zval)[0])
        rhs = gp.factor_const + _dense(gp.factor_terms, gp.rank, zval)
        y = solve_triangular(gp.chol, rhs, lower=True) if gp.form == "N" else rhs
        ys.append(y)
        sigmas.append(np.sqrt(max(0.0, 1.0 - float(y @ y))))
    return np.array(mus), np.array(sigmas), ys


def tangent_cuts(gps: tuple[SampleGP, ...], zvals: list[dict]) -> tuple:
    """Tangent planes of every sample's cone at the leaves ``zvals`` of some points.

    At an integral point (sigma0, y0) lies on the sphere sigma^2 + ||y||^2 = 1, so
    sigma0 sigma + y0 . y <= 1 holds for every point of the cone (Cauchy-Schwarz): a valid
    linear cut that gives the LP relaxation a first outer approximation of the cone.
    """
    cuts = []
    seen = set()
    for zval in zvals:
        _, sigmas, ys = acquisition_values(gps, zval, 1.0)
        for s, (sig, y) in enumerate(zip(sigmas, ys, strict=True)):
            normal = np.concatenate(([sig], y))
            norm = float(np.linalg.norm(normal))
            if norm <= 0.0:
                continue
            normal = normal / norm
            key = (s, normal.round(9).tobytes())
            if key not in seen:
                seen.add(key)
                cuts.append((s, normal))
    return tuple(cuts)
