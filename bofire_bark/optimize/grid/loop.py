"""The best-first box loop of ``grid.driver`` in numba, for a single output without domain
constraints (the Python loop in ``grid.driver`` handles constraints and several outputs).

It runs the Python loop's steps in the same order (pop the box of best bound, drop it below
the incumbent, take a decided box's value, branch at ``box_bound``'s split, push the children
above the incumbent, the centre of every 4th box split, a dive every ``dive_every`` boxes) and
bounds with the same kernel, so it returns the same bound and point. numba has no clock: the
caller runs it in chunks of at most ``max_nodes`` boxes and checks the time in between; all
state lives in arrays the caller owns.

Open boxes sit in slots (``Heap.lo``, ``hi``, ``cat``, ``und``, ``split``); a binary heap
(``key``, ``cnt``, ``slot``) orders the slot ids by (-bound, insertion counter), as Python's
``heapq`` orders the tuples.
The incumbent is the centre of the box ``best.lo/best.hi/best.cat`` (``grid.points.centre``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from bofire_bark.kinds import CATEGORICAL, CONTINUOUS, DISCRETE
from bofire_bark.optimize.grid.bound import box_bound

# st (int64 state) fields
HEAP, COUNTER, NODES, FREE, FOUND, PERIOD, SKIP = 0, 1, 2, 3, 4, 5, 6
# return codes of search_chunk
RUNNING, DONE, EMPTY = 0, 1, 2


class Geometry(NamedTuple):
    """What ``centre_cell`` needs of a grid: kinds, thresholds padded to one width and their
    lengths, bounds, margins, numbers of discrete values (``geometry``)."""

    kinds: np.ndarray
    thr: np.ndarray
    thr_len: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    margin: np.ndarray
    n_values: np.ndarray


class Loop(NamedTuple):
    """What bounds a box in the loop: the ``BoundModel``, the grid's ``Geometry``, the
    multipliers' use (``grid.bound.LAM_*``) and one thread's ``Scratch``."""

    bm: tuple
    geo: Geometry
    use_lam: int
    sc: tuple


class Heap(NamedTuple):
    """The open boxes: the heap of (key = -bound, cnt = insertion counter, slot), the slots'
    boxes (``lo``, ``hi``, ``cat``, undecided splits ``und``, ``split``), a stack of free
    slots and the int64 state ``st`` (fields ``HEAP``...``SKIP``)."""

    key: np.ndarray
    cnt: np.ndarray
    slot: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    cat: np.ndarray
    und: np.ndarray
    split: np.ndarray
    free: np.ndarray
    st: np.ndarray


class Best(NamedTuple):
    """The incumbent: the box whose centre it is and its value ``v`` (1,)."""

    lo: np.ndarray
    hi: np.ndarray
    cat: np.ndarray
    v: np.ndarray


class DiveWork(NamedTuple):
    """Scratch boxes of one dive (current, child, best child, centre cell) and its answer
    ``o_*``."""

    d_lo: np.ndarray
    d_hi: np.ndarray
    d_cat: np.ndarray
    k_lo: np.ndarray
    k_hi: np.ndarray
    k_cat: np.ndarray
    b_lo: np.ndarray
    b_hi: np.ndarray
    b_cat: np.ndarray
    c_lo: np.ndarray
    c_cat: np.ndarray
    o_lo: np.ndarray
    o_hi: np.ndarray
    o_cat: np.ndarray


@njit(cache=True, nogil=True)
def _bound(lp, lo, hi, cat):
    return box_bound(lp.bm, lo, hi, cat, lp.sc, lp.use_lam)


@njit(cache=True, nogil=True)
def backoff_due(st):
    """Whether a dive is due (both loops): False while the backoff skips chances."""
    if st[SKIP] > 0:
        st[SKIP] -= 1
        return False
    return True


@njit(cache=True, nogil=True)
def backoff_record(st, improved, max_period):
    """After a dive (both loops): a better point resets the backoff, a fruitless dive doubles
    the run of chances skipped (up to ``max_period`` - 1)."""
    if improved:
        st[PERIOD] = 1
    else:
        st[PERIOD] = min(2 * st[PERIOD], max_period)
    st[SKIP] = st[PERIOD] - 1


@njit(cache=True, nogil=True)
def _dive_with_backoff(lp, lo, hi, cat, split, best, st, max_period, work):
    """A dive from box (lo, hi, cat) unless the backoff skips it; a better point becomes the
    incumbent."""
    if not backoff_due(st):
        return
    v = _dive(lp, lo, hi, cat, split, best.v[0], work)
    backoff_record(st, _take_if_better(v, work.o_lo, work.o_hi, work.o_cat, best, st),
                   max_period)


@njit(cache=True, nogil=True)
def _take_if_better(v, lo, hi, cat, best, st):
    """Make the box (lo, hi, cat) of value v the incumbent if it beats it; True if it did."""
    if v > best.v[0]:
        best.v[0] = v
        best.lo[:] = lo
        best.hi[:] = hi
        best.cat[:, :] = cat
        st[FOUND] = 1
        return True
    return False


@njit(cache=True, nogil=True)
def _dive_work(D, W):
    """Scratch arrays of one dive (``_dive``'s ``work``)."""
    return DiveWork(np.empty(D, dtype=np.int64), np.empty(D, dtype=np.int64),
                    np.empty((D, W), dtype=np.uint64), np.empty(D, dtype=np.int64),
                    np.empty(D, dtype=np.int64), np.empty((D, W), dtype=np.uint64),
                    np.empty(D, dtype=np.int64), np.empty(D, dtype=np.int64),
                    np.empty((D, W), dtype=np.uint64), np.empty(D, dtype=np.int64),
                    np.empty((D, W), dtype=np.uint64), np.empty(D, dtype=np.int64),
                    np.empty(D, dtype=np.int64), np.empty((D, W), dtype=np.uint64))


@njit(cache=True, nogil=True)
def centre_cell(geo, lo, hi, cat, c_lo, c_cat):
    """The cell (``c_lo``, one code in ``c_cat``) of ``grid.points.centre`` of a box: the same
    floating-point steps, then ``Grid.cell_of``."""
    kinds, thr, thr_len = geo.kinds, geo.thr, geo.thr_len
    for j in range(kinds.shape[0]):
        for w in range(c_cat.shape[1]):
            c_cat[j, w] = 0
        c_lo[j] = 0
        if kinds[j] == CATEGORICAL:
            for c in range(64 * cat.shape[1]):  # the first allowed code left in the box
                if (cat[j, c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
                    c_cat[j, c >> 6] = np.uint64(1) << np.uint64(c & 63)
                    break
            continue
        n = thr_len[j]
        a, b = lo[j], hi[j]
        if kinds[j] == CONTINUOUS:
            top = geo.upper[j] if b == n else thr[j, b]
            if a == 0:
                xlo = geo.lower[j]
            else:
                xlo = min(thr[j, a - 1] + geo.margin[j], 0.5 * (thr[j, a - 1] + top))
            x = 0.5 * (xlo + top)
        else:  # DISCRETE: index range
            klo = 0.0 if a == 0 else np.floor(thr[j, a - 1]) + 1.0
            khi = geo.n_values[j] - 1.0 if b == n else np.floor(thr[j, b])
            x = np.floor(0.5 * (klo + khi))
        cell = 0
        while cell < n and thr[j, cell] < x:
            cell += 1
        c_lo[j] = cell


@njit(cache=True, nogil=True)
def _centre_value(lp, lo, hi, cat, c_lo, c_cat):
    centre_cell(lp.geo, lo, hi, cat, c_lo, c_cat)
    return _bound(lp, c_lo, c_lo, c_cat)[0]


@njit(cache=True, nogil=True)
def _less(h_key, h_cnt, a, b):
    return h_key[a] < h_key[b] or (h_key[a] == h_key[b] and h_cnt[a] < h_cnt[b])


@njit(cache=True, nogil=True)
def _swap(h_key, h_cnt, h_slot, a, b):
    h_key[a], h_key[b] = h_key[b], h_key[a]
    h_cnt[a], h_cnt[b] = h_cnt[b], h_cnt[a]
    h_slot[a], h_slot[b] = h_slot[b], h_slot[a]


@njit(cache=True, nogil=True)
def push(hp, key, slot):
    """Put ``slot`` on the heap under ``key`` (the next insertion count breaks ties)."""
    h_key, h_cnt, h_slot, st = hp.key, hp.cnt, hp.slot, hp.st
    i = st[HEAP]
    h_key[i] = key
    h_cnt[i] = st[COUNTER]
    h_slot[i] = slot
    while i > 0:
        p = (i - 1) // 2
        if not _less(h_key, h_cnt, i, p):
            break
        _swap(h_key, h_cnt, h_slot, i, p)
        i = p
    st[HEAP] += 1
    st[COUNTER] += 1


@njit(cache=True, nogil=True)
def _pop(h_key, h_cnt, h_slot, size):
    """Remove the top; returns the new size (the top's slot was h_slot[0] before)."""
    size -= 1
    h_key[0], h_cnt[0], h_slot[0] = h_key[size], h_cnt[size], h_slot[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and _less(h_key, h_cnt, c + 1, c):
            c += 1
        if not _less(h_key, h_cnt, c, i):
            break
        _swap(h_key, h_cnt, h_slot, i, c)
        i = c
    return size


@njit(cache=True, nogil=True)
def child(bm, lo, hi, cat, split, side, k_lo, k_hi, k_cat):
    """Write child ``side`` (0 left, 1 right) of a box at ``split`` into k_* (both loops:
    ``Grid.branch`` calls it): a threshold's two sides, or a categorical split's left codes
    against the rest; False when it holds no category of the split feature."""
    node_feat, node_thr, node_lmask = bm.node_feat, bm.node_thr, bm.node_lmask
    k_lo[:] = lo
    k_hi[:] = hi
    k_cat[:, :] = cat
    j = node_feat[split]
    if node_thr[split] < 0:
        any_left = False
        for w in range(cat.shape[1]):
            if side == 0:
                k_cat[j, w] = cat[j, w] & node_lmask[split, w]
            else:
                k_cat[j, w] = cat[j, w] & ~node_lmask[split, w]
            if k_cat[j, w] != 0:
                any_left = True
        return any_left
    if side == 0:
        k_hi[j] = node_thr[split]
    else:
        k_lo[j] = node_thr[split] + 1
    return True


@njit(cache=True, nogil=True)
def _dive(lp, lo, hi, cat, split, best_v, work, max_depth=200):
    """``driver._dive`` without constraints: the value of the decided box reached by always
    taking the child of higher bound (above ``best_v``), that box in work.o_*; -inf if none."""
    d_lo, d_hi, d_cat = work.d_lo, work.d_hi, work.d_cat
    k_lo, k_hi, k_cat = work.k_lo, work.k_hi, work.k_cat
    d_lo[:] = lo
    d_hi[:] = hi
    d_cat[:, :] = cat
    for _ in range(max_depth):
        if split < 0:
            work.o_lo[:] = d_lo
            work.o_hi[:] = d_hi
            work.o_cat[:, :] = d_cat
            return _centre_value(lp, d_lo, d_hi, d_cat, work.c_lo, work.c_cat)
        found = False
        top = -np.inf
        next_split = -1
        for side in range(2):
            if not child(lp.bm, d_lo, d_hi, d_cat, split, side, k_lo, k_hi, k_cat):
                continue
            c_ub, _c_und, c_split = _bound(lp, k_lo, k_hi, k_cat)
            if c_ub > best_v and (not found or c_ub > top):
                found = True
                top = c_ub
                next_split = c_split
                work.b_lo[:] = k_lo
                work.b_hi[:] = k_hi
                work.b_cat[:, :] = k_cat
        if not found:
            return -np.inf
        d_lo[:] = work.b_lo
        d_hi[:] = work.b_hi
        d_cat[:, :] = work.b_cat
        split = next_split
    return -np.inf


@njit(cache=True, nogil=True)
def search_chunk(lp, hp, best, max_nodes, mip_gap, abs_gap, dive_every, max_period):
    """Up to ``max_nodes`` boxes of the search (``driver._search`` without constraints).

    Returns RUNNING (chunk used up), DONE (bound - best.v within the gaps: the caller reads the
    top key) or EMPTY (no open box left). The slots must have room for 2 * max_nodes pushes.
    ``best.v`` (1,) is the incumbent's value; ``st[FOUND]`` is set once a box's centre beats
    it. Dives skip ``st[SKIP]`` chances, ``st[PERIOD]`` - 1 after the last one (doubling up to
    ``max_period`` while dives find nothing better).
    """
    st, free = hp.st, hp.free
    D, W = hp.cat.shape[1], hp.cat.shape[2]
    lo = np.empty(D, dtype=np.int64)
    hi = np.empty(D, dtype=np.int64)
    cat = np.empty((D, W), dtype=np.uint64)
    k_lo = np.empty((2, D), dtype=np.int64)
    k_hi = np.empty((2, D), dtype=np.int64)
    k_cat = np.empty((2, D, W), dtype=np.uint64)
    k_ub = np.empty(2)
    k_und = np.empty(2, dtype=np.int64)
    k_split = np.empty(2, dtype=np.int64)
    k_ok = np.zeros(2, dtype=np.bool_)
    c_lo = np.empty(D, dtype=np.int64)
    c_cat = np.empty((D, W), dtype=np.uint64)
    work = _dive_work(D, W)
    for _ in range(max_nodes):
        size = st[HEAP]
        if size == 0:
            return EMPTY
        bv = best.v[0]
        top = -hp.key[0]
        if bv > -np.inf and top - bv <= max(mip_gap * abs(bv), abs_gap, 1e-12 * abs(bv)):
            return DONE
        slot = hp.slot[0]
        st[HEAP] = _pop(hp.key, hp.cnt, hp.slot, size)
        st[NODES] += 1
        nodes = st[NODES]
        lo[:] = hp.lo[slot]
        hi[:] = hp.hi[slot]
        cat[:, :] = hp.cat[slot]
        n_und = hp.und[slot]
        split = hp.split[slot]
        free[st[FREE]] = slot
        st[FREE] += 1
        if top <= bv:
            continue
        if n_und == 0:  # decided: the bound is the box's exact value (above the incumbent)
            _take_if_better(top, lo, hi, cat, best, st)
            continue
        for side in range(2):
            k_ok[side] = child(lp.bm, lo, hi, cat, split, side, k_lo[side], k_hi[side],
                               k_cat[side])
            if k_ok[side]:
                k_ub[side], k_und[side], k_split[side] = _bound(lp, k_lo[side], k_hi[side],
                                                                k_cat[side])
        for side in range(2):
            if k_ok[side] and k_ub[side] > bv:
                st[FREE] -= 1
                s = free[st[FREE]]
                hp.lo[s] = k_lo[side]
                hp.hi[s] = k_hi[side]
                hp.cat[s] = k_cat[side]
                hp.und[s] = k_und[side]
                hp.split[s] = k_split[side]
                push(hp, -k_ub[side], s)
        # cheap primal steps: the centre of the box just split, and now and then a dive
        if nodes % 4 == 1:
            v = _centre_value(lp, lo, hi, cat, c_lo, c_cat)
            _take_if_better(v, lo, hi, cat, best, st)
        if dive_every > 0 and nodes % dive_every == 1:
            _dive_with_backoff(lp, lo, hi, cat, split, best, st, max_period, work)
    return RUNNING


def geometry(grid) -> Geometry:
    """What ``centre_cell`` needs of a ``grid.boxes.Grid``."""
    box, d = grid.box, grid.d
    lens = np.array([len(grid.gm.thresholds[j]) for j in range(d)], dtype=np.int64)
    thr = np.zeros((d, max(1, int(lens.max(initial=0)))))
    for j in range(d):
        thr[j, :lens[j]] = grid.gm.thresholds[j]
    n_values = np.array([len(box.values[j]) if box.kinds[j] == DISCRETE else 0
                         for j in range(d)], dtype=np.float64)
    return Geometry(np.asarray(box.kinds, dtype=np.int64), thr, lens,
                    np.asarray(box.lower, dtype=np.float64),
                    np.asarray(box.upper, dtype=np.float64),
                    np.asarray(box.margin, dtype=np.float64), n_values)
