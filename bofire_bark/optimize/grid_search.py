"""The best-first box loop of ``bnb.search`` in numba, for a single output without domain
constraints (the Python loop in ``bnb`` handles constraints and several outputs).

It runs the Python loop's steps in the same order (pop the box of best bound, drop it below
the incumbent, take a decided box's value, branch at ``box_bound``'s split, push the children
above the incumbent, the centre of every 4th box split, a dive every ``dive_every`` boxes) and
bounds with the same kernel, so it returns the same bound and point. numba has no clock: the
caller runs it in chunks of at most ``max_nodes`` boxes and checks the time in between; all
state lives in arrays the caller owns.

Open boxes sit in slots (``s_lo``, ``s_hi``, ``s_cat``, ``s_und``, ``s_split``); a binary heap
orders the slot ids by (-bound, insertion counter), as Python's ``heapq`` orders the tuples.
The incumbent is the centre of the box ``best_lo/best_hi/best_cat`` (``bnb.centre``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bofire_bark.kinds import CATEGORICAL, CONTINUOUS, DISCRETE
from bofire_bark.optimize.grid_bound import box_bound

# st (int64 state) fields
HEAP, COUNTER, NODES, FREE, FOUND, PERIOD, SKIP = 0, 1, 2, 3, 4, 5, 6
# return codes of search_chunk
RUNNING, DONE, EMPTY = 0, 1, 2


@njit(cache=True, nogil=True)
def _bound(md, kappa, sign, use_lam, lo, hi, cat, reach, und, val, none):
    return box_bound(md[0], md[1], md[2], md[3], md[4], md[5], md[6], md[7], md[8], md[9],
                     md[10], md[11], md[12], md[13], md[14], md[15], md[16], md[17], md[18],
                     md[19], md[20], md[21], md[22], md[23], md[24], md[25], md[26], md[27],
                     md[28], md[29], md[30], md[31], md[32], md[33], md[34], kappa, sign, lo,
                     hi, cat, reach, und, val, use_lam, none)


@njit(cache=True, nogil=True)
def _dive_with_backoff(md, kappa, sign, use_lam, geo, lo, hi, cat, split, best_v, best_lo,
                       best_hi, best_cat, st, max_period, work, reach, und, val, none, o_lo,
                       o_hi, o_cat):
    """A dive from box (lo, hi, cat) unless the backoff skips it; a better point becomes the
    incumbent and resets the backoff, a fruitless dive doubles it (up to ``max_period``)."""
    if st[SKIP] > 0:
        st[SKIP] -= 1
        return
    v = _dive(md, kappa, sign, use_lam, geo, lo, hi, cat, split, best_v[0], work, reach, und,
              val, none, o_lo, o_hi, o_cat)
    if _take_if_better(v, o_lo, o_hi, o_cat, best_v, best_lo, best_hi, best_cat, st):
        st[PERIOD] = 1
    else:
        st[PERIOD] = min(2 * st[PERIOD], max_period)
    st[SKIP] = st[PERIOD] - 1


@njit(cache=True, nogil=True)
def _take_if_better(v, lo, hi, cat, best_v, best_lo, best_hi, best_cat, st):
    """Make the box (lo, hi, cat) of value v the incumbent if it beats it; True if it did."""
    if v > best_v[0]:
        best_v[0] = v
        best_lo[:] = lo
        best_hi[:] = hi
        best_cat[:, :] = cat
        st[FOUND] = 1
        return True
    return False


@njit(cache=True, nogil=True)
def _dive_work(D, W):
    """Scratch arrays of one dive (``_dive``'s ``work``)."""
    return (np.empty(D, dtype=np.int64), np.empty(D, dtype=np.int64),
            np.empty((D, W), dtype=np.uint64), np.empty(D, dtype=np.int64),
            np.empty(D, dtype=np.int64), np.empty((D, W), dtype=np.uint64),
            np.empty(D, dtype=np.int64), np.empty(D, dtype=np.int64),
            np.empty((D, W), dtype=np.uint64), np.empty(D, dtype=np.int64),
            np.empty((D, W), dtype=np.uint64))


@njit(cache=True, nogil=True)
def centre_cell(kinds, thr, thr_len, lower, upper, margin, n_values, lo, hi, cat, c_lo, c_cat):
    """The cell (``c_lo``, one code in ``c_cat``) of ``bnb.centre`` of a box: the same
    floating-point steps, then ``Grid.cell_of``."""
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
            top = upper[j] if b == n else thr[j, b]
            if a == 0:
                xlo = lower[j]
            else:
                xlo = min(thr[j, a - 1] + margin[j], 0.5 * (thr[j, a - 1] + top))
            x = 0.5 * (xlo + top)
        else:  # DISCRETE: index range
            klo = 0.0 if a == 0 else np.floor(thr[j, a - 1]) + 1.0
            khi = n_values[j] - 1.0 if b == n else np.floor(thr[j, b])
            x = np.floor(0.5 * (klo + khi))
        cell = 0
        while cell < n and thr[j, cell] < x:
            cell += 1
        c_lo[j] = cell


@njit(cache=True, nogil=True)
def _centre_value(md, kappa, sign, use_lam, geo, lo, hi, cat, c_lo, c_cat, reach, und, val,
                  none):
    centre_cell(geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6], lo, hi, cat, c_lo,
                c_cat)
    return _bound(md, kappa, sign, use_lam, c_lo, c_lo, c_cat, reach, und, val, none)[0]


@njit(cache=True, nogil=True)
def _less(h_key, h_cnt, a, b):
    return h_key[a] < h_key[b] or (h_key[a] == h_key[b] and h_cnt[a] < h_cnt[b])


@njit(cache=True, nogil=True)
def _swap(h_key, h_cnt, h_slot, a, b):
    h_key[a], h_key[b] = h_key[b], h_key[a]
    h_cnt[a], h_cnt[b] = h_cnt[b], h_cnt[a]
    h_slot[a], h_slot[b] = h_slot[b], h_slot[a]


@njit(cache=True, nogil=True)
def _push(h_key, h_cnt, h_slot, size, key, cnt, slot):
    i = size
    h_key[i] = key
    h_cnt[i] = cnt
    h_slot[i] = slot
    while i > 0:
        p = (i - 1) // 2
        if not _less(h_key, h_cnt, i, p):
            break
        _swap(h_key, h_cnt, h_slot, i, p)
        i = p
    return size + 1


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
def _child(md, lo, hi, cat, split, side, k_lo, k_hi, k_cat):
    """Write child ``side`` (0 left, 1 right) of a box at ``split`` (``Grid.branch``) into
    k_*; False when it holds no category of the split feature (``bnb._may_hold``)."""
    node_feat, node_thr, node_lmask = md[0], md[1], md[2]
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
def _dive(md, kappa, sign, use_lam, geo, lo, hi, cat, split, best_v, work, reach, und, val,
          none, out_lo, out_hi, out_cat, max_depth=200):
    """``bnb._dive`` without constraints: the value of the decided box reached by always
    taking the child of higher bound (above ``best_v``), that box in out_*; -inf if none."""
    d_lo, d_hi, d_cat, k_lo, k_hi, k_cat, b_lo, b_hi, b_cat, c_lo, c_cat = work
    d_lo[:] = lo
    d_hi[:] = hi
    d_cat[:, :] = cat
    for _ in range(max_depth):
        if split < 0:
            out_lo[:] = d_lo
            out_hi[:] = d_hi
            out_cat[:, :] = d_cat
            return _centre_value(md, kappa, sign, use_lam, geo, d_lo, d_hi, d_cat, c_lo, c_cat,
                                 reach, und, val, none)
        found = False
        top = -np.inf
        next_split = -1
        for side in range(2):
            if not _child(md, d_lo, d_hi, d_cat, split, side, k_lo, k_hi, k_cat):
                continue
            c_ub, _c_und, c_split = _bound(md, kappa, sign, use_lam, k_lo, k_hi, k_cat, reach,
                                           und, val, none)
            if c_ub > best_v and (not found or c_ub > top):
                found = True
                top = c_ub
                next_split = c_split
                b_lo[:] = k_lo
                b_hi[:] = k_hi
                b_cat[:, :] = k_cat
        if not found:
            return -np.inf
        d_lo[:] = b_lo
        d_hi[:] = b_hi
        d_cat[:, :] = b_cat
        split = next_split
    return -np.inf


@njit(cache=True, nogil=True)
def search_chunk(md, kappa, sign, use_lam, geo, h_key, h_cnt, h_slot, s_lo, s_hi, s_cat, s_und,
                 s_split, free, st, best_lo, best_hi, best_cat, best_v, reach, und, val, none,
                 max_nodes, mip_gap, abs_gap, dive_every, max_period):
    """Up to ``max_nodes`` boxes of the search (``bnb._search`` without constraints).

    Returns RUNNING (chunk used up), DONE (bound - best_v within the gaps: the caller reads the
    top key) or EMPTY (no open box left). The slots must have room for 2 * max_nodes pushes.
    ``best_v`` (1,) is the incumbent's value; ``st[FOUND]`` is set once a box's centre beats it.
    Dives skip ``st[SKIP]`` chances, ``st[PERIOD]`` - 1 after the last one (doubling up to
    ``max_period`` while dives find nothing better).
    """
    D, W = s_cat.shape[1], s_cat.shape[2]
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
    o_lo = np.empty(D, dtype=np.int64)
    o_hi = np.empty(D, dtype=np.int64)
    o_cat = np.empty((D, W), dtype=np.uint64)
    work = _dive_work(D, W)
    for _ in range(max_nodes):
        size = st[HEAP]
        if size == 0:
            return EMPTY
        bv = best_v[0]
        top = -h_key[0]
        if bv > -np.inf and top - bv <= max(mip_gap * abs(bv), abs_gap, 1e-12 * abs(bv)):
            return DONE
        slot = h_slot[0]
        st[HEAP] = _pop(h_key, h_cnt, h_slot, size)
        st[NODES] += 1
        nodes = st[NODES]
        lo[:] = s_lo[slot]
        hi[:] = s_hi[slot]
        cat[:, :] = s_cat[slot]
        n_und = s_und[slot]
        split = s_split[slot]
        free[st[FREE]] = slot
        st[FREE] += 1
        if top <= bv:
            continue
        if n_und == 0:  # decided: the bound is the box's exact value (above the incumbent)
            _take_if_better(top, lo, hi, cat, best_v, best_lo, best_hi, best_cat, st)
            continue
        for side in range(2):
            k_ok[side] = _child(md, lo, hi, cat, split, side, k_lo[side], k_hi[side],
                                k_cat[side])
            if k_ok[side]:
                k_ub[side], k_und[side], k_split[side] = _bound(
                    md, kappa, sign, use_lam, k_lo[side], k_hi[side], k_cat[side], reach, und,
                    val, none)
        for side in range(2):
            if k_ok[side] and k_ub[side] > bv:
                st[FREE] -= 1
                s = free[st[FREE]]
                s_lo[s] = k_lo[side]
                s_hi[s] = k_hi[side]
                s_cat[s] = k_cat[side]
                s_und[s] = k_und[side]
                s_split[s] = k_split[side]
                st[HEAP] = _push(h_key, h_cnt, h_slot, st[HEAP], -k_ub[side], st[COUNTER], s)
                st[COUNTER] += 1
        # cheap primal steps: the centre of the box just split, and now and then a dive
        if nodes % 4 == 1:
            v = _centre_value(md, kappa, sign, use_lam, geo, lo, hi, cat, c_lo, c_cat, reach,
                              und, val, none)
            _take_if_better(v, lo, hi, cat, best_v, best_lo, best_hi, best_cat, st)
        if dive_every > 0 and nodes % dive_every == 1:
            _dive_with_backoff(md, kappa, sign, use_lam, geo, lo, hi, cat, split, best_v, best_lo,
                               best_hi, best_cat, st, max_period, work, reach, und, val, none,
                               o_lo, o_hi, o_cat)
    return RUNNING


def geometry(grid) -> tuple:
    """What ``centre_cell`` needs of a ``bnb.Grid``: kinds, padded thresholds and lengths,
    bounds, margins, numbers of discrete values."""
    box, d = grid.box, grid.d
    lens = np.array([len(grid.gm.thresholds[j]) for j in range(d)], dtype=np.int64)
    thr = np.zeros((d, max(1, int(lens.max(initial=0)))))
    for j in range(d):
        thr[j, :lens[j]] = grid.gm.thresholds[j]
    n_values = np.array([len(box.values[j]) if box.kinds[j] == DISCRETE else 0
                         for j in range(d)], dtype=np.float64)
    return (np.asarray(box.kinds, dtype=np.int64), thr, lens,
            np.asarray(box.lower, dtype=np.float64), np.asarray(box.upper, dtype=np.float64),
            np.asarray(box.margin, dtype=np.float64), n_values)


# ------------------------------------------------------------------------------------------
# two threads: the loop in rounds (pop a batch of the best boxes, bound their children on two
# threads, push them), so each thread bounds boxes among the best open ones
# ------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def pop_batch(h_key, h_cnt, h_slot, s_lo, s_hi, s_cat, s_und, s_split, free, st, best_lo,
              best_hi, best_cat, best_v, b_lo, b_hi, b_cat, b_split, b_node, mip_gap, abs_gap):
    """Pop up to len(b_node) boxes to branch into the batch (dropping those below the
    incumbent, taking decided ones as incumbents, as ``search_chunk``); stops early when the
    gap is closed. Returns the batch size."""
    n = 0
    while n < b_node.shape[0] and st[HEAP] > 0:
        bv = best_v[0]
        top = -h_key[0]
        if bv > -np.inf and top - bv <= max(mip_gap * abs(bv), abs_gap, 1e-12 * abs(bv)):
            break
        slot = h_slot[0]
        st[HEAP] = _pop(h_key, h_cnt, h_slot, st[HEAP])
        st[NODES] += 1
        free[st[FREE]] = slot
        st[FREE] += 1
        if top <= bv:
            continue
        if s_und[slot] == 0:
            _take_if_better(top, s_lo[slot], s_hi[slot], s_cat[slot], best_v, best_lo, best_hi,
                            best_cat, st)
            continue
        b_lo[n] = s_lo[slot]
        b_hi[n] = s_hi[slot]
        b_cat[n] = s_cat[slot]
        b_split[n] = s_split[slot]
        b_node[n] = st[NODES]
        n += 1
    return n


@njit(cache=True, nogil=True)
def expand_batch(md, kappa, sign, use_lam, geo, n, first, step, b_lo, b_hi, b_cat, b_split,
                 b_node, c_lo, c_hi, c_cat, c_ub, c_und, c_split, c_ok, cv, reach, und, val,
                 none):
    """Bound the children of batch boxes first, first + step, ... (< n), and the centre of
    every 4th box; one scratch set (reach, und, val) per thread."""
    D, W = b_cat.shape[1], b_cat.shape[2]
    p_lo = np.empty(D, dtype=np.int64)
    p_cat = np.empty((D, W), dtype=np.uint64)
    for i in range(first, n, step):
        for side in range(2):
            c_ok[i, side] = _child(md, b_lo[i], b_hi[i], b_cat[i], b_split[i], side,
                                   c_lo[i, side], c_hi[i, side], c_cat[i, side])
            if c_ok[i, side]:
                c_ub[i, side], c_und[i, side], c_split[i, side] = _bound(
                    md, kappa, sign, use_lam, c_lo[i, side], c_hi[i, side], c_cat[i, side],
                    reach, und, val, none)
        cv[i] = -np.inf
        if b_node[i] % 4 == 1:
            cv[i] = _centre_value(md, kappa, sign, use_lam, geo, b_lo[i], b_hi[i], b_cat[i],
                                  p_lo, p_cat, reach, und, val, none)


@njit(cache=True, nogil=True)
def push_batch(md, kappa, sign, use_lam, geo, n, b_lo, b_hi, b_cat, b_split, b_node, c_lo,
               c_hi, c_cat, c_ub, c_und, c_split, c_ok, cv, h_key, h_cnt, h_slot, s_lo, s_hi,
               s_cat, s_und, s_split, free, st, best_lo, best_hi, best_cat, best_v, reach, und,
               val, none, dive_every, max_period):
    """The batch's centres as incumbents, its children above the incumbent into the heap (in
    box order), then the dives due (``search_chunk``'s rules)."""
    D, W = b_cat.shape[1], b_cat.shape[2]
    for i in range(n):
        _take_if_better(cv[i], b_lo[i], b_hi[i], b_cat[i], best_v, best_lo, best_hi, best_cat,
                        st)
    for i in range(n):
        for side in range(2):
            if c_ok[i, side] and c_ub[i, side] > best_v[0]:
                st[FREE] -= 1
                s = free[st[FREE]]
                s_lo[s] = c_lo[i, side]
                s_hi[s] = c_hi[i, side]
                s_cat[s] = c_cat[i, side]
                s_und[s] = c_und[i, side]
                s_split[s] = c_split[i, side]
                st[HEAP] = _push(h_key, h_cnt, h_slot, st[HEAP], -c_ub[i, side], st[COUNTER],
                                 s)
                st[COUNTER] += 1
    if dive_every <= 0:
        return
    o_lo = np.empty(D, dtype=np.int64)
    o_hi = np.empty(D, dtype=np.int64)
    o_cat = np.empty((D, W), dtype=np.uint64)
    work = _dive_work(D, W)
    for i in range(n):
        if b_node[i] % dive_every != 1:
            continue
        _dive_with_backoff(md, kappa, sign, use_lam, geo, b_lo[i], b_hi[i], b_cat[i],
                           b_split[i], best_v, best_lo, best_hi, best_cat, st, max_period,
                           work, reach, und, val, none, o_lo, o_hi, o_cat)
