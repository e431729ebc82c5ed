"""From a MIP solution to an encoded point that routes exactly as the solution's leaves.

Continuous features: the split binaries nu pick a threshold interval (t_{i-1}, t_i]; the
solver's x (accurate to its feasibility tolerance) is moved into that interval, strictly above
t_{i-1}, so that the engine routes it into the leaves the MIP chose. Inactive semicontinuous or
NChooseK features become exactly 0. Discrete and categorical features take the index of their
one-hot.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from bofire_bark.optimize.ensemble import CONTINUOUS, DISCRETE
from bofire_bark.optimize.problem import AcquisitionProblem


def _val(var) -> float:
    v = var.value
    return 0.0 if v is None else float(v)


def solution_x(m: pyo.ConcreteModel, problem: AcquisitionProblem) -> np.ndarray:
    """Encoded point (D,) of the solution loaded in ``m``."""
    box, ens = problem.box, problem.ensemble
    x = np.empty(box.n_features)
    for j in range(box.n_features):
        kind = box.kinds[j]
        if kind == CONTINUOUS:
            x[j] = _continuous(m, box, ens.thresholds[j], j)
        else:
            codes = range(len(box.values[j])) if kind == DISCRETE else box.allowed[j]
            x[j] = float(max(codes, key=lambda k: _val(m.w[j, k])))
    return x


def _continuous(m, box, thresholds, j) -> float:
    lo, hi = float(box.lower[j]), float(box.upper[j])
    xj = min(max(_val(m.x[j]), lo), hi)
    active = [m.b[j]] if j in m.b.index_set() else []
    if j in m.b_nck.index_set():
        active.append(m.b_nck[j])
    if any(_val(b) < 0.5 for b in active):
        return 0.0
    if box.semicontinuous[j] and active:
        lo = float(box.active_lower[j])
        xj = max(xj, lo)
    k = len(thresholds)
    i = sum(_val(m.nu[j, q]) < 0.5 for q in range(k))  # number of thresholds below x
    if i > 0 and xj <= thresholds[i - 1]:
        xj = float(np.nextafter(thresholds[i - 1], np.inf))
    if i < k and xj > thresholds[i]:
        xj = float(thresholds[i])
    return xj
