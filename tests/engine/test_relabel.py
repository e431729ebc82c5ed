"""Label swaps (engine/relabel.py): which inputs pair up, the swap itself, and that chains with
swaps still target the posterior.

Under a flat likelihood every swap is accepted, so the chain must keep the prior of
(concentration, weights, trees) invariant through the swap alone: split counts per column,
the position of continuous thresholds within their bounds and the weight of the variable a
root splits on must match forests drawn from the prior. Each fails when the swap is wrong:
thresholds copied between columns of different bounds fall outside the new column's range
(the relative positions are no longer uniform), and trees swapped without their weights lose
the link between a root's variable and its weight.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from test_split_prior import pooled, split_counts

from bofire_bark.engine import Chain, MCMCSettings, sample_prior
from bofire_bark.engine.forest import as_space
from bofire_bark.engine.priors import root_splittable
from bofire_bark.engine.relabel import interchangeable_pairs, swap_columns
from bofire_bark.engine.rng import seed_states

P_MIN = 0.001
# discrete x0, x1 (3 values); categorical x2, x3 (3); continuous x4 on [0, 1], x5 on [-5, 20];
# a fixed continuous x6 (cannot split); a discrete x7 with 4 values (no partner)
KINDS = np.array([1, 1, 2, 2, 0, 0, 0, 1], np.int64)
LOWER = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -5.0, 0.5, 0.0])
UPPER = np.array([2.0, 2.0, 2.0, 2.0, 1.0, 20.0, 0.5, 3.0])
N_VALUES = np.array([3, 3, 3, 3, 0, 0, 0, 4], np.int64)
SPACE = (KINDS, LOWER, UPPER, N_VALUES)
D = len(KINDS)


def data(n=12, seed=0, signal=False):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 3, n),
                         rng.integers(0, 3, n), rng.random(n), -5 + 25 * rng.random(n),
                         np.full(n, 0.5), rng.integers(0, 4, n)]).astype(float)
    y = rng.standard_normal(n)
    if signal:
        y = y * 0.3 + 2.0 * (X[:, 4] > 0.5) + (X[:, 0] == 1)
    return X, y


def test_pairs_are_columns_with_the_same_rule_space():
    space = as_space(SPACE)
    pairs = interchangeable_pairs(space, root_splittable(space))
    assert sorted(map(tuple, pairs[:, [0, 2]].tolist())) == [(0, 1), (2, 3), (4, 5)]
    assert (pairs[:, 1] == pairs[:, 0]).all()  # without descriptors variable = column


def test_swap_is_an_involution_mapping_thresholds_between_bounds():
    feat = np.array([[4, 5, 0, -1, 1, -2]], np.int64)
    thr = np.array([[0.25, 15.0, 1.0, 0.0, 0.0, 0.0]])
    f0, t0 = feat.copy(), thr.copy()
    swap_columns(feat, thr, KINDS, LOWER, UPPER, 4, 5)
    np.testing.assert_array_equal(feat, [[5, 4, 0, -1, 1, -2]])
    np.testing.assert_allclose(thr[0, :2], [-5 + 0.25 * 25, 0.8])
    swap_columns(feat, thr, KINDS, LOWER, UPPER, 4, 5)
    np.testing.assert_array_equal(feat, f0)
    np.testing.assert_allclose(thr, t0, rtol=1e-15)
    swap_columns(feat, thr, KINDS, LOWER, UPPER, 0, 1)  # cut indices stay as they are
    np.testing.assert_array_equal(feat, [[4, 5, 1, -1, 0, -2]])
    np.testing.assert_array_equal(thr, t0)


@pytest.fixture(scope="module")
def flat_swapping_chains():
    settings = MCMCSettings(n_trees=1, alpha=0.95, beta=1.0, likelihood="flat",
                            split_prior="dirichlet", label_swap_every=1)
    n_chains, burn_in = 1200, 150
    states = seed_states(11, n_chains)
    X, y = data()
    counts, roots, probs, taken = [], [], [], 0
    for c in range(n_chains):
        chain = Chain(SPACE, settings, states[c])
        chain.set_data(X, y)
        chain.run(burn_in)
        forest, _, extra = chain.snapshot()
        counts.append(split_counts(forest["feat"], D)[0])
        roots.append((forest["feat"][0, 0], forest["thr"][0, 0]))
        probs.append(extra["split_prob"])
        taken += chain.swap_stats[1]
    prior = sample_prior(X, y, SPACE, settings, n_samples=3000, seed=12).samples
    roots, p_feat = np.array(roots), prior["feat"][:, 0, 0]
    return (np.array(counts), roots[:, 0].astype(int), roots[:, 1], np.array(probs), taken,
            split_counts(prior["feat"][:, 0], D), p_feat, prior["split_prob"])


def test_flat_chain_with_swaps_keeps_the_prior(flat_swapping_chains):
    counts, feat, thr, probs, taken, ref, p_feat, p_probs = flat_swapping_chains
    assert taken > 1000, "too few swaps moved trees for the test to see them"
    assert counts[:, 6].sum() == 0
    for j in (0, 1, 2, 3, 4, 5, 7):
        table = np.stack([pooled(counts[:, j], 3), pooled(ref[:, j], 3)])
        p = stats.chi2_contingency(table).pvalue
        assert p > P_MIN, f"splits on x{j}: chain vs prior sampler (chi2 p={p:.2e})"
    # a root's threshold is uniform within its column's bounds (the root sees all of it)
    for j in (4, 5):
        rel = (thr[feat == j] - LOWER[j]) / (UPPER[j] - LOWER[j])
        assert len(rel) > 50
        p = stats.kstest(rel, "uniform").pvalue
        assert p > P_MIN, f"x{j} root thresholds not uniform in its bounds (KS p={p:.2e})"
    # the weight of the variable the root splits on: trees and weights must move together
    split, p_split = feat >= 0, p_feat >= 0
    w = probs[split, feat[split]]
    w_ref = p_probs[p_split, p_feat[p_split]]
    p = stats.ks_2samp(w, w_ref).pvalue
    assert p > P_MIN, f"weight of the root's variable: chain vs prior (KS p={p:.2e})"


@pytest.mark.parametrize("likelihood", ["n", "leaf"])
def test_likelihood_state_after_swaps_equals_a_full_recomputation(likelihood):
    X, y = data(n=30, seed=3, signal=True)
    settings = MCMCSettings(n_trees=20, likelihood=likelihood, label_swap_every=1)
    chain = Chain(SPACE, settings, seed_states(4, 1)[0])
    chain.set_data(X, (y - y.mean()) / y.std())
    chain.run(300)
    tried, taken = chain.swap_stats
    assert tried > 50 and 0 < taken < tried  # swaps that moved trees, some refused
    q, logdet = chain.loglik()
    chain._rebuild(chain.mode)
    np.testing.assert_allclose(chain.loglik(), (q, logdet), rtol=1e-8)


def test_chains_with_and_without_swaps_agree_on_a_posterior():
    """The swap's acceptance (the likelihood ratio) must leave the posterior invariant: on a
    small problem with continuous and binary inputs, long chains with a swap every sweep and
    without any agree on the mean log likelihood and the splits per input (within 5 standard
    errors from 4 independent chains each)."""
    kinds = np.array([0, 0, 1, 1, 1, 1], np.int64)
    space = (kinds, np.array([-1.0, -1, 0, 0, 0, 0]), np.ones(6), np.array([0, 0, 2, 2, 2, 2]))
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(-1, 1, (10, 2)), rng.integers(0, 2, (10, 4))])
    y = X[:, 0] ** 2 + X[:, 2] - X[:, 3] + 0.1 * rng.standard_normal(10)
    y = (y - y.mean()) / y.std()

    def chain_means(every, seed):
        settings = MCMCSettings(n_trees=5, label_swap_every=every)
        chain = Chain(space, settings, seed_states(seed, 1)[0])
        chain.set_data(X, y)
        chain.run(2000)
        rows = []
        for _ in range(800):
            chain.run(20)
            q, logdet = chain.loglik()
            rows.append([-0.5 * (q + logdet)] + [(chain.forest["feat"] == j).sum()
                                                  for j in range(6)])
        return np.mean(rows, axis=0)

    off = np.array([chain_means(0, s) for s in range(4)])
    on = np.array([chain_means(1, s) for s in range(4)])
    se = np.sqrt(off.var(axis=0, ddof=1) / 4 + on.var(axis=0, ddof=1) / 4)
    z = np.abs(off.mean(axis=0) - on.mean(axis=0)) / se
    assert (z < 5).all(), f"with and without swaps differ: z = {np.round(z, 1)}"
