"""Upper bounds of the integrated UCB over boxes of the threshold grid (numba kernels).

Every tree is piecewise constant on the grid cut by its thresholds, so a candidate only matters
through its *cell*: per continuous or discrete feature j, the index c of the interval of the
sorted thresholds t_j it falls in (c = #{i: t_j[i] < x_j}; a split "x_j <= t_j[i]" sends cells
c <= i left), per categorical feature its code. A *box* is a range of cells per ordered feature
(``lo[j] <= c <= hi[j]``) and a bit set of codes per categorical feature.

For posterior sample s with leaf columns phi (one leaf per tree), leaf means beta and
M = sigma2_s G^-1 (``engine.predict``): mu_s = sum_t beta[l_t] and var_s = phi^T M phi. Over a
box each tree t can still reach a set R_t of leaves, and

- mu_s <= sum_t max_{l in R_t} beta[l];
- var_s = sum_t (M[l_t, l_t] + sum_{t' != t} M[l_t, l_t'])
        <= sum_t max_{l in R_t} r(l),  r(l) = M[l, l] + sum_{t' != t} max_{l' in R_t'} M[l, l'];
- and, coupling both (sqrt is concave, so sqrt(v) <= sqrt(v0)/2 + v / (2 sqrt(v0)) for v0 > 0),
  sign mu_s + kappa sd_s <= sum_t max_{l in R_t} (sign beta[l] + kappa r(l) / (2 sqrt(v0)))
                             + kappa sqrt(v0) / 2   for every v0 > 0.

The sample's bound is the smallest of these; the integrated bound their weighted mean. When every
tree reaches one leaf (a *decided* box) every inequality is an equality: the bound is the exact
integrated UCB, which is how points are scored here too (a point is a box of single cells).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_LEAF = -1


@njit(cache=True, nogil=True)
def _reachable(node_feat, node_thr, node_lmask, node_rmask, node_left, node_right,
               node_leaf, tree_root, box_lo, box_hi, box_cat, reach, undecided):
    """Mark in ``reach`` (L,) the leaves every tree can reach in the box; write the node ids of
    splits with both sides reachable to ``undecided`` and return how many there are."""
    reach[:] = False
    n_und = 0
    stack = np.empty(256, dtype=np.int64)
    W = box_cat.shape[1]
    for u in range(tree_root.shape[0]):
        top = 0
        stack[0] = tree_root[u]
        top = 1
        while top > 0:
            top -= 1
            k = stack[top]
            j = node_feat[k]
            if j == _LEAF:
                reach[node_leaf[k]] = True
                continue
            thr = node_thr[k]
            if thr >= 0:
                go_l = box_lo[j] <= thr
                go_r = box_hi[j] > thr
            else:
                go_l = False
                go_r = False
                for w in range(W):
                    if box_cat[j, w] & node_lmask[k, w]:
                        go_l = True
                    if box_cat[j, w] & node_rmask[k, w]:
                        go_r = True
            if go_l and go_r:
                undecided[n_und] = k
                n_und += 1
            if top + 2 > stack.shape[0]:
                bigger = np.empty(2 * stack.shape[0], dtype=np.int64)
                bigger[:top] = stack[:top]
                stack = bigger
            if go_r:
                stack[top] = node_right[k]
                top += 1
            if go_l:
                stack[top] = node_left[k]
                top += 1
    return n_und


@njit(cache=True, nogil=True)
def _sample_bound(s, reach, leaf_off, s_tree_u, s_base, tree_nleaf, s_off, beta, s_moff, M,
                  kappa, sign, idx, tix, tstart, row):
    """Upper bound of sign mu_s + kappa sd_s over the box whose leaves are ``reach``."""
    m = s_tree_u.shape[1]
    P = s_off[s + 1] - s_off[s]
    boff = s_off[s]
    moff = s_moff[s]
    n = 0
    for t in range(m):
        tstart[t] = n
        u = s_tree_u[s, t]
        for p in range(tree_nleaf[u]):
            if reach[leaf_off[u] + p]:
                idx[n] = s_base[s, t] + p
                tix[n] = t
                n += 1
    tstart[m] = n
    mu_ub = 0.0
    for t in range(m):
        best = -np.inf
        for a in range(tstart[t], tstart[t + 1]):
            v = sign * beta[boff + idx[a]]
            if v > best:
                best = v
        mu_ub += best
    if kappa == 0.0:
        return mu_ub
    # r(l) for every reachable leaf l
    for a in range(n):
        ca = idx[a]
        base = moff + ca * P
        total = M[base + ca]
        ta = tix[a]
        for t in range(m):
            if t == ta:
                continue
            best = -np.inf
            for b in range(tstart[t], tstart[t + 1]):
                v = M[base + idx[b]]
                if v > best:
                    best = v
            total += best
        row[a] = total
    var_ub = 0.0
    var_mu = 0.0  # r summed at each tree's best-mean leaf: a second tangent point
    for t in range(m):
        best = -np.inf
        best_mu = -np.inf
        r_at = 0.0
        for a in range(tstart[t], tstart[t + 1]):
            if row[a] > best:
                best = row[a]
            v = sign * beta[boff + idx[a]]
            if v > best_mu:
                best_mu = v
                r_at = row[a]
        var_ub += best
        var_mu += r_at
    var_ub = min(max(var_ub, 0.0), 1.0)
    bound = mu_ub + kappa * np.sqrt(var_ub)
    if tstart[m] == m:  # decided: exact
        return bound
    var_mu = min(max(var_mu, 1e-12), 1.0)
    for q in range(3):
        if q == 0:
            v0 = var_mu
        elif q == 1:
            v0 = max(var_ub, 1e-12)
        else:
            v0 = np.sqrt(var_mu * max(var_ub, 1e-12))
        sq = np.sqrt(v0)
        c = kappa / (2.0 * sq)
        tot = kappa * sq / 2.0
        for t in range(m):
            best = -np.inf
            for a in range(tstart[t], tstart[t + 1]):
                v = sign * beta[boff + idx[a]] + c * row[a]
                if v > best:
                    best = v
            tot += best
        if tot < bound:
            bound = tot
    return bound


@njit(cache=True, nogil=True)
def undecided_splits(node_feat, node_thr, node_lmask, node_rmask, node_left, node_right,
                     node_leaf, tree_root, box_lo, box_hi, box_cat, reach, undecided):
    """Fill ``undecided`` with the splits a box leaves open; return their number."""
    return _reachable(node_feat, node_thr, node_lmask, node_rmask, node_left, node_right,
                      node_leaf, tree_root, box_lo, box_hi, box_cat, reach, undecided)


@njit(cache=True, nogil=True)
def box_bound(node_feat, node_thr, node_lmask, node_rmask, node_left, node_right, node_leaf,
              tree_root, leaf_off, tree_nleaf, s_tree_u, s_base, s_weight, s_off, beta,
              s_moff, M, kappa, sign, box_lo, box_hi, box_cat, reach, undecided):
    """Upper bound of the integrated UCB over a box, and the number of undecided splits.

    Trees (U distinct, K nodes in all, L leaves in all): ``node_feat`` (K,) feature or -1 for a
    leaf; ``node_thr`` (K,) threshold index (-1 for a categorical split); ``node_lmask``,
    ``node_rmask`` (K, W) codes reachable on each side of a categorical split; ``node_left``,
    ``node_right`` (K,) children; ``node_leaf`` (K,) leaf id; ``tree_root`` (U,);
    ``leaf_off`` (U,) first leaf id of each tree; ``tree_nleaf`` (U,).
    Samples (S distinct, m trees each): ``s_tree_u`` (S, m) tree of each; ``s_base`` (S, m)
    the sample's column of each tree's first leaf; ``s_weight`` (S,); ``s_off`` (S + 1,)
    offsets into ``beta``; ``s_moff`` (S,) offsets into ``M`` (P_s x P_s row-major each).
    Box: ``box_lo``, ``box_hi`` (D,) cell ranges; ``box_cat`` (D, W) allowed codes.
    Scratch: ``reach`` (L,) bool, ``undecided`` (K,) int64 (filled with undecided splits).
    """
    n_und = _reachable(node_feat, node_thr, node_lmask, node_rmask, node_left, node_right,
                       node_leaf, tree_root, box_lo, box_hi, box_cat, reach, undecided)
    S, m = s_tree_u.shape
    pmax = 0
    for s in range(S):
        pmax = max(pmax, s_off[s + 1] - s_off[s])
    idx = np.empty(pmax, dtype=np.int64)
    tix = np.empty(pmax, dtype=np.int64)
    tstart = np.empty(m + 1, dtype=np.int64)
    row = np.empty(pmax)
    total = 0.0
    wsum = 0.0
    for s in range(S):
        b = _sample_bound(s, reach, leaf_off, s_tree_u, s_base, tree_nleaf, s_off, beta,
                          s_moff, M, kappa, sign, idx, tix, tstart, row)
        total += s_weight[s] * b
        wsum += s_weight[s]
    return total / wsum, n_und
