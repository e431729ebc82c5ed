"""Branch-and-bound over the threshold grid: BARK's acquisition maximized with a proof.

The integrated UCB is constant on the cells of the grid cut by all split thresholds (and, with
a smooth share, the bin edges of its smooth coordinates: ``grid.bound``), so a
best-first search over boxes of that grid (``grid.bound``) finds its global maximum: a box's
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

With one output and no domain constraints the same loop runs in numba (``grid.loop``);
constraints and several outputs (``MultiGrid``) use the Python loop here. Both take the same
steps in the same order (``grid.loop``'s docstring) and share the loop's numba steps where no
constraint needs Python (``loop.child`` branches, ``loop.backoff_*`` space the dives); the
settings are a ``GridSettings``.
"""

from __future__ import annotations

import heapq
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from bofire_bark.jit import CompileClock, compile_clock
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.optimize.grid import loop as gl
from bofire_bark.optimize.grid.boxes import Grid
from bofire_bark.optimize.grid.points import box_point, centre
from bofire_bark.optimize.grid.pruning import Constraints
from bofire_bark.optimize.result import relative_gap
from bofire_bark.settings import AcquisitionSettings, GridSettings

logger = logging.getLogger(__name__)


@dataclass
class SearchResult:
    """Outcome of the branch-and-bound.

    Attributes:
        x: (D,) best feasible point (the start when nothing better was found), or None.
        value: its integrated UCB; bound: an upper bound of the integrated UCB over the
            feasible set (>= value); status: "optimal" (gap closed to round-off), "gap"
            (within the requested gap), "time_limit", "unresolved" (every box searched,
            the gap held open by decided boxes without a feasible point found and not
            proven empty) or "infeasible".
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


@dataclass(frozen=True)
class _Stop:
    """When the search stops: ``soft_at`` (the time limit, past which it stops once the
    relative gap is <= ``extend_gap``), ``stop_at`` (always), and the gaps. The clock leaves
    out numba's compile time (``clock``, a ``jit.CompileClock``)."""

    t0: float
    soft_at: float
    stop_at: float
    extend_gap: float
    mip_gap: float
    abs_gap: float
    clock: CompileClock | None = None

    def closed(self, bound: float, value: float, gap: float | None = None) -> bool:
        """Whether bound - value is within the gaps (``gap`` instead of ``mip_gap``)."""
        gap = self.mip_gap if gap is None else gap
        return bound - value <= max(gap * abs(value), self.abs_gap, 1e-12 * abs(value))

    def out_of_time(self, now: float, value: float, bound: float) -> bool:
        if self.clock is not None:
            now -= self.clock.elapsed()
        return now > self.stop_at or (now > self.soft_at
                                      and relative_gap(value, bound) <= self.extend_gap)


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


class Frontier:
    """The partition of the grid a search leaves, for the next search of a batch.

    Every box of it (open, pruned, decided or unresolved; the provably empty ones are left
    out) with the upper bound it had: ``boxes`` holds (bound, undecided, split, lo, hi, cat).
    The next candidate of a batch is searched with one more pending point, under which the
    acquisition of ``rules.BATCH_RULES`` can only fall at every point, so each of these
    bounds still holds: that search starts from these boxes instead of the root and bounds a
    box again only when it reaches the top of the heap. Only a grid with the same thresholds
    and categories (the same posterior) takes it.
    """

    def __init__(self):
        self.boxes: list[tuple] = []
        self._grid_key: tuple | None = None

    @staticmethod
    def _key(grid: Grid) -> tuple:
        return (tuple(t.tobytes() for t in grid.gm.thresholds), grid.root()[2].tobytes())

    def fits(self, grid: Grid) -> bool:
        """Whether ``grid`` is the one the boxes were cut on (and there are boxes)."""
        return bool(self.boxes) and self._grid_key == self._key(grid)

    def keep(self, grid: Grid, boxes: list[tuple]) -> None:
        self.boxes, self._grid_key = boxes, self._key(grid)


def search(grid: Grid, cons: Constraints, x0: np.ndarray | None, v0: float,
           settings: AcquisitionSettings | None = None, numba_loop: bool = False,
           frontier: Frontier | None = None) -> SearchResult:
    """Best-first branch-and-bound from the incumbent (x0, v0; x0 None: none), after
    ``settings.grid.n_lagrange`` subgradient steps on the categorical multipliers at the root.

    Stops when bound - value <= max(mip_gap |value|, abs_gap), when no box is left, at
    ``settings.time_limit`` seconds once the relative gap is <= ``extend_gap``, or at
    ``max_time`` seconds (default: ``time_limit``). Under domain constraints a proven gap above
    ``settings.grid.polish_gap`` does not stop it at once: it goes on for the share
    ``settings.grid.polish`` of the time left, or until ``polish_gap`` is proven.

    ``numba_loop`` (the search plan's choice, ``space.finite.plan_search``: one output, no
    domain constraints) runs the box loop in numba; else the Python loop runs, which bounds
    the two children of a box on two threads when ``settings.grid.threads`` > 1.

    The time limits count search time only: seconds numba spends compiling the kernels (the
    first asks in a new environment) are left out (``jit.compile_clock``).

    ``frontier`` (a ``Frontier``; the Python loop only): the search starts from its boxes
    when they were cut on this grid, and leaves its own partition in it. Pass one only when
    the acquisition is nowhere above the one the boxes were bounded for (the next candidate
    of a batch under ``rules.BATCH_RULES``).
    """
    settings = AcquisitionSettings() if settings is None else settings
    if frontier is not None and numba_loop:
        raise ValueError("a frontier is kept by the Python box loop only")
    with compile_clock() as clock:
        result = _search_timed(grid, cons, x0, v0, settings, numba_loop, clock, frontier)
    if clock.seconds > 0:
        logger.info("the grid search's clock left out %.1f s of numba compilation",
                    clock.seconds)
    return result


def _search_timed(grid, cons, x0, v0, settings, numba_loop, clock, frontier=None
                  ) -> SearchResult:
    gs = settings.grid
    t0 = time.perf_counter()
    limit, max_time = settings.time_limit, settings.max_time
    stop = _Stop(t0, t0 + limit, t0 + max(max_time, limit) if max_time is not None
                 else t0 + limit, settings.extend_gap, settings.mip_gap, settings.abs_gap,
                 clock)
    rng = np.random.default_rng(settings.seed)
    best_x = None if x0 is None else np.asarray(x0, dtype=np.float64).copy()
    best_v = float(v0) if x0 is not None else -math.inf
    plain = type(grid) is Grid and not cons  # one output, no domain constraints
    # the longest run of dives skipped after fruitless ones (1: none)
    max_period = gs.dive_backoff_max if gs.dive_backoff and plain else 1
    if numba_loop:
        if not plain:
            raise ValueError("the numba box loop takes one output without domain constraints")
        return _search_numba(grid, best_x, best_v, stop, gs, max_period)
    pool = ThreadPoolExecutor(1) if gs.threads > 1 else None
    try:
        return _search(grid, cons, (best_x, best_v), stop, gs, max_period, rng, pool,
                       frontier)
    finally:
        if pool is not None:
            pool.shutdown()


def build_grid(problem, systems, posterior, settings: AcquisitionSettings | None = None,
               pending: np.ndarray | None = None, numba_loop: bool = False
               ) -> tuple[Grid, Constraints]:
    """The grid and constraints ``search`` runs on for an ``AcquisitionProblem`` (its
    ``SampleSystems`` conditioned on ``pending``), relaxed for the loop that will run."""
    from bofire_bark.optimize.grid.model import grid_model

    settings = AcquisitionSettings() if settings is None else settings
    gm = grid_model(problem, systems, posterior, pending, settings.grid, numba_loop=numba_loop)
    return (Grid(gm, problem.box),
            Constraints(problem.constraints, problem.box, problem.delta))


def search_problem(problem, systems, posterior, settings: AcquisitionSettings | None = None,
                   x0: np.ndarray | None = None, v0: float = -math.inf,
                   pending: np.ndarray | None = None, numba_loop: bool = False
                   ) -> SearchResult:
    """``search`` of an ``AcquisitionProblem`` on its ``build_grid``: the one wiring the
    acquisition's entry points (``optimize.entry``) and the studies share."""
    grid, cons = build_grid(problem, systems, posterior, settings, pending, numba_loop)
    return search(grid, cons, x0, v0, settings, numba_loop)


def _search(grid, cons, start, stop, settings, max_period, rng, pool, frontier=None
            ) -> SearchResult:
    best_x, best_v = start
    dive_every = settings.dive_every
    st = np.zeros(7, np.int64)  # the backoff's state, as the numba loop keeps it
    st[gl.PERIOD] = 1
    grid.fit_multipliers(best_v, settings.n_lagrange)
    # heap entries: (-bound, tie-breaker, undecided, split, lo, hi, cat, stale); a stale
    # bound is a frontier's (valid, maybe loose): the box is bounded again when it is on top
    if frontier is not None and frontier.fits(grid):
        heap = [(-b[0], i, *b[1:], True) for i, b in enumerate(frontier.boxes)]
        heapq.heapify(heap)
    else:
        lo, hi, cat = grid.root()
        ub, n_und, split = grid.bound(lo, hi, cat)
        heap = [(-ub, 0, n_und, split, lo, hi, cat, False)]
    counter = len(heap)
    # the boxes that leave the heap but not the partition, for the frontier
    kept: list[tuple] | None = [] if frontier is not None else None
    unresolved: list[float] = []
    nodes = 0
    status = "optimal"
    polish_at = None  # when the gap was proven, under constraints: the search goes on
    while heap:
        top = -heap[0][0]
        open_bound = max(top, max(unresolved, default=-math.inf))
        now = time.perf_counter()
        if stop.closed(open_bound, best_v) and best_x is not None:
            status = "gap" if open_bound - best_v > 1e-9 * max(1.0, abs(best_v)) else "optimal"
            if (not cons or settings.polish <= 0 or status == "optimal"
                    or stop.closed(open_bound, best_v, settings.polish_gap)):
                break
            if polish_at is None:
                polish_at = now + settings.polish * max(0.0, stop.soft_at - now)
            if now > polish_at:
                break
        elif stop.out_of_time(now, best_v, open_bound):
            status = "time_limit"
            break
        neg, _, n_und, split, lo, hi, cat, stale = heapq.heappop(heap)
        if stale:
            ub, n_und, split = grid.bound(lo, hi, cat)
            if ub > best_v:
                heapq.heappush(heap, (-ub, counter, n_und, split, lo, hi, cat, False))
                counter += 1
            elif kept is not None:
                kept.append((ub, n_und, split, lo, hi, cat))
            continue
        nodes += 1
        if -neg <= best_v:
            if kept is not None:
                kept.append((-neg, n_und, split, lo, hi, cat))
            continue
        if n_und == 0:  # decided: the bound is the box's exact value
            x, empty = box_point(grid, cons, lo, hi, cat, rng)
            if x is not None:
                if -neg > best_v:
                    best_x, best_v = x, -neg
            elif not empty:
                unresolved.append(-neg)
            if kept is not None and not empty:
                kept.append((-neg, n_und, split, lo, hi, cat))
            continue
        kids = [c for c in grid.branch(lo, hi, cat, split) if _may_hold(grid, cons, c)]
        if pool is not None and len(kids) == 2:
            # the kernel releases the GIL: both children on the two cores
            futures = [pool.submit(grid.bound, *kids[1], 1)]
            bounds = [grid.bound(*kids[0])] + [f.result() for f in futures]
        else:
            bounds = [grid.bound(*c) for c in kids]
        for child, (c_ub, c_und, c_split) in zip(kids, bounds, strict=True):
            if c_ub > best_v:
                heapq.heappush(heap, (-c_ub, counter, c_und, c_split, *child, False))
                counter += 1
            elif kept is not None:
                kept.append((c_ub, c_und, c_split, *child))
        # cheap primal steps: the centre of the box just split, and now and then a dive
        if nodes % 4 == 1:
            x = centre(grid, lo, hi, cat)
            if not cons or cons.satisfied(x):
                v = grid.value(x)
                if v > best_v:
                    best_x, best_v = x, v
        if dive_every and nodes % dive_every == 1 and gl.backoff_due(st):
            x, v = _dive(grid, cons, (lo, hi, cat), split, best_v, rng)
            improved = x is not None and v > best_v
            if improved:
                best_x, best_v = x, v
            gl.backoff_record(st, improved, max_period)
    else:
        open_bound = max(unresolved, default=-math.inf)
        # the heap is empty: an open gap can only come from the unresolved boxes
        status = "infeasible" if best_x is None and not unresolved else (
            "optimal" if stop.closed(open_bound, best_v) else "unresolved")
    if not heap:
        open_bound = max(unresolved, default=-math.inf)
    if frontier is not None:
        frontier.keep(grid, kept + [(-e[0], *e[2:7]) for e in heap])
    bound = max(open_bound, best_v)
    return SearchResult(best_x, best_v, bound, status, nodes, len(unresolved),
                        time.perf_counter() - stop.t0)


def _new_heap(cap: int, d: int, w: int) -> gl.Heap:
    st = np.zeros(7, np.int64)
    st[gl.PERIOD] = 1
    st[gl.FREE] = cap - 1
    return gl.Heap(np.zeros(cap), np.zeros(cap, np.int64), np.zeros(cap, np.int64),
                   np.zeros((cap, d), np.int64), np.zeros((cap, d), np.int64),
                   np.zeros((cap, d, w), np.uint64), np.zeros(cap, np.int64),
                   np.zeros(cap, np.int64),
                   np.arange(cap - 1, -1, -1, dtype=np.int64),  # free slots, 0 on top
                   st)


def _grown(hp: gl.Heap, grow: int) -> gl.Heap:
    """The heap with ``grow`` more slots (the new ones free)."""
    cap = len(hp.key)
    st = hp.st
    free = np.concatenate((hp.free[:st[gl.FREE]],
                           np.arange(cap + grow - 1, cap - 1, -1, dtype=np.int64),
                           np.zeros(cap, np.int64)))
    st[gl.FREE] += grow
    arrays = [np.concatenate((a, np.zeros((grow,) + a.shape[1:], a.dtype)))
              for a in hp[:8]]
    return gl.Heap(*arrays, free, st)


def _search_numba(grid: Grid, best_x, best_v, stop: _Stop, settings: GridSettings,
                  max_period: int) -> SearchResult:
    """``_search`` for a ``Grid`` without constraints: the box loop in ``grid.loop``, run in
    chunks of about ``settings.chunk_seconds``, with the clock read in between."""
    grid.fit_multipliers(best_v, settings.n_lagrange)
    lo, hi, cat = grid.root()
    ub, n_und, split = grid.bound(lo, hi, cat)
    d, w = grid.d, grid.gm.n_words
    hp = _new_heap(settings.slots, d, w)
    hp.lo[0], hp.hi[0], hp.cat[0], hp.und[0], hp.split[0] = lo, hi, cat, n_und, split
    gl.push(hp, -ub, 0)
    best = gl.Best(np.zeros(d, np.int64), np.zeros(d, np.int64), np.zeros((d, w), np.uint64),
                   np.array([best_v]))
    lp = gl.Loop(grid.gm.bm, gl.geometry(grid), grid.use_lam, grid.scratch[0])
    chunk = 4
    bv = best.v
    while True:
        top = -hp.key[0] if hp.st[gl.HEAP] else -math.inf
        if not hp.st[gl.HEAP]:
            status = "infeasible" if not np.isfinite(bv[0]) else "optimal"
            break
        if stop.closed(top, float(bv[0])) and np.isfinite(bv[0]):
            status = "gap" if top - bv[0] > 1e-9 * max(1.0, abs(bv[0])) else "optimal"
            break
        now = time.perf_counter()
        if stop.out_of_time(now, bv[0], top):
            status = "time_limit"
            break
        if hp.st[gl.FREE] < 2 * chunk:  # room for every child the chunk may push
            hp = _grown(hp, max(len(hp.key), 2 * chunk))
        n0 = hp.st[gl.NODES]
        gl.search_chunk(lp, hp, best, chunk, stop.mip_gap, stop.abs_gap, settings.dive_every,
                        max_period)
        # the next chunk: chunk_seconds at this one's time per box
        per_box = (time.perf_counter() - now) / max(1, hp.st[gl.NODES] - n0)
        chunk = int(min(max(settings.chunk_seconds / max(per_box, 1e-7), 1), 4 * chunk + 4))
    if hp.st[gl.FOUND]:
        best_x = centre(grid, best.lo, best.hi, best.cat)
    return SearchResult(best_x, float(bv[0]), max(top, float(bv[0])), status,
                        int(hp.st[gl.NODES]), 0, time.perf_counter() - stop.t0)
