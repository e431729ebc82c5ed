"""Finite domains solved exactly: the acquisition scored at every feasible point.

When every input is categorical (plain or descriptor) or discrete (a continuous input fixed to
one value counts as one value), the domain is a finite set, the product of the allowed
categories and the discrete values. Up to ``defaults.LIBRARY_LIMIT`` points the strategy
enumerates it (``build_library``: the points that satisfy the domain's constraints, once per
strategy), scores every point (``optimize_library``) and returns the best as proven optimal
with gap 0, where the grid search stops at a gap or at its time limit. Larger domains go to the
grid search (``space.finite.plan_search`` decides, and says why for the log).

Objective: exactly the grid search's, ``outputs.OutputAcquisition`` over the outputs'
integrated UCB channels U^+/- = (1/S) sum_s [+/- mu_s(x) + kappa sigma_s(x)] (with one
Maximize/Minimize objective: ``optimize_acquisition``'s (1/S) sum_s [sign mu_s + kappa
sigma_s]); a point whose output limit fails scores -inf. mu_s and sigma_s come from the
posterior's per-sample leaf systems conditioned on the pending points (``Posterior.systems``,
kriging believer), as in the grid search.

Scoring (``library_moments``, numba over samples and points): sample s has leaf system
(lcol, Ginv, beta) (``engine.predict``); with c_t the leaf column of x in tree t,
mu_s(x) = sum_t beta[c_t] and var_s(x) = sigma_s^2 phi^T Ginv phi. Since
Q = I - m sigma_s^2 Ginv = R R^T has rank at most the number of training and pending points,
var_s(x) = 1 - ||sum_t R[c_t] / sqrt(m)||^2: m rows of length rank instead of m^2 entries of
Ginv (a sample whose rank exceeds m/2 keeps the m(m+1)/2 entries of the direct form). The few
points within round-off of the best are scored again by the engine (``predict_each``) and the
best of those is returned, so the candidate is the engine's argmax.

Measured and pending points: ``optimize_library`` skips the points of ``exclude`` (the
strategy passes its experiments and pending candidates unless ``allow_repeats``); the proof
("optimal", gap 0) covers the points left. Domain constraints are BoFire's own test
(``Constraints.is_fulfilled``) on the decoded points, so every constraint type that BoFire can
evaluate point by point applies, categorical exclusions included (``LIBRARY_CONSTRAINTS``).
No Pyomo on this path.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from numba import njit

from bofire_bark.engine.blas import single_threaded_blas
from bofire_bark.engine.forest import route
from bofire_bark.optimize.result import (
    AcquisitionResult,
    InfeasibleDomainError,
    InfeasibleOutputLimitError,
    LibraryExhaustedError,
)
from bofire_bark.optimize.rules import HYPERVOLUME_RULES, UCB, Rule, rule_value
from bofire_bark.settings import AcquisitionSettings
from bofire_bark.space.finite import library_axes
from bofire_bark.supported import LIBRARY_CONSTRAINTS

logger = logging.getLogger(__name__)

# Feasibility tolerance of the domain's constraints (BoFire's is_fulfilled default; its ask
# validates candidates with 1e-5).
TOL = 1e-6
# Points within this relative distance of the best kernel score are scored again by the
# engine (the low-rank form differs from it by round-off, ~1e-13), at most MAX_RESCORE.
RESCORE_RTOL = 1e-9
MAX_RESCORE = 256
# A sample whose rank (of Q) is at most this many times the number of trees is scored in
# the low-rank form, else in the direct form.
LOW_RANK = 2.0
# Points between recomputations of a sample's sums from scratch (``library_moments``).
REFRESH = 1024


# ------------------------------------------------------------------------------------------
# the finite domain
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Library:
    """The feasible points of a finite domain.

    Attributes:
        X: (n, D) encoded points that satisfy the domain's constraints, in enumeration order
            (the last feature varies fastest).
        position: (n,) int64, each point's position in the full enumeration.
        axes: per feature, the encoded values enumerated, (K_j,).
        size: points of the full enumeration (prod K_j), before constraints.
    """

    X: np.ndarray
    position: np.ndarray
    axes: tuple[np.ndarray, ...]
    size: int

    def positions(self, X: np.ndarray) -> np.ndarray:
        """(k,) int64: the enumeration position of each encoded row of ``X`` (k, D), -1 for a
        row outside the enumeration (a category not allowed, a value not enumerated)."""
        X = np.asarray(X, dtype=np.float64).reshape(-1, len(self.axes))
        pos = np.zeros(len(X), dtype=np.int64)
        ok = np.ones(len(X), dtype=bool)
        for j, axis in enumerate(self.axes):
            idx = np.clip(np.searchsorted(axis, X[:, j]), 0, len(axis) - 1)
            ok &= np.isclose(axis[idx], X[:, j], rtol=0.0, atol=1e-9)
            pos = pos * len(axis) + idx
        return np.where(ok, pos, -1)

    def excluded(self, X: np.ndarray | None) -> np.ndarray:
        """(n,) bool: the library points that equal a row of ``X`` (None: none)."""
        out = np.zeros(len(self.X), dtype=bool)
        if X is None or len(X) == 0:
            return out
        pos = self.positions(X)
        hit = np.zeros(self.size, dtype=bool)
        hit[pos[pos >= 0]] = True
        return hit[self.position]


def check_library_constraints(domain) -> None:
    """Raise ``ValueError`` naming a constraint that cannot be tested point by point."""
    for c in domain.constraints.constraints:
        if type(c) not in LIBRARY_CONSTRAINTS:
            names = ", ".join(t.__name__ for t in LIBRARY_CONSTRAINTS)
            raise ValueError(f"BARK cannot enumerate a domain with a {type(c).__name__}; "
                             f"supported constraint types: {names}.")


def build_library(domain, space) -> Library:
    """Enumerate a finite domain and keep the points that satisfy its constraints.

    Raises:
        ValueError: the domain is not finite, or has a constraint of another type than
            ``LIBRARY_CONSTRAINTS``.
        InfeasibleDomainError: the constraints admit none of the points.
    """
    axes = library_axes(space)
    if axes is None:
        raise ValueError("the domain has a continuous input with a range: it is not finite")
    check_library_constraints(domain)
    sizes = [len(a) for a in axes]
    size = math.prod(sizes)
    position = np.arange(size, dtype=np.int64)
    X = np.empty((size, len(axes)), dtype=np.float64)
    for j, idx in enumerate(np.unravel_index(position, sizes)):
        X[:, j] = axes[j][idx]
    if len(domain.constraints) and size:
        with np.errstate(all="ignore"):
            ok = domain.constraints.is_fulfilled(space.decode(X), tol=TOL)
        ok = np.asarray(pd.Series(ok).fillna(False), dtype=bool)
        X, position = np.ascontiguousarray(X[ok]), position[ok]
        if len(X) == 0:
            raise InfeasibleDomainError(
                f"The domain's constraints admit none of its {size} points (every combination "
                "of the allowed categories and discrete values was tested).")
    return Library(X, position, axes, size)


# ------------------------------------------------------------------------------------------
# scoring
# ------------------------------------------------------------------------------------------


class LeafTables(NamedTuple):
    """Per-sample scoring tables of a posterior's leaf systems (S samples, m trees, node
    capacity C, at most P leaf columns).

    lcol (S, m, C) int64: leaf column of each leaf node (``LeafSystem.lcol``).
    table (S, P, 1 + R) float64: column 0 beta (the leaf's mean contribution), then the rows
        of R / sqrt(m) with Q = I - m sigma^2 Ginv = R R^T (low-rank form).
    rank (S,) int64: columns of R used by sample s, or -1 for the direct form.
    ginv (S, P, P) float64: Ginv of the samples in direct form (zeros elsewhere).
    sigma2 (S,) float64: noise variances (standardized units).
    """

    lcol: np.ndarray
    table: np.ndarray
    rank: np.ndarray
    ginv: np.ndarray
    sigma2: np.ndarray


def leaf_tables(samples: dict[str, np.ndarray], systems, low_rank: float = LOW_RANK) -> LeafTables:
    """The ``LeafTables`` of the per-sample leaf systems ``systems`` (``SampleSystems.systems``:
    (lcol, Ginv, beta) per sample, conditioned on pending points); a sample whose rank is at
    most ``low_rank`` * m takes the low-rank form."""
    S, m = samples["feat"].shape[:2]
    sigma2 = np.asarray(samples["sigma2"], dtype=np.float64)
    factors = []
    with single_threaded_blas():  # small matrices: threads only add contention
        for s, (_, Ginv, _, _) in enumerate(systems):
            P = Ginv.shape[0]
            Q = np.eye(P) - m * sigma2[s] * Ginv
            lam, V = np.linalg.eigh(0.5 * (Q + Q.T))
            keep = lam > 1e-13 * max(1.0, float(lam.max(initial=0.0)))
            R = V[:, keep] * np.sqrt(lam[keep] / m)
            factors.append(R if R.shape[1] <= low_rank * m else None)
    P = max(Ginv.shape[0] for _, Ginv, _, _ in systems)
    width = 1 + max((R.shape[1] for R in factors if R is not None), default=0)
    direct = any(R is None for R in factors)
    lcol = np.stack([np.asarray(sys[0], dtype=np.int64) for sys in systems])
    table = np.zeros((S, P, width))
    rank = np.full(S, -1, dtype=np.int64)
    ginv = np.zeros((S, P, P) if direct else (S, 1, 1))
    for s, ((_, Ginv, beta, _), R) in enumerate(zip(systems, factors, strict=True)):
        p = len(beta)
        table[s, :p, 0] = beta
        if R is None:
            ginv[s, :p, :p] = Ginv
        else:
            rank[s] = R.shape[1]
            table[s, :p, 1:1 + R.shape[1]] = R
    return LeafTables(lcol, table, rank, ginv, sigma2)


@njit(cache=True, nogil=True)
def _used_features(feat):
    """(m,) int64: per tree of one sample's ``feat`` (m, C), a bit set of the features its
    splits use (feature j as bit min(j, 63): beyond 63 features, bit 63 stands for all)."""
    m, C = feat.shape
    used = np.zeros(m, dtype=np.int64)
    for t in range(m):
        for k in range(C):
            if feat[t, k] >= 0:
                used[t] |= np.int64(1) << min(feat[t, k], 63)
    return used


@njit(cache=True, nogil=True)
def _changed(X, i):
    """Bit set of the features in which point i differs from point i - 1."""
    chg = np.int64(0)
    for j in range(X.shape[1]):
        if X[i, j] != X[i - 1, j]:
            chg |= np.int64(1) << min(j, 63)
    return chg


@njit(cache=True, nogil=True)
def _fresh(lcol, table, ginv, s, r, cols, acc):
    """Mean and the variance sum of sample s at leaf columns ``cols`` (m,), from scratch:
    (mu, q) with acc (1 + r,) filled (low-rank form, q unused) or q = phi^T Ginv phi (direct
    form, r = -1)."""
    m = cols.shape[0]
    mu = 0.0
    q = 0.0
    if r >= 0:
        for k in range(r + 1):
            acc[k] = 0.0
        for t in range(m):
            row = table[s, cols[t]]
            for k in range(r + 1):
                acc[k] += row[k]
        mu = acc[0]
    else:
        for t in range(m):
            mu += table[s, cols[t], 0]
            row = ginv[s, cols[t]]
            q += row[cols[t]]
            for u in range(t + 1, m):
                q += 2.0 * row[cols[u]]
    return mu, q


@njit(cache=True, nogil=True)
def _move(table, ginv, s, r, cols, t, b, acc, mu, q):
    """Tree t's leaf column goes from cols[t] to b: update (mu, q) and acc, set cols[t]."""
    a = cols[t]
    if r >= 0:
        ra, rb = table[s, a], table[s, b]
        for k in range(r + 1):
            acc[k] += rb[k] - ra[k]
        mu = acc[0]
    else:
        mu += table[s, b, 0] - table[s, a, 0]
        ga, gb = ginv[s, a], ginv[s, b]
        d = gb[b] - ga[a]
        for u in range(cols.shape[0]):
            if u != t:
                d += 2.0 * (gb[cols[u]] - ga[cols[u]])
        q += d
    cols[t] = b
    return mu, q


@njit(cache=True, nogil=True)
def library_moments(feat, thr, mask, left, right, kinds, tables, X, mu_sum, sd_sum, code, sign,
                    best, acq_sum):
    """Add every sample's mean and latent sd at the points ``X`` (n, D) to ``mu_sum`` and
    ``sd_sum`` (n,), and for a rule other than UCB (``code``, ``rules``) its value
    g(sign mu_s, sd_s; best[s]) to ``acq_sum`` (n,).

    Points in enumeration order share most trees' leaves with the point before: a tree is
    routed again only when a feature it splits on changed, and the sums are updated by the
    trees whose leaf moved (recomputed from scratch every ``REFRESH`` points, so round-off
    cannot build up).

    Args:
        feat, thr, mask, left, right: the posterior's forest arrays, (S, m, C[, W]).
        kinds: (D,) int64 feature kinds.
        tables: the samples' ``LeafTables``.
        X: (n, D) float64 encoded points.
        mu_sum, sd_sum: (n,) float64 accumulators: + sum_s mu_s(x), + sum_s sigma_s(x).
    """
    lcol, table, rank, ginv, sigma2 = tables
    S, m = feat.shape[0], feat.shape[1]
    acc = np.empty(table.shape[2])
    cols = np.empty(m, dtype=np.int64)
    for s in range(S):
        r = rank[s]
        f_s, t_s, k_s, l_s, r_s = feat[s], thr[s], mask[s], left[s], right[s]
        used = _used_features(f_s)
        mu = 0.0
        q = 0.0
        for i in range(X.shape[0]):
            x = X[i]
            if i % REFRESH == 0:
                for t in range(m):
                    cols[t] = lcol[s, t, route(f_s, t_s, k_s, l_s, r_s, kinds, t, x)]
                mu, q = _fresh(lcol, table, ginv, s, r, cols, acc)
            else:
                chg = _changed(X, i)
                for t in range(m):
                    if used[t] & chg:
                        b = lcol[s, t, route(f_s, t_s, k_s, l_s, r_s, kinds, t, x)]
                        if b != cols[t]:
                            mu, q = _move(table, ginv, s, r, cols, t, b, acc, mu, q)
            if r >= 0:
                var = 1.0
                for k in range(1, r + 1):
                    var -= acc[k] * acc[k]
            else:
                var = sigma2[s] * q
            sd = np.sqrt(max(var, 0.0))
            mu_sum[i] += mu
            sd_sum[i] += sd
            if code != UCB:
                acq_sum[i] += rule_value(code, sign * mu, sd, best[s])


def sample_moments(samples: dict[str, np.ndarray], kinds: np.ndarray, systems,
                   X: np.ndarray, low_rank: float = LOW_RANK) -> tuple[np.ndarray, np.ndarray]:
    """(1/S) sum_s mu_s(x) and (1/S) sum_s sigma_s(x) at ``X`` (n, D), (n,) each, from the
    leaf systems ``systems`` (``SampleSystems.systems``) of ``samples``."""
    mu, sd, _ = _sums(samples, kinds, systems, X, low_rank, UCB, 1.0, None)
    S = len(samples["sigma2"])
    return mu / S, sd / S


def sample_rule_values(samples: dict[str, np.ndarray], kinds: np.ndarray, systems,
                       X: np.ndarray, rule: Rule, sign: float, best: np.ndarray,
                       low_rank: float = LOW_RANK) -> np.ndarray:
    """(1/S) sum_s g(sign mu_s(x), sigma_s(x); best[s]) of a rule other than UCB at ``X``."""
    _, _, acq = _sums(samples, kinds, systems, X, low_rank, rule.code, sign, best)
    return acq / len(samples["sigma2"])


def _sums(samples, kinds, systems, X, low_rank, code, sign, best):
    tables = leaf_tables(samples, systems, low_rank)
    X = np.ascontiguousarray(X, dtype=np.float64)
    mu, sd, acq = np.zeros(len(X)), np.zeros(len(X)), np.zeros(len(X))
    best = (np.zeros(len(samples["sigma2"])) if best is None
            else np.ascontiguousarray(best, dtype=np.float64))
    library_moments(samples["feat"], samples["thr"], samples["mask"], samples["left"],
                    samples["right"], np.ascontiguousarray(kinds, dtype=np.int64), tables, X,
                    mu, sd, code, float(sign), best, acq)
    return mu, sd, acq


def _moments(post, sys_k, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sample_moments`` of one output's ``SampleSystems``; a smooth share's N-space systems
    have no leaf tables: the engine scores them (``predict_each``)."""
    if sys_k.smooth is not None:
        means, variances = sys_k.predict_each(X)
        return means.mean(axis=0), np.sqrt(variances).mean(axis=0)
    return sample_moments(post.samples, post.kinds, sys_k.systems, X)


def _channels(acq, moments: list, kappa: float) -> np.ndarray:
    """Channel values (n, C) from each output's (mean mu, mean sd)."""
    parts = []
    for c in acq.channels:
        mu, sd = moments[c.output]
        parts.append(c.sign * mu + kappa * sd)
    return np.stack(parts, axis=-1)


def _engine_channels(acq, systems: list, kappa: float, X: np.ndarray) -> np.ndarray:
    """The same channels from the engine's own prediction (``predict_each``)."""
    moments = []
    for sys_k in systems:
        means, variances = sys_k.predict_each(X)
        moments.append((means.mean(axis=0), np.sqrt(variances).mean(axis=0)))
    return _channels(acq, moments, kappa)


def optimize_library(library: Library, posteriors: dict, acq, space,
                     settings: AcquisitionSettings, pending: np.ndarray | None = None,
                     exclude: np.ndarray | None = None) -> AcquisitionResult:
    """The best point of a finite domain under the acquisition ``acq``, proven (gap 0).

    Args:
        library: the domain's feasible points (``build_library``).
        posteriors: output key -> ``engine.Posterior`` for every key of ``acq.keys``.
        acq: objectives, output limits and weights (``outputs.output_acquisition``; one
            Maximize/Minimize objective gives ``optimize_acquisition``'s integrated UCB).
        space: the domain's ``SplitSpace`` (decodes the candidate).
        settings: the strategy's ``AcquisitionSettings``; the enumeration reads its rule,
            kappa and ``output_limits`` (the rules ``rules.RULES``: "ei", "nei", "pi" take one
            Maximize/Minimize objective without output limits, "ehvi" and "nehvi" two or
            more, ``optimize.hypervolume``).
        pending: (n_p, D) encoded points every sample is conditioned on (believer).
        exclude: (n_e, D) encoded points never proposed (measured and pending ones); None:
            every feasible point may be proposed.

    Returns:
        ``AcquisitionResult`` with status "optimal", gap 0, bound = ucb, solver
        "enumeration" and ``nodes`` the number of points scored.

    Raises:
        LibraryExhaustedError: every feasible point is excluded.
        InfeasibleOutputLimitError: no point left can meet an output limit, even by its upper
            confidence bound.
    """
    t0 = time.perf_counter()
    rule, kappa = settings.rule, settings.kappa
    keep = ~library.excluded(exclude)
    if not keep.any():
        raise LibraryExhaustedError(
            f"Every one of the {len(library.X)} feasible points of the finite domain is already "
            "measured or pending: there is nothing new to propose. To propose a point again "
            "(a replicate), create the BARKStrategy with allow_repeats=True.")
    X = np.ascontiguousarray(library.X[keep])
    if pending is not None:
        pending = np.ascontiguousarray(pending, dtype=np.float64).reshape(-1, X.shape[1])
        pending = pending if len(pending) else None
    systems = [posteriors[key].systems(pending) for key in acq.keys]
    build_time = time.perf_counter() - t0
    t1 = time.perf_counter()
    if rule in HYPERVOLUME_RULES:
        values, rescore = _hypervolume_values(rule, acq, posteriors, systems, X, pending,
                                              kappa, settings.output_limits)
    elif rule != "ucb":
        values, rescore = _rule_values(Rule(rule, kappa), acq, posteriors, systems, X, pending)
    else:
        moments = [_moments(posteriors[key], sys_k, X)
                   for key, sys_k in zip(acq.keys, systems, strict=True)]
        values = acq.value(_channels(acq, moments, kappa))
        if not np.isfinite(values.max()):
            _raise_limits(acq, posteriors, _channels(acq, moments, kappa))

        def rescore(Xs):
            return acq.value(_engine_channels(acq, systems, kappa, Xs))
    best = float(values.max())
    # the points within round-off of the best, scored again by the engine
    near = np.flatnonzero(values >= best - RESCORE_RTOL * max(1.0, abs(best)))
    if len(near) > MAX_RESCORE:
        near = near[np.argsort(-values[near], kind="stable")[:MAX_RESCORE]]
        near.sort()
    exact = rescore(X[near])
    i = int(near[int(np.argmax(exact))])
    ucb = float(exact.max())
    solve_time = time.perf_counter() - t1
    x = X[i].copy()
    result = AcquisitionResult(
        candidate=space.decode(x[None, :]), x=x, objective=ucb, ucb=ucb, status="optimal",
        gap=0.0, bound=ucb, solver="enumeration", incumbent_ucb=float("nan"),
        build_time=build_time, solve_time=solve_time, incumbent_time=0.0, source="search",
        nodes=len(X), units="sd" if acq.single else "scalarized")
    logger.info("%s", result.summary())
    return result


def _rule_values(rule: Rule, acq, posteriors: dict, systems: list, X: np.ndarray, pending):
    """A rule's values at ``X`` for one Maximize/Minimize objective without limits, and the
    engine's scoring of the same (for the points near the best)."""
    if not acq.single or acq.limits or acq.goals[0].target is not None:
        raise ValueError(f"acquisition rule '{rule.name}': several objectives, CloseToTarget "
                         "objectives and output limits take the UCB rule")
    post, sys_k = posteriors[acq.keys[0]], systems[0]
    sign = float(acq.channels[acq.goals[0].plus].sign)
    best = rule.prepare(post, sys_k, sign, pending)
    values = (rule.score(sys_k, X, sign, best) if sys_k.smooth is not None
              else sample_rule_values(post.samples, post.kinds, sys_k.systems, X, rule, sign,
                                      best))
    return values, lambda Xs: rule.score(sys_k, Xs, sign, best)


def _hypervolume_values(rule: str, acq, posteriors: dict, systems: list, X: np.ndarray,
                        pending, kappa: float, output_limits: str):
    """The expected hypervolume improvement at ``X`` (optimistic limits: -inf where an output
    limit's channel, the UCB with ``kappa``, misses it; else weighed by the probability of
    meeting them), by the engine's per-sample predictions (``optimize.hypervolume``), and the
    same scoring."""
    from bofire_bark.optimize.hypervolume import CHUNK, build_hypervolume

    hv = build_hypervolume(acq, posteriors, systems, pending, noisy=rule == "nehvi",
                           output_limits=output_limits)

    def score(Xs):
        out = np.empty(len(Xs))
        for a in range(0, len(Xs), CHUNK):
            part = Xs[a:a + CHUNK]
            moments = [sys_k.predict_each(part) for sys_k in systems]
            if not hv.prunes:
                out[a:a + CHUNK] = hv.values(moments)
                continue
            ok = acq.slack(_engine_channels(acq, systems, kappa, part)) >= 0.0
            out[a:a + CHUNK] = np.where(ok, hv.values(moments), -np.inf)
        return out

    values = score(X)
    if not np.isfinite(values.max()):
        moments = [_moments(posteriors[key], sys_k, X)
                   for key, sys_k in zip(acq.keys, systems, strict=True)]
        _raise_limits(acq, posteriors, _channels(acq, moments, kappa))
    return values, score


def _raise_limits(acq, posteriors: dict, U: np.ndarray) -> None:
    """``InfeasibleOutputLimitError`` naming each limit with the best any point reaches."""
    missed = []
    for lim in acq.limits:
        top = float(U[:, lim.channel].max())
        if top < lim.required:
            post = posteriors[lim.key]
            best = post.y_mean + acq.channels[lim.channel].sign * post.y_std * top
            missed.append(f"{lim.text}: even the upper confidence bound reaches at best "
                          f"{best:.4g}")
    if not missed:
        missed = list(dict.fromkeys(lim.text for lim in acq.limits))  # Target: two sides
        missed[-1] += " (each reachable alone, not together at one point)"
    raise InfeasibleOutputLimitError(
        "No candidate of the finite domain can meet the output limit(s) under the model: "
        + "; ".join(missed) + ". Relax the limit, or tell the strategy experiments nearer to "
        "it.")
