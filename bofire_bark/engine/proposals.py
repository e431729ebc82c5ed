"""Grow, prune and change proposals and the noise step (paper appendix F).

Metropolis-Hastings ratios, derived for a prior in which a node that no feature can split is
a leaf with probability one (so features that run out of room bias nothing):

- grow leaf eta (depth d, w0 leaves) into children L, R; T* has w1* singly-internal nodes:
  ``r = w0 / w1* * p_d * f(d+1, s_L) * f(d+1, s_R) / (1 - p_d) * likelihood ratio``,
  with ``p_d = alpha (1 + d)^-beta`` and ``f(d, s) = 1 - p_d`` if the child can split (s),
  else 1. The rule's probability appears in prior and proposal alike and cancels. This holds
  for weighted features too (the sparse prior): the proposal draws the feature with
  ``s_j / Z(eta)``, Z(eta) the summed weight of the features that can split eta, and the
  prior gives the new node the same ``s_j / Z(eta)``: eta's subspace is the same in T and
  T*, so Z(eta) is too, and the children's restrictions enter only through f.
- prune singly-internal eta (w1 of them) of T, T* with w0* leaves: the inverse,
  ``r = w1 / w0* * (1 - p_d) / (p_d f(d+1, s_L) f(d+1, s_R)) * likelihood ratio``.
- change the rule of singly-internal eta to a fresh draw from its subspace (the prior's rule
  distribution at eta, so old and new rule probabilities cancel, weighted or not): only the
  children's leaf factors and the likelihood remain:
  ``r = f(d+1, s_L*) f(d+1, s_R*) / (f(d+1, s_L) f(d+1, s_R)) * likelihood ratio``.
- descriptor rules (see priors.py): the prior's rule at a node is a mixture over split
  variables and cuts, and every proposal draws from it, so the terms above are unchanged;
  "can split" is per split variable.
- noise: random walk theta* = theta + step * N(0, 1) on theta = softplus^-1(sigma^2). The
  walk is symmetric in theta, so the target there is p(sigma^2(theta)) * dsigma^2/dtheta and
  ``r = lik ratio * prior ratio * (1 - exp(-sigma*^2)) / (1 - exp(-sigma^2))``.

Move types are chosen with fixed probabilities (grow 1/4, prune 1/4, change 1/2); a move
that is impossible in the current tree (prune or change of a single leaf, grow of a leaf
that cannot split) leaves the tree as it is, which keeps the chain exactly reversible.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from bofire_bark.engine.forest import (
    CATEGORICAL,
    DISCRETE,
    FREE,
    LEAF,
    Subspace,
    any_splittable,
    column_can_split,
    count_leaves_and_twigs,
    free_pair,
    new_subspace,
    node_subspace,
    nth_node,
    split_leaf,
)
from bofire_bark.engine.likelihood import (
    FLAT,
    LEAFSPACE,
    NSPACE,
    SMOOTH_A,
    SMOOTH_ACTIVE,
    SMOOTH_B,
    SMOOTH_SHARE,
    SMOOTH_STEP,
    SMOOTH_TAKEN,
    SMOOTH_TRIED,
    LeafUpdate,
    NUpdate,
    leaf_append,
    leaf_apply,
    leaf_drop_last,
    leaf_eval,
    leaf_factor,
    leaf_install,
    leaf_quad_logdet,
    leaf_quad_logdet_of,
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

GROW = 0
PRUNE = 1
CHANGE = 2
NOISE = 3


class Data(NamedTuple):
    """The data a chain is fitted to, and where it sits in the forest.

    X (N, D) float64: encoded inputs; y (N,) float64: standardized outputs; leaf_of (m, N)
    int64: the leaf node each point reaches in each tree (kept in step with the forest).
    """

    X: np.ndarray
    y: np.ndarray
    leaf_of: np.ndarray


class Scratch(NamedTuple):
    """Work space of one chain's steps; each buffer has one purpose, no two share memory.

    node: ``Subspace`` of the node a rule is drawn for (grow, change).
    child: ``Subspace`` of a child of the prune / change candidate (its leaf factor).
    rule_mask (W,) uint64: the categories a drawn categorical rule sends left.
    mv_idx (N',) int64, mv_sgn (N',) float64: the points a move relocates and their signs in
    v (N' = max(N, 1)).
    n_upd: ``NUpdate`` (KW has N columns in N-space, 1 otherwise).
    leaf_upd: ``LeafUpdate`` (Pcap columns, the leaf-column storage; 1 outside leaf space).
    work (max(N, Pcap, 1),) float64: forward substitution of a full factorization (noise step,
    refresh).
    """

    node: Subspace
    child: Subspace
    rule_mask: np.ndarray
    mv_idx: np.ndarray
    mv_sgn: np.ndarray
    n_upd: NUpdate
    leaf_upd: LeafUpdate
    work: np.ndarray


class Move(NamedTuple):
    """A proposed relocation of points in tree ``t`` (int64 fields): the ``n_mv`` points of
    ``Scratch.mv_idx`` go from leaf node ``src`` to leaf node ``dst``, whose leaf-space columns
    are ``src_col`` and ``dst_col`` (0 in the other forms). A point with sign -1 goes the
    other way (change moves)."""

    t: int
    src: int
    dst: int
    n_mv: int
    src_col: int
    dst_col: int


@njit(cache=True, nogil=True)
def new_scratch(n_pts, d, w, pcap, mode):
    """Scratch space for N points, D features, W mask words and Pcap leaf columns."""
    n = max(n_pts, 1)
    n_upd = NUpdate(np.empty(n, dtype=np.int64), np.zeros(n), np.zeros(n, dtype=np.bool_),
                    np.empty((2, n_pts if mode == NSPACE else 1)), np.empty((2, 2)), np.empty(2))
    leaf_upd = LeafUpdate(np.empty(pcap), np.empty((2, pcap)), np.empty((2, 2)), np.empty(3))
    return Scratch(new_subspace(d, w), new_subspace(d, w), np.zeros(w, dtype=np.uint64),
                   np.empty(n, dtype=np.int64), np.empty(n), n_upd, leaf_upd,
                   np.empty(max(n_pts, pcap, 1)))


@njit(cache=True, nogil=True)
def _n_other_splittable(space, sub, j):
    """1 if a split variable of a column other than ``j`` can split subspace ``sub`` (it can
    then split both children of a split on ``j``), else 0; stops at the first."""
    for jj in range(space.kinds.shape[0]):
        if jj != j and column_can_split(space, jj, sub.lo, sub.hi, sub.cats, jj):
            return 1
    return 0


@njit(cache=True, nogil=True)
def _child_splittable(space, sub, j, th, rule_mask, go_left, n_other, child_cats):
    """Whether a child of a node (subspace ``sub``) split on (j, th, mask) can split;
    ``n_other`` counts the variables of other columns that can split the node (they can split
    the child too), row 0 of ``child_cats`` (R, W) is scratch."""
    if n_other > 0:
        return True
    lo, hi, cats = sub
    if space.kinds[j] == CATEGORICAL:
        for w in range(cats.shape[1]):
            child_cats[0, w] = (cats[j, w] & rule_mask[w] if go_left
                                else cats[j, w] & ~rule_mask[w])
        return column_can_split(space, j, lo, hi, child_cats, 0)
    if go_left:
        return th > lo[j]
    if space.kinds[j] == DISCRETE:
        return hi[j] > th + 1.0
    return hi[j] > th


@njit(cache=True, nogil=True)
def _goes_left(kinds, x, j, th, rule_mask):
    if kinds[j] == CATEGORICAL:
        code = np.int64(x[j])
        return (rule_mask[code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)
    return x[j] <= th


@njit(cache=True, nogil=True, inline="always")
def current_loglik(lik, n_pts, m):
    if lik.mode == NSPACE:
        return -0.5 * (lik.n.scal[0] + lik.n.scal[1])
    if lik.mode == LEAFSPACE:
        quad, logdet = leaf_quad_logdet(lik.leaf.scal, n_pts, lik.leaf.P[0], m)
        return -0.5 * (quad + logdet)
    return 0.0


# The accept test is inlined into tree_step and split by likelihood form, so that each call
# passes only the arrays its form uses: numba passes every array of a tuple argument as 7-9
# scalars, and each array it takes out of a tuple into a variable costs an atomic reference
# count increment and decrement.


@njit(cache=True, nogil=True)
def _evaluate_n(move, leaf_of, ns, m, mv_idx, mv_sgn, upd):
    """N-space log-likelihood after ``move`` (its points ``mv_idx[:n_mv]``, signs ``mv_sgn``).

    Returns (new loglik, quad*, logdet*, n_p), n_p the length of p, and leaves the factors in
    ``upd`` (an ``NUpdate``) for ``_apply_n``.
    """
    # p = Phi e + v: the non-moving points of dst (+1) and src (-1)
    is_mover, p_idx, p_val = upd.is_mover, upd.p_idx, upd.p_val
    t = move.t
    for a in range(move.n_mv):
        is_mover[mv_idx[a]] = True
    # int64 from the start: a literal 0 made type inference compile n_eval twice
    n_p = np.int64(0)
    for n in range(leaf_of.shape[1]):
        leaf = leaf_of[t, n]
        if (leaf == move.dst or leaf == move.src) and not is_mover[n]:
            p_idx[n_p] = n
            n_p += 1
    for a in range(move.n_mv):
        is_mover[mv_idx[a]] = False
    for a in range(n_p):
        p_val[a] = 1.0 if leaf_of[t, p_idx[a]] == move.dst else -1.0
    quad, logdet = n_eval(ns, m, p_idx, p_val, n_p, mv_idx, mv_sgn, move.n_mv, upd)
    return -0.5 * (quad + logdet), quad, logdet, n_p


@njit(cache=True, nogil=True)
def _apply_n(move, ns, mv_idx, mv_sgn, upd, quad, logdet, n_p):
    """Adopt the move ``_evaluate_n`` prepared (which returned quad, logdet, n_p)."""
    n_apply(ns, upd, quad, logdet)
    A = ns.A
    for a in range(n_p):
        i = upd.p_idx[a]
        for c in range(move.n_mv):
            k = mv_idx[c]
            delta = upd.p_val[a] * mv_sgn[c]
            A[i, k] += delta
            A[k, i] += delta


@njit(cache=True, nogil=True)
def _evaluate_leaf(move, y, ls, m, mv_idx, mv_sgn, upd):
    """Leaf-space log-likelihood after ``move``; returns (new loglik, quadb*, logdetG*) and
    leaves the factors in ``upd`` (a ``LeafUpdate``) for ``leaf_apply``."""
    P = ls.P[0]
    c = upd.c
    for i in range(P):
        c[i] = 0.0
    ys = 0.0
    for a in range(move.n_mv):
        n = mv_idx[a]
        s = mv_sgn[a]
        ys += s * y[n]
        for tt in range(m):
            c[ls.pcol[n, tt]] += s
    quadb, logdetg = leaf_eval(ls, float(move.n_mv), ys, move.src_col, move.dst_col, upd)
    quad, logdet = leaf_quad_logdet_of(quadb, logdetg, ls.scal[2], ls.scal[3], y.shape[0], P, m)
    return -0.5 * (quad + logdet), quadb, logdetg


@njit(cache=True, nogil=True, inline="always")
def _decide(state, log_r, old_ll, move, data, lik, m, sc):
    """Metropolis-Hastings test of a tree move; on acceptance the likelihood state follows.

    ``log_r`` holds the prior and proposal terms; a move that relocates no point leaves the
    likelihood unchanged and is decided on them alone.
    """
    touched = lik.mode != FLAT and move.n_mv > 0
    new_ll = old_ll
    quad = 0.0
    logdet = 0.0
    n_p = 0
    if touched:
        if lik.mode == NSPACE:
            new_ll, quad, logdet, n_p = _evaluate_n(move, data.leaf_of, lik.n, m, sc.mv_idx,
                                                    sc.mv_sgn, sc.n_upd)
        else:
            new_ll, quad, logdet = _evaluate_leaf(move, data.y, lik.leaf, m, sc.mv_idx,
                                                  sc.mv_sgn, sc.leaf_upd)
    if np.isnan(new_ll) or not math.log(uniform(state)) < log_r + new_ll - old_ll:
        return False
    if touched:
        if lik.mode == NSPACE:
            _apply_n(move, lik.n, sc.mv_idx, sc.mv_sgn, sc.n_upd, quad, logdet, n_p)
        else:
            leaf_apply(lik.leaf, float(move.n_mv), move.src_col, move.dst_col, sc.leaf_upd, quad,
                       logdet)
    return True


@njit(cache=True, nogil=True)
def tree_step(state, t, forest, space, data, lik, prior, sc, stats):
    """One grow / prune / change proposal on tree ``t``. Returns 1 if accepted, else 0.

    ``forest`` (``Forest``), ``data`` (``Data``: its leaf_of) and ``lik`` (``Likelihood``)
    follow an accepted move; ``space`` is the ``Space``, ``prior`` the ``TreePrior``, ``sc``
    the ``Scratch``; ``stats`` (4, 2) int64 counts proposals and acceptances per move type.
    """
    # Arrays are reached through their structures, not bound to locals: a local holding an
    # array of a live tuple costs an atomic reference count increment and decrement per call
    # (binding them all made 12 % more such operations per sweep than a3522af).
    mode = lik.mode
    m = forest.feat.shape[0]
    n_pts = data.y.shape[0]
    u = uniform(state)
    move = GROW if u < 0.25 else (PRUNE if u < 0.5 else CHANGE)
    stats[move, 0] += 1
    w0, w1 = count_leaves_and_twigs(forest, t)
    old_ll = current_loglik(lik, n_pts, m)

    if move == GROW:
        eta = nth_node(forest, t, np.int64(uniform(state) * w0) % w0, False)
        node_subspace(forest, space, t, eta, sc.node)
        j, th = draw_rule(state, space, sc.node, sc.rule_mask, prior)
        if j < 0:
            uniform(state)  # keep one draw per step for the accept test, for symmetry of streams
            return 0
        d = forest.depth[t, eta]
        n_other = _n_other_splittable(space, sc.node, j)
        s_l = _child_splittable(space, sc.node, j, th, sc.rule_mask, True, n_other,
                                sc.child.cats)
        s_r = _child_splittable(space, sc.node, j, th, sc.rule_mask, False, n_other,
                                sc.child.cats)
        p_eta = forest.parent[t, eta]
        parent_was_twig = False
        if p_eta >= 0:
            sib = forest.left[t, p_eta] if forest.right[t, p_eta] == eta else forest.right[t, p_eta]
            parent_was_twig = forest.feat[t, sib] == LEAF
        w1_new = w1 if parent_was_twig else w1 + 1
        log_r = (math.log(w0) - math.log(w1_new) + math.log(split_prob(prior, d))
                 + log_leaf_factor(prior, d + 1, s_l)
                 + log_leaf_factor(prior, d + 1, s_r)
                 - log_leaf_factor(prior, d, True))
        # The smaller side moves to the new leaf column (cost scales with the movers).
        n_eta = 0
        n_right = 0
        for n in range(n_pts):
            if data.leaf_of[t, n] == eta:
                n_eta += 1
                if not _goes_left(space.kinds, data.X[n], j, th, sc.rule_mask):
                    n_right += 1
        move_right = 2 * n_right <= n_eta
        n_mv = 0
        for n in range(n_pts):
            if (data.leaf_of[t, n] == eta
                    and _goes_left(space.kinds, data.X[n], j, th, sc.rule_mask) != move_right):
                sc.mv_idx[n_mv] = n
                sc.mv_sgn[n_mv] = 1.0
                n_mv += 1
        a_node, b_node = free_pair(forest.feat, t)  # the sweep checked there is room
        src_col = 0
        dst_col = 0
        if mode == LEAFSPACE:
            src_col = lik.leaf.lcol[t, eta]
            dst_col = lik.leaf.P[0]
            leaf_append(lik.leaf, m)  # the new leaf's column, empty until the move
        if not _decide(state, log_r, old_ll, Move(t, eta, b_node, n_mv, src_col, dst_col),
                       data, lik, m, sc):
            if mode == LEAFSPACE:
                leaf_drop_last(lik.leaf, m)
            return 0
        split_leaf(forest, space.kinds, t, eta, j, th, sc.rule_mask, a_node, b_node)
        stay = a_node if move_right else b_node
        go = b_node if move_right else a_node
        for n in range(n_pts):
            if data.leaf_of[t, n] == eta:
                data.leaf_of[t, n] = stay
        for a in range(n_mv):
            data.leaf_of[t, sc.mv_idx[a]] = go
        if mode == LEAFSPACE:
            for a in range(n_mv):
                lik.leaf.pcol[sc.mv_idx[a], t] = dst_col
            lik.leaf.lcol[t, stay] = src_col
            lik.leaf.lcol[t, go] = dst_col
            lik.leaf.lcol[t, eta] = -1
            lik.leaf.owner[src_col, 0] = t
            lik.leaf.owner[src_col, 1] = stay
            lik.leaf.owner[dst_col, 0] = t
            lik.leaf.owner[dst_col, 1] = go
        stats[move, 1] += 1
        return 1

    # prune and change act on a singly-internal node
    if w1 == 0:
        uniform(state)
        return 0
    eta = nth_node(forest, t, np.int64(uniform(state) * w1) % w1, True)
    d = forest.depth[t, eta]
    l_node = forest.left[t, eta]
    r_node = forest.right[t, eta]
    node_subspace(forest, space, t, l_node, sc.child)
    s_l = any_splittable(space, sc.child)
    node_subspace(forest, space, t, r_node, sc.child)
    s_r = any_splittable(space, sc.child)
    old_factor = log_leaf_factor(prior, d + 1, s_l) + log_leaf_factor(prior, d + 1, s_r)

    if move == PRUNE:
        log_r = (math.log(w1) - math.log(w0 - 1) + log_leaf_factor(prior, d, True)
                 - math.log(split_prob(prior, d)) - old_factor)
        # the smaller child's points move into the other child's column
        n_l = 0
        n_r = 0
        for n in range(n_pts):
            if data.leaf_of[t, n] == l_node:
                n_l += 1
            elif data.leaf_of[t, n] == r_node:
                n_r += 1
        from_node = r_node if n_r <= n_l else l_node
        to_node = l_node if n_r <= n_l else r_node
        n_mv = 0
        for n in range(n_pts):
            if data.leaf_of[t, n] == from_node:
                sc.mv_idx[n_mv] = n
                sc.mv_sgn[n_mv] = 1.0
                n_mv += 1
        src_col = lik.leaf.lcol[t, from_node] if mode == LEAFSPACE else 0
        dst_col = lik.leaf.lcol[t, to_node] if mode == LEAFSPACE else 0
        if not _decide(state, log_r, old_ll, Move(t, from_node, to_node, n_mv, src_col, dst_col),
                       data, lik, m, sc):
            return 0
        for n in range(n_pts):
            if data.leaf_of[t, n] == l_node or data.leaf_of[t, n] == r_node:
                data.leaf_of[t, n] = eta
        if mode == LEAFSPACE:
            last = lik.leaf.P[0] - 1
            lik.leaf.lcol[t, eta] = dst_col
            lik.leaf.owner[dst_col, 0] = t
            lik.leaf.owner[dst_col, 1] = eta
            leaf_swap_remove(lik.leaf, src_col, m)  # column `last` now lives at src_col
            for a in range(n_mv):
                lik.leaf.pcol[sc.mv_idx[a], t] = dst_col
            if src_col != last:
                t_last = lik.leaf.owner[last, 0]
                for n in range(n_pts):
                    if lik.leaf.pcol[n, t_last] == last:
                        lik.leaf.pcol[n, t_last] = src_col
                lik.leaf.lcol[lik.leaf.owner[last, 0], lik.leaf.owner[last, 1]] = src_col
                lik.leaf.owner[src_col, 0] = lik.leaf.owner[last, 0]
                lik.leaf.owner[src_col, 1] = lik.leaf.owner[last, 1]
            lik.leaf.lcol[t, l_node] = -1
            lik.leaf.lcol[t, r_node] = -1
        for c in (l_node, r_node):
            forest.feat[t, c] = FREE
            forest.left[t, c] = -1
            forest.right[t, c] = -1
            forest.parent[t, c] = -1
        forest.feat[t, eta] = LEAF
        forest.left[t, eta] = -1
        forest.right[t, eta] = -1
        stats[move, 1] += 1
        return 1

    # CHANGE: a fresh rule for eta from its own subspace
    node_subspace(forest, space, t, eta, sc.node)
    j, th = draw_rule(state, space, sc.node, sc.rule_mask, prior)
    n_other = _n_other_splittable(space, sc.node, j)
    s_l = _child_splittable(space, sc.node, j, th, sc.rule_mask, True, n_other,
                            sc.child.cats)
    s_r = _child_splittable(space, sc.node, j, th, sc.rule_mask, False, n_other,
                            sc.child.cats)
    log_r = (log_leaf_factor(prior, d + 1, s_l) + log_leaf_factor(prior, d + 1, s_r)
             - old_factor)
    n_mv = 0
    for n in range(n_pts):
        leaf = data.leaf_of[t, n]
        if leaf == l_node or leaf == r_node:
            now_left = _goes_left(space.kinds, data.X[n], j, th, sc.rule_mask)
            if leaf == l_node and not now_left:
                sc.mv_idx[n_mv] = n
                sc.mv_sgn[n_mv] = 1.0
                n_mv += 1
            elif leaf == r_node and now_left:
                sc.mv_idx[n_mv] = n
                sc.mv_sgn[n_mv] = -1.0
                n_mv += 1
    src_col = lik.leaf.lcol[t, l_node] if mode == LEAFSPACE else 0
    dst_col = lik.leaf.lcol[t, r_node] if mode == LEAFSPACE else 0
    if not _decide(state, log_r, old_ll, Move(t, l_node, r_node, n_mv, src_col, dst_col),
                   data, lik, m, sc):
        return 0
    forest.feat[t, eta] = j
    forest.thr[t, eta] = th
    for w in range(forest.mask.shape[2]):
        forest.mask[t, eta, w] = sc.rule_mask[w] if space.kinds[j] == CATEGORICAL else np.uint64(0)
    for a in range(n_mv):
        n = sc.mv_idx[a]
        data.leaf_of[t, n] = r_node if sc.mv_sgn[a] > 0 else l_node
        if mode == LEAFSPACE:
            lik.leaf.pcol[n, t] = dst_col if sc.mv_sgn[a] > 0 else src_col
    stats[move, 1] += 1
    return 1


@njit(cache=True, nogil=True)
def noise_step(state, y, m, lik, sigma2, prior, step, work, stats):
    """Softplus random-walk Metropolis step on the noise variance ``sigma2`` ((1,) float64);
    ``prior`` is the ``NoisePrior``, ``work`` (>= max(N, P),) scratch. Returns 1 if accepted."""
    n_pts = y.shape[0]
    s2 = sigma2[0]
    theta = s2 + math.log(-math.expm1(-s2))  # softplus^-1, stable for small and large s2
    theta_new = theta + step * normal(state)
    s2_new = max(theta_new, 0.0) + math.log1p(math.exp(-abs(theta_new)))  # softplus
    stats[NOISE, 0] += 1
    if not s2_new > 0.0:
        uniform(state)
        return 0
    old_ll = current_loglik(lik, n_pts, m)
    new_ll = 0.0
    quad = 0.0
    logdet = 0.0
    L = np.empty((0, 0))
    if lik.mode == NSPACE:
        quad, logdet, L = n_factor(lik.n, y, m, s2_new, work, lik.n.hyp[SMOOTH_SHARE])
        new_ll = -0.5 * (quad + logdet)
    elif lik.mode == LEAFSPACE:
        ls = lik.leaf
        P = ls.P[0]
        quad, logdet, L = leaf_factor(ls.C, ls.b, P, m, s2_new, work)  # quad = b^T G^-1 b here
        q_k, ld_k = leaf_quad_logdet_of(quad, logdet, s2_new, ls.scal[3], n_pts, P, m)
        new_ll = -0.5 * (q_k + ld_k)
    log_r = (new_ll - old_ll + log_noise_prior(s2_new, prior) - log_noise_prior(s2, prior)
             + math.log(-math.expm1(-s2_new)) - math.log(-math.expm1(-s2)))
    if np.isnan(new_ll) or not math.log(uniform(state)) < log_r:
        return 0
    sigma2[0] = s2_new
    # the accepted factorization also refreshes the low-rank state from exact counts
    if lik.mode == NSPACE:
        n_install(L, y, lik.n, quad, logdet)
    elif lik.mode == LEAFSPACE:
        leaf_install(L, lik.leaf, quad, logdet, s2_new)
    stats[NOISE, 1] += 1
    return 1


@njit(cache=True, nogil=True)
def share_step(state, y, m, lik, sigma2, work):
    """Random-walk Metropolis step on logit s, the smooth share of the kernel
    (``engine.smooth``), under its Beta(a, b) prior (``lik.n.hyp``); the logit's Jacobian
    s (1 - s) turns the Beta density into s^a (1 - s)^b. In the flat form (no likelihood) it
    samples the prior. Returns 1 if accepted."""
    hyp = lik.n.hyp
    s = hyp[SMOOTH_SHARE]
    theta = math.log(s) - math.log1p(-s)
    s_new = 1.0 / (1.0 + math.exp(-(theta + hyp[SMOOTH_STEP] * normal(state))))
    hyp[SMOOTH_TRIED] += 1.0
    if not (s_new > 0.0 and s_new < 1.0):
        uniform(state)
        return 0
    a, b = hyp[SMOOTH_A], hyp[SMOOTH_B]
    log_r = a * (math.log(s_new) - math.log(s)) + b * (math.log1p(-s_new) - math.log1p(-s))
    nspace = lik.mode == NSPACE
    quad = 0.0
    logdet = 0.0
    L = np.empty((0, 0))
    if nspace:
        quad, logdet, L = n_factor(lik.n, y, m, sigma2, work, s_new)
        log_r += -0.5 * (quad + logdet) - current_loglik(lik, y.shape[0], m)
    if np.isnan(log_r) or not math.log(uniform(state)) < log_r:
        return 0
    hyp[SMOOTH_SHARE] = s_new
    if nspace:
        n_install(L, y, lik.n, quad, logdet)
    hyp[SMOOTH_TAKEN] += 1.0
    return 1


@njit(cache=True, nogil=True, inline="always")
def has_share(lik):
    """Whether the chain samples a smooth share (``engine.smooth``)."""
    return lik.n.hyp.shape[0] > 0 and lik.n.hyp[SMOOTH_ACTIVE] != 0.0


@njit(cache=True, nogil=True)
def refresh(lik, y, m, sigma2, work):
    """Recompute the likelihood state from the exact counts (bounds low-rank drift)."""
    if lik.mode == NSPACE:
        n_refresh(lik.n, y, m, sigma2, work)
    elif lik.mode == LEAFSPACE:
        leaf_refresh(lik.leaf, m, sigma2, work)
