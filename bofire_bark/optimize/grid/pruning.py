"""Domain constraints on boxes and points: interval tests that drop a box only when no point of
it can satisfy them (linear: the range of the left-hand side; NChooseK: counts of features
that must or may be active; nonlinear: interval arithmetic on the expression), and the exact
check of a point.
"""

from __future__ import annotations

import math

import numpy as np

from bofire_bark.optimize.constraints import feature_values
from bofire_bark.optimize.ensemble import InputBox
from bofire_bark.optimize.specs import LinearSpec, NChooseKSpec, NonlinearSpec

# Feasibility tolerance of the specs check (BoFire's is_fulfilled uses 1e-6; the final
# candidate is checked by BoFire itself).
TOL = 1e-7


# Slack of interval pruning: a box is dropped only when its constraint range misses the
# feasible side by more than this (round-off of the interval arithmetic).
PRUNE_TOL = 1e-7


def _interval(expr: tuple, vlo, vhi) -> tuple[float, float]:
    """Range of an expression tree over the box [vlo, vhi] (outer bound; NaN-free)."""
    op = expr[0]
    if op == "const":
        return float(expr[1]), float(expr[1])
    if op == "var":
        return float(vlo[expr[1]]), float(vhi[expr[1]])
    if op == "add":
        lo = hi = 0.0
        for a in expr[1:]:
            a_lo, a_hi = _interval(a, vlo, vhi)
            lo, hi = lo + a_lo, hi + a_hi
        return lo, hi
    if op == "mul":
        lo = hi = 1.0
        for a in expr[1:]:
            a_lo, a_hi = _interval(a, vlo, vhi)
            prods = [_mul(p, q) for p in (lo, hi) for q in (a_lo, a_hi)]
            lo, hi = min(prods), max(prods)
        return lo, hi
    if op == "pow":
        b_lo, b_hi = _interval(expr[1], vlo, vhi)
        if expr[2][0] != "const":
            return -math.inf, math.inf
        return _pow(b_lo, b_hi, float(expr[2][1]))
    return _func(expr[1], *_interval(expr[2], vlo, vhi))


def _mul(a: float, b: float) -> float:
    if a == 0.0 or b == 0.0:
        return 0.0
    return a * b


def _pow(lo: float, hi: float, e: float) -> tuple[float, float]:
    if e == 0.0:
        return 1.0, 1.0
    if not float(e).is_integer():
        # real powers need a base >= 0 (elsewhere the expression is NaN: not feasible)
        lo = max(lo, 0.0)
        if hi < 0.0:
            return math.inf, -math.inf
    if e < 0 and lo <= 0.0 <= hi:
        return -math.inf, math.inf
    cands = [_safe_pow(lo, e), _safe_pow(hi, e)]
    out_lo, out_hi = min(cands), max(cands)
    if float(e).is_integer() and int(e) % 2 == 0 and lo < 0.0 < hi:
        out_lo = 0.0
    return out_lo, out_hi


def _safe_pow(x: float, e: float) -> float:
    try:
        return float(x**e)
    except (OverflowError, ZeroDivisionError):
        return math.inf


_INCREASING = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt, "tanh": math.tanh,
               "atan": math.atan, "sinh": math.sinh, "asin": math.asin, "log10": math.log10}


_DOMAIN = {"log": (0.0, math.inf), "log10": (0.0, math.inf), "sqrt": (0.0, math.inf),
           "asin": (-1.0, 1.0), "acos": (-1.0, 1.0)}


def _func(name: str, lo: float, hi: float) -> tuple[float, float]:
    if name in _DOMAIN:
        d_lo, d_hi = _DOMAIN[name]
        lo, hi = max(lo, d_lo), min(hi, d_hi)
        if lo > hi:
            return math.inf, -math.inf  # empty: the expression is undefined on the box
    if name in _INCREASING:
        f = _INCREASING[name]
        return _guard(f, lo, -math.inf), _guard(f, hi, math.inf)
    if name == "acos":
        return math.acos(hi), math.acos(lo)
    if name == "abs":
        if lo >= 0:
            return lo, hi
        if hi <= 0:
            return -hi, -lo
        return 0.0, max(-lo, hi)
    if name == "cosh":
        top = max(_guard(math.cosh, lo, math.inf), _guard(math.cosh, hi, math.inf))
        return (1.0 if lo <= 0.0 <= hi else min(math.cosh(lo), math.cosh(hi))), top
    if name in ("sin", "cos"):
        return _periodic(name, lo, hi)
    return -math.inf, math.inf


def _periodic(name: str, lo: float, hi: float) -> tuple[float, float]:
    """Range of sin or cos on [lo, hi]: the endpoint values, widened to 1 (-1) where a
    maximum (minimum) lies inside; cos(x) = sin(x + pi/2)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo >= 2.0 * math.pi:
        return -1.0, 1.0
    shift = 0.5 * math.pi if name == "cos" else 0.0
    a, b = lo + shift, hi + shift
    vals = (math.sin(a), math.sin(b))
    top, bottom = max(vals), min(vals)
    # sin peaks at pi/2 + 2 k pi and bottoms at -pi/2 + 2 k pi
    if math.floor((b - 0.5 * math.pi) / (2.0 * math.pi)) >= math.ceil(
            (a - 0.5 * math.pi) / (2.0 * math.pi)):
        top = 1.0
    if math.floor((b + 0.5 * math.pi) / (2.0 * math.pi)) >= math.ceil(
            (a + 0.5 * math.pi) / (2.0 * math.pi)):
        bottom = -1.0
    return bottom, top


def _guard(f, x: float, fallback: float) -> float:
    try:
        return float(f(x))
    except (OverflowError, ValueError):
        return fallback


class Constraints:
    """Interval pruning of boxes and exact checks of points for the domain's specs."""

    def __init__(self, specs: tuple, box: InputBox, delta: np.ndarray):
        self.specs = specs
        self.box = box
        self.delta = delta
        self.linear = [s for s in specs if isinstance(s, LinearSpec)]
        self.nck = [s for s in specs if isinstance(s, NChooseKSpec)]
        self.nonlinear = [s for s in specs if isinstance(s, NonlinearSpec)]

    def __bool__(self) -> bool:
        return bool(self.specs) or bool(self.box.semicontinuous.any())

    def _semi(self, vlo, vhi) -> tuple[np.ndarray, np.ndarray, bool]:
        """Tighten semicontinuous ranges ({0} u [lb, ub]); False when a range is empty."""
        box = self.box
        for j in np.flatnonzero(box.semicontinuous):
            lb = box.active_lower[j]
            has_zero = vlo[j] <= 0.0
            has_active = vhi[j] >= lb - TOL
            if not (has_zero or has_active):
                return vlo, vhi, False
            if not has_zero:
                vlo[j] = max(vlo[j], lb)
            elif not has_active:
                vhi[j] = 0.0
        return vlo, vhi, True

    def may_be_feasible(self, vlo, vhi) -> bool:
        """False only when no point of the box [vlo, vhi] satisfies the constraints."""
        vlo, vhi, ok = self._semi(vlo.copy(), vhi.copy())
        if not ok:
            return False
        for spec in self.linear:
            a = np.asarray(spec.coefficients)
            idx = list(spec.features)
            lo = float(np.sum(np.where(a > 0, a * vlo[idx], a * vhi[idx])))
            hi = float(np.sum(np.where(a > 0, a * vhi[idx], a * vlo[idx])))
            scale = PRUNE_TOL * (1.0 + abs(spec.rhs))
            if lo > spec.rhs + scale or (spec.equality and hi < spec.rhs - scale):
                return False
        for spec in self.nck:
            idx = list(spec.features)
            must = int(np.sum((vlo[idx] > 0.0) | (vhi[idx] < 0.0)))
            may = int(np.sum((vhi[idx] > 0.0) | (vlo[idx] < 0.0)))
            if must > spec.max_count:
                return False
            if may < spec.min_count and not (spec.none_also_valid and must == 0):
                return False
        for spec in self.nonlinear:
            lo, hi = _interval(spec.expr, vlo, vhi)
            if lo > hi:  # undefined everywhere on the box
                return False
            if lo > PRUNE_TOL or (spec.equality and hi < -PRUNE_TOL):
                return False
        return True

    def satisfied(self, x: np.ndarray) -> bool:
        """Whether an encoded point satisfies every spec (values of discrete features)."""
        from bofire_bark.expressions import evaluate

        box = self.box
        v = feature_values(x[None, :], box)[0]
        for j in np.flatnonzero(box.semicontinuous):
            if v[j] != 0.0 and v[j] < box.active_lower[j] - TOL:
                return False
        for spec in self.linear:
            lhs = float(np.dot(spec.coefficients, v[list(spec.features)]))
            err = lhs - spec.rhs
            if err > TOL or (spec.equality and err < -TOL):
                return False
        for spec in self.nck:
            count = int(np.sum(np.abs(v[list(spec.features)]) > 1e-6))
            if not (spec.min_count <= count <= spec.max_count
                    or (spec.none_also_valid and count == 0)):
                return False
        for spec in self.nonlinear:
            try:
                with np.errstate(all="ignore"):
                    val = evaluate(spec.expr, v)
            except (ValueError, OverflowError, ZeroDivisionError):
                return False
            if not np.isfinite(val) or val > TOL or (spec.equality and val < -TOL):
                return False
        return True
