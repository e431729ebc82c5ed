"""Independent numpy references for the engine tests: routing, kernel, likelihood, tree prior.

Written from the layout documented in ``bofire_bark/engine/forest.py`` only; nothing here
calls the engine, so the tests compare the engine against a second implementation.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
from scipy import linalg

try:  # threaded BLAS on a 400 x 400 factor only spins when cores are busy
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn

    def threadpool_limits(limits=None):
        return nullcontext()


LEAF = -1
FREE = -2
CATEGORICAL = 2


def mask_bit(words: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Bit ``codes`` of the uint64 bitsets ``words`` (n, W), as bools (n,)."""
    codes = np.asarray(codes, dtype=np.int64)
    word = words[np.arange(len(codes)), codes // 64]
    return ((word >> (codes % 64).astype(np.uint64)) & np.uint64(1)) == np.uint64(1)


def route_np(forest: dict[str, np.ndarray], kinds: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Leaf node of every row of ``X`` in every tree, (m, N), by walking all points at once."""
    feat, thr, mask = forest["feat"], forest["thr"], forest["mask"]
    left, right = forest["left"], forest["right"]
    m = feat.shape[0]
    n = X.shape[0]
    out = np.empty((m, n), dtype=np.int64)
    rows = np.arange(n)
    for t in range(m):
        node = np.zeros(n, dtype=np.int64)
        for _ in range(feat.shape[1] + 1):
            f = feat[t, node]
            assert np.all(f != FREE), "a point reached a free slot"
            active = f >= 0
            if not active.any():
                break
            idx = rows[active]
            nd = node[idx]
            j = f[active]
            x = X[idx, j]
            is_cat = kinds[j] == CATEGORICAL
            go_left = x <= thr[t, nd]
            if is_cat.any():
                go_left[is_cat] = mask_bit(mask[t, nd[is_cat]], x[is_cat].astype(np.int64))
            node[idx] = np.where(go_left, left[t, nd], right[t, nd])
        else:  # pragma: no cover - a cycle in the links
            raise AssertionError("routing did not terminate")
        out[t] = node
    return out


def kernel_from_leaves(leaf_of: np.ndarray) -> np.ndarray:
    """k(x_i, x_k) = share of trees in which i and k sit in the same leaf, (N, N)."""
    m, n = leaf_of.shape
    K = np.zeros((n, n))
    for t in range(m):
        K += leaf_of[t][:, None] == leaf_of[t][None, :]
    return K / m


def quad_logdet(K: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(y^T K^-1 y, log|K|) by Cholesky."""
    with threadpool_limits(1):
        L = linalg.cholesky(K, lower=True)
        z = linalg.solve_triangular(L, y, lower=True)
    return float(z @ z), float(2.0 * np.log(np.diag(L)).sum())


def n_leaves(feat: np.ndarray) -> np.ndarray:
    """Leaves per tree; ``feat`` (..., C) -> (...)."""
    return (feat == LEAF).sum(axis=-1)


def max_depth(feat: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Depth of the deepest used node per tree."""
    return np.where(feat != FREE, depth, 0).max(axis=-1)


# ---------------------------------------------------------------- analytic tree prior


def split_probs(alpha: float, beta: float, n_depth: int) -> np.ndarray:
    return alpha * (1.0 + np.arange(n_depth)) ** -beta


def leaf_count_pmf(alpha: float, beta: float, k_max: int = 400, n_depth: int = 60) -> np.ndarray:
    """P(tree has k leaves), k = 0..k_max, when every node can split (continuous features).

    Recursion over depth: f_d = (1 - p_d) delta_1 + p_d (f_{d+1} * f_{d+1}); nodes at
    depth ``n_depth`` are leaves (p is negligible there). Mass above k_max is dropped, so the
    caller pools the tail as 1 - sum(pmf[:K]).
    """
    p = split_probs(alpha, beta, n_depth + 1)
    f = np.zeros(k_max + 1)
    f[1] = 1.0
    for d in range(n_depth - 1, -1, -1):
        conv = np.convolve(f, f)[: k_max + 1]
        f = p[d] * conv
        f[1] += 1.0 - p[d]
    return f


def mean_leaves(alpha: float, beta: float, n_depth: int = 60) -> float:
    """E[leaves]: e_d = (1 - p_d) + 2 p_d e_{d+1}."""
    p = split_probs(alpha, beta, n_depth + 1)
    e = 1.0
    for d in range(n_depth - 1, -1, -1):
        e = (1.0 - p[d]) + 2.0 * p[d] * e
    return e


def mean_max_depth(alpha: float, beta: float, n_depth: int = 60) -> float:
    """E[max depth] = sum_k P(max depth > k), with g_d(k) = P(subtree at d stays <= k)."""
    p = split_probs(alpha, beta, n_depth + 1)
    total = 0.0
    for k in range(n_depth):
        g = 1.0 - p[k]  # a node at depth k must be a leaf
        for d in range(k - 1, -1, -1):
            g = (1.0 - p[d]) + p[d] * g * g
        total += 1.0 - g
    return total


def pooled_bins(values: np.ndarray, k_pool: int) -> np.ndarray:
    """Counts of 1, 2, ..., k_pool - 1 and >= k_pool (values are >= 1)."""
    v = np.minimum(np.asarray(values).ravel(), k_pool)
    return np.bincount(v, minlength=k_pool + 1)[1:]


def pooled_pmf(pmf: np.ndarray, k_pool: int) -> np.ndarray:
    head = pmf[1:k_pool]
    return np.append(head, 1.0 - head.sum())
