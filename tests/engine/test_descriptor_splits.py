"""Descriptor split rules: the prior of a category mask is the sum over the split variables and
cuts that produce it, and the sampler leaves that prior invariant.

Space: a categorical feature with 5 categories and 2 descriptors (categories 1 and 2 share
descriptor 0's value; categories 3 and 4 are equal in both, so that under descriptor rules
alone they can never be parted and a node holding only them is a leaf with probability
one), plus a discrete feature with two values (exhausted after one split, so that whether
a child can split depends on the descriptors). Each choice (descriptors only or with
subset rules, uniform or sparse split prior) is checked twice: the rule sampler against the
mask probabilities computed by hand, and a flat-likelihood chain against forests drawn from
the prior (chi-square of the root's rule and of the tree sizes).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from bofire_bark.engine import Chain, MCMCSettings, sample_prior
from bofire_bark.engine.forest import new_subspace, split_variables
from bofire_bark.engine.priors import draw_rule, tree_prior
from bofire_bark.engine.rng import seed_states

P_MIN = 0.001
TABLE = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 2.0], [3.0, 5.0], [3.0, 5.0]])
K = len(TABLE)


def space_of(subsets: bool):
    kinds = np.array([2, 1], np.int64)
    return split_variables(kinds, np.array([0.0, 0.0]), np.array([K - 1.0, 1.0]),
                           np.array([K, 2], np.int64), [(TABLE, subsets), None])


def expected_masks(subsets: bool) -> dict[int, float]:
    """P(mask | the root splits the categorical feature), by hand: each split variable of the
    feature equally likely (the continuous one is the remaining variable), then a cut (or a
    subset) uniformly (the discrete feature is the remaining variable)."""
    n_vars = TABLE.shape[1] + subsets
    probs: dict[int, float] = {}
    for k in range(TABLE.shape[1]):
        values = np.unique(TABLE[:, k])
        for cut in values[:-1]:
            mask = sum(1 << c for c in range(K) if TABLE[c, k] <= cut)
            probs[mask] = probs.get(mask, 0.0) + 1.0 / n_vars / (len(values) - 1)
    if subsets:
        proper = [m for m in range(1, 2**K - 1)]
        for mask in proper:
            probs[mask] = probs.get(mask, 0.0) + 1.0 / n_vars / len(proper)
    return probs


@pytest.mark.parametrize("subsets", [False, True])
def test_rule_masks_follow_the_sum_over_rules(subsets):
    space = space_of(subsets)
    prior = tree_prior(0.95, 2.0, space)
    sub = new_subspace(2, 1)
    sub.lo[:] = space.lower
    sub.hi[:] = space.upper
    sub.cats[0, 0] = np.uint64(2**K - 1)
    state = seed_states(11, 1)[0]
    mask = np.zeros(1, np.uint64)
    n = 30000
    drawn = []
    for _ in range(n):
        j, th = draw_rule(state, space, sub, mask, prior)
        if j == 0:
            drawn.append(int(mask[0]))
    expected = expected_masks(subsets)
    n_vars = len(space.var_col)
    assert abs(len(drawn) / n - (n_vars - 1) / n_vars) < 0.02  # the discrete variable's share
    keys = sorted(expected)
    observed = np.array([drawn.count(m) for m in keys])
    assert observed.sum() == len(drawn), "a mask no rule can produce was drawn"
    p = stats.chisquare(observed, len(drawn) * np.array([expected[m] for m in keys])).pvalue
    assert p > P_MIN, p


def test_descriptor_rules_cannot_part_categories_with_equal_descriptors():
    space = space_of(False)
    prior = tree_prior(0.95, 2.0, space)
    sub = new_subspace(2, 1)
    sub.lo[:] = [0.0, 1.0]
    sub.hi[:] = [K - 1.0, 1.0]  # the discrete feature is exhausted here
    sub.cats[0, 0] = np.uint64((1 << 3) | (1 << 4))  # equal in both descriptors
    state = seed_states(2, 1)[0]
    assert draw_rule(state, space, sub, np.zeros(1, np.uint64), prior)[0] == -1
    sub.cats[0, 0] = np.uint64((1 << 1) | (1 << 2))  # equal in descriptor 0 only
    mask = np.zeros(1, np.uint64)
    for _ in range(50):
        j, th = draw_rule(state, space, sub, mask, prior)
        assert (j, th) == (0, 2.0) and int(mask[0]) == 1 << 1  # descriptor 1: 0.0 <= cut < 2.0


def root_rule(feat, thr, mask):
    """A label per forest's root: 'leaf', 'disc', or the categorical mask."""
    if feat[0, 0] < 0:
        return "leaf"
    if feat[0, 0] == 1:
        return "disc"
    return int(mask[0, 0, 0])


@pytest.mark.parametrize("subsets,split_prior", [(False, "uniform"), (True, "uniform"),
                                                 (False, "dirichlet"), (True, "dirichlet")])
def test_flat_chain_reproduces_the_prior(subsets, split_prior):
    space = space_of(subsets)
    settings = MCMCSettings(n_trees=1, alpha=0.95, beta=1.0, likelihood="flat",
                            split_prior=split_prior)
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, K, 6), rng.integers(0, 2, 6)]).astype(float)
    y = rng.standard_normal(6)
    n_chains = 1200
    chain_roots, chain_sizes = [], []
    for state in seed_states(17, n_chains):
        chain = Chain(space, settings, state)
        chain.set_data(X, y)
        chain.run(150)
        forest, _, _ = chain.snapshot()
        chain_roots.append(root_rule(forest["feat"], forest["thr"], forest["mask"]))
        chain_sizes.append(int((forest["feat"] >= 0).sum()))
    prior = sample_prior(X, y, space, settings, n_samples=3000, seed=3)
    s = prior.samples
    prior_roots = [root_rule(s["feat"][i], s["thr"][i], s["mask"][i]) for i in range(3000)]
    prior_sizes = (s["feat"] >= 0).reshape(3000, -1).sum(axis=1)
    labels = sorted(set(prior_roots) | set(chain_roots), key=str)
    table = np.array([[chain_roots.count(v) for v in labels],
                      [prior_roots.count(v) for v in labels]])
    # pool rare root rules so the chi-square's expected counts stay above ~5
    common = table.sum(axis=0) >= 40
    pooled = np.column_stack([table[:, common], table[:, ~common].sum(axis=1)])
    p = stats.chi2_contingency(pooled[:, pooled.sum(axis=0) > 0]).pvalue
    assert p > P_MIN, f"root rules: chain vs prior sampler (chi2 p={p:.2e})"
    sizes = np.stack([np.bincount(np.minimum(chain_sizes, 5), minlength=6),
                      np.bincount(np.minimum(prior_sizes, 5), minlength=6)])
    p = stats.chi2_contingency(sizes[:, sizes.sum(axis=0) > 0]).pvalue
    assert p > P_MIN, f"internal nodes: chain vs prior sampler (chi2 p={p:.2e})"
    # every categorical root rule is one of the prior's masks
    allowed = set(expected_masks(subsets))
    assert {v for v in labels if isinstance(v, int)} <= allowed


def test_split_variables_are_checked():
    with pytest.raises(ValueError, match="constant"):
        split_variables(np.array([2]), np.zeros(1), np.ones(1), np.array([2]),
                        [(np.array([[1.0], [1.0]]), False)])
    with pytest.raises(ValueError, match="NaN"):
        split_variables(np.array([2]), np.zeros(1), np.ones(1), np.array([2]),
                        [(np.array([[1.0], [np.nan]]), False)])
    space = space_of(True)
    assert list(space.var_col) == [0, 0, 0, 1] and list(space.var_desc) == [-1, 0, 1, -1]
    assert list(itertools.chain(space.var_start)) == [0, 3, 4]


def test_children_descriptors_cannot_split_are_leaves_in_the_chain():
    """One feature, categories 1 and 2 equal in its only descriptor: the root's one rule
    leaves two children that cannot split, so the root splits with probability alpha (0.5,
    beta 0). A chain that counted the pair as splittable (by its two categories) would put
    alpha (1 - alpha) / (alpha (1 - alpha) + 1 - alpha) = 1/3 on it (checked by making it do
    so while writing this test: the test fails)."""
    space = split_variables(np.array([2]), np.zeros(1), np.array([2.0]), np.array([3]),
                            [(np.array([[0.0], [1.0], [1.0]]), False)])
    settings = MCMCSettings(n_trees=1, alpha=0.5, beta=0.0, likelihood="flat")
    X, y = np.array([[0.0], [1.0], [2.0]]), np.zeros(3)
    n_chains = 2000
    split = 0
    for state in seed_states(23, n_chains):
        chain = Chain(space, settings, state)
        chain.set_data(X, y)
        chain.run(40)
        split += int(chain.forest["feat"][0, 0] >= 0)
    p = stats.binomtest(split, n_chains, 0.5).pvalue
    assert p > P_MIN, (split / n_chains, p)


def test_whether_a_descriptor_splits_a_node_matches_its_values():
    """Two-valued descriptors (fingerprint bits) answer from a bit set of the categories with
    the higher value, others by walking the values: both must say whether the node's
    categories take two values (checked on 70 categories, two mask words)."""
    from bofire_bark.engine.forest import var_can_split

    rng = np.random.default_rng(4)
    k = 70
    table = np.column_stack([rng.integers(0, 2, k), rng.integers(0, 3, k), rng.random(k)])
    space = split_variables(np.array([2]), np.zeros(1), np.array([k - 1.0]), np.array([k]),
                            [(table, False)])
    assert space.high[0].any() and not space.high[1].any() and not space.high[2].any()
    for _ in range(300):
        present = np.flatnonzero(rng.random(k) < rng.choice([0.03, 0.2, 0.9]))
        words = np.zeros((1, 2), np.uint64)  # the column's row: the node's categories
        for c in present:
            words[0, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
        for v in range(3):
            expected = len(np.unique(table[present, v])) >= 2
            assert var_can_split(space, v, np.zeros(1), np.zeros(1), words) == expected


def test_whether_a_column_splits_a_node_matches_its_variables():
    """``column_can_split`` (two category classes reach the node) says what asking each of the
    column's split variables says: descriptor tables with repeated rows, two-valued and
    many-valued descriptors, with and without subset rules; a plain categorical column and a
    continuous one beside them."""
    from bofire_bark.engine.forest import column_can_split, var_can_split

    rng = np.random.default_rng(7)
    for trial in range(20):
        k = int(rng.integers(2, 140))
        base = np.column_stack([rng.integers(0, 2, k), rng.integers(0, 3, k), rng.random(k)])
        rows = base[rng.integers(0, max(1, k // 3), k)]  # repeated rows: classes of categories
        rows = rows[:, [c for c in range(3) if len(np.unique(rows[:, c])) >= 2]]
        if rows.shape[1] == 0:
            continue
        labels = bool(trial % 2)
        space = split_variables(np.array([0, 2, 2]), np.array([0.0, 0, 0]),
                                np.array([1.0, k - 1, 5]), np.array([0, k, 6]),
                                [None, (rows, labels), None])
        words = (k + 63) // 64
        for _ in range(60):
            present = np.flatnonzero(rng.random(k) < rng.choice([0.02, 0.1, 0.5, 1.0]))
            cats = np.zeros((3, words), np.uint64)
            for c in present:
                cats[1, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            cats[2, 0] = np.uint64(rng.integers(0, 64))
            lo, hi = np.zeros(3), np.array([rng.choice([0.0, 0.5]), 0, 0])
            for j in range(3):
                expected = any(var_can_split(space, v, lo, hi, cats)
                               for v in range(space.var_start[j], space.var_start[j + 1]))
                assert column_can_split(space, j, lo, hi, cats, j) == expected, (trial, j)


def test_splittable_flags_match_each_variable_across_shared_words():
    """``splittable_flags`` answers two-valued descriptors a word of 64 at a time from the
    transposed bits; it must say what asking each variable says, also where two columns'
    variables share a word (columns of 1-150 descriptors beside continuous ones)."""
    from bofire_bark.engine.forest import Subspace, splittable_flags, var_can_split

    rng = np.random.default_rng(11)
    for trial in range(15):
        n_cols = int(rng.integers(1, 4))
        kinds, lower, upper, n_values, desc = [0], [0.0], [1.0], [0], [None]
        for _ in range(n_cols):
            k = int(rng.integers(2, 130))
            n_desc = int(rng.integers(1, 150))
            table = np.column_stack([rng.integers(0, 2 + (c % 7 == 0), k) for c in range(n_desc)])
            table = table[:, [c for c in range(n_desc) if len(np.unique(table[:, c])) >= 2]]
            if table.shape[1] == 0:
                continue
            kinds.append(2)
            lower.append(0.0)
            upper.append(k - 1.0)
            n_values.append(k)
            desc.append((table, bool(rng.integers(0, 2))))
        space = split_variables(np.array(kinds), np.array(lower), np.array(upper),
                                np.array(n_values), desc)
        d, words = len(kinds), (max(n_values) + 63) // 64
        for _ in range(40):
            lo, hi = np.zeros(d), np.array([rng.choice([0.0, 0.5])] + [0.0] * (d - 1))
            cats = np.zeros((d, words), np.uint64)
            for j in range(1, d):
                for c in np.flatnonzero(rng.random(n_values[j]) < rng.choice([0.02, 0.2, 1.0])):
                    cats[j, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            flags = np.zeros(len(space.var_col), np.bool_)
            count = splittable_flags(space, Subspace(lo, hi, cats), flags)
            expected = [var_can_split(space, v, lo, hi, cats)
                        for v in range(len(space.var_col))]
            assert flags.tolist() == expected, trial
            assert count == sum(expected)
