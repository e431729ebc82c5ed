"""Several outputs in one acquisition: BoFire objectives as a monotone function of per-output
integrated UCBs.

Every modelled output k contributes one or two *channels*, each an integrated UCB in the
output's standardized units over its own posterior's S samples:

    U_k^+(x) = (1/S) sum_s [ mu_ks(x) + kappa sigma_ks(x)]   (how high y_k may be)
    U_k^-(x) = (1/S) sum_s [-mu_ks(x) + kappa sigma_ks(x)]   (how low y_k may be)

A channel is exactly what the single-output search maximizes (``sign`` +1 or -1), so the grid
branch-and-bound bounds every channel with the same kernel, and the acquisition below is a
nondecreasing function of the channels: an upper bound of each channel over a box gives an
upper bound of the acquisition, exact on a decided box.

Objectives (what BoFire's objective types become):

- ``MaximizeObjective`` / ``MinimizeObjective``: f_k = U_k^+ / U_k^- (the integrated UCB of
  the single-output strategy).
- ``CloseToTargetObjective``: f_k = -dist(t, [-U_k^-, U_k^+]), minus the distance of the target
  from the integrated confidence interval (0 when the interval holds the target). The exponent
  is not used: any power of the distance has the same maximizers of each objective.
- ``MaximizeSigmoidObjective`` (y >= tp), ``MinimizeSigmoidObjective`` (y <= tp) and
  ``TargetObjective`` (|y - target| <= tolerance) are *output limits*: constraints
  U_k^+ >= tp and U_k^- >= -tp, i.e. "the output may still meet its limit" (optimistic, as
  the UCB is). They join the same search as the domain's constraints: a box whose bound of
  U_k misses the limit is pruned. This is the optimistic choice; its alternatives are a
  pessimistic limit (the lower confidence bound meets it: safe, but it never explores near the
  limit) and a probability-of-feasibility weight (smooth, but it is a product with the
  objective and has no box bound as tight). The sigmoid's steepness is not used.

Several objectives are combined with weights w on the simplex (drawn afresh for every solve,
so successive asks and the members of a batch aim at different parts of the Pareto front), each
f_k normalized by the range of its observed values (0 = worst observed, 1 = best):

- ``"chebyshev"`` (augmented, as ParEGO and BoTorch's Chebyshev scalarization, which BoFire's
  ``QparegoStrategy`` uses): g = min_k w_k f~_k + rho sum_k w_k f~_k
- ``"weighted_sum"``: g = sum_k w_k f~_k with the objectives' ``w`` (normalized to sum 1).

With one objective g = f: the single-output acquisition, in standard deviations of the output.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from bofire.data_models.objectives.api import (
    CloseToTargetObjective,
    MaximizeObjective,
    MaximizeSigmoidObjective,
    MinimizeObjective,
    MinimizeSigmoidObjective,
    TargetObjective,
)

from bofire_bark.supported import SCALARIZATIONS

RHO = 0.05  # augmentation of the Chebyshev form: keeps its maximizers Pareto optimal


@dataclass(frozen=True)
class Channel:
    """One integrated UCB: output ``output`` (index into the posteriors), ``sign`` +1 for
    U^+ and -1 for U^-."""

    output: int
    sign: float


@dataclass(frozen=True)
class Goal:
    """One objective: f = U[plus] (``target`` None) or -dist(target, [-U[minus], U[plus]]);
    normalized f~ = (f - offset) / scale."""

    key: str
    plus: int
    minus: int
    target: float | None
    offset: float
    scale: float
    # the hypervolume's reference value, oriented (larger is better) and standardized; None:
    # inferred (``hypervolume.reference_point``)
    reference: float | None = None

    def value(self, U: np.ndarray) -> np.ndarray:
        if self.target is None:
            return U[..., self.plus]
        return -np.maximum(0.0, np.maximum(self.target - U[..., self.plus],
                                           -U[..., self.minus] - self.target))


@dataclass(frozen=True)
class Limit:
    """Output limit U[channel] >= required (standardized units); ``text`` names it for
    messages."""

    key: str
    channel: int
    required: float
    text: str


@dataclass(frozen=True)
class OutputAcquisition:
    """The acquisition over several outputs: channels, objectives, limits and the weights of
    this solve. ``value(U)`` maps channel values (..., C) to acquisition values (...,)."""

    keys: tuple[str, ...]
    channels: tuple[Channel, ...]
    goals: tuple[Goal, ...]
    limits: tuple[Limit, ...]
    weights: np.ndarray
    scalarization: str = "chebyshev"
    rho: float = RHO

    @property
    def single(self) -> bool:
        """One objective: g = f, in the output's standard deviations."""
        return len(self.goals) == 1

    def normalized(self, U: np.ndarray) -> np.ndarray:
        """f~ per goal, (..., K)."""
        return np.stack([(g.value(U) - g.offset) / g.scale for g in self.goals], axis=-1)

    def objective(self, U: np.ndarray) -> np.ndarray:
        """g without the limits."""
        U = np.asarray(U, dtype=np.float64)
        if self.single:
            return self.goals[0].value(U)
        f = self.normalized(U)
        if self.scalarization == "weighted_sum":
            return f @ self.weights
        wf = self.weights * f
        return wf.min(axis=-1) + self.rho * wf.sum(axis=-1)

    def slack(self, U: np.ndarray) -> np.ndarray:
        """min over limits of U[channel] - required (inf without limits), (...,)."""
        U = np.asarray(U, dtype=np.float64)
        out = np.full(U.shape[:-1], np.inf)
        for lim in self.limits:
            out = np.minimum(out, U[..., lim.channel] - lim.required)
        return out

    def value(self, U: np.ndarray, tol: float = 0.0) -> np.ndarray:
        """g, or -inf where an output limit fails (by more than ``tol``)."""
        g = self.objective(U)
        return np.where(self.slack(U) >= -tol, g, -np.inf)

    def channel_weights(self, U: np.ndarray) -> np.ndarray:
        """A supergradient of g at U per channel (C,): where branching helps the bound most."""
        U = np.asarray(U, dtype=np.float64)
        w = np.zeros(len(self.channels))
        if self.single:
            mult = np.ones(1)
        else:
            f = self.normalized(U)
            if self.scalarization == "weighted_sum":
                mult = self.weights.copy()
            else:
                k = int(np.argmin(self.weights * f))
                mult = self.rho * self.weights
                mult[k] += self.weights[k]
        for k, g in enumerate(self.goals):
            d = mult[k] / g.scale
            if g.target is None:
                w[g.plus] += d
                continue
            below, above = g.target - U[g.plus], -U[g.minus] - g.target
            if below > 0 and below >= above:
                w[g.plus] += d
            elif above > 0:
                w[g.minus] += d
        return w


def objective_outputs(domain) -> list:
    """The outputs with a goal or limit objective, in the domain's order (the modelled ones)."""
    return [f for f in domain.outputs.get() if f.objective is not None]


def draw_weights(n: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform on the simplex (flat Dirichlet)."""
    w = rng.exponential(size=n)
    return w / w.sum()


def output_acquisition(domain, posteriors: dict, weights: np.ndarray | None = None,
                       scalarization: str = "chebyshev",
                       reference: dict[str, float] | None = None) -> OutputAcquisition:
    """The acquisition of a domain's objectives over fitted posteriors.

    Args:
        domain: BoFire domain; its outputs with objectives are the modelled ones.
        posteriors: output key -> ``engine.Posterior`` (standardized y, ``y_mean``, ``y_std``).
        weights: one per goal on the simplex (``"chebyshev"``); None: equal weights. Ignored
            for ``"weighted_sum"``, which uses the objectives' ``w``.
        scalarization: "chebyshev" or "weighted_sum".
        reference: the hypervolume's reference point, output key -> value in the output's
            units for every Maximize / Minimize objective (None: inferred).
    """
    if scalarization not in SCALARIZATIONS:
        raise ValueError(f"scalarization must be one of {SCALARIZATIONS}, got "
                         f"{scalarization!r}")
    feats = objective_outputs(domain)
    keys = tuple(f.key for f in feats)
    channels: list[Channel] = []

    def channel(k: int, sign: float) -> int:
        c = Channel(k, sign)
        if c not in channels:
            channels.append(c)
        return channels.index(c)

    goal_keys = sorted(f.key for f in feats if type(f.objective) in (MaximizeObjective,
                                                                     MinimizeObjective))
    if reference is not None and sorted(reference) != goal_keys:
        raise ValueError(f"reference point: keys {sorted(reference)} do not match the "
                         f"Maximize / Minimize objectives {goal_keys}")
    goals, limits, ws = [], [], []
    for k, feat in enumerate(feats):
        post = posteriors[feat.key]
        obj = feat.objective

        def std(v, post=post):
            return (float(v) - post.y_mean) / post.y_std

        y = np.asarray(post.y, dtype=np.float64)
        if type(obj) in (MaximizeObjective, MinimizeObjective):
            sign = 1.0 if type(obj) is MaximizeObjective else -1.0
            goal = _goal(feat.key, channel(k, sign), -1, None, sign * y)
            if reference is not None:
                goal = replace(goal, reference=sign * std(reference[feat.key]))
            goals.append(goal)
            ws.append(obj.w)
        elif type(obj) is CloseToTargetObjective:
            t = std(obj.target_value)
            goals.append(_goal(feat.key, channel(k, 1.0), channel(k, -1.0), t, -np.abs(y - t)))
            ws.append(obj.w)
        elif type(obj) is MaximizeSigmoidObjective:
            limits.append(Limit(feat.key, channel(k, 1.0), std(obj.tp),
                                f"'{feat.key}' >= {obj.tp:g} (MaximizeSigmoidObjective)"))
        elif type(obj) is MinimizeSigmoidObjective:
            limits.append(Limit(feat.key, channel(k, -1.0), -std(obj.tp),
                                f"'{feat.key}' <= {obj.tp:g} (MinimizeSigmoidObjective)"))
        elif type(obj) is TargetObjective:
            lo, hi = obj.target_value - obj.tolerance, obj.target_value + obj.tolerance
            text = f"{lo:g} <= '{feat.key}' <= {hi:g} (TargetObjective)"
            limits.append(Limit(feat.key, channel(k, 1.0), std(lo), text))
            limits.append(Limit(feat.key, channel(k, -1.0), -std(hi), text))
        else:
            raise ValueError(f"output '{feat.key}': BARK does not support "
                             f"{type(obj).__name__}")
    if not goals:
        raise ValueError("BARK needs at least one output with a MaximizeObjective, "
                         "MinimizeObjective or CloseToTargetObjective; sigmoid and target "
                         "objectives are output limits")
    if len(goals) == 1:
        goals = [Goal(goals[0].key, goals[0].plus, goals[0].minus, goals[0].target, 0.0, 1.0)]
        w = np.ones(1)
    elif scalarization == "weighted_sum":
        w = np.asarray(ws, dtype=np.float64) / np.sum(ws)
    else:
        w = (np.full(len(goals), 1.0 / len(goals)) if weights is None
             else np.asarray(weights, dtype=np.float64))
        if w.shape != (len(goals),) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
            raise ValueError(f"weights must be {len(goals)} nonnegative numbers summing to 1")
    return OutputAcquisition(keys, tuple(channels), tuple(goals), tuple(limits), w,
                             scalarization)


def _goal(key, plus, minus, target, observed) -> Goal:
    """Normalized by the observed range (0 worst, 1 best); a flat range keeps scale 1."""
    lo, hi = float(np.min(observed)), float(np.max(observed))
    return Goal(key, plus, minus, target, lo, hi - lo if hi - lo > 1e-12 else 1.0)
