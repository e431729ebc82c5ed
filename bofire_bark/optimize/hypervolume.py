"""Expected hypervolume improvement over BARK's posterior samples (BoFire's qEHVI, qLogEHVI,
qNEHVI, qLogNEHVI), its exact value at points and its bound over boxes.

Objectives k = 1..K (Maximize / Minimize, each oriented so that larger is better, in the
output's standardized units) are modelled by independent posteriors; sample s of every output
together is one joint sample. Given the front P (non-dominated points) and a reference point r,
the region that a new point y would add is cut into boxes [l_c, u_c] (BoTorch's
``FastNondominatedPartitioning``; u may be +inf), and

    HVI(y) = sum_c prod_k clip(y_k - l_ck, 0, u_ck - l_ck).

With y_k ~ N(m_sk, s_sk^2) independent, the expectation factorizes:

    EHVI_s(x) = sum_c prod_k [psi(l_ck) - psi(u_ck)],  psi(a) = E[(y - a)^+] = s h((m - a)/s),

h(z) = z Phi(z) + phi(z), psi(+inf) = 0; the acquisition is (1/S) sum_s EHVI_s(x). The log
variants have the same maximizers. The front: the measured points that meet every output limit
(qEHVI) or, under noise (qNEHVI), the posterior means (averaged over samples) at those points;
points of the batch so far join it at their posterior means (a believer, as the single-output
rules condition on them). The reference point is the strategy's ``ref_point`` or, by default,
BoTorch's default inference: the worst of the front minus 10 % of its range per objective.

Bound over a box (``ehvi_bound``): each factor f = psi(l) - psi(u) is nondecreasing in m, and
for fixed m increasing in s while m <= (l + u) / 2, decreasing above. The kernel bounds each
sample's m <= A, L <= s <= B and m + k s <= C (``grid.bound``); on the path m = min(A, C - k s)
the factor is bounded on the piece m = A by its monotone rule, and on pieces of the line part
[a, b] by the factor at m = C - k a (an upper bound of m there) with the monotone rule in s.
The product of the factors' bounds bounds the product (all are >= 0), the sum over cells the
sum. On a decided box L = B and every factor is exact, so the bound is the exact value.

Output limits (MaximizeSigmoid, MinimizeSigmoid, Target objectives) either prune (the
default, ``output_limits="optimistic"``: a point is a candidate while every limit's integrated
UCB meets it, ``optimize.outputs``) or weigh (``"probability"``): each sample's EHVI is
multiplied by the probability that sample gives of meeting every limit,

    a(x) = (1/S) sum_s EHVI_s(x) prod_j Phi((m_sj - t_j) / s_sj),

m_sj, s_sj the limit's channel (oriented so the limit reads m >= t) and t_j its standardized
limit; nothing is pruned. Phi((m - t) / s) is nondecreasing in m and, for fixed m, increasing
in s below the limit (m < t) and decreasing above, so the same path bound applies
(``_feasible_max``); each weight is in [0, 1], the product of bounds bounds the product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.special import ndtr

from bofire_bark.settings import OUTPUT_LIMITS

# Pieces of the line part of the path per factor bound (more: tighter, slower).
LINE_PIECES = 4
# Points scored at once by ``Hypervolume.values`` (memory: S x cells x K per point).
CHUNK = 2048
_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class Hypervolume:
    """The cells of the region a new point adds: ``lower``, ``upper`` (n_cells, K) in the
    objectives' oriented standardized units (upper may be inf); ``goals`` the channel of each
    objective in the ``outputs.OutputAcquisition``, ``outputs`` its output index."""

    lower: np.ndarray
    upper: np.ndarray
    goals: tuple[int, ...]
    outputs: tuple[int, ...]
    signs: tuple[float, ...]
    # output_limits="probability": the limits that weigh (module docstring), else empty
    weights: tuple[Weight, ...] = ()

    @property
    def prunes(self) -> bool:
        """Whether the output limits prune (optimistic) rather than weigh."""
        return not self.weights

    def values(self, moments: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """(1/S) sum_s EHVI_s [times the limits' probability] at n points from every output's
        engine (means, variances), (S, n) each, indexed by output."""
        n = moments[0][0].shape[1]
        out = np.empty(n)
        for a in range(0, n, CHUNK):
            b = min(n, a + CHUNK)
            prod = None
            for k, q in enumerate(self.outputs):
                means, variances = moments[q]
                m = self.signs[k] * means[:, a:b, None]
                sd = np.sqrt(np.maximum(variances[:, a:b, None], 0.0))
                f = _psi(m, sd, self.lower[:, k]) - _psi(m, sd, self.upper[:, k])
                prod = f if prod is None else prod * f
            each = prod.sum(axis=-1)  # over cells: (S, n)
            for w in self.weights:
                means, variances = moments[w.output]
                each = each * _feasible(w.sign * means[:, a:b],
                                        np.sqrt(np.maximum(variances[:, a:b], 0.0)),
                                        w.required)
            out[a:b] = each.mean(axis=0)
        return out


@dataclass(frozen=True)
class Weight:
    """One output limit as a probability weight: channel ``channel`` of output ``output``
    (``sign`` orients it) must reach ``required`` (standardized units)."""

    channel: int
    output: int
    sign: float
    required: float


def _feasible(m, sd, t):
    """P(y >= t) for y ~ N(m, sd^2) (a step at sd = 0)."""
    pos = sd > 0
    return np.where(pos, ndtr((m - t) / np.where(pos, sd, 1.0)), (m >= t).astype(np.float64))


def _psi(m, sd, a):
    """E[(y - a)^+] for y ~ N(m, sd^2), broadcast over cells' ``a`` (0 for a = inf)."""
    finite = np.isfinite(a)
    a = np.where(finite, a, 0.0)
    pos = sd > 0
    safe = np.where(pos, sd, 1.0)
    z = (m - a) / safe
    val = np.where(pos, safe * (z * ndtr(z) + np.exp(-0.5 * z * z) * _INV_SQRT2PI),
                   np.maximum(m - a, 0.0))
    return np.where(finite, val, 0.0)


def front_cells(front: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) (n_cells, K) of the region above ``ref`` not dominated by ``front``
    (n, K), maximization, by BoTorch's box decomposition."""
    import torch
    from botorch.utils.multi_objective.box_decompositions.non_dominated import (
        FastNondominatedPartitioning,
    )

    Y = torch.as_tensor(np.asarray(front, dtype=np.float64).reshape(-1, len(ref)))
    Y = Y[(Y > torch.as_tensor(ref)).all(dim=-1)]
    part = FastNondominatedPartitioning(ref_point=torch.as_tensor(ref, dtype=torch.float64),
                                        Y=Y)
    bounds = part.get_hypercell_bounds().numpy()
    return np.ascontiguousarray(bounds[0]), np.ascontiguousarray(bounds[1])


def reference_point(front: np.ndarray) -> np.ndarray:
    """The worst value of each objective on the front minus 10 % of its range (BoTorch's
    ``infer_reference_point`` with its default scale; 10 % of |worst| for a flat one)."""
    lo, hi = front.min(axis=0), front.max(axis=0)
    span = np.where(hi - lo > 1e-12, hi - lo, np.maximum(np.abs(lo), 1.0))
    return lo - 0.1 * span


@njit(cache=True, nogil=True)
def _factor(m, sd, lo, hi):
    """E[clip(y - lo, 0, hi - lo)] for y ~ N(m, sd^2) (hi may be inf)."""
    return _psi1(m, sd, lo) - (0.0 if hi == np.inf else _psi1(m, sd, hi))


@njit(cache=True, nogil=True, inline="always")
def _psi1(m, sd, a):
    d = m - a
    if sd <= 0.0:
        return max(d, 0.0)
    z = d / sd
    return sd * (z * 0.5 * math.erfc(-z / _SQRT2) + math.exp(-0.5 * z * z) * _INV_SQRT2PI)


@njit(cache=True, nogil=True)
def _factor_max(A, L, B, C, k, lo, hi, pieces):
    """Upper bound of the factor over {m <= A, L <= s <= B, m + k s <= C}."""
    if L >= B:
        return _factor(A, B, lo, hi)
    mid = 0.5 * (lo + hi)  # inf for an open cell: increasing in s
    s1 = min(max((C - A) / k, L), B)
    best = _factor(A, s1 if A <= mid else L, lo, hi)
    if s1 < B:
        for j in range(pieces):
            a = s1 + (B - s1) * j / pieces
            b = s1 + (B - s1) * (j + 1) / pieces
            m = min(A, C - k * a)
            v = _factor(m, b if m <= mid else a, lo, hi)
            if v > best:
                best = v
    return best


@njit(cache=True, nogil=True, inline="always")
def _phi(m, sd, t):
    if sd <= 0.0:
        return 1.0 if m >= t else 0.0
    return 0.5 * math.erfc(-(m - t) / (sd * _SQRT2))


@njit(cache=True, nogil=True)
def _feasible_max(A, L, B, C, k, t, pieces):
    """Upper bound of Phi((m - t) / s) over {m <= A, L <= s <= B, m + k s <= C}."""
    if L >= B:
        return _phi(A, B, t)
    s1 = min(max((C - A) / k, L), B)
    best = _phi(A, s1 if A < t else L, t)
    if s1 < B:
        for j in range(pieces):
            a = s1 + (B - s1) * j / pieces
            b = s1 + (B - s1) * (j + 1) / pieces
            m = min(A, C - k * a)
            v = _phi(m, b if m < t else a, t)
            if v > best:
                best = v
    return best


@njit(cache=True, nogil=True)
def ehvi_bound(A, L, B, C, k, lower, upper, pieces, WA, WL, WB, WC, required):
    """Upper bound of (1/S) sum_s EHVI_s prod_j Phi_sj over a box from each (sample,
    objective)'s bounds ``A``, ``L``, ``B``, ``C`` (S, K) and each (sample, weighing limit)'s
    ``WA``, ``WL``, ``WB``, ``WC`` (S, J) with its ``required`` (J,) (J = 0: no weights)
    (module docstring); exact when L == B everywhere."""
    S, K = A.shape
    total = 0.0
    for s in range(S):
        weight = 1.0
        for j in range(required.shape[0]):
            weight *= _feasible_max(WA[s, j], WL[s, j], WB[s, j], WC[s, j], k, required[j],
                                    pieces)
        if weight <= 0.0:
            continue
        each = 0.0
        for c in range(lower.shape[0]):
            prod = 1.0
            for q in range(K):
                prod *= _factor_max(A[s, q], L[s, q], B[s, q], C[s, q], k, lower[c, q],
                                    upper[c, q], pieces)
                if prod <= 0.0:
                    break
            each += prod
        total += weight * each
    return total / S


def build_hypervolume(acq, posteriors: dict, systems: list, pending: np.ndarray | None,
                      noisy: bool, output_limits: str = "optimistic") -> Hypervolume:
    """The cells of an ``outputs.OutputAcquisition``'s objectives (Maximize / Minimize), and
    its limits as weights when ``output_limits`` is "probability".

    The candidates for the front are the measured points of every modelled output (their
    union); an objective's value there is its measurement where that output was measured
    (qEHVI; ``noisy``: its posterior mean, qNEHVI) and its posterior mean elsewhere. Points
    whose values miss an output limit are left out. Pending points join at their means.
    """
    if any(g.target is not None for g in acq.goals) or len(acq.goals) < 2:
        raise ValueError("the expected hypervolume improvement needs two or more Maximize / "
                         "Minimize objectives (no CloseToTarget objective)")
    posts = [posteriors[key] for key in acq.keys]
    sizes = {len(p.samples["sigma2"]) for p in posts}
    if len(sizes) != 1:
        raise ValueError(f"the outputs' posteriors hold different numbers of samples {sizes}")
    X = np.unique(np.concatenate([p.X for p in posts]), axis=0)

    def channel_values(c: int, Xs: np.ndarray, measured: bool) -> np.ndarray:
        ch = acq.channels[c]
        post = posts[ch.output]
        means, _ = systems[ch.output].predict_each(Xs)
        val = means.mean(axis=0)
        if measured:
            rows = {r.tobytes(): i for i, r in enumerate(np.ascontiguousarray(post.X))}
            for n, x in enumerate(np.ascontiguousarray(Xs)):
                i = rows.get(x.tobytes())
                if i is not None:
                    val[n] = post.y[i]
        return ch.sign * val

    def objective_points(Xs: np.ndarray, measured: bool) -> np.ndarray:
        ok = np.ones(len(Xs), dtype=bool)
        for lim in acq.limits:
            ok &= channel_values(lim.channel, Xs, measured) >= lim.required
        Y = np.stack([channel_values(g.plus, Xs, measured) for g in acq.goals], axis=1)
        return Y, ok

    Y, ok = objective_points(X, not noisy)
    if pending is not None and len(pending):
        Yp, okp = objective_points(np.asarray(pending, dtype=np.float64), False)
        Y, ok = np.concatenate((Y, Yp)), np.concatenate((ok, okp))
    front = Y[ok]
    if all(g.reference is not None for g in acq.goals):
        ref = np.array([g.reference for g in acq.goals])
    else:
        ref = reference_point(front if len(front) else Y)
    lower, upper = front_cells(front, ref)
    goals = tuple(g.plus for g in acq.goals)
    if output_limits not in OUTPUT_LIMITS:
        raise ValueError(f"output_limits must be one of {OUTPUT_LIMITS}, got {output_limits!r}")
    weights = () if output_limits == "optimistic" else tuple(
        Weight(lim.channel, acq.channels[lim.channel].output,
               float(acq.channels[lim.channel].sign), float(lim.required))
        for lim in acq.limits)
    return Hypervolume(lower, upper, goals, tuple(acq.channels[c].output for c in goals),
                       tuple(float(acq.channels[c].sign) for c in goals), weights)
