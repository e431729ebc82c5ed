"""Grow, prune and change proposals and the noise step (paper appendix F).

Metropolis-Hastings ratios, derived for a prior in which a node that no feature can split is
a leaf with probability one (so features that run out of room bias nothing):

- grow leaf eta (depth d, w0 leaves) into children L, R; T* has w1* singly-internal nodes:
  ``r = w0 / w1* * p_d * f(d+1, s_L) * f(d+1, s_R) / (1 - p_d) * likelihood ratio``,
  with ``p_d = alpha (1 + d)^-beta`` and ``f(d, s) = 1 - p_d`` if the child can split (s),
  else 1. The rule's probability appears in prior and proposal alike and cancels.
- prune singly-internal eta (w1 of them) of T, T* with w0* leaves: the inverse,
  ``r = w1 / w0* * (1 - p_d) / (p_d f(d+1, s_L) f(d+1, s_R)) * likelihood ratio``.
- change the rule of singly-internal eta to a fresh draw from its subspace: only the
  children's leaf factors and the likelihood remain:
  ``r = f(d+1, s_L*) f(d+1, s_R*) / (f(d+1, s_L) f(d+1, s_R)) * likelihood ratio``.
- noise: random walk theta* = theta + step * N(0, 1) on theta = softplus^-1(sigma^2). The
  walk is symmetric in theta, so the target there is p(sigma^2(theta)) * dsigma^2/dtheta and
  ``r = lik ratio * prior ratio * (1 - exp(-sigma*^2)) / (1 - exp(-sigma^2))``.

Move types are chosen with fixed probabilities (grow 1/4, prune 1/4, change 1/2); a move
that is impossible in the current tree (prune or change of a single leaf, grow of a leaf
that cannot split) leaves the tree as it is, which keeps the chain exactly reversible.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from bofire_bark.engine.forest import (
    CATEGORICAL,
    DISCRETE,
    FREE,
    LEAF,
    count_leaves_and_twigs,
    free_pair,
    n_splittable,
    node_subspace,
    nth_node,
    split_leaf,
)
from bofire_bark.engine.likelihood import (
    leaf_append,
    leaf_apply,
    leaf_drop_last,
    leaf_eval,
    leaf_factor,
    leaf_install,
    leaf_quad_logdet,
    leaf_refresh,
    leaf_swap_remove,
    n_apply,
    n_eval,
    n_factor,
    n_install,
    n_refresh,
)
from bofire_bark.engine.priors import draw_rule, log_leaf_factor, log_noise_prior, split_prob
from bofire_bark.engine.rng import normal, uniform

FLAT = 0
NSPACE = 1
LEAFSPACE = 2

GROW = 0
PRUNE = 1
CHANGE = 2
NOISE = 3


@njit(cache=True, nogil=True)
def _child_splittable(kinds, lo, hi, cats, j, th, rule_mask, go_left, n_other):
    """Whether a child of a node (subspace lo/hi/cats) split on (j, th, mask) can split."""
    if n_other > 0:
        return True
    if kinds[j] == CATEGORICAL:
        count = 0
        for w in range(cats.shape[1]):
            word = cats[j, w] & rule_mask[w] if go_left else cats[j, w] & ~rule_mask[w]
            while word != np.uint64(0):
                word &= word - np.uint64(1)
                count += 1
        return count >= 2
    if go_left:
        return th > lo[j]
    if kinds[j] == DISCRETE:
        return hi[j] > th + 1.0
    return hi[j] > th


@njit(cache=True, nogil=True)
def _goes_left(kinds, x, j, th, rule_mask):
    if kinds[j] == CATEGORICAL:
        code = np.int64(x[j])
        return (rule_mask[code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)
    return x[j] <= th


@njit(cache=True, nogil=True)
def current_loglik(mode, nscal, lscal, P, n_pts, m):
    if mode == NSPACE:
        return -0.5 * (nscal[0] + nscal[1])
    if mode == LEAFSPACE:
        quad, logdet = leaf_quad_logdet(lscal, n_pts, P, m)
        return -0.5 * (quad + logdet)
    return 0.0


@njit(cache=True, nogil=True)
def _evaluate_move(
    mode, t, src_node, dst_node, n_mv, mv_idx, mv_sgn, y, leaf_of, m,
    Kinv, alpha, nscal, p_idx, p_val, KW, Sinv, aW,
    Ginv, beta, lscal, pcol, Pbox, cvec, U, rW, src_col, dst_col,
):
    """Log-likelihood after moving ``mv_idx[:n_mv]`` (signs ``mv_sgn``) from src to dst leaf.

    Returns (new loglik, quad*, logdet*, nv) and leaves the factors for ``_apply_move``.
    """
    n_pts = y.shape[0]
    if mode == NSPACE:
        # p = Phi e + v: the non-moving points of dst (+1) and src (-1)
        # p_val doubles as a mover marker while p is collected (movers are 0 in p)
        for a in range(n_mv):
            p_val[mv_idx[a]] = 2.0
        n_p = 0
        for n in range(n_pts):
            leaf = leaf_of[t, n]
            if (leaf == dst_node or leaf == src_node) and p_val[n] != 2.0:
                p_idx[n_p] = n
                n_p += 1
        for a in range(n_mv):
            p_val[mv_idx[a]] = 0.0
        for a in range(n_p):
            p_val[a] = 1.0 if leaf_of[t, p_idx[a]] == dst_node else -1.0
        quad, logdet = n_eval(Kinv, alpha, nscal, m, p_idx, p_val, n_p, mv_idx, mv_sgn, n_mv,
                              KW, Sinv, aW)
        return -0.5 * (quad + logdet), quad, logdet, float(n_p)
    P = Pbox[0]
    for i in range(P):
        cvec[i] = 0.0
    ys = 0.0
    for a in range(n_mv):
        n = mv_idx[a]
        s = mv_sgn[a]
        ys += s * y[n]
        for tt in range(m):
            cvec[pcol[n, tt]] += s
    quadb, logdetg = leaf_eval(Ginv, beta, lscal, P, cvec, float(n_mv), ys, src_col, dst_col,
                               U, Sinv, rW)
    saved0 = lscal[0]
    saved1 = lscal[1]
    lscal[0] = quadb
    lscal[1] = logdetg
    quad, logdet = leaf_quad_logdet(lscal, n_pts, P, m)
    lscal[0] = saved0
    lscal[1] = saved1
    return -0.5 * (quad + logdet), quadb, logdetg, float(n_mv)


@njit(cache=True, nogil=True)
def _apply_move(
    mode, n_mv, mv_idx, mv_sgn, quad, logdet, nv,
    Kinv, alpha, nscal, A, p_idx, p_val, KW, Sinv, aW,
    Ginv, Cmat, b, beta, lscal, Pbox, cvec, U, rW, src_col, dst_col,
):
    if mode == NSPACE:
        n_apply(Kinv, alpha, KW, Sinv, aW)
        nscal[0] = quad
        nscal[1] = logdet
        n_p = np.int64(nv)
        for a in range(n_p):
            i = p_idx[a]
            for c in range(n_mv):
                k = mv_idx[c]
                delta = p_val[a] * mv_sgn[c]
                A[i, k] += delta
                A[k, i] += delta
    elif mode == LEAFSPACE:
        leaf_apply(Ginv, Cmat, b, beta, Pbox[0], cvec, nv, src_col, dst_col, U, Sinv, rW)
        lscal[0] = quad
        lscal[1] = logdet


@njit(cache=True, nogil=True)
def _decide(
    state, mode, log_r, old_ll, t, src_node, dst_node, n_mv, mv_idx, mv_sgn, y, leaf_of, m,
    Kinv, alpha, nscal, A, p_idx, p_val, KW, Sinv, aW,
    Ginv, Cmat, b, beta, lscal, pcol, Pbox, cvec, U, rW, src_col, dst_col,
):
    """Metropolis-Hastings test of a tree move; on acceptance the likelihood state follows.

    ``log_r`` holds the prior and proposal terms; a move that relocates no point leaves the
    likelihood unchanged and is decided on them alone.
    """
    touched = mode != FLAT and n_mv > 0
    new_ll = old_ll
    quad = 0.0
    logdet = 0.0
    nv = 0.0
    if touched:
        new_ll, quad, logdet, nv = _evaluate_move(
            mode, t, src_node, dst_node, n_mv, mv_idx, mv_sgn, y, leaf_of, m,
            Kinv, alpha, nscal, p_idx, p_val, KW, Sinv, aW,
            Ginv, beta, lscal, pcol, Pbox, cvec, U, rW, src_col, dst_col)
    if np.isnan(new_ll) or not math.log(uniform(state)) < log_r + new_ll - old_ll:
        return False
    if touched:
        _apply_move(mode, n_mv, mv_idx, mv_sgn, quad, logdet, nv,
                    Kinv, alpha, nscal, A, p_idx, p_val, KW, Sinv, aW,
                    Ginv, Cmat, b, beta, lscal, Pbox, cvec, U, rW, src_col, dst_col)
    return True


@njit(cache=True, nogil=True)
def tree_step(
    state, t, X, y, kinds, lower, upper, n_values, alpha_p, beta_p,
    feat, thr, mask, left, right, parent, depth, leaf_of,
    mode, Kinv, alpha, A, nscal, Ginv, Cmat, b, beta, lscal, lcol, owner, Pbox, pcol,
    lo, hi, cats, rule_mask, lo2, hi2, cats2, mv_idx, mv_sgn, p_idx, p_val,
    KW, Sinv, aW, cvec, U, rW, stats,
):
    """One grow / prune / change proposal on tree ``t``. Returns 1 if accepted, else 0."""
    m = feat.shape[0]
    n_pts = y.shape[0]
    u = uniform(state)
    move = GROW if u < 0.25 else (PRUNE if u < 0.5 else CHANGE)
    stats[move, 0] += 1
    w0, w1 = count_leaves_and_twigs(feat, left, right, t)
    old_ll = current_loglik(mode, nscal, lscal, Pbox[0], n_pts, m)

    if move == GROW:
        eta = nth_node(feat, left, right, t, np.int64(uniform(state) * w0) % w0, False)
        node_subspace(feat, thr, mask, left, parent, kinds, lower, upper, n_values, t, eta,
                      lo, hi, cats)
        n_ok = n_splittable(kinds, lo, hi, cats)
        j, th = draw_rule(state, kinds, lo, hi, cats, rule_mask)
        if j < 0:
            uniform(state)  # keep one draw per step for the accept test, for symmetry of streams
            return 0
        d = depth[t, eta]
        s_l = _child_splittable(kinds, lo, hi, cats, j, th, rule_mask, True, n_ok - 1)
        s_r = _child_splittable(kinds, lo, hi, cats, j, th, rule_mask, False, n_ok - 1)
        p_eta = parent[t, eta]
        parent_was_twig = False
        if p_eta >= 0:
            sib = left[t, p_eta] if right[t, p_eta] == eta else right[t, p_eta]
            parent_was_twig = feat[t, sib] == LEAF
        w1_new = w1 if parent_was_twig else w1 + 1
        log_r = (math.log(w0) - math.log(w1_new) + math.log(split_prob(alpha_p, beta_p, d))
                 + log_leaf_factor(alpha_p, beta_p, d + 1, s_l)
                 + log_leaf_factor(alpha_p, beta_p, d + 1, s_r)
                 - log_leaf_factor(alpha_p, beta_p, d, True))
        # The smaller side moves to the new leaf column (cost scales with the movers).
        n_eta = 0
        n_right = 0
        for n in range(n_pts):
            if leaf_of[t, n] == eta:
                n_eta += 1
                if not _goes_left(kinds, X[n], j, th, rule_mask):
                    n_right += 1
        move_right = 2 * n_right <= n_eta
        n_mv = 0
        for n in range(n_pts):
            if leaf_of[t, n] == eta and _goes_left(kinds, X[n], j, th, rule_mask) != move_right:
                mv_idx[n_mv] = n
                mv_sgn[n_mv] = 1.0
                n_mv += 1
        a_node, b_node = free_pair(feat, t)  # the sweep checked there is room
        src_col = 0
        dst_col = 0
        if mode == LEAFSPACE:
            P = Pbox[0]
            leaf_append(Ginv, Cmat, b, beta, P, m, lscal)
            Pbox[0] = P + 1
            src_col = lcol[t, eta]
            dst_col = P
        if not _decide(state, mode, log_r, old_ll, t, eta, b_node, n_mv, mv_idx, mv_sgn, y,
                       leaf_of, m,
                       Kinv, alpha, nscal, A, p_idx, p_val, KW, Sinv, aW,
                       Ginv, Cmat, b, beta, lscal, pcol, Pbox, cvec, U, rW, src_col, dst_col):
            if mode == LEAFSPACE:
                Pbox[0] -= 1
                leaf_drop_last(Pbox[0], m, lscal)
            return 0
        split_leaf(feat, thr, mask, left, right, parent, depth, kinds, t, eta, j, th,
                   rule_mask, a_node, b_node)
        stay = a_node if move_right else b_node
        go = b_node if move_right else a_node
        for n in range(n_pts):
            if leaf_of[t, n] == eta:
                leaf_of[t, n] = stay
        for a in range(n_mv):
            leaf_of[t, mv_idx[a]] = go
        if mode == LEAFSPACE:
            for a in range(n_mv):
                pcol[mv_idx[a], t] = dst_col
            lcol[t, stay] = src_col
            lcol[t, go] = dst_col
            lcol[t, eta] = -1
            owner[src_col, 0] = t
            owner[src_col, 1] = stay
            owner[dst_col, 0] = t
            owner[dst_col, 1] = go
        stats[move, 1] += 1
        return 1

    # prune and change act on a singly-internal node
    if w1 == 0:
        uniform(state)
        return 0
    eta = nth_node(feat, left, right, t, np.int64(uniform(state) * w1) % w1, True)
    d = depth[t, eta]
    l_node = left[t, eta]
    r_node = right[t, eta]
    node_subspace(feat, thr, mask, left, parent, kinds, lower, upper, n_values, t, l_node,
                  lo2, hi2, cats2)
    s_l = n_splittable(kinds, lo2, hi2, cats2) > 0
    node_subspace(feat, thr, mask, left, parent, kinds, lower, upper, n_values, t, r_node,
                  lo2, hi2, cats2)
    s_r = n_splittable(kinds, lo2, hi2, cats2) > 0
    old_factor = (log_leaf_factor(alpha_p, beta_p, d + 1, s_l)
                  + log_leaf_factor(alpha_p, beta_p, d + 1, s_r))

    if move == PRUNE:
        log_r = (math.log(w1) - math.log(w0 - 1) + log_leaf_factor(alpha_p, beta_p, d, True)
                 - math.log(split_prob(alpha_p, beta_p, d)) - old_factor)
        # the smaller child's points move into the other child's column
        n_l = 0
        n_r = 0
        for n in range(n_pts):
            if leaf_of[t, n] == l_node:
                n_l += 1
            elif leaf_of[t, n] == r_node:
                n_r += 1
        from_node = r_node if n_r <= n_l else l_node
        to_node = l_node if n_r <= n_l else r_node
        n_mv = 0
        for n in range(n_pts):
            if leaf_of[t, n] == from_node:
                mv_idx[n_mv] = n
                mv_sgn[n_mv] = 1.0
                n_mv += 1
        src_col = lcol[t, from_node] if mode == LEAFSPACE else 0
        dst_col = lcol[t, to_node] if mode == LEAFSPACE else 0
        if not _decide(state, mode, log_r, old_ll, t, from_node, to_node, n_mv, mv_idx, mv_sgn,
                       y, leaf_of, m,
                       Kinv, alpha, nscal, A, p_idx, p_val, KW, Sinv, aW,
                       Ginv, Cmat, b, beta, lscal, pcol, Pbox, cvec, U, rW, src_col, dst_col):
            return 0
        for n in range(n_pts):
            if leaf_of[t, n] == l_node or leaf_of[t, n] == r_node:
                leaf_of[t, n] = eta
        if mode == LEAFSPACE:
            P = Pbox[0]
            last = P - 1
            lcol[t, eta] = dst_col
            owner[dst_col, 0] = t
            owner[dst_col, 1] = eta
            leaf_swap_remove(Ginv, Cmat, b, beta, P, src_col, m, lscal)
            for a in range(n_mv):
                pcol[mv_idx[a], t] = dst_col
            if src_col != last:
                t_last = owner[last, 0]
                for n in range(n_pts):
                    if pcol[n, t_last] == last:
                        pcol[n, t_last] = src_col
                lcol[owner[last, 0], owner[last, 1]] = src_col
                owner[src_col, 0] = owner[last, 0]
                owner[src_col, 1] = owner[last, 1]
            Pbox[0] = P - 1
            lcol[t, l_node] = -1
            lcol[t, r_node] = -1
        for c in (l_node, r_node):
            feat[t, c] = FREE
            left[t, c] = -1
            right[t, c] = -1
            parent[t, c] = -1
        feat[t, eta] = LEAF
        left[t, eta] = -1
        right[t, eta] = -1
        stats[move, 1] += 1
        return 1

    # CHANGE: a fresh rule for eta from its own subspace
    node_subspace(feat, thr, mask, left, parent, kinds, lower, upper, n_values, t, eta,
                  lo, hi, cats)
    n_ok = n_splittable(kinds, lo, hi, cats)
    j, th = draw_rule(state, kinds, lo, hi, cats, rule_mask)
    s_l = _child_splittable(kinds, lo, hi, cats, j, th, rule_mask, True, n_ok - 1)
    s_r = _child_splittable(kinds, lo, hi, cats, j, th, rule_mask, False, n_ok - 1)
    log_r = (log_leaf_factor(alpha_p, beta_p, d + 1, s_l)
             + log_leaf_factor(alpha_p, beta_p, d + 1, s_r) - old_factor)
    n_mv = 0
    for n in range(n_pts):
        leaf = leaf_of[t, n]
        if leaf == l_node or leaf == r_node:
            now_left = _goes_left(kinds, X[n], j, th, rule_mask)
            if leaf == l_node and not now_left:
                mv_idx[n_mv] = n
                mv_sgn[n_mv] = 1.0
                n_mv += 1
            elif leaf == r_node and now_left:
                mv_idx[n_mv] = n
                mv_sgn[n_mv] = -1.0
                n_mv += 1
    src_col = lcol[t, l_node] if mode == LEAFSPACE else 0
    dst_col = lcol[t, r_node] if mode == LEAFSPACE else 0
    if not _decide(state, mode, log_r, old_ll, t, l_node, r_node, n_mv, mv_idx, mv_sgn, y,
                   leaf_of, m,
                   Kinv, alpha, nscal, A, p_idx, p_val, KW, Sinv, aW,
                   Ginv, Cmat, b, beta, lscal, pcol, Pbox, cvec, U, rW, src_col, dst_col):
        return 0
    feat[t, eta] = j
    thr[t, eta] = th
    for w in range(mask.shape[2]):
        mask[t, eta, w] = rule_mask[w] if kinds[j] == CATEGORICAL else np.uint64(0)
    for a in range(n_mv):
        n = mv_idx[a]
        leaf_of[t, n] = r_node if mv_sgn[a] > 0 else l_node
        if mode == LEAFSPACE:
            pcol[n, t] = dst_col if mv_sgn[a] > 0 else src_col
    stats[move, 1] += 1
    return 1


@njit(cache=True, nogil=True)
def noise_step(state, y, m, mode, A, Kinv, alpha, nscal, Cmat, b, Pbox, Ginv, beta, lscal,
               sigma_box, shape, scale, step, work, stats):
    """Softplus random-walk Metropolis step on the noise variance; returns 1 if accepted."""
    n_pts = y.shape[0]
    s2 = sigma_box[0]
    theta = s2 + math.log(-math.expm1(-s2))  # softplus^-1, stable for small and large s2
    theta_new = theta + step * normal(state)
    s2_new = max(theta_new, 0.0) + math.log1p(math.exp(-abs(theta_new)))  # softplus
    stats[NOISE, 0] += 1
    if not s2_new > 0.0:
        uniform(state)
        return 0
    old_ll = current_loglik(mode, nscal, lscal, Pbox[0], n_pts, m)
    new_ll = 0.0
    quad = 0.0
    logdet = 0.0
    L = np.empty((0, 0))
    if mode == NSPACE:
        quad, logdet, L = n_factor(A, y, m, s2_new, work)
        new_ll = -0.5 * (quad + logdet)
    elif mode == LEAFSPACE:
        P = Pbox[0]
        quad, logdet, L = leaf_factor(Cmat, b, P, m, s2_new, work)  # quad = b^T G^-1 b here
        q_k = (lscal[3] - quad) / s2_new
        ld_k = (n_pts - P) * math.log(s2_new) + logdet - P * math.log(m)
        new_ll = -0.5 * (q_k + ld_k)
    log_r = (new_ll - old_ll + log_noise_prior(s2_new, shape, scale)
             - log_noise_prior(s2, shape, scale)
             + math.log(-math.expm1(-s2_new)) - math.log(-math.expm1(-s2)))
    if np.isnan(new_ll) or not math.log(uniform(state)) < log_r:
        return 0
    sigma_box[0] = s2_new
    # the accepted factorization also refreshes the low-rank state from exact counts
    if mode == NSPACE:
        n_install(L, y, Kinv, alpha, nscal, quad, logdet)
    elif mode == LEAFSPACE:
        leaf_install(L, b, Pbox[0], Ginv, beta, lscal, quad, logdet, s2_new)
    stats[NOISE, 1] += 1
    return 1


@njit(cache=True, nogil=True)
def refresh(mode, y, m, A, Kinv, alpha, nscal, Cmat, b, Pbox, Ginv, beta, lscal, sigma2):
    """Recompute the likelihood state from the exact counts (bounds low-rank drift)."""
    if mode == NSPACE:
        n_refresh(A, y, m, sigma2, Kinv, alpha, nscal)
    elif mode == LEAFSPACE:
        leaf_refresh(Cmat, b, Pbox[0], m, sigma2, Ginv, beta, lscal)
