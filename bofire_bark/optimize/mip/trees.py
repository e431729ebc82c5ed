"""Tree constraints of the acquisition MIP (the paper's "Optimizer details", eq. tree_a-tree_g).

Components, named after the paper's symbols:

- ``x[j]``: continuous input j (encoded = value).
- ``w[j, k]``: one-hot of discrete value / categorical category k of feature j (``tree_d``: one
  per feature); only allowed categories get a variable.
- ``value[j]``: the numeric value of a feature as BoFire sees it (continuous x, discrete
  sum_k values_k w_jk); categorical: the category code.
- ``nu[j, i]``: ordered split binaries nu_{j,i} = [x_j <= t_{j,i}] over the distinct thresholds of
  feature j (``tree_e``: nu_{j,i} <= nu_{j,i+1}); for discrete features nu is fixed by the one-hot
  (``nu_disc``).
- ``link_hi`` / ``link_lo``: x_j lies in the threshold interval nu selects, written in
  incremental form (one pair per feature, the convex hull of the feature's intervals):
  x <= ub - sum_i nu_i (t_{i+1} - t_i) and x >= t_K + eps - sum_i nu_i (lo_i - lo_{i-1}) with
  lo_0 = lb and lo_i = t_i + eps. eps = ``margin`` keeps x > t strict on the right.
- ``b[j]``: activity of a semicontinuous feature ({0} u [lb, ub]): lb b <= x <= ub b.
- ``z[u, l]``: leaf l of distinct reduced tree u (``tree_a``: one leaf per tree); ``tree_b`` /
  ``tree_c``: the leaves left (right) of a split need the split's left (right) side.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from bofire_bark.optimize.ensemble import CATEGORICAL, CONTINUOUS, DISCRETE, InputBox, TreeEnsemble


def _add_inputs(m: pyo.ConcreteModel, box: InputBox) -> None:
    """x, w, b, value and the one-hot rows ``tree_d``."""
    d = box.n_features
    cont = [j for j in range(d) if box.kinds[j] == CONTINUOUS]
    onehot = []
    for j in range(d):
        if box.kinds[j] == DISCRETE:
            onehot += [(j, k) for k in range(len(box.values[j]))]
        elif box.kinds[j] == CATEGORICAL:
            onehot += [(j, k) for k in box.allowed[j]]
    m.x = pyo.Var(cont, bounds=lambda _, j: (box.lower[j], box.upper[j]))
    m.w = pyo.Var(onehot, domain=pyo.Binary)
    semi = [j for j in cont if box.semicontinuous[j]]
    m.b = pyo.Var(semi, domain=pyo.Binary)
    m.semi_lo = pyo.Constraint(semi, rule=lambda m, j: m.x[j] >= box.active_lower[j] * m.b[j])
    m.semi_hi = pyo.Constraint(semi, rule=lambda m, j: m.x[j] <= box.upper[j] * m.b[j])
    groups: dict[int, list[int]] = {}
    for j, k in onehot:
        groups.setdefault(j, []).append(k)
    m.tree_d = pyo.Constraint(list(groups),
                              rule=lambda m, j: sum(m.w[j, k] for k in groups[j]) == 1)

    def value(m, j):
        if box.kinds[j] == CONTINUOUS:
            return m.x[j]
        if box.kinds[j] == DISCRETE:
            return sum(float(v) * m.w[j, k] for k, v in enumerate(box.values[j]))
        return sum(float(k) * m.w[j, k] for k in groups[j])

    m.value = pyo.Expression(range(d), rule=value)


def _add_splits(m: pyo.ConcreteModel, box: InputBox, ens: TreeEnsemble) -> None:
    """nu, ``tree_e``, ``nu_disc`` and the interval links ``link_hi`` / ``link_lo``."""
    cont = [(j, i) for j, t in enumerate(ens.thresholds)
            if box.kinds[j] == CONTINUOUS for i in range(len(t))]
    disc = [(j, i) for j, t in enumerate(ens.thresholds)
            if box.kinds[j] == DISCRETE for i in range(len(t))]
    m.nu = pyo.Var(cont, domain=pyo.Binary)
    m.nu_d = pyo.Var(disc, bounds=(0.0, 1.0))
    m.tree_e = pyo.Constraint(
        [(j, i) for j, i in cont if i + 1 < len(ens.thresholds[j])],
        rule=lambda m, j, i: m.nu[j, i] <= m.nu[j, i + 1])
    m.nu_disc = pyo.Constraint(disc, rule=lambda m, j, i: m.nu_d[j, i] == sum(
        m.w[j, k] for k in range(int(ens.thresholds[j][i]) + 1)))
    feats = sorted({j for j, _ in cont})

    def link_hi(m, j):
        t = np.append(ens.thresholds[j], box.upper[j])
        return m.x[j] <= box.upper[j] - sum(float(t[i + 1] - t[i]) * m.nu[j, i]
                                            for i in range(len(t) - 1))

    def link_lo(m, j):
        t = ens.thresholds[j]
        eps = float(box.margin[j])
        lo = np.concatenate(([box.lower[j]], t + eps))
        return m.x[j] >= float(lo[-1]) - sum(float(lo[i + 1] - lo[i]) * m.nu[j, i]
                                             for i in range(len(t)))

    m.link_hi = pyo.Constraint(feats, rule=link_hi)
    m.link_lo = pyo.Constraint(feats, rule=link_lo)


def split_indicator(m: pyo.ConcreteModel, box: InputBox, ens: TreeEnsemble, split,
                    left: bool):
    """Linear expression that is 1 when a point goes to the ``left`` (or right) of ``split``."""
    j = split.feature
    if box.kinds[j] == CATEGORICAL:
        codes = split.left_codes if left else split.right_codes
        return sum(m.w[j, k] for k in codes)
    i = int(np.searchsorted(ens.thresholds[j], split.threshold))
    nu = m.nu[j, i] if box.kinds[j] == CONTINUOUS else m.nu_d[j, i]
    return nu if left else 1 - nu


def _add_leaves(m: pyo.ConcreteModel, ens: TreeEnsemble) -> None:
    """z for every non-constant distinct tree and ``tree_a``."""
    trees = [u for u, tree in enumerate(ens.trees) if not tree.constant]
    m.z = pyo.Var([(u, p) for u in trees for p in range(ens.trees[u].n_leaves)],
                  bounds=(0.0, 1.0))
    m.tree_a = pyo.Constraint(trees, rule=lambda m, u: sum(
        m.z[u, p] for p in range(ens.trees[u].n_leaves)) == 1)


def _add_tree_links(m: pyo.ConcreteModel, box: InputBox, ens: TreeEnsemble) -> None:
    """``tree_b`` / ``tree_c``: leaves on one side of a split need that side."""
    index = [(u, k) for u, tree in enumerate(ens.trees) if not tree.constant
             for k in range(len(tree.splits))]

    def side(m, u, k, left):
        split = ens.trees[u].splits[k]
        leaves = split.left if left else split.right
        return sum(m.z[u, p] for p in leaves) <= split_indicator(m, box, ens, split, left)

    m.tree_b = pyo.Constraint(index, rule=lambda m, u, k: side(m, u, k, True))
    m.tree_c = pyo.Constraint(index, rule=lambda m, u, k: side(m, u, k, False))


def add_tree_constraints(m: pyo.ConcreteModel, box: InputBox, ens: TreeEnsemble) -> None:
    """All input, split and leaf components of the ensemble."""
    _add_inputs(m, box)
    _add_splits(m, box, ens)
    _add_leaves(m, ens)
    _add_tree_links(m, box, ens)


def tree_start(m: pyo.ConcreteModel, box: InputBox, ens: TreeEnsemble, x: np.ndarray) -> None:
    """Set x, w, b, nu and z to the values of the encoded point ``x`` (D,)."""
    for j in range(box.n_features):
        kind = box.kinds[j]
        if kind == CONTINUOUS:
            m.x[j].set_value(float(x[j]), skip_validation=True)
            if box.semicontinuous[j]:
                m.b[j].set_value(float(x[j] != 0.0))
        else:
            code = int(round(x[j]))
            for k in (range(len(box.values[j])) if kind == DISCRETE else box.allowed[j]):
                m.w[j, k].set_value(float(k == code))
        for i, t in enumerate(ens.thresholds[j]):
            var = m.nu[j, i] if kind == CONTINUOUS else m.nu_d[j, i]
            var.set_value(float(x[j] <= t))
    for u, tree in enumerate(ens.trees):
        if tree.constant:
            continue
        leaf = tree.leaf_of(x, box.kinds)
        for p in range(tree.n_leaves):
            m.z[u, p].set_value(float(p == leaf))
