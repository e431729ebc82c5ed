"""The starting incumbent: the best of many feasible points, improved by coordinate ascent.

Points are drawn in the encoded space (continuous uniform in bounds, semicontinuous zero with
probability 1/2, discrete and categorical uniform over values / allowed categories), thinned to
satisfy NChooseK counts, moved towards linear constraints by alternating projections (onto each
violated hyperplane or half-space, then the box), and kept when BoFire says they fulfil every
constraint. Every point is scored with the engine's own integrated UCB, so the MIP's answer is
never worse than this sample.

Coordinate ascent from the best few points tries, per feature, one point in every interval
between consecutive thresholds (the midpoint; all values / allowed categories for discrete and
categorical features) and keeps the best feasible move; a few sweeps. Under a linear equality
(fractions summing to one) no single feature can move, so each sweep also tries pair moves
within every equality: one continuous feature to a value, another making up the difference,
or taking over all of it (an ingredient swapped for another under NChooseK).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from bofire_bark.optimize.ensemble import CATEGORICAL, CONTINUOUS, DISCRETE, InputBox
from bofire_bark.optimize.specs import LinearSpec, NChooseKSpec
from bofire_bark.settings import AcquisitionSettings


def random_points(box: InputBox, specs: tuple, n: int, delta: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
    """(n, D) encoded points within the box, NChooseK-thinned, projected towards linear
    constraints (not yet checked)."""
    d = box.n_features
    X = np.empty((n, d))
    for j in range(d):
        kind = box.kinds[j]
        if kind == CONTINUOUS:
            lo = box.active_lower[j] if box.semicontinuous[j] else box.lower[j]
            X[:, j] = rng.uniform(lo, box.upper[j], n)
            if box.semicontinuous[j]:
                X[rng.random(n) < 0.5, j] = 0.0
        elif kind == DISCRETE:
            X[:, j] = rng.integers(0, len(box.values[j]), n)
        else:
            X[:, j] = rng.choice(np.asarray(box.allowed[j], dtype=np.float64), n)
    for spec in specs:
        if isinstance(spec, NChooseKSpec):
            _thin(X, spec, delta, rng)
    linear = [s for s in specs if isinstance(s, LinearSpec)]
    if linear:
        _project(X, box, linear)
    return X


def _thin(X: np.ndarray, spec: NChooseKSpec, delta: np.ndarray, rng) -> None:
    feats = np.array(spec.features)
    counts = list(range(spec.min_count, spec.max_count + 1))
    if spec.none_also_valid and 0 not in counts:
        counts.append(0)
    for row in X:
        c = int(rng.choice(counts))
        keep = rng.permutation(feats)[:c]
        drop = np.setdiff1d(feats, keep)
        row[drop] = 0.0
        row[keep] = np.maximum(row[keep], delta[keep])


def _project(X: np.ndarray, box: InputBox, specs: list[LinearSpec], sweeps: int = 60) -> None:
    """Alternating projections of the continuous coordinates onto violated linear constraints
    and the box (discrete values enter through their value, kept fixed)."""
    lo = np.where(box.semicontinuous, box.active_lower, box.lower)
    for _ in range(sweeps):
        for spec in specs:
            idx = np.array(spec.features)
            a = np.array(spec.coefficients)
            cont = np.array([box.kinds[j] == CONTINUOUS for j in idx])
            if not cont.any():
                continue
            vals = np.column_stack([_values(X, box, j) for j in idx])
            r = vals @ a - spec.rhs
            if not spec.equality:
                r = np.maximum(r, 0.0)
            free = cont[None, :] & ~((X[:, idx] == 0.0) & box.semicontinuous[idx][None, :])
            ac = np.where(free, a[None, :], 0.0)
            norm = (ac**2).sum(axis=1)
            step = np.where(norm > 0, r / np.where(norm > 0, norm, 1.0), 0.0)
            X[:, idx] -= step[:, None] * ac
        for j in range(box.n_features):
            if box.kinds[j] == CONTINUOUS:
                zero = X[:, j] == 0.0
                X[:, j] = np.clip(X[:, j], lo[j], box.upper[j])
                if box.semicontinuous[j]:
                    X[zero, j] = 0.0


def _values(X: np.ndarray, box: InputBox, j: int) -> np.ndarray:
    if box.kinds[j] == DISCRETE:
        return box.values[j][np.rint(X[:, j]).astype(np.int64)]
    return X[:, j]


def move_values(box: InputBox, thresholds: tuple[np.ndarray, ...], j: int) -> np.ndarray:
    """Candidate values of feature j for coordinate ascent: one per threshold interval."""
    kind = box.kinds[j]
    if kind == CATEGORICAL:
        return np.asarray(box.allowed[j], dtype=np.float64)
    if kind == DISCRETE:
        return np.arange(len(box.values[j]), dtype=np.float64)
    lo = box.active_lower[j] if box.semicontinuous[j] else box.lower[j]
    t = thresholds[j]
    edges = np.unique(np.concatenate(([lo], t[(t > lo) & (t < box.upper[j])], [box.upper[j]])))
    mids = 0.5 * (edges[:-1] + edges[1:]) if len(edges) > 1 else edges
    if box.lower[j] == 0.0:  # zero itself: inactive for NChooseK / semicontinuous features
        mids = np.append(mids, 0.0)
    return mids


# Values tried per (feature, partner) pair of a pair move: pairs are many (30 for six
# fractions), so each takes an evenly spaced subset of the feature's move values.
PAIR_MOVES = 16


def coordinate_ascent(x: np.ndarray, value: float, box: InputBox,
                      thresholds: tuple[np.ndarray, ...],
                      score: Callable[[np.ndarray], np.ndarray],
                      feasible: Callable[[np.ndarray], np.ndarray],
                      sweeps: int = 3, max_moves: int | None = None,
                      specs: tuple = ()) -> tuple[np.ndarray, float]:
    """Best single-feature moves, ``sweeps`` times over all features (at most ``max_moves``
    evenly spaced values per feature when given), and the pair moves of the linear equalities
    among ``specs`` (``pair_moves``)."""
    x = x.copy()
    pairs = [(j, k, a_j, a_k) for spec in specs
             if isinstance(spec, LinearSpec) and spec.equality
             for j, a_j in zip(spec.features, spec.coefficients, strict=True)
             for k, a_k in zip(spec.features, spec.coefficients, strict=True)
             if j != k and a_k != 0.0 and box.kinds[j] == CONTINUOUS
             and box.kinds[k] == CONTINUOUS]

    def best_of(X, x, value):
        X = X[feasible(X)]
        if len(X) == 0:
            return x, value, False
        s = score(X)
        best = int(np.argmax(s))
        if s[best] > value + 1e-12:
            return X[best].copy(), float(s[best]), True
        return x, value, False

    for _ in range(sweeps):
        improved = False
        for j in range(box.n_features):
            vals = move_values(box, thresholds, j)
            if max_moves is not None and len(vals) > max_moves:
                vals = vals[np.linspace(0, len(vals) - 1, max_moves).round().astype(np.int64)]
            X = np.repeat(x[None, :], len(vals), axis=0)
            X[:, j] = vals
            x, value, moved = best_of(X, x, value)
            improved |= moved
        if pairs:
            x, value, moved = best_of(pair_moves(x, box, thresholds, pairs), x, value)
            improved |= moved
        if not improved:
            break
    return x, value


def pair_moves(x: np.ndarray, box: InputBox, thresholds: tuple[np.ndarray, ...],
               pairs: list[tuple[int, int, float, float]]) -> np.ndarray:
    """The points one pair move away from ``x`` (not yet checked): for each (j, k, a_j, a_k)
    of a linear equality, feature j at up to ``PAIR_MOVES`` of its move values with
    x_k - a_j (v - x_j) / a_k keeping the equality, and j taking over all of k (x_k = 0)."""
    rows = []
    for j, k, a_j, a_k in pairs:
        vals = move_values(box, thresholds, j)
        if len(vals) > PAIR_MOVES:
            vals = vals[np.linspace(0, len(vals) - 1, PAIR_MOVES).round().astype(np.int64)]
        if a_j != 0.0:
            vals = np.append(vals, x[j] + a_k * x[k] / a_j)  # k's share handed to j
        X = np.repeat(x[None, :], len(vals), axis=0)
        X[:, j] = vals
        X[:, k] = x[k] - a_j * (vals - x[j]) / a_k
        if a_j != 0.0:
            X[-1, k] = 0.0
        # within the bounds exactly (BoFire checks them without a tolerance): rounding is
        # clipped, a move past a bound dropped
        lo, hi = box.lower[[j, k]], box.upper[[j, k]]
        inside = ((X[:, [j, k]] >= lo - 1e-9) & (X[:, [j, k]] <= hi + 1e-9)).all(axis=1)
        X = X[inside]
        X[:, [j, k]] = np.clip(X[:, [j, k]], lo, hi)
        rows.append(X)
    return np.concatenate(rows) if rows else np.zeros((0, len(x)))


def cell_bounds(x: np.ndarray, box: InputBox, thresholds: tuple[np.ndarray, ...]
                ) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi): per feature, the values ``x``'s cell of the threshold grid takes. A tree
    sends ``x[j] <= t`` left, so a continuous cell is ``(t_below, t_above]``; ``lo`` lies
    ``box.margin`` above the threshold below (inside the cell), within the range a value may
    take (above ``active_lower`` for a semicontinuous feature; zero is a cell of its own).
    Discrete features: the integer indices of the cell; categorical ones: ``x[j]`` itself."""
    lo, hi = x.astype(np.float64, copy=True), x.astype(np.float64, copy=True)
    for j in range(box.n_features):
        if box.kinds[j] == CATEGORICAL or (x[j] == 0.0 and box.semicontinuous[j]):
            continue
        t = np.sort(thresholds[j])
        a = int(np.searchsorted(t, x[j], side="left"))  # thresholds below x: x > t goes right
        if box.kinds[j] == DISCRETE:
            lo[j] = 0.0 if a == 0 else np.floor(t[a - 1]) + 1.0
            hi[j] = box.upper[j] if a == len(t) else min(np.floor(t[a]), box.upper[j])
        else:
            low = box.active_lower[j] if box.semicontinuous[j] else box.lower[j]
            lo[j] = low if a == 0 else max(low, min(t[a - 1] + box.margin[j], x[j]))
            hi[j] = box.upper[j] if a == len(t) else min(t[a], box.upper[j])
    return lo, hi


def distinct_point(x: np.ndarray, box: InputBox,
                   thresholds: tuple[np.ndarray, ...],
                   score: Callable[[np.ndarray], np.ndarray],
                   feasible: Callable[[np.ndarray], np.ndarray],
                   avoid: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The best feasible point that is no row of ``avoid`` among ``x`` moved along one
    feature: within the interval between the thresholds that holds it (the same cell of the
    grid), to the middle of another interval (``move_values``), or to another value of a
    discrete or categorical feature: (point, score), or None.

    The acquisition is constant on the grid's cells, so a batch whose best cell holds a
    candidate already chosen can take another point of that cell (score ``value``) instead
    of repeating it; a cell of one point (an allow-zero feature's zero) has none, and the
    best move leaves it (a lower score).
    """
    moves = []
    lo, hi = cell_bounds(x, box, thresholds)
    for j in range(box.n_features):
        if box.kinds[j] != CONTINUOUS:
            vals = move_values(box, thresholds, j)
        else:
            # other points of x's cell first, then three of every cell (``move_values``'s)
            t = thresholds[j]
            low = box.active_lower[j] if box.semicontinuous[j] else box.lower[j]
            e = np.unique(np.concatenate(([low], t[(t > low) & (t < box.upper[j])],
                                          [box.upper[j]])))
            vals = np.concatenate((lo[j] + (hi[j] - lo[j]) * np.array(
                                       [0.5, 0.25, 0.75, 0.125, 0.875, 0.0, 1.0]),
                                   move_values(box, thresholds, j),
                                   e[:-1] + 0.25 * np.diff(e), e[:-1] + 0.75 * np.diff(e)))
        X = np.repeat(x[None, :], len(vals), axis=0)
        X[:, j] = vals
        moves.append(X)
    X = np.vstack(moves)
    X = X[~(X[:, None, :] == avoid[None, :, :]).all(axis=2).any(axis=1)]
    X = X[feasible(X)] if len(X) else X
    if len(X) == 0:
        return None
    s = score(X)
    best = int(np.argmax(s))
    return X[best], float(s[best])


@dataclass
class Incumbent:
    """The starting point and the good points met on the way.

    Attributes:
        x: (D,) best feasible point, or None when no draw was feasible.
        value: its integrated UCB (-inf without a point).
        n_feasible: feasible random draws.
        pool: (k, D) the ascent end points and the best random draws, best first.
    """

    x: np.ndarray | None
    value: float
    n_feasible: int
    pool: np.ndarray


def find_incumbent(box: InputBox, specs: tuple, thresholds: tuple[np.ndarray, ...],
                   delta: np.ndarray, score, feasible, settings: AcquisitionSettings,
                   n_pool: int = 16, max_moves: int | None = None,
                   draws: np.ndarray | None = None) -> Incumbent:
    """Best of ``settings.n_start_points`` feasible draws (seeded by ``settings.seed``),
    improved by ``settings.n_sweeps`` sweeps of coordinate ascent from the best
    ``settings.n_starts`` of them (``max_moves``: see ``coordinate_ascent``). ``draws``: the
    ``random_points`` to take instead of new ones (a batch draws them once)."""
    n_starts, sweeps = settings.n_starts, settings.n_sweeps
    X = draws if draws is not None else random_points(
        box, specs, settings.n_start_points, delta, np.random.default_rng(settings.seed))
    X = X[feasible(X)]
    if len(X) == 0:
        return Incumbent(None, -np.inf, 0, np.zeros((0, box.n_features)))
    s = score(X)
    order = np.argsort(-s, kind="stable")
    best_x, best_v = X[order[0]].copy(), float(s[order[0]])
    ends = []
    for i in order[:n_starts]:
        x, v = coordinate_ascent(X[i], float(s[i]), box, thresholds, score, feasible, sweeps,
                                 max_moves, specs)
        ends.append((v, x))
        if v > best_v:
            best_x, best_v = x, v
    ends.sort(key=lambda e: -e[0])
    pool = np.array([x for _, x in ends] + list(X[order[:max(0, n_pool - len(ends))]]))
    return Incumbent(best_x, best_v, len(X), pool)


def cell_points(x: np.ndarray, value: float, box: InputBox,
                thresholds: tuple[np.ndarray, ...],
                score: Callable[[np.ndarray], np.ndarray],
                feasible: Callable[[np.ndarray], np.ndarray], specs: tuple,
                rng: np.random.Generator, n: int = 256, shrink: float = 1.0) -> np.ndarray:
    """Feasible points of ``x``'s grid cell scoring no lower than ``value`` (m, D), maybe none:
    the cell's corners (a random ``n / 2`` when there are more) and ``n / 2`` uniform points,
    projected onto linear constraints, checked by ``feasible`` and scored. Zeros of NChooseK
    and semicontinuous features stay (the counts would change). ``shrink`` < 1: the part of
    the cell within ``shrink`` times its width of ``x`` instead (a closer look around x)."""
    held = [j for s in specs if isinstance(s, NChooseKSpec) for j in s.features]
    lo, hi = cell_bounds(x, box, thresholds)
    if shrink < 1.0:
        half_width = 0.5 * shrink * (hi - lo)
        lo, hi = np.maximum(lo, x - half_width), np.minimum(hi, x + half_width)
    zero = [j for j in range(box.n_features)
            if x[j] == 0.0 and (j in held or box.semicontinuous[j])]
    lo[zero], hi[zero] = x[zero], x[zero]
    free = np.flatnonzero(hi > lo)
    if len(free) == 0:
        return np.zeros((0, len(x)))
    half = n // 2
    if 2 ** len(free) <= half:
        bits = (np.arange(2 ** len(free))[:, None] >> np.arange(len(free))[None, :]) & 1
    else:
        bits = rng.integers(0, 2, (half, len(free)))
    X = np.repeat(x[None, :], len(bits) + half, axis=0)
    X[:len(bits), free] = np.where(bits == 1, hi[free], lo[free])
    X[len(bits):, free] = rng.uniform(lo[free], hi[free], (half, len(free)))
    disc = [j for j in free if box.kinds[j] == DISCRETE]
    X[len(bits):, disc] = np.rint(X[len(bits):, disc])
    linear = [s for s in specs if isinstance(s, LinearSpec)]
    if linear:
        _project(X, box, linear)
    X = X[feasible(X)]
    if len(X) == 0:
        return X
    return X[score(X) >= value - 1e-9 * max(1.0, abs(value))]


def farthest_in_cell(x: np.ndarray, value: float, box: InputBox,
                     thresholds: tuple[np.ndarray, ...],
                     score: Callable[[np.ndarray], np.ndarray],
                     feasible: Callable[[np.ndarray], np.ndarray], specs: tuple,
                     data: np.ndarray, rng: np.random.Generator, n: int = 256
                     ) -> tuple[np.ndarray, float]:
    """The feasible point of ``x``'s grid cell farthest from the rows of ``data`` (measured and
    pending points), scoring no lower than ``value``: (point, score); ``x`` itself when no
    other point does.

    Every tree routes all points of a cell alike, so the acquisition cannot choose among them;
    the search's own choice (a box's centre) pulls every input the trees rarely split towards
    the middle of its range. The farthest point adds the most new ground at no cost in the
    acquisition, among ``cell_points``.
    Distance: ordered features scaled to [0, 1] by their bounds, 1 per differing category.
    """
    if data is None or len(data) == 0:
        return x, value
    X = cell_points(x, value, box, thresholds, score, feasible, specs, rng, n)
    if len(X) == 0:
        return x, value
    ordered = box.kinds != CATEGORICAL
    width = np.where(ordered, box.upper - box.lower, 1.0)
    width[width <= 0] = 1.0

    def nearest(P):
        diff = (P[:, None, :] - data[None, :, :]) / width
        diff[:, :, ~ordered] = diff[:, :, ~ordered] != 0
        return (diff ** 2).sum(axis=2).min(axis=1)

    far = nearest(X)
    best = int(np.argmax(far))
    if far[best] <= nearest(x[None, :])[0]:
        return x, value
    return X[best], float(score(X[best][None, :])[0])


def smoothest_in_cell(x: np.ndarray, value: float, box: InputBox,
                      thresholds: tuple[np.ndarray, ...],
                      score: Callable[[np.ndarray], np.ndarray],
                      fine: Callable[[np.ndarray], np.ndarray],
                      feasible: Callable[[np.ndarray], np.ndarray], specs: tuple,
                      rng: np.random.Generator, n: int = 256, zooms: int = 3
                      ) -> tuple[np.ndarray, float]:
    """The point of ``x``'s grid cell (``cell_points``, scoring no lower than ``value``) where
    ``fine`` is largest: (point, score); ``x`` itself unless a point beats its ``fine``. The
    best point is looked at ``zooms`` times more closely (around it, a quarter of the width
    before), which finds a maximum inside the cell as well as one at a corner.

    ``fine`` is the acquisition of a smooth share's continuous extension (the RBF at the
    point's own coordinates rather than its bin's centre): constant on no cell, it follows the
    smooth part's slope within the cell, e.g. to a bound where the response keeps rising. The
    search's bound and gap are the binned model's, which every point of the cell attains.
    """
    best, best_f = x, float(fine(x[None, :])[0])
    for k in range(zooms + 1):
        X = cell_points(best, value, box, thresholds, score, feasible, specs, rng, n,
                        shrink=0.25 ** k)
        if len(X):
            f = fine(X)
            i = int(np.argmax(f))
            if f[i] > best_f:
                best, best_f = X[i], float(f[i])
    if best is x:
        return x, value
    return best, float(score(best[None, :])[0])
