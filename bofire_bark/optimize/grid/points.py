"""Points in boxes: the centre of a box, and a feasible point of a decided box under domain
constraints (the centre, then a small MILP over the box for linear and NChooseK constraints,
scipy's HiGHS, then random points for nonlinear ones).
"""

from __future__ import annotations

import math

import numpy as np

from bofire_bark.optimize.ensemble import CATEGORICAL, CONTINUOUS, DISCRETE
from bofire_bark.optimize.grid.boxes import Grid
from bofire_bark.optimize.grid.pruning import Constraints


def _point_ranges(grid: Grid, lo, hi, cat):
    """Per ordered feature the closed range of encoded values that stay in the box's cells:
    continuous [t_{a-1} + margin, t_b], discrete index range; categorical: allowed codes."""
    box = grid.box
    xlo = np.zeros(grid.d)
    xhi = np.zeros(grid.d)
    codes = [None] * grid.d
    for j in range(grid.d):
        kind = box.kinds[j]
        t = grid.gm.thresholds[j]
        a, b = lo[j], hi[j]
        if kind == CONTINUOUS:
            xlo[j] = box.lower[j] if a == 0 else min(t[a - 1] + box.margin[j],
                                                     0.5 * (t[a - 1] + (box.upper[j] if b ==
                                                                         len(t) else t[b])))
            xhi[j] = box.upper[j] if b == len(t) else t[b]
        elif kind == DISCRETE:
            xlo[j] = 0 if a == 0 else math.floor(t[a - 1]) + 1
            xhi[j] = len(box.values[j]) - 1 if b == len(t) else math.floor(t[b])
        else:
            words = cat[j]
            codes[j] = [c for c in box.allowed[j]
                        if int(words[c >> 6]) >> (c & 63) & 1]
    return xlo, xhi, codes


def centre(grid: Grid, lo, hi, cat) -> np.ndarray:
    """A point of the box: middle of each range, the first allowed category."""
    box = grid.box
    xlo, xhi, codes = _point_ranges(grid, lo, hi, cat)
    x = 0.5 * (xlo + xhi)
    for j in range(grid.d):
        if box.kinds[j] == DISCRETE:
            x[j] = math.floor(x[j])
        elif box.kinds[j] == CATEGORICAL:
            x[j] = codes[j][0]
        elif box.semicontinuous[j] and 0.0 < x[j] < box.active_lower[j]:
            x[j] = box.active_lower[j] if xhi[j] >= box.active_lower[j] else 0.0
    return x


def milp_point(grid: Grid, cons: Constraints, lo, hi, cat) -> tuple[np.ndarray | None, bool]:
    """A point of the box satisfying the linear and NChooseK specs, by a small MILP.

    Returns (point or None, proven_empty): ``proven_empty`` when the MILP is infeasible (the
    box holds no point satisfying those specs, so none satisfying all of them).
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    box = grid.box
    xlo, xhi, codes = _point_ranges(grid, lo, hi, cat)
    d = grid.d
    # variables: x_j (continuous value or discrete index relaxed by one-hots), binaries
    cols_lo, cols_hi, integrality = [], [], []
    value_of: dict[int, list[tuple[int, float]]] = {}  # discrete j -> (column, value)
    for j in range(d):
        cols_lo.append(xlo[j] if box.kinds[j] == CONTINUOUS else 0.0)
        cols_hi.append(xhi[j] if box.kinds[j] == CONTINUOUS else 0.0)
        integrality.append(0)
    rows, row_lo, row_hi = [], [], []

    def new_col(lo_, hi_, integer):
        cols_lo.append(lo_)
        cols_hi.append(hi_)
        integrality.append(int(integer))
        return len(cols_lo) - 1

    for j in range(d):
        if box.kinds[j] == DISCRETE:
            ks = range(int(xlo[j]), int(xhi[j]) + 1)
            value_of[j] = [(new_col(0.0, 1.0, True), float(box.values[j][k])) for k in ks]
            onehot = {c: 1.0 for c, _ in value_of[j]}
            rows.append(onehot)
            row_lo.append(1.0)
            row_hi.append(1.0)

    def value_terms(j, a):
        if box.kinds[j] == DISCRETE:
            return {c: a * v for c, v in value_of[j]}
        return {j: a}

    for spec in cons.linear:
        row: dict[int, float] = {}
        for j, a in zip(spec.features, spec.coefficients, strict=True):
            for c, v in value_terms(j, float(a)).items():
                row[c] = row.get(c, 0.0) + v
        rows.append(row)
        row_lo.append(spec.rhs if spec.equality else -np.inf)
        row_hi.append(spec.rhs)
    active: dict[int, int] = {}
    for j in {j for spec in cons.nck for j in spec.features} | set(
            np.flatnonzero(box.semicontinuous)):
        # value <= hi b, value >= delta b (lb b when semicontinuous); b = 0 forces value 0
        b = new_col(0.0, 1.0, True)
        active[j] = b
        floor = box.active_lower[j] if box.semicontinuous[j] else cons.delta[j]
        up = {**value_terms(j, 1.0)}
        up[b] = up.get(b, 0.0) - max(xhi[j] if box.kinds[j] == CONTINUOUS else
                                     float(np.max(box.values[j])), 0.0)
        rows.append(up)
        row_lo.append(-np.inf)
        row_hi.append(0.0)
        dn = {**value_terms(j, 1.0)}
        dn[b] = dn.get(b, 0.0) - floor
        rows.append(dn)
        row_lo.append(0.0 if box.kinds[j] == CONTINUOUS and xlo[j] >= 0 else -np.inf)
        row_hi.append(np.inf)
    for spec in cons.nck:
        row = {active[j]: 1.0 for j in spec.features}
        if spec.none_also_valid and spec.min_count > 0:
            anyb = new_col(0.0, 1.0, True)
            rows.append({**row, anyb: -float(spec.min_count)})
            row_lo.append(0.0)
            row_hi.append(np.inf)
            rows.append({**row, anyb: -float(spec.max_count)})
            row_lo.append(-np.inf)
            row_hi.append(0.0)
        else:
            rows.append(row)
            row_lo.append(float(spec.min_count))
            row_hi.append(float(spec.max_count))
    n = len(cols_lo)
    A = np.zeros((len(rows), n))
    for r, row in enumerate(rows):
        for c, v in row.items():
            A[r, c] = v
    cons_ = [LinearConstraint(A, row_lo, row_hi)] if rows else []
    res = milp(np.zeros(n), constraints=cons_, integrality=np.array(integrality),
               bounds=Bounds(np.array(cols_lo), np.array(cols_hi)),
               options={"time_limit": 2.0})
    if res.status == 2:  # infeasible
        return None, True
    if res.x is None:
        return None, False
    x = centre(grid, lo, hi, cat)
    for j in range(d):
        if box.kinds[j] == CONTINUOUS:
            x[j] = float(np.clip(res.x[j], xlo[j], xhi[j]))
            if j in active and res.x[active[j]] < 0.5:
                x[j] = 0.0
        elif box.kinds[j] == DISCRETE:
            x[j] = int(xlo[j]) + int(np.argmax([res.x[c] for c, _ in value_of[j]]))
    return x, False


def box_point(grid: Grid, cons: Constraints, lo, hi, cat, rng) -> tuple[np.ndarray | None,
                                                                          bool]:
    """A feasible point of a box, or None; and whether the box is proven to hold none."""
    x = centre(grid, lo, hi, cat)
    if not cons or cons.satisfied(x):
        return x, False
    if cons.linear or cons.nck or cons.box.semicontinuous.any():
        x, empty = milp_point(grid, cons, lo, hi, cat)
        if empty:
            return None, True
        if x is not None and cons.satisfied(x):
            return x, False
    if cons.nonlinear:
        xlo, xhi, codes = _point_ranges(grid, lo, hi, cat)
        X = rng.uniform(xlo, xhi, size=(64, grid.d))
        for j in range(grid.d):
            if grid.box.kinds[j] == DISCRETE:
                X[:, j] = rng.integers(int(xlo[j]), int(xhi[j]) + 1, 64)
            elif grid.box.kinds[j] == CATEGORICAL:
                X[:, j] = codes[j][0]
        for x in X:
            if cons.satisfied(x):
                return x, False
        # a nonlinear inequality tight at the bounds leaves one face or corner feasible
        # (x * z >= 1 on [0, 1]^2), which random points never hit: try the box's
        # faces through the centre and its two extreme corners, after the draws above so
        # that the random stream of every other box is unchanged
        x0 = centre(grid, lo, hi, cat)
        ordered = [j for j in range(grid.d) if grid.box.kinds[j] != CATEGORICAL]
        for end in (xlo, xhi):
            corner = x0.copy()
            corner[ordered] = end[ordered]
            if cons.satisfied(corner):
                return corner, False
            for j in ordered:
                face = x0.copy()
                face[j] = end[j]
                if cons.satisfied(face):
                    return face, False
    return None, False
