"""The posterior flattened for the bound kernels (``grid.bound``): trees, leaf systems and the
multipliers of the Lagrangian relaxation as flat arrays, on the grid of split thresholds; with
a smooth share (``engine.smooth``) its N-space systems, the bins (categorical: codes) of its
coordinates and one tree per coordinate that splits at its bin edges or between its codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from bofire_bark.engine.predict import KNOWN_NOISE, bordered_inverse
from bofire_bark.optimize.ensemble import CATEGORICAL, CONTINUOUS, distinct_samples
from bofire_bark.optimize.grid.settings import GridSettings


class SmoothModel(NamedTuple):
    """A smooth share (``engine.smooth``) for the bound kernels, S distinct samples, N
    training (and pending) points, Ds binned and Dc categorical smooth coordinates (binned
    first, as in ``SmoothKernel.coords``), B bins; every array empty without one. ``share``
    (S,) each sample's share s (its ``BoundModel.beta`` are then (1 - s) / m times the sums of
    alpha = K^-1 y over each leaf's points, its ``Kinv`` the smooth K's, and it has no ``M``);
    ``alpha`` (S, N); ``ubin`` (N, Ds + Dc) each point's bin of every binned coordinate, then
    its code of every categorical one; ``f`` (Ds, B) the RBF factor of binned coordinate j at
    a distance of d bins, exp(-(d / B)^2 / (2 l_j^2)); ``cf`` (Dc, A, A) the factor of
    categorical coordinate c between codes a and b, exp(-cat_d2[c, a, b]); ``feat``
    (Ds + Dc,) the grid feature of each coordinate; ``cbin`` (Ds, n_cells) the bin of each
    cell of a binned coordinate; ``tree_u`` (Ds + Dc,) one more tree of the node arrays per
    coordinate, which no sample holds: splits at the bin edges, or categorical splits that
    halve the allowed codes down to one (so a box spanning several bins or codes has
    undecided splits there and is cut at them)."""

    share: np.ndarray
    alpha: np.ndarray
    ubin: np.ndarray
    f: np.ndarray
    cf: np.ndarray
    feat: np.ndarray
    cbin: np.ndarray
    tree_u: np.ndarray


class BoundModel(NamedTuple):
    """The posterior's trees and leaf systems as flat arrays, what every bound kernel reads
    (numba takes it as one argument). U distinct trees, K nodes, L leaves in all; S distinct
    samples of m trees each; N training (and pending) points; W words per bit set of codes.

    Trees: ``node_feat`` (K,) feature or -1 for a leaf; ``node_thr`` (K,) threshold index
    (-1 for a categorical split); ``node_lmask``, ``node_rmask`` (K, W) codes reachable on
    each side of a categorical split; ``node_left``, ``node_right`` (K,) children;
    ``node_leaf`` (K,) leaf id; ``node_lfirst``, ``node_llast`` (K,) the range of leaf ids
    below each node (depth-first numbering); ``tree_root`` (U,); ``leaf_off`` (U,) first leaf
    id of each tree; ``tree_nleaf`` (U,).
    Samples: ``s_tree_u`` (S, m) tree of each; ``s_base`` (S, m) the sample's column of each
    tree's first leaf; ``s_weight`` (S,); ``s_off`` (S + 1,) offsets into ``beta``; ``s_moff``
    (S,) offsets into ``M`` (P_s x P_s row-major each); ``dptr`` (sum P_s + 1,), ``dind``: the
    training points in each leaf (CSR over the same column numbering as ``beta``); ``Kinv``
    (S, N, N).
    Lagrangian relaxation of the shared features (each tree keeps its own copy of a feature it
    splits on; multipliers ``lam`` with zero weighted sum per feature and code make the copies
    agree). A code is a category, or a bin of consecutive cells of an ordered feature
    (``bin_first``, ``bin_last`` (D, B): bin b of feature j holds cells bin_first..bin_last).
    ``lam`` (``n_codes`` per (sample, tree, feature), updated in place), ``lam_ptr`` (S, m),
    ``tf_ptr`` (U + 1,) / ``tf_j`` the features each tree splits on, ``leaf_cm_ptr`` (L,) /
    ``leaf_cm`` (., W) the codes that reach each leaf, per such feature.
    Settings: ``n_dual`` linearizations of the N-space bound (0: none), ``bisect`` (cut
    ordered features in the middle), ``product`` (product score), ``kappa`` (the UCB's weight,
    or the coupling weight of another rule's bound), ``sign``.
    Rule (``optimize.rules``): ``rule`` its code, ``best`` (S,) each sample's incumbent.
    Smooth share: ``smooth``, a ``SmoothModel`` (every array empty without one).
    """

    node_feat: np.ndarray
    node_thr: np.ndarray
    node_lmask: np.ndarray
    node_rmask: np.ndarray
    node_left: np.ndarray
    node_right: np.ndarray
    node_leaf: np.ndarray
    node_lfirst: np.ndarray
    node_llast: np.ndarray
    tree_root: np.ndarray
    leaf_off: np.ndarray
    tree_nleaf: np.ndarray
    s_tree_u: np.ndarray
    s_base: np.ndarray
    s_weight: np.ndarray
    s_off: np.ndarray
    beta: np.ndarray
    s_moff: np.ndarray
    M: np.ndarray
    dptr: np.ndarray
    dind: np.ndarray
    Kinv: np.ndarray
    lam: np.ndarray
    lam_ptr: np.ndarray
    tf_ptr: np.ndarray
    tf_j: np.ndarray
    leaf_cm_ptr: np.ndarray
    leaf_cm: np.ndarray
    bin_first: np.ndarray
    bin_last: np.ndarray
    n_codes: int
    n_dual: int
    bisect: bool
    product: bool
    kappa: float
    sign: float
    rule: int
    best: np.ndarray
    smooth: SmoothModel


@dataclass(frozen=True)
class GridModel:
    """The bound kernels' ``BoundModel`` plus the grid: ``thresholds[j]`` sorted (cells
    ``0..len``), ``n_words`` words per categorical bit set, ``n_leaves`` leaves in all, and
    the multipliers' bookkeeping (``lagrange``)."""

    bm: BoundModel
    thresholds: tuple[np.ndarray, ...]
    n_words: int
    n_leaves: int
    lagrange: Lagrange

    @property
    def lam(self) -> np.ndarray:
        """The multipliers, updated in place."""
        return self.bm.lam

    @property
    def n_codes(self) -> int:
        """Multipliers per copy of a feature (its codes)."""
        return int(self.bm.n_codes)

    @property
    def kappa(self) -> float:
        """The UCB's weight, or the coupling weight of another rule's bound."""
        return float(self.bm.kappa)

    @property
    def rule(self) -> int:
        """The rule's code (``optimize.rules``)."""
        return int(self.bm.rule)

    @property
    def sign(self) -> float:
        return float(self.bm.sign)


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


def _incumbents(problem, keep) -> np.ndarray:
    """The kept samples' incumbents (a problem built without them: the UCB's, unused)."""
    if problem.incumbents is None:
        if problem.rule != "ucb":
            raise ValueError(f"acquisition rule '{problem.rule}' needs the samples' incumbents "
                             "(build_problem computes them)")
        return np.zeros(len(keep))
    return np.ascontiguousarray(problem.incumbents[keep], dtype=np.float64)


def grid_model(problem, systems, posterior, pending: np.ndarray | None = None,
               settings: GridSettings | None = None, numba_loop: bool = False,
               thresholds: tuple[np.ndarray, ...] | None = None) -> GridModel:
    """Flatten the reduced ensemble and the per-sample leaf systems.

    Args:
        problem: ``problem.AcquisitionProblem`` (box, reduced ensemble, rule, kappa, sign,
            the samples' incumbents).
        systems: ``engine.predict.SampleSystems`` (conditioned on ``pending``).
        posterior: the ``engine.Posterior`` (forests, noise, training inputs).
        pending: (n_p, D) encoded points the systems are conditioned on, or None.
        settings: the relaxation (``n_dual``, ``lagrange_bins``, ``n_bins``, ``bisect``,
            ``product_score``; default ``GridSettings()``).
        numba_loop: the model serves the numba loop, not the Python loop (the search
            plan's choice; ``GridSettings.relaxation``).
        thresholds: the grid, per feature sorted and holding every threshold of the ensemble
            (default: the ensemble's own); several outputs' models share one grid.
    """
    rule = problem.acquisition_rule
    settings = GridSettings() if settings is None else settings
    relax = settings.relaxation(numba_loop)
    n_dual, product_score = relax["n_dual"], relax["product_score"]
    lagrange_bins, bisect = settings.lagrange_bins, settings.bisect

    ens, box = problem.ensemble, problem.box
    sigma2 = posterior.samples["sigma2"]
    if pending is not None:
        pending = np.asarray(pending, dtype=np.float64).reshape(-1, box.n_features)
    Xa = posterior.X if pending is None or len(pending) == 0 else np.concatenate(
        (posterior.X, pending))
    # the points the systems take as known (rules.Rule.prepare) join last, their noise
    # KNOWN_NOISE sigma^2
    known = systems.X_known
    Xa = np.ascontiguousarray(np.concatenate((Xa, known)), dtype=np.float64)
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
    smooth_trees = _edge_trees(getattr(posterior, "smooth", None), box, thresholds,
                               len(feat), n_leaves)
    for nodes in smooth_trees:
        roots.append(len(feat))
        leaf_off.append(n_leaves)
        nleaf.append(sum(nd[0] < 0 for nd in nodes))
        n_leaves += nleaf[-1]
        for f_, thr_, left_, right_, leaf_, lcodes, rcodes in nodes:
            feat.append(f_)
            thr.append(thr_)
            lmask.append(_words(lcodes, w))
            rmask.append(_words(rcodes, w))
            left.append(left_)
            right.append(right_)
            leaf.append(leaf_)
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
    smooth = getattr(posterior, "smooth", None)
    shares = np.zeros(len(keep) if smooth is not None else 0)
    sm_alpha = np.zeros((len(keep), n_data) if smooth is not None else (0, 0))
    for i, s in enumerate(keep):
        if smooth is not None:
            system = systems.systems[s]
            leaf_of = system.leaf_of
            # leaf columns are the leaves' positions: the smooth system has no lcol
            cols = np.arange(sum(len(ens.leaf_nodes[s][t]) for t in range(m)), dtype=np.int64)
            for t in range(m):
                s_base[i, t] = sum(len(ens.leaf_nodes[s][u]) for u in range(t))
        else:
            lcol, Ginv, beta, leaf_of = systems.systems[s]
            cols = []
            for t in range(m):
                s_base[i, t] = len(cols)
                cols.extend(int(c) for c in lcol[t, ens.leaf_nodes[s][t]])
            cols = np.asarray(cols, dtype=np.int64)
        if leaf_of.shape[1] != n_data:
            raise ValueError("the leaf systems were conditioned on other pending points than "
                             "the grid model's")
        if smooth is None:
            betas.append(beta[cols])
            Ms.append((float(sigma2[s]) * Ginv[np.ix_(cols, cols)]).ravel())
        s_off.append(s_off[-1] + len(cols))
        s_moff.append(moff)
        if smooth is None:  # a smooth sample has no leaf-space variance (M)
            moff += len(cols) ** 2
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
        if smooth is None:
            n_noisy = n_data - len(known)
            inv = np.linalg.inv(same[:n_noisy, :n_noisy] / m + float(sigma2[s]) * np.eye(n_noisy))
            for n in range(n_noisy, n_data):
                inv = bordered_inverse(inv, same[:n, n] / m,
                                       1.0 + KNOWN_NOISE * float(sigma2[s]))
            Kinv[i] = inv
            continue
        # the forest part of mu = k^T alpha, one term per tree: (1 - s) / m times alpha
        # summed over the leaf's points
        shares[i] = system.share
        sm_alpha[i] = system.alpha
        betas.append(np.array([(1.0 - system.share) / m * system.alpha[c].sum()
                               for c in leaf_members]))
        Kinv[i] = system.Kinv
    # codes of the Lagrangian relaxation: categories, or bins of consecutive cells
    d = box.n_features
    n_bins = [0 if box.kinds[j] == CATEGORICAL or not lagrange_bins
              else min(settings.n_bins, len(thresholds[j]) + 1) for j in range(d)]
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
    tf_ptr.extend([len(tf_j)] * len(smooth_trees))  # the coordinates' trees: no copies
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
    bm = BoundModel(
        node_feat=np.asarray(feat, np.int64), node_thr=np.asarray(thr, np.int64),
        node_lmask=np.ascontiguousarray(np.array(lmask, dtype=np.uint64).reshape(-1, w)),
        node_rmask=np.ascontiguousarray(np.array(rmask, dtype=np.uint64).reshape(-1, w)),
        node_left=np.asarray(left, np.int64), node_right=np.asarray(right, np.int64),
        node_leaf=np.asarray(leaf, np.int64), node_lfirst=lfirst, node_llast=llast,
        tree_root=np.asarray(roots, np.int64), leaf_off=np.asarray(leaf_off, np.int64),
        tree_nleaf=np.asarray(nleaf, np.int64), s_tree_u=s_tree_u, s_base=s_base,
        s_weight=np.asarray(weights, np.float64), s_off=np.asarray(s_off, np.int64),
        beta=np.concatenate(betas), s_moff=np.asarray(s_moff, np.int64),
        M=np.concatenate(Ms) if Ms else np.zeros(0), dptr=dptr, dind=dind, Kinv=Kinv,
        lam=np.zeros(len(lam_j)),
        lam_ptr=lam_ptr, tf_ptr=np.asarray(tf_ptr, np.int64), tf_j=np.asarray(tf_j, np.int64),
        leaf_cm_ptr=leaf_cm_ptr, leaf_cm=leaf_cm, bin_first=bin_first, bin_last=bin_last,
        n_codes=n_codes, n_dual=int(n_dual) if rule.coupling > 0 else 0, bisect=bool(bisect),
        product=bool(product_score), kappa=rule.coupling, sign=float(problem.sign),
        rule=rule.code, best=_incumbents(problem, keep),
        smooth=_smooth_model(getattr(posterior, "smooth", None), box, thresholds, Xa, shares,
                             sm_alpha, len(ens.trees)))
    return GridModel(bm, thresholds, w, n_leaves, lagrange)


def _edge_cells(kernel, j: int, box, thresholds) -> np.ndarray:
    """The cells (threshold indices) of smooth coordinate j's bin edges in [lower, upper) of
    the box; each must be a threshold of the grid (``ensemble.with_bin_edges``)."""
    col = int(kernel.cols[j])
    if box.kinds[col] != CONTINUOUS:
        raise ValueError(f"smooth coordinate {j} is column {col}, which is not continuous")
    edges = kernel.edges(j)
    edges = edges[(edges >= box.lower[col]) & (edges < box.upper[col])]
    t = thresholds[col]
    idx = np.searchsorted(t, edges)
    if np.any(idx >= len(t)) or np.any(t[np.minimum(idx, len(t) - 1)] != edges):
        raise ValueError(f"the grid's thresholds of column {col} lack the smooth share's bin "
                         "edges (build the problem with ensemble.with_bin_edges)")
    return idx.astype(np.int64)


def _edge_trees(kernel, box, thresholds, k0: int, leaf0: int) -> list[list[tuple]]:
    """Per smooth coordinate, binned then categorical, a balanced tree of splits at its bin
    edges or between its allowed codes (``_code_tree``), as node rows (feature, threshold
    index, left, right, leaf id, left codes, right codes) numbered from node ``k0`` and leaf
    ``leaf0`` in depth-first order (the leaves below a node are consecutive)."""
    if kernel is None:
        return []
    trees = []
    for j in range(kernel.n_coords):
        nodes: list[list] = []
        if j < len(kernel.cols):
            leaf0 = _bisection(int(kernel.cols[j]), _edge_cells(kernel, j, box, thresholds),
                               nodes, k0, leaf0)
        else:
            c = j - len(kernel.cols)
            col = int(kernel.cat_cols[c])
            leaf0 = _code_tree(col, list(_allowed_codes(kernel, c, box)), kernel.cat_d2[c],
                               nodes, k0, leaf0)
        trees.append([tuple(nd) for nd in nodes])
        k0 += len(nodes)
    return trees


def _allowed_codes(kernel, c: int, box) -> tuple[int, ...]:
    """The codes the box allows of categorical coordinate c, each with a row of its table."""
    col = int(kernel.cat_cols[c])
    if box.kinds[col] != CATEGORICAL:
        raise ValueError(f"smooth categorical coordinate {c} is column {col}, which is not "
                         "categorical")
    codes = tuple(int(a) for a in box.allowed[col])
    if codes and max(codes) >= kernel.cat_d2.shape[1]:
        raise ValueError(f"the smooth share's cat_d2 table of column {col} lacks code "
                         f"{max(codes)}")
    return codes


def _code_tree(col: int, codes: list[int], d2: np.ndarray, nodes: list, k0: int,
               leaf: int) -> int:
    """Append to ``nodes`` a balanced tree of categorical splits of ``col`` down to single
    ``codes`` (depth-first, node ids from ``k0``, leaf ids from ``leaf``); returns the next
    leaf id. Each split sends the half nearer one of the two farthest codes left (by
    ``d2``, the coordinate's table): similar codes stay together, so a box's RBF range
    narrows with the first cuts. A code not in ``codes`` (not allowed) reaches no leaf,
    which no box of the search holds and no sample's bound reads."""
    k = len(nodes)
    if len(codes) <= 1:
        nodes.append([-1, -1, -1, -1, leaf, (), ()])
        return leaf + 1
    sub = d2[np.ix_(codes, codes)]
    a, b = np.unravel_index(int(np.argmax(sub)), sub.shape)
    order = np.argsort(sub[:, a] - sub[:, b], kind="stable")
    codes = [codes[i] for i in order]
    mid = len(codes) // 2
    left, right = sorted(codes[:mid]), sorted(codes[mid:])
    nodes.append([col, -1, k0 + k + 1, -1, -1, tuple(left), tuple(right)])
    leaf = _code_tree(col, left, d2, nodes, k0, leaf)
    nodes[k][3] = k0 + len(nodes)
    return _code_tree(col, right, d2, nodes, k0, leaf)


def _bisection(col: int, cells: np.ndarray, nodes: list, k0: int, leaf: int) -> int:
    """Append to ``nodes`` the balanced tree of splits of ``col`` at ``cells`` (depth-first,
    node ids from ``k0``, leaf ids from ``leaf``); returns the next leaf id."""
    k = len(nodes)
    if len(cells) == 0:
        nodes.append([-1, -1, -1, -1, leaf, (), ()])
        return leaf + 1
    mid = len(cells) // 2
    nodes.append([col, int(cells[mid]), k0 + k + 1, -1, -1, (), ()])
    leaf = _bisection(col, cells[:mid], nodes, k0, leaf)
    nodes[k][3] = k0 + len(nodes)
    return _bisection(col, cells[mid + 1:], nodes, k0, leaf)


def _smooth_model(kernel, box, thresholds, Xa, shares, sm_alpha, n_trees: int) -> SmoothModel:
    """The ``BoundModel``'s ``SmoothModel`` (all arrays empty without a kernel)."""
    if kernel is None:
        return SmoothModel(np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0), np.int64),
                           np.zeros((0, 0)), np.zeros((0, 1, 1)), np.zeros(0, np.int64),
                           np.zeros((0, 0), np.int64), np.zeros(0, np.int64))
    ds, nb = len(kernel.cols), int(kernel.n_bins)
    dist = np.arange(nb) / nb
    sm_f = np.exp(-0.5 * (dist[None, :] / kernel.lengths[:, None]) ** 2)
    n_cells = max([len(thresholds[int(c)]) + 1 for c in kernel.cols] or [1])
    sm_cbin = np.zeros((ds, n_cells), dtype=np.int64)
    for j, col in enumerate(kernel.cols):
        edges, t = kernel.edges(j), thresholds[int(col)]
        # a cell (t[c-1], t[c]] holds no edge inside: its bin is the number of edges <= t[c-1]
        # (cell 0: the edges below the box's lower bound)
        sm_cbin[j, 0] = np.searchsorted(edges, box.lower[col], side="left")
        sm_cbin[j, 1:len(t) + 1] = np.searchsorted(edges, t, side="right")
    return SmoothModel(np.ascontiguousarray(shares, np.float64),
                       np.ascontiguousarray(sm_alpha, np.float64),
                       np.ascontiguousarray(np.concatenate(
                           (kernel.bins(Xa), kernel.codes(Xa)), axis=1), np.int64),
                       np.ascontiguousarray(sm_f), np.ascontiguousarray(np.exp(-kernel.cat_d2)),
                       np.concatenate((kernel.cols, kernel.cat_cols)).astype(np.int64), sm_cbin,
                       np.arange(n_trees, n_trees + kernel.n_coords, dtype=np.int64))
