"""GP marginal likelihood of BARK, kept up to date by low-rank updates (paper section 4.3).

Kernel on standardized outputs: ``K = Phi Phi^T / m + sigma^2 I``, ``Phi`` (N, P) the 0/1
leaf indicators of all trees (sigma_0^2 = 1). Every tree proposal moves a set of points from
one leaf column ``src`` to another ``dst``: ``Phi* = Phi + v e^T`` with ``v`` the signed
indicator of the movers and ``e = e_dst - e_src``. Two exact forms follow:

N-space (cheap when N is small): ``Phi* Phi*^T - Phi Phi^T = p q^T + q p^T`` with ``q = v``
and ``p = Phi e + v`` (the non-moving points of the two leaves, signed). We keep ``K^-1`` and
``alpha = K^-1 y``; a proposal costs O(N x points touched), an accepted one O(N^2).

Leaf space (cheap when N exceeds the number of leaves P): by Woodbury,
``K^-1 = sigma^-2 (I - Phi G^-1 Phi^T)`` with ``G = m sigma^2 I + Phi^T Phi`` (P, P), so
``y^T K^-1 y = (y^T y - b^T G^-1 b) / sigma^2`` with ``b = Phi^T y`` and
``log|K| = (N - P) log sigma^2 + log|G| - P log m``. A proposal changes ``G`` by the rank-2
term ``U M U^T``, ``U = [c, e]``, ``c = Phi^T v``, ``M = [[0, 1], [1, v^T v]]``: O(P^2),
independent of N. Empty leaf columns are harmless (they add log(m sigma^2) to log|G| and are
counted in P), which is how grow appends and prune removes a column.

Noise steps and periodic refreshes refactor from exact integer co-occurrence counts
(``A = Phi Phi^T`` in N-space, ``C = Phi^T Phi`` in leaf space), which bounds drift.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

# Reassociation lets LLVM vectorize the O(N^2) / O(P^2) loops; no "nnan" so NaN checks hold.
_FAST = {"reassoc", "contract", "arcp", "nsz"}

# likelihood forms: none (the chain samples the prior), N-space, leaf space
FLAT = 0
NSPACE = 1
LEAFSPACE = 2


class NSpaceState(NamedTuple):
    """N-space likelihood state of ``N`` points (in the other forms: (1, 1) / (1,) stand-ins).

    A (N, N) float64: shared-leaf counts Phi Phi^T (exact integers); Kinv (N, N) float64:
    K^-1; alpha (N,) float64: K^-1 y; scal (2,) float64: [y^T K^-1 y, log|K|].
    With a smooth share s (``engine.smooth``) K = (1 - s) A / m + s E + sigma^2 I: E (N, N)
    float64 the smooth part's Gram matrix ((1, 1) without a share) and hyp (7,) float64
    ``[active, s, prior a, prior b, step, steps tried, steps accepted]`` (Beta(a, b) prior on
    s, random-walk ``step`` on logit s; ``active`` 0: no share, K as above with s = 0).
    """

    A: np.ndarray
    Kinv: np.ndarray
    alpha: np.ndarray
    scal: np.ndarray
    E: np.ndarray
    hyp: np.ndarray


# ``NSpaceState.hyp`` entries
SMOOTH_ACTIVE, SMOOTH_SHARE, SMOOTH_A, SMOOTH_B, SMOOTH_STEP, SMOOTH_TRIED, SMOOTH_TAKEN = range(7)


def no_smooth() -> tuple[np.ndarray, np.ndarray]:
    """(E, hyp) of a state without a smooth share."""
    return np.zeros((1, 1)), np.zeros(7)


class LeafSpaceState(NamedTuple):
    """Leaf-space likelihood state: ``P`` leaf columns in storage for ``Pcap`` (in the other
    forms: size-1 stand-ins, except ``lcol``, which always has the forest's shape).

    C (Pcap, Pcap) float64: co-occurrence counts Phi^T Phi (exact integers); Ginv (Pcap, Pcap)
    float64: G^-1; b (Pcap,) float64: Phi^T y; beta (Pcap,) float64: G^-1 b; scal (4,)
    float64: [b^T G^-1 b, log|G|, sigma2 of the factorization, y^T y]; P (1,) int64: the
    number of columns in use (leading block of the arrays above);
    lcol (m, C) int64: leaf column of each leaf node, -1 elsewhere; owner (Pcap, 2) int64:
    (tree, node) of each column; pcol (N, m) int64: each point's column per tree (point-major,
    so a mover's m columns are adjacent).
    """

    C: np.ndarray
    Ginv: np.ndarray
    b: np.ndarray
    beta: np.ndarray
    scal: np.ndarray
    P: np.ndarray
    lcol: np.ndarray
    owner: np.ndarray
    pcol: np.ndarray


class Likelihood(NamedTuple):
    """The likelihood form in use (``mode``: FLAT, NSPACE or LEAFSPACE, int) and both states;
    only the state of the form in use is live."""

    mode: int
    n: NSpaceState
    leaf: LeafSpaceState


class NUpdate(NamedTuple):
    """Scratch: an N-space rank-2 update, from the proposal through ``n_eval`` to ``n_apply``.

    p_idx (N',) int64, p_val (N',) float64: the sparse vector p (N' = max(N, 1));
    is_mover (N',) bool: marks the movers while p is collected (all False between moves);
    KW (2, N) float64: K^-1 [p, q] as rows; Sinv (2, 2) float64; a (2,) float64: [p, q]^T alpha.
    """

    p_idx: np.ndarray
    p_val: np.ndarray
    is_mover: np.ndarray
    KW: np.ndarray
    Sinv: np.ndarray
    a: np.ndarray


class LeafUpdate(NamedTuple):
    """Scratch: a leaf-space move from ``leaf_eval`` to ``leaf_apply``.

    c (Pcap,) float64: Phi^T v (the caller fills it); U (2, Pcap) float64: [G^-1 c, G^-1 e] as
    rows; Sinv (2, 2) float64; r (3,) float64: [r0, r1, v^T y] with [r0, r1] = U^T b*.
    """

    c: np.ndarray
    U: np.ndarray
    Sinv: np.ndarray
    r: np.ndarray


@njit(cache=True, nogil=True)
def _chol_quad_logdet(mat, rhs, work):
    """Cholesky of ``mat``; returns (rhs^T mat^-1 rhs, log|mat|, L) or logdet=nan if not PD."""
    n = mat.shape[0]
    try:
        L = np.linalg.cholesky(mat)
    except Exception:  # noqa: BLE001 - numba raises a generic error for a non-PD matrix
        return 0.0, np.nan, mat
    logdet = 0.0
    for i in range(n):
        logdet += 2.0 * math.log(L[i, i])
    # forward substitution L z = rhs; rhs^T mat^-1 rhs = |z|^2
    quad = 0.0
    for i in range(n):
        s = rhs[i]
        for k in range(i):
            s -= L[i, k] * work[k]
        work[i] = s / L[i, i]
        quad += work[i] * work[i]
    return quad, logdet, L


@njit(cache=True, nogil=True, fastmath=_FAST)
def _install_inverse(L, rhs, inv, sol):
    """inv[:n, :n] = (L L^T)^-1 (exactly symmetric) and sol[:n] = inv @ rhs, from Cholesky L.

    Inverting the triangle (n^3 / 6) and one product is cheaper than a second factorization.
    """
    n = L.shape[0]
    Linv = np.zeros((n, n))
    for j in range(n):
        Linv[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, n):
            s = 0.0
            for k in range(j, i):
                s += L[i, k] * Linv[k, j]
            Linv[i, j] = -s / L[i, i]
    full = np.dot(Linv.T, Linv)
    for i in range(n):
        for k in range(i + 1):
            v = 0.5 * (full[i, k] + full[k, i])
            inv[i, k] = v
            inv[k, i] = v
    for i in range(n):
        acc = 0.0
        for k in range(n):
            acc += inv[i, k] * rhs[k]
        sol[i] = acc


@njit(cache=True, nogil=True, inline="always")
def _inverse2(s00, s01, s11, out):
    """Inverse of the symmetric 2 x 2 matrix [[s00, s01], [s01, s11]] into ``out``."""
    det = s00 * s11 - s01 * s01
    out[0, 0] = s11 / det
    out[1, 1] = s00 / det
    out[0, 1] = -s01 / det
    out[1, 0] = -s01 / det


@njit(cache=True, nogil=True, inline="always")
def _quad2(S, a0, a1):
    return a0 * (S[0, 0] * a0 + S[0, 1] * a1) + a1 * (S[1, 0] * a0 + S[1, 1] * a1)


# ----------------------------------------------------------------------------- N-space


@njit(cache=True, nogil=True)
def n_factor(ns, y, m, sigma2, work, share):
    """(y^T K^-1 y, log|K|, L) for K = A / m + sigma2 I, from scratch (O(N^3)); with a smooth
    share (``ns.hyp``) K = (1 - share) A / m + share E + sigma2 I."""
    A = ns.A
    n = A.shape[0]
    if ns.hyp[SMOOTH_ACTIVE] == 0.0:
        K = A / m  # as before the share existed: the same arithmetic, the same chains
    else:
        K = A * ((1.0 - share) / m) + share * ns.E
    for i in range(n):
        K[i, i] += sigma2
    return _chol_quad_logdet(K, y, work)


@njit(cache=True, nogil=True, inline="always")
def forest_m(ns, m):
    """The m of the rank-2 updates: K changes by (p q^T + q p^T) (1 - s) / m when a tree
    moves, i.e. by / m' with m' = m / (1 - s)."""
    if ns.hyp[SMOOTH_ACTIVE] == 0.0:
        return float(m)
    return m / (1.0 - ns.hyp[SMOOTH_SHARE])


@njit(cache=True, nogil=True)
def n_install(L, y, ns, quad, logdet):
    """Adopt the factorization L of K into ``ns``: K^-1, alpha = K^-1 y, [quad, logdet]."""
    _install_inverse(L, y, ns.Kinv, ns.alpha)
    ns.scal[0] = quad
    ns.scal[1] = logdet


@njit(cache=True, nogil=True)
def n_refresh(ns, y, m, sigma2, work):
    """Recompute the N-space state ``ns`` from its exact counts A (``work``: (>= N,) scratch)."""
    quad, logdet, L = n_factor(ns, y, m, sigma2, work, ns.hyp[SMOOTH_SHARE])
    if np.isnan(logdet):
        return False
    n_install(L, y, ns, quad, logdet)
    return True


@njit(cache=True, nogil=True, fastmath=_FAST)
def n_eval(ns, m, p_idx, p_val, n_p, q_idx, q_val, n_q, upd):
    """Quad and logdet after adding (p q^T + q p^T) / m to K (``forest_m``: / m' with a
    smooth share); keeps factors in ``upd``.

    ``p`` and ``q`` are sparse: indices ``p_idx[:n_p]`` with values ``p_val[:n_p]``.
    Returns (quad*, logdet*); logdet* is nan if the update is numerically not PD.
    """
    Kinv, alpha, scal = ns.Kinv, ns.alpha, ns.scal
    KW, Sinv = upd.KW, upd.Sinv
    mm = forest_m(ns, m)
    n = Kinv.shape[0]
    for i in range(n):
        KW[0, i] = 0.0
        KW[1, i] = 0.0
    for a in range(n_p):
        row = Kinv[p_idx[a]]
        v = p_val[a]
        for i in range(n):
            KW[0, i] += v * row[i]
    for a in range(n_q):
        row = Kinv[q_idx[a]]
        v = q_val[a]
        for i in range(n):
            KW[1, i] += v * row[i]
    h00 = 0.0
    h01 = 0.0
    a0 = 0.0
    for a in range(n_p):
        h00 += p_val[a] * KW[0, p_idx[a]]
        h01 += p_val[a] * KW[1, p_idx[a]]
        a0 += p_val[a] * alpha[p_idx[a]]
    h11 = 0.0
    a1 = 0.0
    for a in range(n_q):
        h11 += q_val[a] * KW[1, q_idx[a]]
        a1 += q_val[a] * alpha[q_idx[a]]
    inv_m = 1.0 / mm
    det = (1.0 + h01 * inv_m) ** 2 - h00 * h11 * inv_m * inv_m
    if not det > 0.0:
        return scal[0], np.nan
    _inverse2(h00, h01 + mm, h11, Sinv)  # S = D^-1 + H with D = [[0, 1], [1, 0]] / m
    upd.a[0] = a0
    upd.a[1] = a1
    quad = scal[0] - _quad2(Sinv, a0, a1)
    return quad, scal[1] + math.log(det)


@njit(cache=True, nogil=True, fastmath=_FAST)
def n_apply(ns, upd, quad, logdet):
    """Accept the update ``n_eval`` prepared in ``upd`` (which returned quad, logdet):
    K^-1 -= KW S^-1 KW^T (O(N^2))."""
    Kinv, alpha = ns.Kinv, ns.alpha
    KW, Sinv, a = upd.KW, upd.Sinv, upd.a
    n = Kinv.shape[0]
    c0 = Sinv[0, 0] * a[0] + Sinv[0, 1] * a[1]
    c1 = Sinv[1, 0] * a[0] + Sinv[1, 1] * a[1]
    for i in range(n):
        g0 = KW[0, i] * Sinv[0, 0] + KW[1, i] * Sinv[1, 0]
        g1 = KW[0, i] * Sinv[0, 1] + KW[1, i] * Sinv[1, 1]
        row = Kinv[i]
        for k in range(n):
            row[k] -= g0 * KW[0, k] + g1 * KW[1, k]
        alpha[i] -= KW[0, i] * c0 + KW[1, i] * c1
    ns.scal[0] = quad
    ns.scal[1] = logdet


# -------------------------------------------------------------------------- leaf space


@njit(cache=True, nogil=True)
def leaf_quad_logdet_of(quadb, logdet_g, sigma2, yy, n_pts, n_leaves, m):
    """(y^T K^-1 y, log|K|) from b^T G^-1 b, log|G|, sigma2 and y^T y."""
    quad = (yy - quadb) / sigma2
    logdet = (n_pts - n_leaves) * math.log(sigma2) + logdet_g - n_leaves * math.log(m)
    return quad, logdet


@njit(cache=True, nogil=True)
def leaf_quad_logdet(scal, n_pts, n_leaves, m):
    """(y^T K^-1 y, log|K|) from leaf-space scalars scal = [b^T G^-1 b, log|G|, sigma2, y^T y]."""
    return leaf_quad_logdet_of(scal[0], scal[1], scal[2], scal[3], n_pts, n_leaves, m)


@njit(cache=True, nogil=True)
def leaf_factor(C, b, P, m, sigma2, work):
    """(b^T G^-1 b, log|G|, L) for G = C[:P, :P] + m sigma2 I, from scratch (O(P^3))."""
    G = C[:P, :P].copy()
    for i in range(P):
        G[i, i] += m * sigma2
    return _chol_quad_logdet(G, b[:P], work)


@njit(cache=True, nogil=True)
def leaf_install(L, ls, quadb, logdet, sigma2):
    """Adopt the factorization L of G into ``ls``: G^-1, beta = G^-1 b and scal[0:3]."""
    _install_inverse(L, ls.b[:ls.P[0]], ls.Ginv, ls.beta)
    ls.scal[0] = quadb
    ls.scal[1] = logdet
    ls.scal[2] = sigma2


@njit(cache=True, nogil=True)
def leaf_refresh(ls, m, sigma2, work):
    """Recompute the leaf-space state ``ls`` from its exact counts C (``work``: (>= P,))."""
    quadb, logdet, L = leaf_factor(ls.C, ls.b, ls.P[0], m, sigma2, work)
    if np.isnan(logdet):
        return False
    leaf_install(L, ls, quadb, logdet, sigma2)
    return True


@njit(cache=True, nogil=True)
def leaf_append(ls, m):
    """Add an empty leaf column at index P and count it (P += 1)."""
    Ginv, C, b, beta, scal = ls.Ginv, ls.C, ls.b, ls.beta, ls.scal
    P = ls.P[0]
    ls.P[0] = P + 1
    for i in range(P + 1):
        Ginv[P, i] = 0.0
        Ginv[i, P] = 0.0
        C[P, i] = 0.0
        C[i, P] = 0.0
    Ginv[P, P] = 1.0 / (m * scal[2])
    b[P] = 0.0
    beta[P] = 0.0
    scal[1] += math.log(m * scal[2])


@njit(cache=True, nogil=True)
def leaf_drop_last(ls, m):
    """Undo ``leaf_append`` (column P - 1 is empty): only log|G| and P change."""
    ls.P[0] -= 1
    ls.scal[1] -= math.log(m * ls.scal[2])


@njit(cache=True, nogil=True, fastmath=_FAST)
def leaf_eval(ls, nv, ys, src, dst, upd):
    """b^T G*^-1 b* and log|G*| after moving points from column ``src`` to ``dst``.

    ``upd.c`` (P,) = Phi^T v, ``nv`` = v^T v, ``ys`` = v^T y. Fills the rest of ``upd`` for
    ``leaf_apply``. Returns (quadb*, logdetG*) (nan if not PD).
    """
    Ginv, beta, scal = ls.Ginv, ls.beta, ls.scal
    P = ls.P[0]
    c, U, Sinv, r = upd
    h00 = 0.0
    h01 = 0.0
    cb = 0.0
    for i in range(P):
        row = Ginv[i]
        s = 0.0
        for k in range(P):
            s += row[k] * c[k]
        U[0, i] = s
        U[1, i] = row[dst] - row[src]
        h00 += c[i] * s
        h01 += c[i] * U[1, i]
        cb += c[i] * beta[i]
    h11 = U[1, dst] - U[1, src]
    # det(I + M H) with M = [[0, 1], [1, nv]], H symmetric
    det = (1.0 + h01) * (1.0 + h01 + nv * h11) - h11 * (h00 + nv * h01)
    if not det > 0.0:
        return scal[0], np.nan
    _inverse2(h00 - nv, h01 + 1.0, h11, Sinv)  # S = M^-1 + H, M^-1 = [[-nv, 1], [1, 0]]
    eb = beta[dst] - beta[src]
    r0 = cb + ys * h01
    r1 = eb + ys * h11
    r[0] = r0
    r[1] = r1
    r[2] = ys
    bgb = scal[0] + 2.0 * ys * eb + ys * ys * h11
    quadb = bgb - _quad2(Sinv, r0, r1)
    return quadb, scal[1] + math.log(det)


@njit(cache=True, nogil=True, fastmath=_FAST)
def leaf_apply(ls, nv, src, dst, upd, quadb, logdet):
    """Accept the move ``leaf_eval`` prepared in ``upd`` (which returned quadb, logdet):
    update G^-1, beta, b, the counts C and scal[0:2]."""
    Ginv, C, b, beta = ls.Ginv, ls.C, ls.b, ls.beta
    P = ls.P[0]
    c, U, Sinv, r = upd
    r0 = r[0]
    r1 = r[1]
    ys = r[2]
    t0 = Sinv[0, 0] * r0 + Sinv[0, 1] * r1
    t1 = Sinv[1, 0] * r0 + Sinv[1, 1] * r1
    for i in range(P):
        g0 = U[0, i] * Sinv[0, 0] + U[1, i] * Sinv[1, 0]
        g1 = U[0, i] * Sinv[0, 1] + U[1, i] * Sinv[1, 1]
        row = Ginv[i]
        for k in range(P):
            row[k] -= g0 * U[0, k] + g1 * U[1, k]
        beta[i] += ys * U[1, i] - (U[0, i] * t0 + U[1, i] * t1)
    b[dst] += ys
    b[src] -= ys
    for i in range(P):
        C[i, dst] += c[i]
        C[i, src] -= c[i]
    for k in range(P):
        C[dst, k] += c[k]
        C[src, k] -= c[k]
    C[dst, dst] += nv
    C[src, src] += nv
    C[dst, src] -= nv
    C[src, dst] -= nv
    ls.scal[0] = quadb
    ls.scal[1] = logdet


@njit(cache=True, nogil=True)
def leaf_swap_remove(ls, col, m):
    """Remove empty column ``col`` by moving column P - 1 into its place, and count it out
    (P -= 1); the columns' bookkeeping (lcol, owner, pcol) is the caller's."""
    Ginv, C, b, beta, scal = ls.Ginv, ls.C, ls.b, ls.beta, ls.scal
    P = ls.P[0]
    ls.P[0] = P - 1
    last = P - 1
    if col != last:
        for i in range(P):
            Ginv[col, i] = Ginv[last, i]
            C[col, i] = C[last, i]
        for i in range(P):
            Ginv[i, col] = Ginv[i, last]
            C[i, col] = C[i, last]
        Ginv[col, col] = Ginv[last, last]
        C[col, col] = C[last, last]
        b[col] = b[last]
        beta[col] = beta[last]
    scal[1] -= math.log(m * scal[2])
