"""Forests as flat struct-of-arrays, and the tree operations the sampler and prediction share.

Layout of one forest of ``m`` trees with node capacity ``C`` (node 0 is each tree's root):

- ``feat``   (m, C) int64: split feature of an internal node; ``LEAF`` (-1) for a leaf,
  ``FREE`` (-2) for an unused slot.
- ``thr``    (m, C) float64: threshold for continuous (the value) and discrete (the value's
  index) features. A point goes left iff ``x[feat] <= thr``.
- ``mask``   (m, C, W) uint64: for a categorical split, the bit set of category codes that go
  left (W 64-bit words, so any number of categories is stored exactly).
- ``left``, ``right``, ``parent`` (m, C) int64: node links, -1 where absent.
- ``depth``  (m, C) int64: depth of the node (root 0).

A sample of the posterior is a forest plus its noise variance; arrays of samples carry a
leading sample axis. Split spaces come from ``bofire_bark.space`` as ``kinds``, ``lower``,
``upper`` and ``n_values`` (continuous 0, discrete 1, categorical 2; discrete and categorical
features are encoded as integer indices), with the split variables of ``Space`` (a
categorical feature with descriptors may split by a descriptor's value).

Python code keeps a forest as a dict of these arrays (``FOREST_KEYS``); numba kernels take it
as a ``Forest`` named tuple. Named tuples of arrays are plain tuples to numba: attribute access
costs nothing, they cache with ``cache=True`` and load from the cache faster than structrefs
(jitclasses do not cache at all). Their fields cannot be reassigned, so state that changes
lives in the arrays' elements.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from bofire_bark.kinds import CATEGORICAL, CONTINUOUS, DISCRETE  # noqa: F401 (re-exported)

LEAF = -1
FREE = -2


class Forest(NamedTuple):
    """One forest of ``m`` trees, node capacity ``C``, ``W`` mask words (see module docstring).

    feat (m, C) int64; thr (m, C) float64; mask (m, C, W) uint64; left, right, parent,
    depth (m, C) int64.
    """

    feat: np.ndarray
    thr: np.ndarray
    mask: np.ndarray
    left: np.ndarray
    right: np.ndarray
    parent: np.ndarray
    depth: np.ndarray

    @classmethod
    def of(cls, arrays: dict[str, np.ndarray]) -> Forest:
        """The named tuple of a forest dict (the same arrays, not copies)."""
        return cls(*(arrays[k] for k in cls._fields))

    @classmethod
    def of_sample(cls, samples: dict[str, np.ndarray], s: int) -> Forest:
        """Forest ``s`` of stacked samples (arrays with a leading sample axis; views)."""
        return cls(*(samples[k][s] for k in cls._fields))


class Space(NamedTuple):
    """The split space of ``D`` features and the ``V`` split variables its rules draw from.

    kinds (D,) int64 (continuous 0, discrete 1, categorical 2), lower and upper (D,) float64
    bounds (value indices for discrete and categorical features), n_values (D,) int64 (number
    of values; 0 for continuous).

    Split variables (``split_variables`` builds them): variable ``v`` splits column
    ``var_col[v]``; ``var_desc[v]`` is -1 for the column's own rules (a threshold, a cut
    between values, a subset of categories) and k >= 0 for descriptor k of a categorical
    column, whose rules cut the categories by that descriptor's value. ``rank`` (V, K) int64
    holds a descriptor variable's dense rank of each category's value (equal values share a
    rank), ``order`` (V, K) int64 the categories sorted by it; K the widest categorical column
    (rows of other variables unused). A column's variables are ``var_start[j] ..
    var_start[j + 1] - 1`` (var_start (D + 1,) int64), its own rules (if any) first. A split on
    a categorical column stores ``1 + var_desc[v]`` as its threshold, so the variable that
    drew it is known (see ``var_of``). ``high`` (V, W) uint64: for a descriptor with two
    values, the bit set of the categories with the higher one (a fingerprint bit's "has it"),
    so whether it splits a node is two word tests, not a walk over the categories (zeros for
    other variables). ``cat_class`` (D, K) int64: for a categorical column, a class per
    category, equal for categories that no rule of the column can separate (the same value of
    every descriptor; each category its own class when the column has subset rules or no
    descriptors), so that whether any of the column's variables splits a node is whether two
    classes reach it (one pass over its categories, not over ~2,000 fingerprint bits).
    ``two_bits`` (V', ) uint64 (V' = ceil(V / 64)): bit v set for a descriptor with two values;
    ``tbits`` (K, V') uint64, ``high`` transposed: bit v of row c set when category c of
    ``var_col[v]`` has the higher value, so that the two-valued descriptors a node's categories
    split are found a word of 64 variables at a time.
    """

    kinds: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n_values: np.ndarray
    var_col: np.ndarray
    var_desc: np.ndarray
    rank: np.ndarray
    order: np.ndarray
    var_start: np.ndarray
    high: np.ndarray
    cat_class: np.ndarray
    two_bits: np.ndarray
    tbits: np.ndarray


def split_variables(kinds, lower, upper, n_values, descriptors=None) -> Space:
    """The ``Space`` of four (D,) arrays with its split variables.

    ``descriptors``: None (every column splits by its own rules), or one entry per column:
    None for the column's own rules only, or ``(table, labels)`` for a categorical column with
    descriptors: ``table`` (n_values[j], n_desc) float64, one descriptor per column (each
    must take at least two values), ``labels`` whether subset rules stay available beside
    the descriptor rules.
    """
    kinds = np.ascontiguousarray(kinds, dtype=np.int64)
    d = len(kinds)
    descriptors = [None] * d if descriptors is None else list(descriptors)
    if len(descriptors) != d:
        raise ValueError(f"descriptors must have one entry per feature ({d}), got "
                         f"{len(descriptors)}")
    var_col, var_desc, ranks = [], [], []
    var_start = [0]
    for j in range(d):
        entry = descriptors[j]
        if entry is None:
            var_col.append(j)
            var_desc.append(-1)
            ranks.append(None)
        else:
            table, labels = entry
            table = np.asarray(table, dtype=np.float64)
            if kinds[j] != CATEGORICAL or table.ndim != 2 or table.shape[0] != n_values[j]:
                raise ValueError(f"descriptors of feature {j} must be a (n_categories, n) "
                                 f"table of a categorical feature, got shape {table.shape}")
            if not np.isfinite(table).all():
                raise ValueError(f"descriptors of feature {j} have a NaN or infinite value")
            if labels:
                var_col.append(j)
                var_desc.append(-1)
                ranks.append(None)
            for k in range(table.shape[1]):
                values, rank = np.unique(table[:, k], return_inverse=True)
                if len(values) < 2:
                    raise ValueError(f"descriptor {k} of feature {j} is constant")
                var_col.append(j)
                var_desc.append(k)
                ranks.append(rank.reshape(-1))
        var_start.append(len(var_col))
    n_vars = len(var_col)
    width = max([len(r) for r in ranks if r is not None], default=1)
    rank = np.zeros((n_vars, width), dtype=np.int64)
    order = np.zeros((n_vars, width), dtype=np.int64)
    for v, r in enumerate(ranks):
        if r is not None:
            rank[v, :len(r)] = r
            order[v, :len(r)] = np.argsort(r, kind="stable")
    high = two_value_bits(rank, np.asarray(var_desc) >= 0, n_words(np.asarray(n_values)))
    return Space(kinds, np.ascontiguousarray(lower, dtype=np.float64),
                 np.ascontiguousarray(upper, dtype=np.float64),
                 np.ascontiguousarray(n_values, dtype=np.int64),
                 np.asarray(var_col, dtype=np.int64), np.asarray(var_desc, dtype=np.int64),
                 rank, order, np.asarray(var_start, dtype=np.int64), high,
                 category_classes(kinds, n_values, var_start, var_desc, rank),
                 *transposed_bits(high, n_values))


def transposed_bits(high: np.ndarray, n_values) -> tuple[np.ndarray, np.ndarray]:
    """``Space.two_bits`` and ``Space.tbits`` from ``high`` (V, W)."""
    n_vars = high.shape[0]
    words = max(1, (n_vars + 63) // 64)
    width = max(1, int(np.max(n_values, initial=0)))
    two = np.zeros(words, dtype=np.uint64)
    tbits = np.zeros((width, words), dtype=np.uint64)
    for v in np.flatnonzero(high.any(axis=1)):
        bit = np.uint64(1) << np.uint64(v & 63)
        two[v >> 6] |= bit
        cats = np.flatnonzero(np.unpackbits(high[v].view(np.uint8), bitorder="little"))
        tbits[cats, v >> 6] |= bit
    return two, tbits


def category_classes(kinds, n_values, var_start, var_desc, rank) -> np.ndarray:
    """``Space.cat_class`` (D, K): the categories of a column with descriptors and no subset
    rules grouped by their row of descriptor ranks; every other category its own class."""
    d = len(kinds)
    width = max(1, int(np.max(n_values, initial=0)))
    out = np.tile(np.arange(width, dtype=np.int64), (d, 1))
    for j in range(d):
        vs = np.arange(var_start[j], var_start[j + 1])
        if kinds[j] != CATEGORICAL or len(vs) == 0 or (np.asarray(var_desc)[vs] < 0).any():
            continue
        k = int(n_values[j])
        _, classes = np.unique(rank[vs, :k].T, axis=0, return_inverse=True)
        out[j, :k] = classes.reshape(-1)
    return out


def two_value_bits(rank: np.ndarray, is_desc: np.ndarray, w: int) -> np.ndarray:
    """``Space.high`` from the ranks (V, K): for each descriptor variable (``is_desc``) with
    two values, the bit set of the categories of rank 1; zeros elsewhere."""
    high = np.zeros((len(rank), w), dtype=np.uint64)
    for v in np.flatnonzero(is_desc & (rank.max(axis=1, initial=0) == 1)):
        for c in np.flatnonzero(rank[v] == 1):
            high[v, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    return high


def as_space(space) -> Space:
    """A ``Space`` from a ``Space`` or the four arrays (kinds, lower, upper, n_values)."""
    if isinstance(space, Space):
        return space
    return split_variables(*space)


class Subspace(NamedTuple):
    """The part of the domain that reaches a node (scratch space, filled by ``node_subspace``).

    lo, hi (D,) float64: the interval (lo, hi] of a continuous feature, the index range
    [lo, hi] of a discrete one; cats (D, W) uint64: the bit set of categories of a categorical
    feature.
    """

    lo: np.ndarray
    hi: np.ndarray
    cats: np.ndarray


@njit(cache=True, nogil=True)
def new_subspace(d, w):
    return Subspace(np.empty(d), np.empty(d), np.zeros((d, w), dtype=np.uint64))


def n_words(n_values: np.ndarray) -> int:
    """Number of uint64 words needed for the widest categorical feature (at least 1)."""
    widest = int(np.max(n_values)) if len(n_values) else 0
    return max(1, (widest + 63) // 64)


def empty_forest(m: int, capacity: int, w: int) -> dict[str, np.ndarray]:
    """A forest of ``m`` single-leaf trees with room for ``capacity`` nodes per tree."""
    feat = np.full((m, capacity), FREE, dtype=np.int64)
    feat[:, 0] = LEAF
    return {
        "feat": feat,
        "thr": np.zeros((m, capacity)),
        "mask": np.zeros((m, capacity, w), dtype=np.uint64),
        "left": np.full((m, capacity), -1, dtype=np.int64),
        "right": np.full((m, capacity), -1, dtype=np.int64),
        "parent": np.full((m, capacity), -1, dtype=np.int64),
        "depth": np.zeros((m, capacity), dtype=np.int64),
    }


FOREST_KEYS = Forest._fields


def grow_capacity(forest: dict[str, np.ndarray], capacity: int) -> dict[str, np.ndarray]:
    """Copy ``forest`` into arrays with a larger node capacity (new slots are FREE)."""
    m, old = forest["feat"].shape
    w = forest["mask"].shape[2]
    new = empty_forest(m, capacity, w)
    for key in FOREST_KEYS:
        new[key][:, :old] = forest[key]
    return new


@njit(cache=True, nogil=True, inline="always")
def mask_has(mask_row, code):
    """Whether category ``code`` is in the bit set ``mask_row`` (uint64[W])."""
    return (mask_row[code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)


@njit(cache=True, nogil=True)
def route(feat, thr, mask, left, right, kinds, t, x):
    """Leaf node that point ``x`` (D,) reaches in tree ``t``."""
    node = 0
    while feat[t, node] >= 0:
        j = feat[t, node]
        if kinds[j] == CATEGORICAL:
            go_left = mask_has(mask[t, node], np.int64(x[j]))
        else:
            go_left = x[j] <= thr[t, node]
        node = left[t, node] if go_left else right[t, node]
    return node


@njit(cache=True, nogil=True)
def leaf_node(forest, kinds, t, x):
    """Leaf node that point ``x`` (D,) reaches in tree ``t`` of a ``Forest``."""
    return route(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, t, x)


@njit(cache=True, nogil=True)
def route_all(feat, thr, mask, left, right, kinds, X, out):
    """Leaf node of every row of ``X`` (N, D) in every tree: ``out`` (m, N) int64."""
    m = feat.shape[0]
    for t in range(m):
        for n in range(X.shape[0]):
            out[t, n] = route(feat, thr, mask, left, right, kinds, t, X[n])
    return out


@njit(cache=True, nogil=True)
def node_subspace(forest, space, t, node, sub):
    """Fill ``sub`` (a ``Subspace``) with the part of the domain that reaches ``node`` of tree t.

    Walks from the node up to the root, narrowing the space's bounds.
    """
    kinds = space.kinds
    lo, hi, cats = sub
    for j in range(kinds.shape[0]):
        lo[j] = space.lower[j]
        hi[j] = space.upper[j]
        if kinds[j] == CATEGORICAL:
            cats[j, :] = 0
            for c in range(space.n_values[j]):
                cats[j, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    feat, thr, mask, left, parent = forest.feat, forest.thr, forest.mask, forest.left, forest.parent
    child = node
    p = parent[t, node]
    while p >= 0:
        j = feat[t, p]
        is_left = left[t, p] == child
        if kinds[j] == CATEGORICAL:
            for w in range(cats.shape[1]):
                if is_left:
                    cats[j, w] &= mask[t, p, w]
                else:
                    cats[j, w] &= ~mask[t, p, w]
        elif is_left:
            hi[j] = min(hi[j], thr[t, p])
        elif kinds[j] == DISCRETE:
            lo[j] = max(lo[j], thr[t, p] + 1.0)
        else:
            lo[j] = max(lo[j], thr[t, p])
        child = p
        p = parent[t, p]


@njit(cache=True, nogil=True)
def scan_splittable(space, lo, hi, cats, v_first, v_stop, flags, any_high=None,
                    all_high=None):
    """Which split variables ``v`` in ``[v_first, v_stop)`` have a rule for a node with the
    intervals (lo, hi] (D,) and the categories of ``cats`` (D, W) (the variable's column's
    row). A variable's own rules if hi > lo (two categories for a categorical column); a
    descriptor's if it takes two values among the categories.

    With ``flags`` (V,) bool, sets ``flags[v]`` for each variable scanned and returns how
    many can split; with ``flags`` None, returns 1 at the first that can (0 if none).
    ``any_high``, ``all_high`` (V',) uint64, if given: the OR and the AND of ``tbits`` over the
    categories that reach the node (in the words of the variables scanned), which answer
    every two-valued descriptor (``splittable_flags``).

    One loop over the variables with the space's arrays bound once: a check per variable in
    a function of its own made array views whose atomic reference counts were most of a
    sweep with ~2,000 fingerprint bits.
    """
    kinds, var_col, var_desc, rank, high, two_bits = (space.kinds, space.var_col,
                                                      space.var_desc, space.rank, space.high,
                                                      space.two_bits)
    count = 0
    for v in range(v_first, v_stop):
        j = var_col[v]
        ok = False
        if var_desc[v] < 0:
            if kinds[j] == CATEGORICAL:
                n = 0
                for w in range(cats.shape[1]):
                    x = cats[j, w]
                    while x != np.uint64(0) and n < 2:
                        x &= x - np.uint64(1)
                        n += 1
                ok = n >= 2
            else:
                ok = hi[j] > lo[j]
        else:
            bit = np.uint64(v & 63)
            two = (two_bits[v >> 6] >> bit) & np.uint64(1) == np.uint64(1)
            if two and any_high is not None:
                ok = ((any_high[v >> 6] & ~all_high[v >> 6]) >> bit) & np.uint64(1) == 1
            elif two:  # two values: some category on each side of them
                has_high = False
                has_low = False
                for w in range(high.shape[1]):
                    has_high = has_high or (cats[j, w] & high[v, w]) != np.uint64(0)
                    has_low = has_low or (cats[j, w] & ~high[v, w]) != np.uint64(0)
                    if has_high and has_low:
                        ok = True
                        break
            else:
                low = -1
                for w in range(cats.shape[1]):
                    word = cats[j, w]
                    c = w << 6
                    while word != np.uint64(0) and not ok:  # categories present, low bit first
                        if word & np.uint64(1):
                            if low < 0:
                                low = rank[v, c]
                            elif rank[v, c] != low:
                                ok = True
                        word >>= np.uint64(1)
                        c += 1
                    if ok:
                        break
        if flags is None:
            if ok:
                return 1
        else:
            flags[v] = ok
            count += ok
    return count


@njit(cache=True, nogil=True)
def column_can_split(space, j, lo, hi, cats, row):
    """Whether some split variable of column ``j`` has a rule for a node with the interval
    (lo[j], hi[j]] or the categories of row ``row`` of ``cats``: for a categorical column,
    whether two of ``cat_class`` reach it (see ``Space``); otherwise whether hi > lo."""
    if space.var_start[j] == space.var_start[j + 1]:
        return False
    if space.kinds[j] != CATEGORICAL:
        return hi[j] > lo[j]
    first = -1
    for w in range(cats.shape[1]):
        word = cats[row, w]
        c = w << 6
        while word != np.uint64(0):
            if word & np.uint64(1):
                k = space.cat_class[j, c]
                if first < 0:
                    first = k
                elif k != first:
                    return True
            word >>= np.uint64(1)
            c += 1
    return False


@njit(cache=True, nogil=True)
def var_can_split(space, v, lo, hi, cats):
    """Whether split variable ``v`` can split a node (``scan_splittable`` of ``v`` alone)."""
    return scan_splittable(space, lo, hi, cats, v, v + 1, None) > 0


@njit(cache=True, nogil=True, inline="always")
def two_valued(space, v):
    """Whether split variable ``v`` is a descriptor with two values (its bit of
    ``Space.two_bits``)."""
    return (space.two_bits[v >> 6] >> np.uint64(v & 63)) & np.uint64(1) == np.uint64(1)


@njit(cache=True, nogil=True)
def splittable_flags(space, sub, flags):
    """``flags[v]``: whether split variable ``v`` can split subspace ``sub``; returns how
    many can. One pass, so callers that need the set several times (a weighted draw, the
    sparse prior's normalizers) do not test every variable again: with ~2,000 fingerprint
    bits these tests were most of a sweep."""
    kinds, var_start, two_bits, tbits = (space.kinds, space.var_start, space.two_bits,
                                         space.tbits)
    lo, hi, cats = sub
    any_high = np.zeros(two_bits.shape[0], dtype=np.uint64)
    all_high = np.zeros(two_bits.shape[0], dtype=np.uint64)
    count = 0
    for j in range(kinds.shape[0]):
        v0, v1 = var_start[j], var_start[j + 1]
        w0, w1 = v0 >> 6, ((v1 - 1) >> 6) + 1
        if kinds[j] == CATEGORICAL:
            # OR and AND of the categories' rows over the column's words (reset: a word at
            # either end may hold another column's variables, which are not read here)
            for w in range(w0, w1):
                any_high[w] = 0
                all_high[w] = ~np.uint64(0)
            for cw in range(cats.shape[1]):
                word = cats[j, cw]
                c = cw << 6
                while word != np.uint64(0):
                    if word & np.uint64(1):
                        for w in range(w0, w1):
                            any_high[w] |= tbits[c, w]
                            all_high[w] &= tbits[c, w]
                    word >>= np.uint64(1)
                    c += 1
        count += scan_splittable(space, lo, hi, cats, v0, v1, flags, any_high, all_high)
    return count


@njit(cache=True, nogil=True)
def any_splittable(space, sub):
    """Whether some split variable can split subspace ``sub`` (stops at the first column
    that can)."""
    for j in range(space.kinds.shape[0]):
        if column_can_split(space, j, sub.lo, sub.hi, sub.cats, j):
            return True
    return False


def split_variable_of(space: Space, feat: np.ndarray, thr: np.ndarray) -> np.ndarray:
    """``var_of`` over arrays: the split variable of each split (feat >= 0), -1 elsewhere."""
    feat = np.asarray(feat)
    col = np.where(feat >= 0, feat, 0)
    first = space.var_start[col]
    several = (space.var_start[col + 1] - first > 1) & (space.kinds[col] == CATEGORICAL)
    v = np.where(several, first + np.asarray(thr).astype(np.int64) - 1 - space.var_desc[first],
                 first)
    return np.where(feat >= 0, v, -1)


@njit(cache=True, nogil=True)
def var_of(space, j, th):
    """The split variable of a split on column ``j`` with threshold ``th``."""
    first = space.var_start[j]
    if space.var_start[j + 1] - first == 1 or space.kinds[j] != CATEGORICAL:
        return first
    return first + np.int64(th) - 1 - space.var_desc[first]


@njit(cache=True, nogil=True)
def count_leaves_and_twigs(forest, t):
    """(w0, w1): leaves and singly-internal nodes (both children leaves) of tree ``t``."""
    feat, left, right = forest.feat, forest.left, forest.right
    w0 = 0
    w1 = 0
    for node in range(feat.shape[1]):
        f = feat[t, node]
        if f == LEAF:
            w0 += 1
        elif f >= 0 and feat[t, left[t, node]] == LEAF and feat[t, right[t, node]] == LEAF:
            w1 += 1
    return w0, w1


@njit(cache=True, nogil=True)
def nth_node(forest, t, k, twig):
    """The k-th leaf (``twig`` False) or k-th singly-internal node (``twig`` True) of tree t."""
    feat, left, right = forest.feat, forest.left, forest.right
    seen = 0
    for node in range(feat.shape[1]):
        f = feat[t, node]
        if twig:
            hit = f >= 0 and feat[t, left[t, node]] == LEAF and feat[t, right[t, node]] == LEAF
        else:
            hit = f == LEAF
        if hit:
            if seen == k:
                return node
            seen += 1
    return -1


@njit(cache=True, nogil=True)
def free_pair(feat, t):
    """Two free node slots of tree ``t`` as (a, b), or (-1, -1) when the tree is full."""
    a = -1
    for node in range(1, feat.shape[1]):
        if feat[t, node] == FREE:
            if a < 0:
                a = node
            else:
                return a, node
    return -1, -1


@njit(cache=True, nogil=True)
def n_free(feat, t):
    count = 0
    for node in range(feat.shape[1]):
        if feat[t, node] == FREE:
            count += 1
    return count


@njit(cache=True, nogil=True)
def split_leaf(forest, kinds, t, node, j, th, rule_mask, a, b):
    """Turn leaf ``node`` of tree ``t`` into a split on (j, th, rule_mask) with leaves a, b."""
    feat, thr, mask, left, right, parent, depth = forest
    feat[t, node] = j
    thr[t, node] = th
    for w in range(mask.shape[2]):
        mask[t, node, w] = rule_mask[w] if kinds[j] == CATEGORICAL else np.uint64(0)
    left[t, node] = a
    right[t, node] = b
    for c in (a, b):
        feat[t, c] = LEAF
        parent[t, c] = node
        depth[t, c] = depth[t, node] + 1
        left[t, c] = -1
        right[t, c] = -1


@njit(cache=True, nogil=True)
def assign_columns(feat, lcol, owner):
    """Number the leaves of all trees 0..P-1 into lcol (m, C) and owner (Pcap, 2); returns P."""
    m, cap = feat.shape
    P = 0
    for t in range(m):
        for k in range(cap):
            if feat[t, k] == LEAF:
                lcol[t, k] = P
                owner[P, 0] = t
                owner[P, 1] = k
                P += 1
            else:
                lcol[t, k] = -1
    return P
