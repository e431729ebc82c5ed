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

A sample with a smooth share s (``engine.smooth``: k = (1 - s) k_forest + s k_rbf(u, u'),
u(x) the bin centres of the binned smooth coordinates and the codes of the categorical ones,
K = (1 - s) A / m + s E + sigma2 I) has no leaf form, so only the N-space family applies, with
alpha = K^-1 y and the smooth K^-1. The grid holds the bin edges (``ensemble.with_bin_edges``),
so a cell lies in one bin per binned coordinate and a box spans a range of bins of each, and a
set of codes of each categorical one; ``grid.model`` adds one tree per coordinate, which no
sample holds, of splits at its bin edges or between its allowed codes, so that a box spanning
several bins or codes is undecided and is cut there. rbf_n(x) = k_rbf(u(x), u_n) is a product
over coordinates, exp(-(u_j - u_nj)^2 / (2 l_j^2)) for a binned one and exp(-D_c[a, a_nc]) for
a categorical one (a the code of x), and the box a product of the coordinates' ranges, so its
largest (smallest) value over a box takes in each coordinate the bin of the box nearest to
(farthest from) u_n's, or the factor's largest (smallest) value over the box's codes:

- mu_s = k^T alpha = sum_t beta[l_t] + s sum_n alpha_n rbf_n(x) with
  beta[l] = ((1 - s) / m) sum_{n in leaf l} alpha_n, so
  sign mu_s <= sum_t max_{l in R_t} sign beta[l]
               + s sum_n sign alpha_n (max rbf_n if sign alpha_n > 0 else min rbf_n);
- b^T k = ((1 - s) / m) sum_t g_b(l_t) + s sum_n b_n rbf_n(x), so the coupled bound is
  sum_t max_{l in R_t} (sign beta[l] - kappa (1 - s) g_b(l) / (m sqrt(v0)))
  + sum_n c_n (max rbf_n if c_n > 0 else min rbf_n), c_n = s (sign alpha_n - kappa b_n /
  sqrt(v0)), + kappa (v0 + 1 + b^T K b) / (2 sqrt(v0)): each rbf_n is a free variable in
  [min, max] of the relaxation (still concave), whose Frank-Wolfe iterate holds them too;
- a decided box (one leaf per tree, one bin per binned coordinate, one code per categorical
  one) knows k: var = 1 - k^T K^-1 k, exact; elsewhere the sd range is [0, 1].

The smooth terms depend on x, not on a tree's copy of a feature, so the multipliers stay
valid. Branching weighs a coordinate's tree (bin edges or codes) by the slack its range in the
box leaves in the mean's RBF part (``_add_smooth_impacts``).

The sample's bound is the smallest of these; the integrated bound their weighted mean. Another
rule than UCB (``optimize.rules``: expected improvement, probability of improvement) takes, per
sample, the bound A of sign mu_s (the first line), the range of sd_s and this coupled bound C
with kappa the coupling weight, and bounds its g over that region (``rules.region_max``); the
Lagrangian multipliers (``grid.model``) are then not used (they cancel only in the weighted sum
of linear terms). When every tree reaches one leaf (a *decided* box) every inequality is an
equality: the bound is the exact acquisition value, which is how points are scored here too (a
point is a box of single cells).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from bofire_bark.optimize.rules import UCB, region_max

_LEAF = -1

# How a box's bound uses the multipliers ``lam`` (``box_bound``'s ``use_lam``): not at all;
# on undecided boxes only (where the bound need not be exact: the relaxation); or on every box,
# decided ones too, as prices of each code added to the objective (multipliers that need not
# sum to zero; the per-sample decomposition of ``benchmarks.decompose``).
LAM_OFF, LAM_UNDECIDED, LAM_EVERY_BOX = 0, 1, 3


class Scratch(NamedTuple):
    """Scratch space of one thread's bound calls: ``reach`` (L,) bool, ``undecided`` (K,)
    int64, ``val`` (L,) float (all -inf between calls), ``grad``: empty, or (like ``lam``)
    where ``box_bound`` writes the subgradient of the relaxation (the best code of every
    tree's best leaf: 1, added to what is there), and ``per``: empty, or (S, 4) where it
    writes each sample's bounds (A, L, B, C) of ``_sample_bound`` (for rules over several
    outputs' samples, ``optimize.hypervolume``)."""

    reach: np.ndarray
    undecided: np.ndarray
    val: np.ndarray
    grad: np.ndarray
    per: np.ndarray


def scratch(bm, grad: bool = False, per_sample: bool = False) -> Scratch:
    """A fresh ``Scratch`` for ``bm`` (a ``grid.model.BoundModel``)."""
    n_leaves = int(bm.leaf_off[-1] + bm.tree_nleaf[-1]) if len(bm.leaf_off) else 0
    return Scratch(np.zeros(n_leaves, dtype=np.bool_), np.zeros(len(bm.node_feat), np.int64),
                   np.full(n_leaves, -np.inf), np.zeros(len(bm.lam) if grad else 0),
                   np.zeros((len(bm.s_weight) if per_sample else 0, 4)))


class _Work(NamedTuple):
    """Per-call arrays of ``box_bound``, shared by the per-sample kernels: the reachable
    leaves' columns ``idx`` (tree t's are ``tstart[t]:tstart[t + 1]``), their signed means
    plus multipliers ``sb``, their terms of the tightest separable form ``phi``, the rows
    ``row`` of the decided-box variance bound, and the N-space bound's ``kv``, ``bv``, ``g``,
    ``choice``; with a smooth share, the range [``rmin``, ``rmax``] of each point's RBF over
    the box and its value ``rsel`` in the Frank-Wolfe iterate (all empty without one)."""

    idx: np.ndarray
    tstart: np.ndarray
    row: np.ndarray
    kv: np.ndarray
    bv: np.ndarray
    g: np.ndarray
    phi: np.ndarray
    sb: np.ndarray
    choice: np.ndarray
    rmax: np.ndarray
    rmin: np.ndarray
    rsel: np.ndarray


# The per-sample kernels are inlined into box_bound: called, each would receive the whole
# BoundModel by value (36 arrays) per sample and box (measured 3-5 % fewer bound calls per
# second than the separate arrays of before; inlined, 1-3 % more).
@njit(cache=True, nogil=True, inline="always")
def _reachable(bm, box_lo, box_hi, box_cat, reach, undecided, und_start):
    """Mark in ``reach`` (L,) the leaves every tree can reach in the box; write the node ids of
    splits with both sides reachable to ``undecided`` (tree by tree: tree u's are
    ``und_start[u]:und_start[u + 1]``) and return how many there are."""
    node_feat, node_thr = bm.node_feat, bm.node_thr
    node_lmask, node_rmask = bm.node_lmask, bm.node_rmask
    tree_root = bm.tree_root
    reach[:] = False
    # int64 from the start: a literal 0 made type inference compile feature_scores twice
    n_und = np.int64(0)
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
                reach[bm.node_leaf[k]] = True
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
                stack[top] = bm.node_right[k]
                top += 1
            if go_l:
                stack[top] = bm.node_left[k]
                top += 1
    und_start[tree_root.shape[0]] = n_und
    return n_und


@njit(cache=True, nogil=True, inline="always")
def _sample_bound(bm, s, reach, wk, use_lam, code_box, sm_dec):
    """Upper bound C of sign mu_s + kappa sd_s over the box whose leaves are ``reach``, with
    the bound A of sign mu_s and the range [L, B] of sd_s the kernel knows: (C, A, L, B).
    (L = B = the exact sd on a decided box; else 0 and 1, the prior's sd.) ``sm_dec``: the
    box lies in one bin (or code) of every smooth coordinate (``_smooth_range``; True
    without them).

    Also fills ``wk.phi`` with the per-leaf terms of the tightest separable form (what
    branching weighs), in the order of the reachable leaves ``wk.idx``.
    """
    s_tree_u, leaf_off, s_base = bm.s_tree_u, bm.leaf_off, bm.s_base
    tf_ptr, lam = bm.tf_ptr, bm.lam
    idx, tstart, row, sb, phi = wk.idx, wk.tstart, wk.row, wk.sb, wk.phi
    kappa, sign, M = bm.kappa, bm.sign, bm.M
    m = s_tree_u.shape[1]
    P = bm.s_off[s + 1] - bm.s_off[s]
    boff = bm.s_off[s]
    moff = bm.s_moff[s]
    n = 0
    for t in range(m):
        tstart[t] = n
        u = s_tree_u[s, t]
        for p in range(bm.tree_nleaf[u]):
            if reach[leaf_off[u] + p]:
                idx[n] = s_base[s, t] + p
                n += 1
    tstart[m] = n
    # sb: sign beta, plus the multipliers of the categorical copies (Lagrangian relaxation)
    for t in range(m):
        u = s_tree_u[s, t]
        for a in range(tstart[t], tstart[t + 1]):
            sb[a] = sign * bm.beta[boff + idx[a]]
            if use_lam:
                leaf = leaf_off[u] + idx[a] - s_base[s, t]
                for f in range(tf_ptr[u + 1] - tf_ptr[u]):
                    sb[a] += _best_code(lam, bm.lam_ptr[s, t] + f * bm.n_codes, bm.n_codes,
                                        bm.leaf_cm[bm.leaf_cm_ptr[leaf] + f],
                                        code_box[bm.tf_j[tf_ptr[u] + f]])
    mu_ub = 0.0
    for t in range(m):
        best = -np.inf
        for a in range(tstart[t], tstart[t + 1]):
            v = sb[a]
            phi[a] = v
            if v > best:
                best = v
        mu_ub += best
    if bm.smooth.share.shape[0] > 0:
        return _smooth_bound(bm.smooth, s, wk, mu_ub, n == m and sm_dec, bm.s_off, bm.dptr,
                             bm.dind, bm.Kinv, bm.n_dual, kappa, sign)
    if kappa == 0.0:
        return mu_ub, mu_ub, 0.0, 1.0
    bound = mu_ub + kappa  # sd <= 1, the prior's
    if n == m:  # decided: the variance from the leaf rows is exact
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
        for t in range(m):
            best = -np.inf
            for a in range(tstart[t], tstart[t + 1]):
                if row[a] > best:
                    best = row[a]
            var_ub += best
        var_ub = min(max(var_ub, 0.0), 1.0)
        sd = np.sqrt(var_ub)
        dec = mu_ub + kappa * sd
        if dec < bound:
            bound = dec
        return bound, mu_ub, sd, sd
    form_c = 0.0
    dual = False
    if bm.n_dual > 0 and bm.Kinv.shape[1] > 0:
        b_dual, alpha = _dual_bound(bm, s, wk)
        if b_dual < bound:
            bound = b_dual
            dual = True
            form_c = alpha
    if dual:
        for a in range(n):
            phi[a] -= form_c * wk.g[1, a]
    return bound, mu_ub, 0.0, 1.0


@njit(cache=True, nogil=True, inline="always")
def _dual_bound(bm, s, wk):
    """The N-space bound (module docstring), the best of ``bm.n_dual`` Frank-Wolfe
    linearizations, and the weight alpha of g in its best separable form (``wk.g[1]`` holds
    that form's leaf sums of b, ``wk.g[0]`` is scratch): ``_frank_wolfe`` without a smooth
    share."""
    return _frank_wolfe(0.0, wk.kv, s, wk, bm.s_off, bm.dptr, bm.dind, bm.Kinv, bm.n_dual,
                        bm.kappa, 1.0)


@njit(cache=True, nogil=True)
def _code_range(cf, cat, fmax, fmin):
    """Per code b, the largest and the smallest factor ``cf[a, b]`` over the codes a the bit
    set ``cat`` (W,) allows, into ``fmax``, ``fmin``; returns how many codes it allows."""
    C = min(cf.shape[0], 64 * cat.shape[0])  # codes beyond the bit set are not allowed
    fmax[:] = 0.0
    fmin[:] = np.inf
    count = 0
    for a in range(C):
        if (cat[a >> 6] >> np.uint64(a & 63)) & np.uint64(1):
            count += 1
            for b in range(cf.shape[1]):
                v = cf[a, b]
                if v > fmax[b]:
                    fmax[b] = v
                if v < fmin[b]:
                    fmin[b] = v
    return count


@njit(cache=True, nogil=True)
def _smooth_range(sm, box_lo, box_hi, box_cat, rmax, rmin):
    """Each point's RBF to the box's smooth coordinates: its largest (nearest bin centre or
    code per coordinate) and smallest (farthest) value into ``wk.rmax``, ``wk.rmin`` (the RBF
    is a product over coordinates and the box's bins and codes a product of ranges). True
    when the box lies in one bin of every binned coordinate and allows one code of every
    categorical one (then rmax = rmin, the exact RBF). ``sm``: the ``BoundModel``'s
    ``SmoothModel``.

    The smooth kernels take the arrays they read, not the ``BoundModel``: typed for that
    40-field tuple, inlined or not, they made ``box_bound`` compile in 27-33 s instead of
    21 s (15-18 s before the smooth share).
    """
    ubin, sm_f = sm.ubin, sm.f
    ds = sm_f.shape[0]
    for n in range(rmax.shape[0]):
        rmax[n] = 1.0
        rmin[n] = 1.0
    decided = True
    for j in range(ds):
        f = sm.feat[j]
        a = sm.cbin[j, box_lo[f]]
        b = sm.cbin[j, box_hi[f]]
        if a != b:
            decided = False
        for n in range(rmax.shape[0]):
            u = ubin[n, j]
            near = a - u if u < a else (u - b if u > b else 0)
            far = max(abs(u - a), abs(u - b))
            rmax[n] *= sm_f[j, near]
            rmin[n] *= sm_f[j, far]
    if sm.feat.shape[0] > ds:
        fmax = np.empty(sm.cf.shape[2])
        fmin = np.empty(sm.cf.shape[2])
        for c in range(sm.feat.shape[0] - ds):
            # a point of code b: its factor over the box's codes a spans [fmin[b], fmax[b]]
            if _code_range(sm.cf[c], box_cat[sm.feat[ds + c]], fmax, fmin) != 1:
                decided = False
            for n in range(rmax.shape[0]):
                b = ubin[n, ds + c]
                rmax[n] *= fmax[b]
                rmin[n] *= fmin[b]
    return decided


@njit(cache=True, nogil=True)
def _smooth_bound(sm, s, wk, mu_forest, decided, s_off, dptr, dind, Kinv, n_dual, kappa,
                  sign):
    """``_sample_bound`` of a sample with a smooth share (module docstring), from the forest
    part's mean bound ``mu_forest`` (its leaf terms in ``wk``); ``decided``: one leaf per
    tree and one bin (or code) per coordinate, where the value is exact. The other arguments are the
    ``BoundModel``'s fields of those names."""
    sh = sm.share[s]
    alpha, rmax, rmin, kv = sm.alpha[s], wk.rmax, wk.rmin, wk.kv
    N = rmax.shape[0]
    m = wk.choice.shape[0]
    mu_ub = mu_forest
    for n in range(N):  # each point's RBF at its extreme in the direction of its weight
        c = sign * alpha[n]
        mu_ub += sh * c * (rmax[n] if c > 0.0 else rmin[n])
    if kappa == 0.0:
        return mu_ub, mu_ub, 0.0, 1.0
    if decided:  # k is known: the exact variance 1 - k^T K^-1 k
        fw = (1.0 - sh) / m
        for n in range(N):
            kv[n] = sh * rmax[n]
        for t in range(m):
            c = s_off[s] + wk.idx[wk.tstart[t]]
            for e in range(dptr[c], dptr[c + 1]):
                kv[dind[e]] += fw
        q = 0.0
        for n in range(N):
            acc = 0.0
            for n2 in range(N):
                acc += Kinv[s, n, n2] * kv[n2]
            q += kv[n] * acc
        sd = np.sqrt(min(max(1.0 - q, 0.0), 1.0))
        return mu_ub + kappa * sd, mu_ub, sd, sd
    bound = mu_ub + kappa  # sd <= 1, the prior's
    if n_dual > 0:
        b_dual, a_g = _frank_wolfe(sh, alpha, s, wk, s_off, dptr, dind, Kinv, n_dual, kappa,
                                   sign)
        if b_dual < bound:
            bound = b_dual
            for a in range(wk.tstart[m]):
                wk.phi[a] -= a_g * wk.g[1, a]
    return bound, mu_ub, 0.0, 1.0


@njit(cache=True, nogil=True, inline="always")
def _frank_wolfe(sh, alpha_y, s, wk, s_off, dptr, dind, Kinv, n_dual, kappa, sign):
    """The N-space bound of sample ``s`` and the weight alpha of g in its best separable form
    (``_dual_bound``), with a smooth share ``sh`` > 0 (``alpha_y`` its K^-1 y): the
    Frank-Wolfe iterate also holds each point's RBF ``wk.rsel`` in its range [rmin, rmax]
    (the relaxation treats them as free), b^T k gains sh sum_n b_n r_n, and the linearization
    takes each r_n at the end its weight sh (sign alpha_n - kappa b_n / sqrt(v0)) prefers.
    At ``sh`` = 0 nothing reads ``alpha_y`` or the r arrays, and the arithmetic is
    the forest's alone."""
    idx, tstart, sb, kv, bv, g, choice = wk.idx, wk.tstart, wk.sb, wk.kv, wk.bv, wk.g, wk.choice
    rmax, rmin, rsel = wk.rmax, wk.rmin, wk.rsel
    smooth = sh > 0.0
    m = choice.shape[0]
    boff = s_off[s]
    N = Kinv.shape[1]
    forest = 1.0 - sh  # the forest part's weight (per tree: / m)
    # start: each tree's leaf of best mean, each RBF at the end its mean weight prefers
    for t in range(m):
        best = -np.inf
        for a in range(tstart[t], tstart[t + 1]):
            v = sb[a]
            if v > best:
                best = v
                choice[t] = a
    if smooth:
        for n in range(N):
            rsel[n] = rmax[n] if sign * alpha_y[n] > 0.0 else rmin[n]
    bound = np.inf
    best_alpha = 0.0
    n_r = tstart[m]
    for it in range(n_dual):
        # k of the chosen leaves, averaged with the earlier ones (Frank-Wolfe steps on the
        # concave extension), b = K^-1 k, and b^T K b = b^T k
        keep = 0.0 if it == 0 else 1.0 - 2.0 / (it + 2.0)
        for n in range(N):
            kv[n] = 0.0 if it == 0 else keep * kv[n]  # kv holds garbage before the first
            if smooth:
                kv[n] += (1.0 - keep) * sh * rsel[n]
        for t in range(m):
            c = boff + idx[choice[t]]
            for e in range(dptr[c], dptr[c + 1]):
                kv[dind[e]] += (1.0 - keep) * forest / m
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
            alpha = kappa * forest / (m * sq)
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
                vsum -= 2.0 * forest * g[0, choice[t]] / m
            if smooth:
                for n in range(N):
                    c = sh * (sign * alpha_y[n] - kappa * bv[n] / sq)
                    r = rmax[n] if c > 0.0 else rmin[n]
                    rsel[n] = r
                    tot += c * r
                    vsum -= 2.0 * sh * bv[n] * r
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


@njit(cache=True, nogil=True, inline="always")
def _record_codes(bm, s, wk, code_box, grad):
    """For every tree of sample s, its best leaf's best code of every categorical feature it
    splits on (1 in ``grad``, laid out as ``lam``): the subgradient of the relaxation."""
    s_tree_u, tf_ptr, lam, n_codes = bm.s_tree_u, bm.tf_ptr, bm.lam, bm.n_codes
    tstart, phi = wk.tstart, wk.phi
    m = s_tree_u.shape[1]
    for t in range(m):
        u = s_tree_u[s, t]
        best = -np.inf
        a_best = tstart[t]
        for a in range(tstart[t], tstart[t + 1]):
            if phi[a] > best:
                best = phi[a]
                a_best = a
        leaf = bm.leaf_off[u] + wk.idx[a_best] - bm.s_base[s, t]
        for f in range(tf_ptr[u + 1] - tf_ptr[u]):
            off = bm.lam_ptr[s, t] + f * n_codes
            mask = bm.leaf_cm[bm.leaf_cm_ptr[leaf] + f]
            box_mask = code_box[bm.tf_j[tf_ptr[u] + f]]
            c_best = -1
            v_best = -np.inf
            for c in range(n_codes):
                if (mask[c >> 6] & box_mask[c >> 6]) >> np.uint64(c & 63) & np.uint64(1):
                    if lam[off + c] > v_best:
                        v_best = lam[off + c]
                        c_best = c
            if c_best >= 0:
                grad[off + c_best] = 1.0


@njit(cache=True, nogil=True, inline="always")
def _add_impacts(bm, s, w, und_start, wk, sc, impact):
    """Add to ``impact`` (per undecided split, 2 columns) w times max(best phi right - best
    phi left, 0) and max(best phi left - best phi right, 0) for sample s: how much the left and
    the right child's bounds can drop at this split."""
    s_tree_u, s_base, leaf_off = bm.s_tree_u, bm.s_base, bm.leaf_off
    node_left, node_right = bm.node_left, bm.node_right
    node_lfirst, node_llast = bm.node_lfirst, bm.node_llast
    idx, tstart, phi = wk.idx, wk.tstart, wk.phi
    undecided, val = sc.undecided, sc.val
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
def _add_smooth_impacts(sm, s_weight, box_lo, box_hi, box_cat, und_start, rmax, impact):
    """Give the undecided splits of each smooth coordinate j's tree (its bin edges or codes;
    no sample's trees weigh them) half of the slack its range leaves in the mean's RBF part
    on each side: sum_s w_s sh_s sum_n |alpha_sn| rmax_n (1 - f_min / f_max), with f the
    coordinate's RBF factor of point n at its nearest and farthest bin (or code) of the
    box."""
    sm_f, ubin = sm.f, sm.ubin
    N = ubin.shape[0]
    S = sm.share.shape[0]
    ds = sm_f.shape[0]
    fmax = np.empty(sm.cf.shape[2])
    fmin = np.empty(sm.cf.shape[2])
    for j in range(sm.feat.shape[0]):
        u_j = sm.tree_u[j]
        lo, hi = und_start[u_j], und_start[u_j + 1]
        if lo == hi:
            continue
        f = sm.feat[j]
        a = b = 0
        if j < ds:
            a = sm.cbin[j, box_lo[f]]
            b = sm.cbin[j, box_hi[f]]
        else:
            _code_range(sm.cf[j - ds], box_cat[f], fmax, fmin)
        slack = 0.0
        for n in range(N):
            u = ubin[n, j]
            # a factor may underflow to 0 (a short length, a far point): then so does the
            # point's rmax, and its slack is 0
            if j < ds:
                near = a - u if u < a else (u - b if u > b else 0)
                far = max(abs(u - a), abs(u - b))
                f_near = sm_f[j, near]
                gap = 1.0 - sm_f[j, far] / f_near if f_near > 0.0 else 0.0
            else:
                gap = 1.0 - fmin[u] / fmax[u] if fmax[u] > 0.0 else 0.0
            if gap <= 0.0:
                continue
            weight = 0.0
            for s in range(S):
                weight += s_weight[s] * sm.share[s] * abs(sm.alpha[s, n])
            slack += weight * rmax[n] * gap
        share = 0.5 * slack / (hi - lo)
        for q in range(lo, hi):
            impact[q, 0] += share
            impact[q, 1] += share


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


@njit(cache=True, nogil=True, inline="always")
def _code_box(bm, box_lo, box_hi, box_cat):
    """The codes a box allows: its categories, or the bins its cell range meets."""
    bin_first, bin_last = bm.bin_first, bm.bin_last
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
    return code_box


@njit(cache=True, nogil=True, inline="always")
def _work(bm):
    S, m = bm.s_tree_u.shape
    pmax = 0
    for s in range(S):
        pmax = max(pmax, bm.s_off[s + 1] - bm.s_off[s])
    N = bm.Kinv.shape[1]
    Ns = bm.smooth.ubin.shape[0]
    return _Work(np.empty(pmax, dtype=np.int64), np.empty(m + 1, dtype=np.int64),
                 np.empty(pmax), np.empty(N), np.empty(N), np.empty((2, pmax)),
                 np.empty(pmax), np.empty(pmax), np.empty(m, dtype=np.int64),
                 np.empty(Ns), np.empty(Ns), np.empty(Ns))


@njit(cache=True, nogil=True)
def box_bound(bm, box_lo, box_hi, box_cat, sc, use_lam):
    """Upper bound of the integrated UCB over a box, the number of undecided splits and the
    split to branch on (-1 when none is left).

    ``bm``: the ``grid.model.BoundModel``. Box: ``box_lo``, ``box_hi`` (D,) cell ranges;
    ``box_cat`` (D, W) allowed codes. ``sc``: a ``Scratch``; the subgradient goes to
    ``sc.grad`` when it is not empty. ``use_lam``: ``LAM_OFF``, ``LAM_UNDECIDED`` (the
    multipliers on undecided boxes, where the bound need not be exact) or ``LAM_EVERY_BOX``.

    The split to branch on: on the feature of best score (``_add_impacts``: per undecided
    split, what the left and the right child lose of the best leaf terms, summed over samples;
    per feature the product of the two sums, with ``bm.product``, else their total), the
    undecided threshold nearest the middle of the box's cells (ordered features, with
    ``bm.bisect``) or the split of largest summed impact.
    """
    node_feat, node_thr = bm.node_feat, bm.node_thr
    U = bm.tree_root.shape[0]
    und_start = np.empty(U + 1, dtype=np.int64)
    n_und = _reachable(bm, box_lo, box_hi, box_cat, sc.reach, sc.undecided, und_start)
    S = bm.s_tree_u.shape[0]
    wk = _work(bm)
    with_lam = use_lam > 0 and (n_und > 0 or use_lam == LAM_EVERY_BOX)
    code_box = _code_box(bm, box_lo, box_hi, box_cat)
    sm_dec = True
    if bm.smooth.share.shape[0] > 0:
        sm_dec = _smooth_range(bm.smooth, box_lo, box_hi, box_cat, wk.rmax, wk.rmin)
    impact = np.zeros((max(n_und, 1), 2))
    total = 0.0
    wsum = 0.0
    for s in range(S):
        b, mu_ub, sd_lo, sd_hi = _sample_bound(bm, s, sc.reach, wk, with_lam, code_box,
                                               sm_dec)
        if sc.per.shape[0] > 0:
            sc.per[s, 0] = mu_ub
            sc.per[s, 1] = sd_lo
            sc.per[s, 2] = sd_hi
            sc.per[s, 3] = b
        if bm.rule != UCB:
            b = region_max(bm.rule, bm.kappa, mu_ub, sd_lo, sd_hi, b, bm.best[s])
        if sc.grad.shape[0] > 0:
            _record_codes(bm, s, wk, code_box, sc.grad)
        total += bm.s_weight[s] * b
        wsum += bm.s_weight[s]
        if n_und > 0:
            _add_impacts(bm, s, bm.s_weight[s], und_start, wk, sc, impact)
    if n_und > 0 and bm.smooth.share.shape[0] > 0:
        _add_smooth_impacts(bm.smooth, bm.s_weight, box_lo, box_hi, box_cat, und_start,
                            wk.rmax, impact)
    total /= wsum
    if not total < np.inf:  # NaN (opposite infinite sample bounds) counts as no bound
        total = np.inf
    split = -1
    if n_und > 0:
        D = box_lo.shape[0]
        undecided = sc.undecided
        score = feature_scores(node_feat, undecided, n_und, impact, D, bm.product)
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
            v = (-abs(node_thr[k] + 0.5 - mid) if node_thr[k] >= 0 and bm.bisect
                 else impact[q, 0] + impact[q, 1])
            if v > best:
                best = v
                split = k
    return total, n_und, split
