"""Branch-and-bound over the threshold grid: BARK's acquisition maximized with a proof.

The integrated UCB is constant on the cells of the grid cut by all split thresholds, so a
best-first search over boxes of that grid (``grid_bound``) finds its global maximum: a box's
upper bound comes from the leaves its trees can still reach, a box where every tree reaches one
leaf has its exact value, and boxes whose bound is below the best feasible point found
(starting with the starting sample's point) are dropped. The search stops when the best open
bound is within ``mip_gap`` (relative) or ``abs_gap`` (absolute, in standard deviations of the
output) of the incumbent, or at the time limit; the bound it returns holds for every feasible
point.

Domain constraints prune boxes by interval tests (linear: the range of the left-hand side;
NChooseK: counts of features that must or may be active; nonlinear: interval arithmetic on the
expression), which never drop a feasible point. A decided box still needs a feasible point:
its centre, then a small MILP over the box (linear and NChooseK constraints, scipy's HiGHS),
then random points in the box for nonlinear constraints. A decided box for which none is found
but which cannot be proven empty stays in the bound ("unresolved").

With one output and no domain constraints the same loop runs in numba (``grid_search``);
constraints and several outputs (``MultiGrid``) use the Python loop here.
"""

from __future__ import annotations

import heapq
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from bofire_bark.optimize.domain_constraints import LinearSpec, NChooseKSpec, NonlinearSpec
from bofire_bark.optimize.ensemble import (
    CATEGORICAL,
    CONTINUOUS,
    DISCRETE,
    InputBox,
    distinct_samples,
)
from bofire_bark.optimize.grid_bound import box_bound

# Feasibility tolerance of the specs check (BoFire's is_fulfilled uses 1e-6; the final
# candidate is checked by BoFire itself).
TOL = 1e-7
# Linearizations of the N-space variance bound (Frank-Wolfe steps, grid_bound._dual_bound)
# and whether to add the leaf-space row bound; measured with acquisition_proof (--paired
# --pair dual, results/acquisition/dual: 3 steps instead of 1 gave a median gap of 11.0 %
# instead of 12.9 %, 95th percentile 35.7 % instead of 45.2 %, at 0.57x the boxes per second;
# 6 steps were worse than 3). N_DUAL_PYTHON serves the Python loop (domain constraints or
# several outputs, ``optimizer``): there 3 steps cost the dives that find feasible points (the
# 20x reference beat the candidate by > 1 % on 5 of 60 posteriors instead of 2, all constrained).
N_DUAL = 3
N_DUAL_PYTHON = 1
USE_ROWS = False
# A dive (depth-first to a decided box, for a better feasible point) every this many boxes.
DIVE_EVERY = 25
# After a dive that finds no better point the next DIVE_BACKOFF_MAX - 1 chances at most are
# skipped (the skip doubles per fruitless dive, and resets when a dive improves): without
# constraints the start is rarely beaten and the dives cost half of the bound calls. Only
# without domain constraints and with one output: with constraints dives find the feasible
# points (acquisition_proof, numba_loop_backoff: the UCB fell on 5 constrained posteriors).
DIVE_BACKOFF = True
DIVE_BACKOFF_MAX = 64
# Under constraints, the share of the remaining time the search goes on once the gap is
# proven, towards POLISH_GAP (the proof stands; the candidate and the bound can only improve):
# there the first point within the gap is often not the best one, and the boxes of highest
# bound lead to it faster than dives from them did (acquisition_proof --pair polish).
POLISH = 0.5
POLISH_GAP = 0.01
# Threads bounding boxes in the Python loop (the two children of a branching) and in the
# numba loop (rounds of BATCH boxes per thread). Two threads in rounds expanded the same boxes
# in 0.6-0.8 of the time on a quiet machine, but were slower than one in the paired run on the
# loaded machine (acquisition_proof, numba_threads: boxes/s x0.92 per case; a round waits for
# the slower thread), so the numba loop uses one.
THREADS = 2
NUMBA_THREADS = 1
# Bins (of consecutive grid cells) per ordered feature in the Lagrangian relaxation, and
# whether ordered features are relaxed at all: measured, multipliers fitted at the root helped
# on categorical domains and hurt on ordered ones (deeper boxes need other multipliers).
N_BINS = 16  # at most 64: one word of codes
LAGRANGE_BINS = False
# Subgradient steps on the categorical multipliers at the root (0: no Lagrangian relaxation).
N_LAGRANGE = 100
# Bound every box with and without the root's multipliers and keep the smaller (both hold):
# measured worse (--pair lam, results/acquisition/lam: median gap 0.134 against 0.112).
LAM_MIN = False
# Cut ordered features in the middle of the box, not at the split of largest impact: measured
# better (--pair branch, results/acquisition/branch: median gap 0.112 -> 0.100, median ask
# 2.40 -> 1.66 s, 0.95x the boxes per second).
BISECT = True
# Score a feature for branching by the product of what its cuts take from the two children's
# bounds, not by their sum (``grid_bound.feature_scores``): measured better where the numba loop
# runs (--pair score, results/acquisition/score: gap 95th pct 0.356 -> 0.335); the optimizer
# keeps the sum for the Python loop (constraints, several outputs).
PRODUCT_SCORE = True
# Without domain constraints and with one output, a second search of the same problem on the
# other core, with multipliers on binned ordered features too (``LAGRANGE_BINS``; both bounds
# hold, the pair keeps the smaller): measured, not the default (--pair portfolio,
# results/acquisition/portfolio: 95th pct gap 0.355 -> 0.352, better on TreeFunctionCat and
# StyblinskiTang10, worse on DiscreteAckley, where sharing the two cores leaves each search
# about 0.7x the boxes per second of one alone).
PORTFOLIO = False
# Slack of interval pruning: a box is dropped only when its constraint range misses the
# feasible side by more than this (round-off of the interval arithmetic).
PRUNE_TOL = 1e-7
# The box loop of a single output without domain constraints runs in numba (``grid_search``)
# unless this is False: the Python loop spends part of its time per box in the interpreter.
NUMBA_LOOP = True
# Seconds of work per call of the numba loop (the clock is read between calls).
CHUNK_SECONDS = 0.01
# With two threads the numba loop works in rounds of this many boxes per thread (fixed, so
# that the boxes expanded do not depend on the clock).
BATCH = 8
# Open boxes the numba loop makes room for at first (doubled when short).
SLOTS = 1024


def relaxation(python_loop: bool) -> dict:
    """``grid_model`` settings for the loop that will search the grid: the Python loop
    (domain constraints or several outputs) keeps one linearization (``N_DUAL_PYTHON``: its
    bound time goes to the dives that find feasible points) and the sum score (with the product
    its dives met other boxes and returned lower UCBs, results/acquisition/score)."""
    if python_loop:
        return {"n_dual": N_DUAL_PYTHON, "product_score": False}
    return {"n_dual": N_DUAL, "product_score": PRODUCT_SCORE}


@dataclass(frozen=True)
class GridModel:
    """The posterior's trees and leaf systems as flat arrays for ``grid_bound.box_bound``
    (see its docstring for the shapes), plus the grid: ``thresholds[j]`` sorted (cells
    ``0..len``), ``n_words`` words per categorical bit set."""

    arrays: tuple
    thresholds: tuple[np.ndarray, ...]
    n_words: int
    n_leaves: int
    kappa: float
    sign: float
    lagrange: Lagrange

    @property
    def lam(self) -> np.ndarray:
        """The multipliers (``grid_bound.box_bound``'s ``lam``), updated in place."""
        return self.arrays[24]

    @property
    def n_codes(self) -> int:
        """Multipliers per copy of a feature (its codes)."""
        return int(self.arrays[30])

    def first_copies(self, sample: int = 0) -> dict[int, int]:
        """Per categorical feature some tree of ``sample`` splits on, the offset in ``lam`` of
        the first of its trees' copies (``n_codes`` values, one per code). Values put there
        add a term of that feature's code to the objective (at a point: the sum of its copies'
        values at its code) without breaking the relaxation."""
        s_tree_u, lam_ptr, tf_ptr, tf_j = (self.arrays[k] for k in (10, 25, 26, 27))
        n_codes = self.n_codes
        out = {}
        for t in range(s_tree_u.shape[1]):
            u = s_tree_u[sample, t]
            for f in range(tf_ptr[u + 1] - tf_ptr[u]):
                out.setdefault(int(tf_j[tf_ptr[u] + f]), int(lam_ptr[sample, t] + f * n_codes))
        return out


@dataclass(frozen=True)
class Lagrange:
    """Feature ``j``, code ``c`` and sample weight ``w`` (summing to 1 over a tree's copies) of
    every multiplier; the relaxation stays valid while sum(w * lam) is 0 per (j, c)."""

    j: np.ndarray
    c: np.ndarray
    w: np.ndarray

    def project(self, step: np.ndarray) -> np.ndarray:
        """``step`` minus its weighted mean per (j, c): a direction that keeps the sums 0."""
        if len(step) == 0:
            return step
        key = self.j * (int(self.c.max()) + 1) + self.c
        num = np.bincount(key, weights=self.w * step)
        den = np.bincount(key, weights=self.w)
        return step - (num / np.where(den > 0, den, 1.0))[key]


def _words(codes, w: int) -> np.ndarray:
    out = np.zeros(w, dtype=np.uint64)
    for c in codes:
        out[c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    return out


def grid_model(problem, systems, posterior, pending: np.ndarray | None = None,
               n_dual: int | None = None, use_rows: bool | None = None,
               lagrange_bins: bool | None = None, bisect: bool | None = None,
               product_score: bool | None = None,
               thresholds: tuple[np.ndarray, ...] | None = None) -> GridModel:
    """Flatten the reduced ensemble and the per-sample leaf systems.

    Args:
        problem: ``model.AcquisitionProblem`` (box, reduced ensemble, kappa, sign).
        systems: ``engine.predict.SampleSystems`` (conditioned on ``pending``).
        posterior: the ``engine.Posterior`` (forests, noise, training inputs).
        pending: (n_p, D) encoded points the systems are conditioned on, or None.
        n_dual: Frank-Wolfe linearizations of the N-space bound (0 turns it off; None:
            ``N_DUAL``, the module's setting at the call).
        use_rows: also the leaf-space row bound (always on decided boxes, where it is exact;
            None: ``USE_ROWS``).
        lagrange_bins: relax ordered features too (bins of cells), not only categorical ones
            (None: ``LAGRANGE_BINS``).
        bisect: branch ordered features in the middle of a box (None: ``BISECT``).
        product_score: pick the feature to branch on by the product score (None:
            ``PRODUCT_SCORE``).
        thresholds: the grid, per feature sorted and holding every threshold of the ensemble
            (default: the ensemble's own); several outputs' models share one grid.
    """
    from bofire_bark.engine.forest import route_all

    # the module's settings as they are at the call (a benchmark may change them)
    n_dual = N_DUAL if n_dual is None else n_dual
    use_rows = USE_ROWS if use_rows is None else use_rows
    lagrange_bins = LAGRANGE_BINS if lagrange_bins is None else lagrange_bins
    bisect = BISECT if bisect is None else bisect
    product_score = PRODUCT_SCORE if product_score is None else product_score

    ens, box = problem.ensemble, problem.box
    sigma2 = posterior.samples["sigma2"]
    if pending is not None:
        pending = np.asarray(pending, dtype=np.float64).reshape(-1, box.n_features)
    Xa = posterior.X if pending is None or len(pending) == 0 else np.concatenate(
        (posterior.X, pending))
    Xa = np.ascontiguousarray(Xa, dtype=np.float64)
    thresholds = ens.thresholds if thresholds is None else thresholds
    n_cat = max([len(box.allowed[j]) and max(box.allowed[j]) + 1
                 for j in range(box.n_features) if box.kinds[j] == CATEGORICAL] or [1])
    w = max(1, (int(n_cat) + 63) // 64)
    feat, thr, lmask, rmask, left, right, leaf = [], [], [], [], [], [], []
    roots, leaf_off, nleaf = [], [], []
    n_leaves = 0
    for tree in ens.trees:
        base = len(feat)
        roots.append(base)
        leaf_off.append(n_leaves)
        nleaf.append(tree.n_leaves)
        # nodes come in depth-first order: the leaves below a node are consecutive
        for node in tree.nodes:
            if node[0] == "leaf":
                feat.append(-1)
                thr.append(-1)
                lmask.append(np.zeros(w, np.uint64))
                rmask.append(np.zeros(w, np.uint64))
                left.append(-1)
                right.append(-1)
                leaf.append(n_leaves + node[1])
                continue
            split = tree.splits[node[1]]
            j = split.feature
            feat.append(j)
            if box.kinds[j] == CATEGORICAL:
                thr.append(-1)
            else:
                thr.append(int(np.searchsorted(thresholds[j], split.threshold)))
            lmask.append(_words(split.left_codes, w))
            rmask.append(_words(split.right_codes, w))
            left.append(base + node[2])
            right.append(base + node[3])
            leaf.append(-1)
        n_leaves += tree.n_leaves
    m = ens.tree_of.shape[1]
    keep, weights = distinct_samples(posterior.samples)
    s_tree_u = ens.tree_of[keep].astype(np.int64)
    s_base = np.zeros((len(keep), m), dtype=np.int64)
    s_off = [0]
    s_moff = []
    betas, Ms = [], []
    moff = 0
    n_data = len(Xa)
    Kinv = np.zeros((len(keep), n_data, n_data))
    members: list[list[int]] = []  # training points of each leaf column, all samples
    sm = posterior.samples
    leaf_of = np.empty((m, n_data), dtype=np.int64)
    for i, s in enumerate(keep):
        lcol, Ginv, beta = systems.systems[s]
        cols = []
        for t in range(m):
            s_base[i, t] = len(cols)
            cols.extend(int(c) for c in lcol[t, ens.leaf_nodes[s][t]])
        cols = np.asarray(cols, dtype=np.int64)
        betas.append(beta[cols])
        Ms.append((float(sigma2[s]) * Ginv[np.ix_(cols, cols)]).ravel())
        s_off.append(s_off[-1] + len(cols))
        s_moff.append(moff)
        moff += len(cols) ** 2
        route_all(sm["feat"][s], sm["thr"][s], sm["mask"][s], sm["left"][s], sm["right"][s],
                  posterior.kinds, Xa, leaf_of)
        same = np.zeros((n_data, n_data))
        leaf_members = [[] for _ in range(len(cols))]
        for t in range(m):
            same += leaf_of[t][:, None] == leaf_of[t][None, :]
            position = {int(node): p for p, node in enumerate(ens.leaf_nodes[s][t])}
            for n in range(n_data):
                p = position.get(int(leaf_of[t, n]))
                if p is not None:  # else the leaf lies outside the candidate space
                    leaf_members[s_base[i, t] + p].append(n)
        members.extend(leaf_members)
        Kinv[i] = np.linalg.inv(same / m + float(sigma2[s]) * np.eye(n_data))
    # codes of the Lagrangian relaxation: categories, or bins of consecutive cells
    d = box.n_features
    n_bins = [0 if box.kinds[j] == CATEGORICAL or not lagrange_bins
              else min(N_BINS, len(thresholds[j]) + 1) for j in range(d)]
    bin_first = np.full((d, max(n_bins + [1])), -1, dtype=np.int64)
    bin_last = np.full((d, max(n_bins + [1])), -1, dtype=np.int64)
    for j in range(d):
        if n_bins[j]:
            edges = np.linspace(0, len(thresholds[j]) + 1, n_bins[j] + 1).round().astype(int)
            bin_first[j, :n_bins[j]] = edges[:-1]
            bin_last[j, :n_bins[j]] = edges[1:] - 1
    n_cat = max([n_cat] + n_bins)

    def leaf_codes(j, lo_cell, hi_cell):
        return {b for b in range(n_bins[j])
                if bin_first[j, b] <= hi_cell and bin_last[j, b] >= lo_cell}

    # the features each tree splits on, and the codes reaching each of its leaves
    tf_ptr, tf_j, leaf_cm_ptr, leaf_cm = [0], [], np.zeros(n_leaves, dtype=np.int64), []
    for u, tree in enumerate(ens.trees):
        js = sorted({sp.feature for sp in tree.splits
                     if box.kinds[sp.feature] == CATEGORICAL or n_bins[sp.feature]})
        tf_j.extend(js)
        tf_ptr.append(len(tf_j))
        full = {j: (frozenset(box.allowed[j]) if box.kinds[j] == CATEGORICAL
                    else (0, len(thresholds[j]))) for j in js}

        def walk(i, codes, tree=tree, js=js, u=u):
            node = tree.nodes[i]
            if node[0] == "leaf":
                leaf_cm_ptr[leaf_off[u] + node[1]] = len(leaf_cm)
                leaf_cm.extend(_words(codes[j] if box.kinds[j] == CATEGORICAL
                                      else leaf_codes(j, *codes[j]), w) for j in js)
                return
            sp = tree.splits[node[1]]
            j = sp.feature
            if j not in codes:  # not relaxed
                walk(node[2], codes)
                walk(node[3], codes)
                return
            if box.kinds[j] == CATEGORICAL:
                left_c = codes[j] & set(sp.left_codes)
                right_c = codes[j] & set(sp.right_codes)
            else:
                i_thr = int(np.searchsorted(thresholds[j], sp.threshold))
                left_c = (codes[j][0], min(codes[j][1], i_thr))
                right_c = (max(codes[j][0], i_thr + 1), codes[j][1])
            walk(node[2], {**codes, j: left_c})
            walk(node[3], {**codes, j: right_c})

        walk(0, full)
    lfirst = np.asarray(leaf, dtype=np.int64).copy()
    llast = lfirst.copy()
    for k in range(len(feat) - 1, -1, -1):  # children after their parent
        if feat[k] >= 0:
            lfirst[k] = lfirst[left[k]]
            llast[k] = llast[right[k]]
    dptr = np.zeros(len(members) + 1, dtype=np.int64)
    dptr[1:] = np.cumsum([len(c) for c in members])
    dind = np.array([n for c in members for n in c], dtype=np.int64)
    n_codes = int(n_cat)
    lam_ptr = np.zeros((len(keep), m), dtype=np.int64)
    lam_j, lam_c, lam_w = [], [], []
    wsum = float(np.sum(weights))
    for i in range(len(keep)):
        for t in range(m):
            u = int(s_tree_u[i, t])
            lam_ptr[i, t] = len(lam_j)
            for j in tf_j[tf_ptr[u]:tf_ptr[u + 1]]:
                lam_j.extend([j] * n_codes)
                lam_c.extend(range(n_codes))
                lam_w.extend([weights[i] / wsum] * n_codes)
    lagrange = Lagrange(np.asarray(lam_j, np.int64), np.asarray(lam_c, np.int64),
                        np.asarray(lam_w))
    leaf_cm = np.array(leaf_cm, dtype=np.uint64).reshape(-1, w)
    arrays = (
        np.asarray(feat, np.int64), np.asarray(thr, np.int64),
        np.ascontiguousarray(np.array(lmask, dtype=np.uint64).reshape(-1, w)),
        np.ascontiguousarray(np.array(rmask, dtype=np.uint64).reshape(-1, w)),
        np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(leaf, np.int64),
        np.asarray(roots, np.int64), np.asarray(leaf_off, np.int64),
        np.asarray(nleaf, np.int64), s_tree_u, s_base, np.asarray(weights),
        np.asarray(s_off, np.int64), np.concatenate(betas), np.asarray(s_moff, np.int64),
        np.concatenate(Ms), dptr, dind, Kinv, lfirst, llast,
        int(n_dual) if problem.kappa > 0 else 0, bool(use_rows),
        np.zeros(len(lam_j)), lam_ptr, np.asarray(tf_ptr, np.int64),
        np.asarray(tf_j, np.int64), leaf_cm_ptr, leaf_cm, n_codes, bin_first, bin_last,
        bool(bisect), bool(product_score),
    )
    return GridModel(arrays, thresholds, w, n_leaves, float(problem.kappa),
                     float(problem.sign), lagrange)


class Grid:
    """Boxes of the grid and the scratch space of the bound kernel."""

    def __init__(self, gm: GridModel, box: InputBox):
        self.gm = gm
        self.box = box
        self.d = box.n_features
        self.n_cells = np.array([len(gm.thresholds[j]) if box.kinds[j] != CATEGORICAL else 0
                                 for j in range(self.d)], dtype=np.int64)
        # one scratch set per thread that may bound boxes at the same time
        self.scratch = [(np.zeros(gm.n_leaves, dtype=np.bool_),
                         np.zeros(len(gm.arrays[0]), dtype=np.int64),
                         np.full(gm.n_leaves, -np.inf)) for _ in range(2)]
        self.use_lam = 0
        self._none = np.zeros(0)

    def root(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo = np.zeros(self.d, dtype=np.int64)
        hi = self.n_cells.copy()
        cat = np.zeros((self.d, self.gm.n_words), dtype=np.uint64)
        for j in range(self.d):
            if self.box.kinds[j] == CATEGORICAL:
                cat[j] = _words(self.box.allowed[j], self.gm.n_words)
        return lo, hi, cat

    def bound(self, lo, hi, cat, onehot=None, thread: int = 0) -> tuple[float, int, int]:
        """(upper bound, number of undecided splits, split to branch on) of a box; ``thread``
        picks the scratch set (boxes bounded concurrently need different ones)."""
        return box_bound(*self.gm.arrays, self.gm.kappa, self.gm.sign, lo, hi, cat,
                         *self.scratch[thread], self.use_lam,
                         self._none if onehot is None else onehot)

    def fit_multipliers(self, target: float, iterations: int = N_LAGRANGE,
                        box=None) -> list[float]:
        """Lower the bound of ``box`` (default: the root) by projected subgradient steps on
        the multipliers (Polyak steps towards ``target``, the incumbent's value; the best
        multipliers are kept). Returns the bound after each step."""
        lam = self.gm.lam
        if len(lam) == 0 or iterations <= 0:
            return []
        root = self.root() if box is None else box
        self.use_lam = 1
        best_lam, best = lam.copy(), self.bound(*root, onehot=np.zeros_like(lam))[0]
        trace = [best]
        theta = 1.0
        onehot = np.zeros_like(lam)
        for _ in range(iterations):
            onehot[:] = 0.0
            ub = self.bound(*root, onehot=onehot)[0]
            trace.append(ub)
            if ub < best - 1e-12:
                best, best_lam = ub, lam.copy()
            else:
                theta *= 0.9
            direction = self.gm.lagrange.project(onehot)
            norm = float(np.sum(self.gm.lagrange.w * direction**2))
            if norm <= 0.0 or not np.isfinite(target) or ub <= target:
                break
            lam -= theta * (ub - target) / norm * direction
        lam[:] = best_lam
        self.use_lam = 2 if LAM_MIN else 1
        return trace

    def cell_of(self, x: np.ndarray):
        """The single-cell box of an encoded point (D,)."""
        lo = np.zeros(self.d, dtype=np.int64)
        cat = np.zeros((self.d, self.gm.n_words), dtype=np.uint64)
        for j in range(self.d):
            if self.box.kinds[j] == CATEGORICAL:
                cat[j] = _words([int(round(x[j]))], self.gm.n_words)
            else:
                lo[j] = np.searchsorted(self.gm.thresholds[j], x[j], side="left")
        return lo, lo.copy(), cat

    def value(self, x: np.ndarray) -> float:
        """Exact integrated UCB at an encoded point (the bound of its cell)."""
        return self.bound(*self.cell_of(x))[0]

    def intervals(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """Value range (D,) x 2 of the ordered features in a box (categorical: NaN)."""
        box = self.box
        vlo = np.full(self.d, np.nan)
        vhi = np.full(self.d, np.nan)
        for j in range(self.d):
            kind = box.kinds[j]
            if kind == CATEGORICAL:
                continue
            t = self.gm.thresholds[j]
            a, b = lo[j], hi[j]
            if kind == CONTINUOUS:
                vlo[j] = box.lower[j] if a == 0 else t[a - 1]
                vhi[j] = box.upper[j] if b == len(t) else t[b]
            else:
                ka = 0 if a == 0 else int(math.floor(t[a - 1])) + 1
                kb = len(box.values[j]) - 1 if b == len(t) else int(math.floor(t[b]))
                vlo[j] = box.values[j][ka]
                vhi[j] = box.values[j][kb]
        return vlo, vhi

    def branch(self, lo, hi, cat, split: int):
        """The two children of a box at one of its undecided splits (``box_bound`` chose it):
        the threshold's two sides, or a categorical split's left codes against the rest."""
        node_feat, node_thr, node_lmask = self.gm.arrays[:3]
        j = int(node_feat[split])
        if self.box.kinds[j] == CATEGORICAL:
            left_cat, right_cat = cat.copy(), cat.copy()
            left_cat[j] = cat[j] & node_lmask[split]
            right_cat[j] = cat[j] & ~node_lmask[split]
            return (lo, hi, left_cat), (lo, hi, right_cat)
        i = int(node_thr[split])
        left_hi, right_lo = hi.copy(), lo.copy()
        left_hi[j] = i
        right_lo[j] = i + 1
        return (lo, left_hi, cat), (right_lo, hi, cat)


class MultiGrid:
    """Several outputs' grid models on one grid, combined by an ``outputs.OutputAcquisition``.

    Channel c is ``grids[c]`` (one output's integrated UCB, one sign); the acquisition is a
    nondecreasing function of the channels, so the channels' box bounds give its box bound,
    exact on a box decided for every channel. Output limits prune boxes whose channel bound
    misses them. The interface is ``Grid``'s, so ``search`` runs unchanged.
    """

    def __init__(self, grids: list[Grid], acq, targets: np.ndarray | None = None):
        self.grids = grids
        self.acq = acq
        self.gm = grids[0].gm  # the grid (thresholds, words) all channels share
        self.box = grids[0].box
        self.d = grids[0].d
        self.n_cells = grids[0].n_cells
        self.targets = targets  # channel values at the start, for the multipliers
        self._split_off = np.cumsum([0] + [len(g.gm.arrays[0]) for g in grids])

    def root(self):
        return self.grids[0].root()

    def intervals(self, lo, hi):
        return self.grids[0].intervals(lo, hi)

    def cell_of(self, x):
        return self.grids[0].cell_of(x)

    def channel_bounds(self, lo, hi, cat, thread: int = 0):
        """Per channel (upper bound, undecided splits, split)."""
        return [g.bound(lo, hi, cat, None, thread) for g in self.grids]

    def bound(self, lo, hi, cat, onehot=None, thread: int = 0) -> tuple[float, int, int]:
        parts = self.channel_bounds(lo, hi, cat, thread)
        U = np.array([p[0] for p in parts])
        ub = float(self.acq.value(U, tol=PRUNE_TOL))
        n_und = sum(p[1] for p in parts)
        if n_und == 0 or not np.isfinite(ub):
            return ub, n_und, -1
        # branch in the channel the acquisition's bound leans on most; a limit channel when
        # the objectives' channels are decided
        w = self.acq.channel_weights(U)
        for lim in self.acq.limits:
            w[lim.channel] += 1e-6
        undecided = [c for c, p in enumerate(parts) if p[1] > 0]
        c = max(undecided, key=lambda c: (w[c], parts[c][1]))
        return ub, n_und, int(self._split_off[c] + parts[c][2])

    def value(self, x: np.ndarray) -> float:
        return self.bound(*self.cell_of(x))[0]

    def branch(self, lo, hi, cat, split: int):
        c = int(np.searchsorted(self._split_off, split, side="right") - 1)
        return self.grids[c].branch(lo, hi, cat, split - int(self._split_off[c]))

    def fit_multipliers(self, target: float, iterations: int = N_LAGRANGE, box=None):
        """Each channel's multipliers towards its value at the start (``targets``)."""
        if self.targets is None:
            return []
        return [g.fit_multipliers(float(t), iterations, box)
                for g, t in zip(self.grids, self.targets, strict=True)]


# ------------------------------------------------------------------------------------------
# constraints on boxes and points
# ------------------------------------------------------------------------------------------


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
        return -1.0, 1.0
    return -math.inf, math.inf


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
        v = np.array([box.values[j][int(round(x[j]))] if box.kinds[j] == DISCRETE else x[j]
                      for j in range(box.n_features)])
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


# ------------------------------------------------------------------------------------------
# points in boxes
# ------------------------------------------------------------------------------------------


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
    return None, False


# ------------------------------------------------------------------------------------------
# the search
# ------------------------------------------------------------------------------------------


@dataclass
class SearchResult:
    """Outcome of the branch-and-bound.

    Attributes:
        x: (D,) best feasible point (the start when nothing better was found), or None.
        value: its integrated UCB; bound: an upper bound of the integrated UCB over the
            feasible set (>= value); status: "optimal" (gap closed to round-off), "gap"
            (within the requested gap), "time_limit" or "infeasible".
        nodes: boxes expanded; unresolved: decided boxes kept in the bound for lack of a
            feasible point; seconds: wall time.
    """

    x: np.ndarray | None
    value: float
    bound: float
    status: str
    nodes: int
    unresolved: int
    seconds: float

    @property
    def abs_gap(self) -> float:
        return max(0.0, self.bound - self.value)

    @property
    def gap(self) -> float:
        return relative_gap(self.value, self.bound)


def relative_gap(value: float, bound: float) -> float:
    """(bound - value) / |value|, the solver convention; inf when value is 0 and they differ."""
    if not np.isfinite(value):
        return math.inf
    diff = max(0.0, bound - value)
    if diff == 0.0:
        return 0.0
    return diff / abs(value) if value != 0.0 else math.inf


def _may_hold(grid: Grid, cons: Constraints, child) -> bool:
    """False when a child box holds no candidate (no category left, or a constraint's range
    misses it)."""
    c_lo, c_hi, c_cat = child
    if any(not c_cat[j].any() for j in range(grid.d) if grid.box.kinds[j] == CATEGORICAL):
        return False
    return not cons or cons.may_be_feasible(*grid.intervals(c_lo, c_hi))


def _dive(grid: Grid, cons: Constraints, box, split: int, best_v: float, rng,
          max_depth: int = 200):
    """Depth-first from a box into its child of higher bound until every tree is decided,
    then a feasible point of that last box: (point, value) or (None, -inf). Under
    constraints the random start is often far from the best feasible cell; this finds
    feasible points where the bound says the value is."""
    for _ in range(max_depth):
        if split < 0:
            x, _empty = box_point(grid, cons, *box, rng)
            return (x, grid.value(x)) if x is not None else (None, -math.inf)
        best = None
        for child in grid.branch(*box, split):
            if not _may_hold(grid, cons, child):
                continue
            c_ub, _c_und, c_split = grid.bound(*child)
            if c_ub > best_v and (best is None or c_ub > best[0]):
                best = (c_ub, child, c_split)
        if best is None:
            return None, -math.inf
        _, box, split = best
    return None, -math.inf


def search(grid: Grid, cons: Constraints, x0: np.ndarray | None, v0: float,
           time_limit: float, mip_gap: float, abs_gap: float, seed: int | None = 0,
           deadline: float | None = None, n_lagrange: int = N_LAGRANGE,
           threads: int | None = None, dive_every: int | None = None,
           polish: float | None = None, max_time: float | None = None,
           extend_gap: float = math.inf, numba_loop: bool | None = None,
           dive_backoff: bool | None = None, partner: Grid | None = None) -> SearchResult:
    """Best-first branch-and-bound from the incumbent (x0, v0), after ``n_lagrange``
    subgradient steps on the categorical multipliers at the root.

    Stops when bound - value <= max(mip_gap |value|, abs_gap), when no box is left, at
    ``time_limit`` seconds once the relative gap is <= ``extend_gap``, or at ``max_time``
    seconds (default: ``time_limit``; ``deadline`` overrides both). Under domain constraints
    a proven gap above ``POLISH_GAP`` does not stop it at once: it goes on for the share
    ``polish`` (default ``POLISH``) of the time left, or until ``POLISH_GAP`` is proven.

    Without domain constraints and with one output the loop runs in numba (``numba_loop``,
    default ``NUMBA_LOOP``), else in Python; with ``threads`` > 1 (default ``NUMBA_THREADS``
    and ``THREADS``) either bounds boxes on two threads (the numba loop in rounds of
    ``BATCH`` boxes per thread, in a different order than with one thread).
    ``partner``: another relaxation of the same problem (see ``PORTFOLIO``); the numba loop then
    searches both on two threads (``_search_pair``), each on one.
    """
    t0 = time.perf_counter()
    soft_at = t0 + time_limit if deadline is None else deadline
    stop_at = soft_at if deadline is not None or max_time is None else t0 + max(max_time,
                                                                                 time_limit)
    rng = np.random.default_rng(seed)
    best_x = None if x0 is None else np.asarray(x0, dtype=np.float64).copy()
    best_v = float(v0) if x0 is not None else -math.inf
    dive_every = DIVE_EVERY if dive_every is None else dive_every
    polish = POLISH if polish is None else polish
    plain = type(grid) is Grid and not cons  # one output, no domain constraints
    # the longest run of dives skipped after fruitless ones (1: none)
    backoff = DIVE_BACKOFF and plain if dive_backoff is None else dive_backoff
    dives = (dive_every, DIVE_BACKOFF_MAX if backoff else 1)
    if (NUMBA_LOOP if numba_loop is None else numba_loop) and plain:
        if partner is not None:
            return _search_pair((grid, partner), best_x, best_v, t0,
                                (soft_at, extend_gap, stop_at), n_lagrange, mip_gap, abs_gap,
                                dives)
        return _search_numba(grid, best_x, best_v, t0, (soft_at, extend_gap, stop_at),
                             n_lagrange, mip_gap, abs_gap, dives,
                             NUMBA_THREADS if threads is None else threads)
    threads = THREADS if threads is None else threads
    pool = ThreadPoolExecutor(1) if threads > 1 else None
    try:
        return _search(grid, cons, best_x, best_v, t0, (soft_at, extend_gap, stop_at), rng,
                       n_lagrange, pool, mip_gap, abs_gap, dives, polish)
    finally:
        if pool is not None:
            pool.shutdown()


def _search(grid, cons, best_x, best_v, t0, limits, rng, n_lagrange, pool, mip_gap,
            abs_gap, dives, polish) -> SearchResult:
    soft_at, extend_gap, stop_at = limits
    dive_every, max_period = dives
    period, skip = 1, 0
    grid.fit_multipliers(best_v, n_lagrange)
    lo, hi, cat = grid.root()
    ub, n_und, split = grid.bound(lo, hi, cat)
    heap = [(-ub, 0, n_und, split, lo, hi, cat)]
    counter = 1
    unresolved: list[float] = []
    nodes = 0

    def done(bound: float, gap: float = mip_gap) -> bool:
        return bound - best_v <= max(gap * abs(best_v), abs_gap, 1e-12 * abs(best_v))

    status = "optimal"
    polish_at = None  # when the gap was proven, under constraints: the search goes on
    while heap:
        top = -heap[0][0]
        open_bound = max(top, max(unresolved, default=-math.inf))
        now = time.perf_counter()
        if done(open_bound) and best_x is not None:
            status = "gap" if open_bound - best_v > 1e-9 * max(1.0, abs(best_v)) else "optimal"
            if not cons or polish <= 0 or status == "optimal" or done(open_bound, POLISH_GAP):
                break
            if polish_at is None:
                polish_at = now + polish * max(0.0, soft_at - now)
            if now > polish_at:
                break
        elif now > stop_at or (now > soft_at and relative_gap(best_v, open_bound)
                               <= extend_gap):
            status = "time_limit"
            break
        neg, _, n_und, split, lo, hi, cat = heapq.heappop(heap)
        nodes += 1
        if -neg <= best_v:
            continue
        if n_und == 0:  # decided: the bound is the box's exact value
            x, empty = box_point(grid, cons, lo, hi, cat, rng)
            if x is not None:
                if -neg > best_v:
                    best_x, best_v = x, -neg
            elif not empty:
                unresolved.append(-neg)
            continue
        kids = [c for c in grid.branch(lo, hi, cat, split) if _may_hold(grid, cons, c)]
        if pool is not None and len(kids) == 2:
            # the kernel releases the GIL: both children on the two cores
            futures = [pool.submit(grid.bound, *kids[1], None, 1)]
            bounds = [grid.bound(*kids[0])] + [f.result() for f in futures]
        else:
            bounds = [grid.bound(*c) for c in kids]
        for child, (c_ub, c_und, c_split) in zip(kids, bounds, strict=True):
            if c_ub > best_v:
                heapq.heappush(heap, (-c_ub, counter, c_und, c_split, *child))
                counter += 1
        # cheap primal steps: the centre of the box just split, and now and then a dive
        if nodes % 4 == 1:
            x = centre(grid, lo, hi, cat)
            if not cons or cons.satisfied(x):
                v = grid.value(x)
                if v > best_v:
                    best_x, best_v = x, v
        if dive_every and nodes % dive_every == 1:
            if skip > 0:
                skip -= 1
            else:
                x, v = _dive(grid, cons, (lo, hi, cat), split, best_v, rng)
                if x is not None and v > best_v:
                    best_x, best_v = x, v
                    period = 1
                else:
                    period = min(2 * period, max_period)
                skip = period - 1
    else:
        open_bound = max(unresolved, default=-math.inf)
        status = "infeasible" if best_x is None and not unresolved else (
            "optimal" if done(open_bound) else "time_limit")
    if not heap:
        open_bound = max(unresolved, default=-math.inf)
    bound = max(open_bound, best_v)
    return SearchResult(best_x, best_v, bound, status, nodes, len(unresolved),
                        time.perf_counter() - t0)


def _search_numba(grid: Grid, best_x, best_v, t0, limits, n_lagrange, mip_gap, abs_gap,
                  dives, threads=1) -> SearchResult:
    """``_search`` for a ``Grid`` without constraints: the box loop in ``grid_search``, run
    in chunks of about ``CHUNK_SECONDS`` (one thread) or rounds of ``BATCH`` boxes per thread
    (two), with the clock read in between."""
    if threads > 1:
        pool = ThreadPoolExecutor(1)
        try:
            return _search_numba_impl(grid, best_x, best_v, t0, limits, n_lagrange, mip_gap,
                                      abs_gap, dives, pool)
        finally:
            pool.shutdown()
    return _search_numba_impl(grid, best_x, best_v, t0, limits, n_lagrange, mip_gap, abs_gap,
                              dives, None)


def _search_pair(grids, best_x, best_v, t0, limits, n_lagrange, mip_gap, abs_gap,
                 dives) -> SearchResult:
    """Two searches of one problem under different relaxations, one thread each. Each one's
    bound holds for the whole problem, so the smaller bounds it and the better point answers;
    both stop once that pair closes the gap (``board``: their tops, their values, a stop flag).
    """
    board = np.array([math.inf, math.inf, best_v, best_v, 0.0])
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(_search_numba_impl, grids[1], best_x, best_v, t0, limits,
                            n_lagrange, mip_gap, abs_gap, dives, None, (board, 1))
        try:
            first = _search_numba_impl(grids[0], best_x, best_v, t0, limits, n_lagrange,
                                       mip_gap, abs_gap, dives, None, (board, 0))
        finally:
            board[4] = 1.0  # the other stops at its next chunk, also after an error here
        second = other.result()
    best = first if first.value >= second.value else second
    bound = max(min(first.bound, second.bound), best.value)
    if first.status == second.status == "infeasible":
        status = "infeasible"
    elif bound - best.value <= 1e-9 * max(1.0, abs(best.value)):
        status = "optimal"
    elif bound - best.value <= max(mip_gap * abs(best.value), abs_gap):
        status = "gap"
    else:
        status = "time_limit"
    return SearchResult(best.x, best.value, bound, status, first.nodes + second.nodes, 0,
                        time.perf_counter() - t0)


def _search_numba_impl(grid, best_x, best_v, t0, limits, n_lagrange, mip_gap, abs_gap, dives,
                       pool, board=None) -> SearchResult:
    """``board`` (array, index): a second search beside this one (``_search_pair``)."""
    from bofire_bark.optimize import grid_search as gs

    soft_at, extend_gap, stop_at = limits
    grid.fit_multipliers(best_v, n_lagrange)
    lo, hi, cat = grid.root()
    ub, n_und, split = grid.bound(lo, hi, cat)
    d, w = grid.d, grid.gm.n_words
    cap = SLOTS
    h_key, h_cnt, h_slot = np.zeros(cap), np.zeros(cap, np.int64), np.zeros(cap, np.int64)
    s_lo, s_hi = np.zeros((cap, d), np.int64), np.zeros((cap, d), np.int64)
    s_cat = np.zeros((cap, d, w), np.uint64)
    s_und, s_split = np.zeros(cap, np.int64), np.zeros(cap, np.int64)
    free = np.arange(cap - 1, -1, -1, dtype=np.int64)  # a stack of free slots, 0 on top
    st = np.zeros(7, np.int64)
    st[gs.PERIOD] = 1
    st[gs.FREE] = cap - 1
    s_lo[0], s_hi[0], s_cat[0], s_und[0], s_split[0] = lo, hi, cat, n_und, split
    st[gs.HEAP] = gs._push(h_key, h_cnt, h_slot, 0, -ub, 0, 0)
    st[gs.COUNTER] = 1
    best = (np.zeros(d, np.int64), np.zeros(d, np.int64), np.zeros((d, w), np.uint64))
    bv = np.array([best_v])
    reach, und, val = grid.scratch[0]
    fixed = (tuple(grid.gm.arrays), grid.gm.kappa, grid.gm.sign, grid.use_lam,
             gs.geometry(grid))
    chunk = 4
    if pool is not None:  # the batch of a round and its children
        nb = 2 * BATCH
        batch = (np.zeros((nb, d), np.int64), np.zeros((nb, d), np.int64),
                 np.zeros((nb, d, w), np.uint64), np.zeros(nb, np.int64),
                 np.zeros(nb, np.int64))
        kids = (np.zeros((nb, 2, d), np.int64), np.zeros((nb, 2, d), np.int64),
                np.zeros((nb, 2, d, w), np.uint64), np.zeros((nb, 2)),
                np.zeros((nb, 2), np.int64), np.zeros((nb, 2), np.int64),
                np.zeros((nb, 2), np.bool_), np.zeros(nb))
        chunk = nb

    def done(bound: float, v: float) -> bool:
        return bound - v <= max(mip_gap * abs(v), abs_gap, 1e-12 * abs(v))

    while True:
        top = -h_key[0] if st[gs.HEAP] else -math.inf
        if board is not None:
            arr, i = board
            arr[i], arr[2 + i] = max(top, bv[0]), bv[0]
            if arr[4] > 0 or done(min(arr[0], arr[1]), max(arr[2], arr[3])):
                arr[4] = 1.0
                status = "gap"
                break
        if not st[gs.HEAP]:
            status = "infeasible" if not np.isfinite(bv[0]) else "optimal"
            break
        if done(top, float(bv[0])) and np.isfinite(bv[0]):
            status = "gap" if top - bv[0] > 1e-9 * max(1.0, abs(bv[0])) else "optimal"
            break
        now = time.perf_counter()
        if now > stop_at or (now > soft_at and relative_gap(bv[0], top) <= extend_gap):
            status = "time_limit"
            break
        if st[gs.FREE] < 2 * chunk:  # room for every child the chunk may push
            grow = max(cap, 2 * chunk)
            h_key, h_cnt, h_slot = (np.concatenate((a, np.zeros(grow, a.dtype)))
                                    for a in (h_key, h_cnt, h_slot))
            s_lo, s_hi, s_cat, s_und, s_split = (
                np.concatenate((a, np.zeros((grow,) + a.shape[1:], a.dtype)))
                for a in (s_lo, s_hi, s_cat, s_und, s_split))
            free = np.concatenate((free[:st[gs.FREE]],
                                   np.arange(cap + grow - 1, cap - 1, -1, dtype=np.int64),
                                   np.zeros(cap, np.int64)))
            st[gs.FREE] += grow
            cap += grow
        heap = (h_key, h_cnt, h_slot, s_lo, s_hi, s_cat, s_und, s_split, free, st)
        if pool is not None:
            n = gs.pop_batch(*heap, *best, bv, *batch, mip_gap, abs_gap)
            if n:
                # thread 1 takes boxes 1, 3, ... of the batch (ranked by bound), this one 0, 2
                other = pool.submit(gs.expand_batch, *fixed, n, 1, 2, *batch, *kids,
                                    *grid.scratch[1], grid._none)
                gs.expand_batch(*fixed, n, 0, 2, *batch, *kids, reach, und, val, grid._none)
                other.result()
                gs.push_batch(*fixed, n, *batch, *kids, *heap, *best, bv, reach, und, val,
                              grid._none, *dives)
            continue
        n0 = st[gs.NODES]
        gs.search_chunk(*fixed, *heap, *best, bv, reach, und, val, grid._none, chunk, mip_gap,
                        abs_gap, *dives)
        # the next chunk: CHUNK_SECONDS at this one's time per box
        per_box = (time.perf_counter() - now) / max(1, st[gs.NODES] - n0)
        chunk = int(min(max(CHUNK_SECONDS / max(per_box, 1e-7), 1), 4 * chunk + 4))
    if st[gs.FOUND]:
        best_x = centre(grid, *best)
    return SearchResult(best_x, float(bv[0]), max(top, float(bv[0])), status,
                        int(st[gs.NODES]), 0, time.perf_counter() - t0)
