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

A second family couples the leaves through the data (N-space): with k(x) = Phi phi(x) / m the
kernel vector to the N training points and K = Phi Phi^T / m + sigma2 I,
var_s = 1 - k^T K^-1 k <= 1 + b^T K b - 2 b^T k for every b in R^N (the maximum over b of
2 b^T k - b^T K b is k^T K^-1 k), and b^T k = (1/m) sum_t g_b(l_t) with g_b(l) the sum of b over
the training points in leaf l: again one term per tree. With the tangent of sqrt this gives
  sign mu_s + kappa sd_s <= sum_t max_{l in R_t} (sign beta[l] - kappa g_b(l) / (m sqrt(v0)))
                            + kappa (v0 + 1 + b^T K b) / (2 sqrt(v0)),
tight at a point x when b = K^-1 k(x). The bound is concave in the leaf indicators (k is linear
in them, the variance 1 - k^T K^-1 k concave, sqrt concave and increasing), so linearizing it
at any fractional choice of leaves gives a valid bound, and the best such linearization equals
the maximum over the relaxation. Frank-Wolfe steps approach it: k starts at each tree's
best-mean leaf, then moves to the average (weights 2 / (i + 2)) with the leaves that maximize
the previous linearization.

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
               node_leaf, tree_root, box_lo, box_hi, box_cat, reach, undecided, und_start):
    """Mark in ``reach`` (L,) the leaves every tree can reach in the box; write the node ids of
    splits with both sides reachable to ``undecided`` (tree by tree: tree u's are
    ``und_start[u]:und_start[u + 1]``) and return how many there are."""
    reach[:] = False
    n_und = 0
    stack = np.empty(256, dtype=np.int64)
    W = box_cat.shape[1]
    for u in range(tree_root.shape[0]):
        und_start[u] = n_und
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
    und_start[tree_root.shape[0]] = n_und
    return n_und


@njit(cache=True, nogil=True)
def _sample_bound(s, reach, leaf_off, s_tree_u, s_base, tree_nleaf, s_off, beta, s_moff, M,
                  dptr, dind, Kinv, n_dual, use_rows, kappa, sign, idx, tstart, row, kv, bv,
                  g, choice, phi, sb, use_lam, lam, lam_ptr, tf_ptr, tf_j, leaf_cm_ptr,
                  leaf_cm, box_cat, n_codes):
    """Upper bound of sign mu_s + kappa sd_s over the box whose leaves are ``reach``.

    Also fills ``phi`` with the per-leaf terms of the tightest separable form (what branching
    weighs), in the order of the reachable leaves ``idx`` (tree t's are ``tstart[t]:
    tstart[t + 1]``).
    """
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
                n += 1
    tstart[m] = n
    # sb: sign beta, plus the multipliers of the categorical copies (Lagrangian relaxation)
    for t in range(m):
        u = s_tree_u[s, t]
        for a in range(tstart[t], tstart[t + 1]):
            sb[a] = sign * beta[boff + idx[a]]
            if use_lam:
                leaf = leaf_off[u] + idx[a] - s_base[s, t]
                for f in range(tf_ptr[u + 1] - tf_ptr[u]):
                    sb[a] += _best_code(lam, lam_ptr[s, t] + f * n_codes, n_codes,
                                        leaf_cm[leaf_cm_ptr[leaf] + f], box_cat[tf_j[tf_ptr[u]
                                                                                 + f]])
    mu_ub = 0.0
    for t in range(m):
        best = -np.inf
        for a in range(tstart[t], tstart[t + 1]):
            v = sb[a]
            phi[a] = v
            if v > best:
                best = v
        mu_ub += best
    if kappa == 0.0:
        return mu_ub
    bound = mu_ub + kappa  # sd <= 1, the prior's
    form = 0
    form_c = 0.0
    if use_rows or n == m:
        # r(l) for every reachable leaf l
        for a in range(n):
            ca = idx[a]
            base = moff + ca * P
            total = M[base + ca]
            for t in range(m):
                if a >= tstart[t] and a < tstart[t + 1]:
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
                v = sb[a]
                if v > best_mu:
                    best_mu = v
                    r_at = row[a]
            var_ub += best
            var_mu += r_at
        var_ub = min(max(var_ub, 0.0), 1.0)
        dec = mu_ub + kappa * np.sqrt(var_ub)
        if dec < bound:
            bound = dec
        if n == m:  # decided: exact
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
                    v = sb[a] + c * row[a]
                    if v > best:
                        best = v
                tot += best
            if tot < bound:
                bound = tot
                form = 1
                form_c = c
    if n_dual > 0 and Kinv.shape[1] > 0:
        b_dual, alpha = _dual_bound(s, idx, tstart, m, boff, sb, dptr, dind, Kinv, n_dual,
                                    kappa, kv, bv, g, choice)
        if b_dual < bound:
            bound = b_dual
            form = 2
            form_c = alpha
    if form == 1:
        for a in range(n):
            phi[a] += form_c * row[a]
    elif form == 2:
        for a in range(n):
            phi[a] -= form_c * g[1, a]
    return bound


@njit(cache=True, nogil=True)
def _dual_bound(s, idx, tstart, m, boff, sb, dptr, dind, Kinv, n_dual, kappa, kv, bv, g,
                choice):
    """The N-space bound (module docstring), the best of ``n_dual`` Frank-Wolfe
    linearizations, and the weight alpha of g in its best separable form (``g[1]`` holds that
    form's leaf sums of b, ``g[0]`` is scratch)."""
    N = Kinv.shape[1]
    # start: each tree's leaf of best mean
    for t in range(m):
        best = -np.inf
        for a in range(tstart[t], tstart[t + 1]):
            v = sb[a]
            if v > best:
                best = v
                choice[t] = a
    bound = np.inf
    best_alpha = 0.0
    n_r = tstart[m]
    for it in range(n_dual):
        # k of the chosen leaves, averaged with the earlier ones (Frank-Wolfe steps on the
        # concave extension), b = K^-1 k, and b^T K b = b^T k
        keep = 0.0 if it == 0 else 1.0 - 2.0 / (it + 2.0)
        for n in range(N):
            kv[n] = 0.0 if it == 0 else keep * kv[n]  # kv holds garbage before the first
        for t in range(m):
            c = boff + idx[choice[t]]
            for e in range(dptr[c], dptr[c + 1]):
                kv[dind[e]] += (1.0 - keep) / m
        for n in range(N):
            acc = 0.0
            for n2 in range(N):
                acc += Kinv[s, n, n2] * kv[n2]
            bv[n] = acc
        bk = 0.0
        for n in range(N):
            bk += bv[n] * kv[n]
        const = 1.0 + bk
        for a in range(n_r):
            c = boff + idx[a]
            acc = 0.0
            for e in range(dptr[c], dptr[c + 1]):
                acc += bv[dind[e]]
            g[0, a] = acc
        # v0: the variance at the chosen leaves (b is optimal there), then at the maximizers
        v0 = min(max(1.0 - bk, 1e-6), 1.0)
        for _rep in range(2):
            sq = np.sqrt(v0)
            alpha = kappa / (m * sq)
            tot = kappa * (v0 + const) / (2.0 * sq)
            vsum = const
            for t in range(m):
                best = -np.inf
                for a in range(tstart[t], tstart[t + 1]):
                    v = sb[a] - alpha * g[0, a]
                    if v > best:
                        best = v
                        choice[t] = a
                tot += best
                vsum -= 2.0 * g[0, choice[t]] / m
            if tot < bound:
                bound = tot
                best_alpha = alpha
                g[1, :n_r] = g[0, :n_r]
            v0 = min(max(vsum, 1e-6), 1.0)
    return bound, best_alpha


@njit(cache=True, nogil=True)
def _best_code(lam, off, n_codes, leaf_mask, box_mask):
    """max of lam[off + c] over the codes c allowed by both bit sets."""
    best = -np.inf
    for c in range(n_codes):
        if (leaf_mask[c >> 6] & box_mask[c >> 6]) >> np.uint64(c & 63) & np.uint64(1):
            if lam[off + c] > best:
                best = lam[off + c]
    return best if best > -np.inf else 0.0


@njit(cache=True, nogil=True)
def _record_codes(s, s_tree_u, s_base, leaf_off, tstart, idx, phi, lam, lam_ptr, tf_ptr,
                  tf_j, leaf_cm_ptr, leaf_cm, box_cat, n_codes, onehot):
    """For every tree of sample s, its best leaf's best code of every categorical feature it
    splits on (1 in ``onehot``, laid out as ``lam``): the subgradient of the relaxation."""
    m = s_tree_u.shape[1]
    for t in range(m):
        u = s_tree_u[s, t]
        best = -np.inf
        a_best = tstart[t]
        for a in range(tstart[t], tstart[t + 1]):
            if phi[a] > best:
                best = phi[a]
                a_best = a
        leaf = leaf_off[u] + idx[a_best] - s_base[s, t]
        for f in range(tf_ptr[u + 1] - tf_ptr[u]):
            off = lam_ptr[s, t] + f * n_codes
            mask = leaf_cm[leaf_cm_ptr[leaf] + f]
            box_mask = box_cat[tf_j[tf_ptr[u] + f]]
            c_best = -1
            v_best = -np.inf
            for c in range(n_codes):
                if (mask[c >> 6] & box_mask[c >> 6]) >> np.uint64(c & 63) & np.uint64(1):
                    if lam[off + c] > v_best:
                        v_best = lam[off + c]
                        c_best = c
            if c_best >= 0:
                onehot[off + c_best] = 1.0


@njit(cache=True, nogil=True)
def _add_impacts(s, w, s_tree_u, s_base, leaf_off, node_left, node_right, node_lfirst,
                 node_llast, undecided, und_start, idx, tstart, phi, val, impact):
    """Add to ``impact`` (per undecided split, 2 columns) w times max(best phi right - best
    phi left, 0) and max(best phi left - best phi right, 0) for sample s: how much the left and
    the right child's bounds can drop at this split."""
    m = s_tree_u.shape[1]
    for t in range(m):
        u = s_tree_u[s, t]
        lo, hi = und_start[u], und_start[u + 1]
        if lo == hi:
            continue
        for a in range(tstart[t], tstart[t + 1]):
            val[leaf_off[u] + idx[a] - s_base[s, t]] = phi[a]
        for q in range(lo, hi):
            k = undecided[q]
            best_l = -np.inf
            for leaf in range(node_lfirst[node_left[k]], node_llast[node_left[k]] + 1):
                if val[leaf] > best_l:
                    best_l = val[leaf]
            best_r = -np.inf
            for leaf in range(node_lfirst[node_right[k]], node_llast[node_right[k]] + 1):
                if val[leaf] > best_r:
                    best_r = val[leaf]
            if best_l > -np.inf and best_r > -np.inf:
                impact[q, 0] += w * max(best_r - best_l, 0.0)
                impact[q, 1] += w * max(best_l - best_r, 0.0)
        for a in range(tstart[t], tstart[t + 1]):
            val[leaf_off[u] + idx[a] - s_base[s, t]] = -np.inf


@njit(cache=True, nogil=True)
def feature_scores(node_feat, undecided, n_und, impact, D, product):
    """Per feature, how much cutting it promises (``box_bound``'s branching): what its undecided
    splits take from the left and the right child's bounds (``impact`` columns), summed; the
    product of the two sums (``product``) or their total. Ties go to the feature with more
    undecided splits; features without one score 0."""
    s_l = np.zeros(D)
    s_r = np.zeros(D)
    cnt = np.zeros(D)
    for q in range(n_und):
        j = node_feat[undecided[q]]
        s_l[j] += impact[q, 0]
        s_r[j] += impact[q, 1]
        cnt[j] += 1.0
    score = np.zeros(D)
    for j in range(D):
        if cnt[j] == 0:
            continue
        # the product favours cuts that lower both children's bounds, where samples (or
        # trees) prefer opposite sides
        if product:
            score[j] = max(s_l[j], 1e-9) * max(s_r[j], 1e-9) + 1e-24 * cnt[j]
        else:
            score[j] = s_l[j] + s_r[j] + 1e-12 * cnt[j]
    return score


@njit(cache=True, nogil=True)
def box_bound(node_feat, node_thr, node_lmask, node_rmask, node_left, node_right, node_leaf,
              tree_root, leaf_off, tree_nleaf, s_tree_u, s_base, s_weight, s_off, beta,
              s_moff, M, dptr, dind, Kinv, node_lfirst, node_llast, n_dual, use_rows, lam,
              lam_ptr, tf_ptr, tf_j, leaf_cm_ptr, leaf_cm, n_codes, bin_first, bin_last,
              bisect, product, kappa, sign, box_lo, box_hi, box_cat, reach, undecided, val, use_lam,
              onehot):
    """Upper bound of the integrated UCB over a box, the number of undecided splits and the
    split to branch on (-1 when none is left).

    Trees (U distinct, K nodes in all, L leaves in all): ``node_feat`` (K,) feature or -1 for a
    leaf; ``node_thr`` (K,) threshold index (-1 for a categorical split); ``node_lmask``,
    ``node_rmask`` (K, W) codes reachable on each side of a categorical split; ``node_left``,
    ``node_right`` (K,) children; ``node_leaf`` (K,) leaf id; ``tree_root`` (U,);
    ``leaf_off`` (U,) first leaf id of each tree; ``tree_nleaf`` (U,); ``node_lfirst``,
    ``node_llast`` (K,) the range of leaf ids below each node (depth-first numbering).
    Samples (S distinct, m trees each): ``s_tree_u`` (S, m) tree of each; ``s_base`` (S, m)
    the sample's column of each tree's first leaf; ``s_weight`` (S,); ``s_off`` (S + 1,)
    offsets into ``beta``; ``s_moff`` (S,) offsets into ``M`` (P_s x P_s row-major each);
    ``dptr`` (sum P_s + 1,), ``dind``: the training points in each leaf (CSR over the same
    column numbering as ``beta``); ``Kinv`` (S, N, N); ``n_dual`` updates of b in the N-space
    bound (0: none); ``use_rows``: also the leaf-space row bound.
    Lagrangian relaxation of the shared features (each tree keeps its own copy of a feature it
    splits on; multipliers ``lam`` with zero weighted sum per feature and code make the copies
    agree). A code is a category, or a bin of consecutive cells of an ordered feature
    (``bin_first``, ``bin_last`` (D, B): bin b of feature j holds cells bin_first..bin_last).
    ``lam`` (n_codes per (sample, tree, feature)), ``lam_ptr`` (S, m), ``tf_ptr`` (U + 1,) /
    ``tf_j`` the features each tree splits on, ``leaf_cm_ptr`` (L,) / ``leaf_cm`` (., W) the
    codes that reach each leaf, per such feature.
    ``use_lam``: 1 (or True) adds the multipliers (only on undecided boxes, where the bound
    need not be exact), 2 takes the smaller of the bounds with and without them, 3 adds them
    on every box (multipliers that do not sum to zero: a price of each code added to the
    objective, ``benchmarks.decompose``); ``onehot``
    (like ``lam``): if its length is > 0, the subgradient is written there.
    ``bisect``: cut ordered features in the middle of the box (else at the split of largest
    impact, the previous rule). ``product``: score a feature by the product of what its cuts
    take from the two children's bounds (else by their sum, the previous rule).
    Box: ``box_lo``, ``box_hi`` (D,) cell ranges; ``box_cat`` (D, W) allowed codes.
    Scratch: ``reach`` (L,) bool, ``undecided`` (K,) int64, ``val`` (L,) float (all -inf).

    The split to branch on: on the feature of best score (``_add_impacts``: per undecided
    split, what the left and the right child lose of the best leaf terms, summed over samples;
    per feature the product of the two sums, with ``product``, else their total), the
    undecided threshold nearest the middle of the box's cells (ordered features, with
    ``bisect``) or the split of largest summed impact.
    """
    U = tree_root.shape[0]
    und_start = np.empty(U + 1, dtype=np.int64)
    n_und = _reachable(node_feat, node_thr, node_lmask, node_rmask, node_left, node_right,
                       node_leaf, tree_root, box_lo, box_hi, box_cat, reach, undecided,
                       und_start)
    S, m = s_tree_u.shape
    pmax = 0
    for s in range(S):
        pmax = max(pmax, s_off[s + 1] - s_off[s])
    idx = np.empty(pmax, dtype=np.int64)
    tstart = np.empty(m + 1, dtype=np.int64)
    row = np.empty(pmax)
    N = Kinv.shape[1]
    kv = np.empty(N)
    bv = np.empty(N)
    g = np.empty((2, pmax))
    phi = np.empty(pmax)
    sb = np.empty(pmax)
    choice = np.empty(m, dtype=np.int64)
    with_lam = use_lam > 0 and (n_und > 0 or use_lam == 3)
    # the codes a box allows: its categories, or the bins its cell range meets
    code_box = box_cat.copy()
    for j in range(box_lo.shape[0]):
        if bin_last[j, 0] < 0:
            continue
        for w in range(code_box.shape[1]):
            code_box[j, w] = 0
        for b in range(bin_first.shape[1]):
            if bin_last[j, b] < 0:
                break
            if bin_first[j, b] <= box_hi[j] and bin_last[j, b] >= box_lo[j]:
                code_box[j, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    impact = np.zeros((max(n_und, 1), 2))
    # use_lam 2: the smaller of the bounds with and without the multipliers (both hold; the
    # root's multipliers can loosen a deep box's bound)
    passes = 2 if with_lam and use_lam == 2 else 1
    total = np.inf
    for q in range(passes):
        lam_q = with_lam and q == 0
        impact_q = impact if q == 0 else np.zeros((max(n_und, 1), 2))
        total_q = 0.0
        wsum = 0.0
        for s in range(S):
            b = _sample_bound(s, reach, leaf_off, s_tree_u, s_base, tree_nleaf, s_off, beta,
                              s_moff, M, dptr, dind, Kinv, n_dual, use_rows, kappa, sign, idx,
                              tstart, row, kv, bv, g, choice, phi, sb, lam_q, lam, lam_ptr,
                              tf_ptr, tf_j, leaf_cm_ptr, leaf_cm, code_box, n_codes)
            if q == 0 and onehot.shape[0] > 0:
                _record_codes(s, s_tree_u, s_base, leaf_off, tstart, idx, phi, lam, lam_ptr,
                              tf_ptr, tf_j, leaf_cm_ptr, leaf_cm, code_box, n_codes, onehot)
            total_q += s_weight[s] * b
            wsum += s_weight[s]
            if n_und > 0:
                _add_impacts(s, s_weight[s], s_tree_u, s_base, leaf_off, node_left,
                             node_right, node_lfirst, node_llast, undecided, und_start, idx,
                             tstart, phi, val, impact_q)
        total_q /= wsum
        if total_q < total:
            total = total_q
            if q > 0:
                impact[:] = impact_q
    split = -1
    if n_und > 0:
        D = box_lo.shape[0]
        score = feature_scores(node_feat, undecided, n_und, impact, D, product)
        j_best = np.argmax(score)
        # an ordered feature is cut at the undecided threshold nearest the middle of the
        # box's cells: halving the box separates the far-apart leaves whose mixture keeps the
        # variance bound loose (ties in the linearized terms hide them from the impacts)
        mid = 0.5 * (box_lo[j_best] + box_hi[j_best])
        best = -np.inf
        for q in range(n_und):
            k = undecided[q]
            if node_feat[k] != j_best:
                continue
            v = (-abs(node_thr[k] + 0.5 - mid) if node_thr[k] >= 0 and bisect
                 else impact[q, 0] + impact[q, 1])
            if v > best:
                best = v
                split = k
    return total, n_und, split
