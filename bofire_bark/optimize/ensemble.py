"""The posterior forests as a tree ensemble for the MIP, with no Pyomo in sight.

Every tree of every posterior sample is reduced to the part a candidate can reach: a split whose
left or right side is empty inside the region of the node (the domain's bounds and allowed
categories, narrowed by the splits above) routes every candidate the same way and is collapsed.
A reduced tree with a single reachable leaf is constant and gets no variables.

Reduced trees are keyed by their structure, so trees that coincide (within one forest or across
samples) share leaf variables in the MIP: identical structure means identical routing.

The ordered split variables nu_{j,i} = [x_j <= t_{j,i}] use one table of distinct thresholds per
continuous or discrete feature (``thresholds[j]``, sorted).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from bofire_bark.kinds import CATEGORICAL, CONTINUOUS, DISCRETE  # noqa: F401 (re-exported)

_LEAF, _FREE = -1, -2


@dataclass(frozen=True)
class InputBox:
    """The candidate space as the MIP sees it (encoded, one column per feature).

    Attributes:
        kinds: (D,) feature kinds.
        lower, upper: (D,) bounds. Continuous: value bounds, with ``lower`` 0 for a feature that
            may also be zero (``allow_zero``); discrete: index bounds 0..K-1.
        values: per feature, the sorted discrete values (K,) or None.
        allowed: per feature, the allowed category codes (sorted tuple) or None.
        semicontinuous: (D,) bool, continuous features whose set is {0} u [lb, ub] with lb > 0.
        active_lower: (D,) the lower bound lb of a semicontinuous feature when active.
        margin: (D,) the gap kept to the right of a threshold (x >= t + margin goes right).
    """

    kinds: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    values: tuple[np.ndarray | None, ...]
    allowed: tuple[tuple[int, ...] | None, ...]
    semicontinuous: np.ndarray
    active_lower: np.ndarray
    margin: np.ndarray

    @property
    def n_features(self) -> int:
        return len(self.kinds)


@dataclass(frozen=True)
class Split:
    """A split of a reduced tree.

    ``threshold`` is the value (continuous) or index (discrete) with x <= threshold going left;
    for a categorical split ``left_codes`` / ``right_codes`` are the reachable categories on each
    side. ``left`` and ``right`` are the leaf positions below each child.
    """

    feature: int
    threshold: float
    left_codes: tuple[int, ...]
    right_codes: tuple[int, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]


@dataclass(frozen=True)
class ReducedTree:
    """The reachable part of a tree.

    ``nodes`` is the walk structure in depth-first order: ``("leaf", position)`` or
    ``("split", split_index, left_node, right_node)``; node 0 is the root.
    """

    n_leaves: int
    splits: tuple[Split, ...]
    nodes: tuple[tuple, ...]

    @property
    def constant(self) -> bool:
        return self.n_leaves == 1

    def leaf_of(self, x: np.ndarray, kinds: np.ndarray) -> int:
        """Leaf position that an encoded point ``x`` (D,) of the domain reaches."""
        node = self.nodes[0]
        while node[0] == "split":
            split = self.splits[node[1]]
            j = split.feature
            if kinds[j] == CATEGORICAL:
                go_left = int(round(x[j])) in split.left_codes
            else:
                go_left = x[j] <= split.threshold
            node = self.nodes[node[2] if go_left else node[3]]
        return node[1]


@dataclass(frozen=True)
class TreeEnsemble:
    """All reduced trees of all posterior samples.

    Attributes:
        trees: the distinct reduced trees (U of them).
        tree_of: (S, m) index into ``trees`` of every sample's tree.
        leaf_nodes: per (s, t), the engine node id of each leaf position, (L_u,) int64.
        thresholds: per feature, the sorted distinct thresholds used by some split (continuous
            or discrete), else an empty array.
    """

    trees: tuple[ReducedTree, ...]
    tree_of: np.ndarray
    leaf_nodes: tuple[tuple[np.ndarray, ...], ...]
    thresholds: tuple[np.ndarray, ...]

    @property
    def n_samples(self) -> int:
        return self.tree_of.shape[0]

    @property
    def n_trees(self) -> int:
        return self.tree_of.shape[1]

    def leaves(self, x: np.ndarray, kinds: np.ndarray) -> np.ndarray:
        """Leaf position of ``x`` (D,) in every distinct tree, (U,) int64."""
        return np.array([tree.leaf_of(x, kinds) for tree in self.trees], dtype=np.int64)


def _mask_codes(mask_row: np.ndarray, codes: frozenset[int]) -> frozenset[int]:
    return frozenset(c for c in codes if (int(mask_row[c >> 6]) >> (c & 63)) & 1)


def _reduce(tree_arrays, box: InputBox, node, lo, hi, cats, out):
    """Depth-first reduction of one tree below ``node``.

    The region of ``node`` is ``lo`` (j -> (bound, open)), ``hi`` (j -> bound) and ``cats``
    (j -> reachable category codes). ``out`` collects splits, nodes, leaves and the key.
    Returns (node index in ``out.nodes``, leaf positions below).
    """
    feat, thr, mask, left, right = tree_arrays
    kinds = box.kinds
    while feat[node] >= 0:
        j = int(feat[node])
        if kinds[j] == CATEGORICAL:
            go_left = _mask_codes(mask[node], cats[j])
            go_right = cats[j] - go_left
            if not go_left or not go_right:
                node = left[node] if go_left else right[node]
                continue
            t = float("nan")
            left_region = (lo, hi, {**cats, j: go_left})
            right_region = (lo, hi, {**cats, j: go_right})
        else:
            t = float(thr[node])
            lo_j, lo_open = lo[j]
            left_ok = lo_j < t or (not lo_open and lo_j <= t)
            right_ok = hi[j] > t
            if not (left_ok and right_ok):
                node = left[node] if left_ok else right[node]
                continue
            if kinds[j] == DISCRETE:
                t = float(np.floor(t))
                right_lo = (t + 1.0, False)
            else:
                right_lo = (t, True)
            left_region = (lo, {**hi, j: min(hi[j], t)}, cats)
            right_region = ({**lo, j: right_lo}, hi, cats)
            go_left = go_right = frozenset()
        index = len(out.nodes)
        out.nodes.append(None)
        codes = (tuple(sorted(go_left)), tuple(sorted(go_right)))
        out.key.append((j, t, *codes))
        li, lleaves = _reduce(tree_arrays, box, left[node], *left_region, out)
        ri, rleaves = _reduce(tree_arrays, box, right[node], *right_region, out)
        out.splits.append(Split(j, t, *codes, tuple(lleaves), tuple(rleaves)))
        out.nodes[index] = ("split", len(out.splits) - 1, li, ri)
        return index, lleaves + rleaves
    index = len(out.nodes)
    position = len(out.leaves)
    out.leaves.append(int(node))
    out.nodes.append(("leaf", position))
    out.key.append(None)
    return index, [position]


@dataclass
class _Collector:
    splits: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    leaves: list = field(default_factory=list)
    key: list = field(default_factory=list)


def reduce_tree(feat, thr, mask, left, right,
                box: InputBox) -> tuple[ReducedTree, np.ndarray, tuple]:
    """Reduce one engine tree (one row of each forest array) to its reachable part.

    Returns:
        (reduced tree, engine node id per leaf position (L,), structural key).
    """
    d = box.n_features
    lo = {j: (float(box.lower[j]), False) for j in range(d)}
    hi = {j: float(box.upper[j]) for j in range(d)}
    cats = {j: frozenset(box.allowed[j]) for j in range(d) if box.kinds[j] == CATEGORICAL}
    out = _Collector()
    _reduce((feat, thr, mask, left, right), box, 0, lo, hi, cats, out)
    tree = ReducedTree(len(out.leaves), tuple(out.splits), tuple(out.nodes))
    return tree, np.asarray(out.leaves, dtype=np.int64), tuple(out.key)


def build_ensemble(samples: dict[str, np.ndarray], box: InputBox) -> TreeEnsemble:
    """Reduce every tree of every sample and collect the distinct trees and thresholds."""
    feat, thr, mask = samples["feat"], samples["thr"], samples["mask"]
    left, right = samples["left"], samples["right"]
    S, m = feat.shape[:2]
    index: dict[tuple, int] = {}
    trees: list[ReducedTree] = []
    tree_of = np.empty((S, m), dtype=np.int64)
    leaf_nodes = []
    for s in range(S):
        row = []
        for t in range(m):
            tree, nodes, key = reduce_tree(feat[s, t], thr[s, t], mask[s, t], left[s, t],
                                           right[s, t], box)
            u = index.get(key)
            if u is None:
                u = index[key] = len(trees)
                trees.append(tree)
            tree_of[s, t] = u
            row.append(nodes)
        leaf_nodes.append(tuple(row))
    used: list[set[float]] = [set() for _ in range(box.n_features)]
    for tree in trees:
        for split in tree.splits:
            if box.kinds[split.feature] != CATEGORICAL:
                used[split.feature].add(split.threshold)
    thresholds = tuple(np.array(sorted(u), dtype=np.float64) for u in used)
    return TreeEnsemble(tuple(trees), tree_of, tuple(leaf_nodes), thresholds)


def with_bin_edges(ens: TreeEnsemble, box: InputBox, kernel) -> TreeEnsemble:
    """``ens`` whose thresholds also hold the bin edges of a smooth share's coordinates
    (``engine.smooth.SmoothKernel``; None: ``ens``), those in [lower, upper) of the box: every
    cell then lies in one bin, so the smooth part too is constant on a cell."""
    if kernel is None:
        return ens
    thresholds = list(ens.thresholds)
    for j, col in enumerate(kernel.cols):
        edges = kernel.edges(j)
        edges = edges[(edges >= box.lower[col]) & (edges < box.upper[col])]
        thresholds[col] = np.union1d(thresholds[col], edges).astype(np.float64)
    return replace(ens, thresholds=tuple(thresholds))


def distinct_samples(samples: dict[str, np.ndarray]) -> tuple[list[int], list[float]]:
    """The first of each group of identical posterior samples (same forest and noise, so the
    same GP) and how many samples each stands for: (indices, weights)."""
    keep, group = distinct_groups(samples)
    return keep, np.bincount(group, minlength=len(keep)).astype(float).tolist()


def distinct_groups(samples: dict[str, np.ndarray]) -> tuple[list[int], np.ndarray]:
    """The first of each group of identical posterior samples and, per sample (S,), the
    position of its group among them."""
    seen: dict[bytes, int] = {}
    keep: list[int] = []
    group = np.empty(len(samples["sigma2"]), dtype=np.int64)
    # a smooth share is part of the GP: equal forests with other shares are other samples
    keys = ("feat", "thr", "mask", "left", "right", "sigma2") + (
        ("smooth_share",) if "smooth_share" in samples else ())
    for s in range(len(samples["sigma2"])):
        key = b"".join(np.ascontiguousarray(samples[k][s]).tobytes() for k in keys)
        if key not in seen:
            seen[key] = len(keep)
            keep.append(s)
        group[s] = seen[key]
    return keep, group

