"""Boxes of the threshold grid: one output's (``Grid``: root, bound, branch, the multipliers'
fit, a point's cell and value) and several outputs' on one grid (``MultiGrid``; with the
expected hypervolume improvement ``HypervolumeGrid``).
"""

from __future__ import annotations

import math

import numpy as np

from bofire_bark.optimize.ensemble import CATEGORICAL, CONTINUOUS, InputBox
from bofire_bark.optimize.grid.bound import LAM_OFF, LAM_UNDECIDED, box_bound, scratch
from bofire_bark.optimize.grid.loop import child
from bofire_bark.optimize.grid.model import GridModel, _words
from bofire_bark.optimize.grid.pruning import PRUNE_TOL
from bofire_bark.optimize.hypervolume import LINE_PIECES, ehvi_bound
from bofire_bark.optimize.rules import UCB


class Grid:
    """Boxes of the grid and the scratch space of the bound kernel."""

    def __init__(self, gm: GridModel, box: InputBox):
        self.gm = gm
        self.box = box
        self.d = box.n_features
        self.n_cells = np.array([len(gm.thresholds[j]) if box.kinds[j] != CATEGORICAL else 0
                                 for j in range(self.d)], dtype=np.int64)
        # one scratch set per thread that may bound boxes at the same time, and one that
        # records the subgradient for the multipliers' fit
        self.scratch = [scratch(gm.bm) for _ in range(2)]
        self._grad = scratch(gm.bm, grad=True)
        self.use_lam = LAM_OFF  # grid.bound.LAM_*: LAM_UNDECIDED once multipliers are fitted

    def root(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo = np.zeros(self.d, dtype=np.int64)
        hi = self.n_cells.copy()
        cat = np.zeros((self.d, self.gm.n_words), dtype=np.uint64)
        for j in range(self.d):
            if self.box.kinds[j] == CATEGORICAL:
                cat[j] = _words(self.box.allowed[j], self.gm.n_words)
        return lo, hi, cat

    def bound(self, lo, hi, cat, thread: int = 0) -> tuple[float, int, int]:
        """(upper bound, number of undecided splits, split to branch on) of a box; ``thread``
        picks the scratch set (boxes bounded concurrently need different ones)."""
        return box_bound(self.gm.bm, lo, hi, cat, self.scratch[thread], self.use_lam)

    def fit_multipliers(self, target: float, iterations: int, box=None) -> list[float]:
        """Lower the bound of ``box`` (default: the root) by projected subgradient steps on
        the multipliers (Polyak steps towards ``target``, the incumbent's value; the best
        multipliers are kept). Returns the bound after each step."""
        lam = self.gm.lam
        # the multipliers cancel in the samples' weighted sum of UCBs only: another rule
        # applies g to each sample's bound, where they would not cancel
        if len(lam) == 0 or iterations <= 0 or self.gm.rule != UCB:
            return []
        root = self.root() if box is None else box
        self.use_lam = LAM_UNDECIDED
        onehot = self._grad.grad
        onehot[:] = 0.0
        best_lam, best = lam.copy(), box_bound(self.gm.bm, *root, self._grad, self.use_lam)[0]
        trace = [best]
        theta = 1.0
        for _ in range(iterations):
            onehot[:] = 0.0
            ub = box_bound(self.gm.bm, *root, self._grad, self.use_lam)[0]
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
        """Exact acquisition value at an encoded point (the bound of its cell)."""
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
        """The two children of a box at one of its undecided splits (``box_bound`` chose it),
        by the numba loop's own step (``loop.child``)."""
        d, w = cat.shape
        k_lo, k_hi = np.empty((2, d), np.int64), np.empty((2, d), np.int64)
        k_cat = np.empty((2, d, w), np.uint64)
        for side in range(2):
            child(self.gm.bm, lo, hi, cat, split, side, k_lo[side], k_hi[side], k_cat[side])
        return (k_lo[0], k_hi[0], k_cat[0]), (k_lo[1], k_hi[1], k_cat[1])


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
        self._split_off = np.cumsum([0] + [len(g.gm.bm.node_feat) for g in grids])

    def root(self):
        return self.grids[0].root()

    def intervals(self, lo, hi):
        return self.grids[0].intervals(lo, hi)

    def cell_of(self, x):
        return self.grids[0].cell_of(x)

    def channel_bounds(self, lo, hi, cat, thread: int = 0):
        """Per channel (upper bound, undecided splits, split)."""
        return [g.bound(lo, hi, cat, thread) for g in self.grids]

    def bound(self, lo, hi, cat, thread: int = 0) -> tuple[float, int, int]:
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

    def fit_multipliers(self, target: float, iterations: int, box=None):
        """Each channel's multipliers towards its value at the start (``targets``)."""
        if self.targets is None:
            return []
        return [g.fit_multipliers(float(t), iterations, box)
                for g, t in zip(self.grids, self.targets, strict=True)]


class HypervolumeGrid(MultiGrid):
    """Several outputs' grid models combined by the expected hypervolume improvement
    (``optimize.hypervolume``): per box, every objective channel's per-sample bounds
    (``Scratch.per``, expanded from distinct samples to all samples so output k's sample s
    meets output j's sample s) go to ``hypervolume.ehvi_bound``; output limits prune as in
    ``MultiGrid``. Channels' grids bound with the UCB at the coupling weight, without
    multipliers (they cancel only in the weighted sum of linear terms)."""

    def __init__(self, grids: list[Grid], acq, hv, sample_of: list[np.ndarray]):
        super().__init__(grids, acq)
        self.hv = hv
        self.sample_of = sample_of  # per channel: (S,) distinct index of each sample
        self._required = np.array([w.required for w in hv.weights], dtype=np.float64)
        for g in grids:
            g.scratch = [scratch(g.gm.bm, per_sample=True) for _ in range(2)]

    def bound(self, lo, hi, cat, thread: int = 0) -> tuple[float, int, int]:
        parts = self.channel_bounds(lo, hi, cat, thread)
        if self.hv.prunes:
            for lim in self.acq.limits:
                if parts[lim.channel][0] < lim.required - PRUNE_TOL:
                    return -np.inf, sum(p[1] for p in parts), -1
        A, L, B, C = self._per_sample(self.hv.goals, thread)
        W = self._per_sample(tuple(w.channel for w in self.hv.weights), thread)
        ub = float(ehvi_bound(A, L, B, C, self.grids[self.hv.goals[0]].gm.kappa,
                              self.hv.lower, self.hv.upper, LINE_PIECES, *W, self._required))
        n_und = sum(p[1] for p in parts)
        if n_und == 0:
            return ub, 0, -1
        # branch in the channel whose samples' sd range is widest (a pruning limit's last)
        width = {c: float(np.sum(self.grids[c].scratch[thread].per[:, 2]
                                 - self.grids[c].scratch[thread].per[:, 1]))
                 for c in self.hv.goals + tuple(w.channel for w in self.hv.weights)}
        undecided = [c for c, p in enumerate(parts) if p[1] > 0]
        c = max(undecided, key=lambda c: (width.get(c, -1.0), parts[c][1]))
        return ub, n_und, int(self._split_off[c] + parts[c][2])

    def _per_sample(self, channels: tuple[int, ...], thread: int):
        """Each channel's per-sample bounds A, L, B, C, every one (S, len(channels))."""
        if not channels:
            empty = np.empty((len(self.sample_of[0]), 0))
            return empty, empty, empty, empty
        per = [self.grids[c].scratch[thread].per[self.sample_of[c]] for c in channels]
        return tuple(np.ascontiguousarray(np.stack([p[:, i] for p in per], axis=1))
                     for i in range(4))

    def fit_multipliers(self, target: float, iterations: int, box=None):
        return []
