"""The sparse split prior (Dirichlet weights on the split features, ``split_prior="dirichlet"``).

With a flat likelihood the chain must leave the joint prior of (a, s, trees) invariant: the
weights' marginal is the Dirichlet mixture over a / (a + P) ~ Beta(0.5, 1), and the trees'
split counts per feature match forests drawn directly from the prior. The space is chosen so
that features run out of room (a discrete feature with 3 values and a categorical one with 3
categories; after one split on the discrete feature one child cannot split on it again): then
the weights' update needs its Metropolis-Hastings correction for the restricted
renormalization, and a plain Dirichlet(a/P + counts) draw gives a different distribution
(checked by removing the correction while writing this test, with numba's cache cleared: the
weights' KS tests fail with p < 1e-12).

Independence: every chain has one tree and is recorded once, after a burn-in much longer than
the chain's autocorrelation (the weights move in one step when the tree has few splits).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bofire_bark.engine import Chain, MCMCSettings, sample_prior
from bofire_bark.engine.forest import new_subspace, split_variables
from bofire_bark.engine.priors import draw_rule, set_split_weights, tree_prior
from bofire_bark.engine.rng import seed_states

P_MIN = 0.001


def mixed_space():
    # discrete (3 values), categorical (3 categories), continuous, and a fixed feature that
    # can never split (it must get no weight and no splits)
    return (np.array([1, 2, 0, 0], np.int64), np.array([0.0, 0.0, 0.0, 0.5]),
            np.array([2.0, 2.0, 1.0, 0.5]), np.array([3, 3, 0, 0], np.int64))


def dummy_data(space, n=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 3, n), rng.random(n),
                         np.full(n, 0.5)]).astype(float)
    return X, rng.standard_normal(n)


def reference_weights(n_active, size, seed):
    """(rho, s_0) drawn from the prior directly: rho = a / (a + P) ~ Beta(0.5, 1)."""
    rng = np.random.default_rng(seed)
    rho = rng.beta(0.5, 1.0, size)
    a = n_active * rho / (1.0 - rho)
    # Dirichlet with tiny shapes underflows in numpy; draw s_0 = G0 / sum G via log-gammas
    logs = np.log(rng.gamma(a[:, None] / n_active + 1.0, size=(size, n_active))) + np.log(
        rng.random((size, n_active))) / (a[:, None] / n_active)
    logs -= logs.max(axis=1, keepdims=True)
    s = np.exp(logs) / np.exp(logs).sum(axis=1, keepdims=True)
    return rho, s[:, 0]


def split_counts(feat, d):
    """(samples, d) number of internal nodes splitting on each feature."""
    feat = feat.reshape(feat.shape[0], -1)
    return np.stack([(feat == j).sum(axis=1) for j in range(d)], axis=1)


def pooled(values, k):
    return np.bincount(np.minimum(values, k), minlength=k + 1)


@pytest.fixture(scope="module")
def flat_chains():
    space = mixed_space()
    settings = MCMCSettings(n_trees=1, alpha=0.95, beta=1.0, likelihood="flat",
                            split_prior="dirichlet")
    # burn-in: a tree changes by one node per sweep; 200 sweeps give split counts that
    # match the prior sampler for the uniform prior too (60 did not with beta = 0.5)
    n_chains, burn_in = 1500, 200
    states = seed_states(5, n_chains)
    X, y = dummy_data(space)
    probs, conc, counts = [], [], []
    for c in range(n_chains):
        chain = Chain(space, settings, states[c])
        chain.set_data(X, y)
        chain.run(burn_in)
        forest, _, extra = chain.snapshot()
        probs.append(extra["split_prob"])
        conc.append(extra["split_concentration"])
        counts.append(split_counts(forest["feat"][None], 4)[0])
    return space, settings, np.array(probs), np.array(conc), np.array(counts)


def test_weights_follow_their_prior_under_a_flat_likelihood(flat_chains):
    space, _, probs, conc, _ = flat_chains
    n_active = 3
    assert np.all(probs[:, 3] == 0.0), "a feature that cannot split got weight"
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    rho_ref, s0_ref = reference_weights(n_active, 20000, seed=1)
    p_rho = stats.ks_2samp(conc / (conc + n_active), rho_ref).pvalue
    assert p_rho > P_MIN, f"a / (a + P) differs from Beta(0.5, 1) (KS p={p_rho:.2e})"
    p_rho_exact = stats.kstest(conc / (conc + n_active), stats.beta(0.5, 1.0).cdf).pvalue
    assert p_rho_exact > P_MIN, p_rho_exact
    for j in range(n_active):  # exchangeable a priori: every s_j has s_0's law
        p = stats.ks_2samp(probs[:, j], s0_ref).pvalue
        assert p > P_MIN, f"s_{j} differs from the Dirichlet mixture (KS p={p:.2e})"


def test_split_counts_match_forests_drawn_from_the_prior(flat_chains):
    space, settings, _, _, chain_counts = flat_chains
    X, y = dummy_data(space)
    prior = sample_prior(X, y, space, settings, n_samples=3000, seed=7)
    assert "split_prob" in prior.samples
    prior_counts = split_counts(prior.samples["feat"], 4)
    assert chain_counts[:, 3].sum() == 0 and prior_counts[:, 3].sum() == 0
    # trees reach the limits of the discrete and categorical features
    assert (chain_counts[:, 0] >= 2).mean() > 0.05 and (chain_counts[:, 1] >= 2).mean() > 0.05
    for j, k in ((0, 3), (1, 3), (2, 4)):
        table = np.stack([pooled(chain_counts[:, j], k), pooled(prior_counts[:, j], k)])
        p = stats.chi2_contingency(table).pvalue
        assert p > P_MIN, f"splits on feature {j}: chain vs prior sampler (chi2 p={p:.2e})"
    total = np.stack([pooled(chain_counts.sum(axis=1), 6), pooled(prior_counts.sum(axis=1), 6)])
    p = stats.chi2_contingency(total).pvalue
    assert p > P_MIN, f"internal nodes: chain vs prior sampler (chi2 p={p:.2e})"


def test_rule_feature_follows_the_weights_restricted_to_splittable_features():
    """At a node where feature 0 cannot split, the feature is drawn with s_j / sum of the
    others' weights; a fixed feature is never drawn."""
    kinds, lower, upper, n_values = mixed_space()
    space = split_variables(kinds, lower, upper, n_values)
    prior = tree_prior(0.95, 2.0, space, dirichlet=True)
    set_split_weights(prior, np.concatenate((np.log([0.6, 0.3, 0.1]), prior.log_w[3:])))
    sub = new_subspace(4, 1)
    sub.lo[:] = lower
    sub.hi[:] = upper
    sub.cats[1, 0] = np.uint64(0b111)
    sub.lo[0] = sub.hi[0] = 1.0  # feature 0 exhausted here
    state = seed_states(3, 1)[0]
    mask = np.zeros(1, np.uint64)
    n = 20000
    drawn = np.array([draw_rule(state, space, sub, mask, prior)[0] for _ in range(n)])
    observed = np.bincount(drawn, minlength=4)
    assert observed[0] == 0 and observed[3] == 0
    p = stats.chisquare(observed[1:3], n * np.array([0.75, 0.25])).pvalue
    assert p > P_MIN, (observed, p)


def test_sparse_prior_finds_the_relevant_inputs():
    """Two of ten inputs shape y: the posterior split probabilities put most mass on them,
    while under the uniform prior the weights stay fixed (NaN in the trace)."""
    from bofire_bark.engine import fit_posterior

    rng = np.random.default_rng(0)
    X = rng.random((60, 10))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(60)
    space = (np.zeros(10, np.int64), np.zeros(10), np.ones(10), np.zeros(10, np.int64))
    post = fit_posterior(X, y, space, MCMCSettings(split_prior="dirichlet"), seed=1,
                         burn_in=300, n_samples=4, thinning=25, n_chains=2)
    s = post.samples["split_prob"].mean(axis=0)
    assert s[:2].sum() > 0.8, s
    assert post.traces.shape == (2, 100, 24)
    np.testing.assert_allclose(post.traces[:, :, 4:14].sum(axis=2), 1.0, rtol=1e-9)
    np.testing.assert_allclose(post.traces[:, :, 14:].sum(axis=2), 1.0, rtol=1e-9)
    # the last traced sweep's shares are those of the last kept forest
    feat = post.samples["feat"][3]
    shares = np.bincount(feat[feat >= 0], minlength=10) / (feat >= 0).sum()
    np.testing.assert_allclose(post.traces[0, -1, 14:], shares)
    uni = fit_posterior(X, y, space, MCMCSettings(split_prior="uniform"), seed=1, burn_in=10,
                        n_samples=1, thinning=5, n_chains=1)
    assert "split_prob" not in uni.samples and np.isnan(uni.traces[:, :, 3:14]).all()


@pytest.mark.parametrize("scale", [0.0, -300.0, -800.0])
def test_node_normalizer_ratio_matches_logs_however_small_the_weights(scale):
    """The sparse prior's acceptance term per node, log Z(s) - log Z(s*), summed from the
    weights or (where a sum underflows: scale -800) in logs, equals the log-sum-exp."""
    from scipy.special import logsumexp

    from bofire_bark.engine.priors import log_total_ratio

    rng = np.random.default_rng(3)
    log_a = scale + np.log(rng.dirichlet(np.full(40, 0.2)))
    log_b = scale + np.log(rng.dirichlet(np.full(40, 0.2)))
    flags = rng.random(40) < 0.5
    want = logsumexp(log_a[flags]) - logsumexp(log_b[flags])
    got = log_total_ratio(flags, log_a, log_b, np.exp(log_a), np.exp(log_b))
    assert np.isfinite(got) and got == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_weights_follow_their_logs_through_updates_swaps_and_restores():
    """The rule draw reads the weights ``w``; they stay exp(log_w) through the sparse prior's
    updates, label swaps and a restore (a stale ``w`` would draw from old weights)."""
    rng = np.random.default_rng(1)
    X = rng.random((30, 4))
    y = X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(30)
    space = (np.zeros(4, np.int64), np.zeros(4), np.ones(4), np.zeros(4, np.int64))
    chain = Chain(space, MCMCSettings(split_prior="dirichlet", label_swap_every=2),
                  seed_states(5, 1)[0])
    chain.set_data(X, y - y.mean())
    chain.run(200)
    prior = chain.tree_prior
    assert chain.swap_stats[1] > 0  # some swap was accepted
    np.testing.assert_allclose(prior.w, np.exp(prior.log_w), rtol=1e-14, atol=0)
    log_w = np.log(rng.dirichlet(np.ones(4)))
    chain.restore_split_state(log_w, np.array([2.0]))
    np.testing.assert_allclose(prior.w, np.exp(log_w), rtol=1e-14, atol=0)


def test_rule_draw_by_rejection_follows_the_restricted_weights():
    """Above REJECTION_MIN_VARS variables the draw tries by rejection, then falls back to the
    exact restricted draw: with 90 % of the weight on a feature that cannot split the node
    (so about 43 % of draws fall back), the others are drawn with w_v / (their weight)."""
    from bofire_bark.engine.priors import REJECTION_MIN_VARS

    d = REJECTION_MIN_VARS + 16
    space = split_variables(np.zeros(d, np.int64), np.zeros(d), np.ones(d),
                            np.zeros(d, np.int64))
    prior = tree_prior(0.95, 2.0, space, dirichlet=True)
    rest = np.random.default_rng(0).dirichlet(np.ones(d - 1)) * 0.1
    set_split_weights(prior, np.log(np.concatenate(([0.9], rest))))
    sub = new_subspace(d, 1)
    sub.lo[:] = 0.0
    sub.hi[:] = 1.0
    sub.lo[0] = sub.hi[0] = 1.0  # feature 0 exhausted here
    state = seed_states(4, 1)[0]
    mask = np.zeros(1, np.uint64)
    n = 40000
    drawn = np.array([draw_rule(state, space, sub, mask, prior)[0] for _ in range(n)])
    observed = np.bincount(drawn, minlength=d)
    assert observed[0] == 0
    # the five heaviest others and the rest pooled
    top = np.argsort(rest)[::-1][:5] + 1
    expected = rest[top - 1] / rest.sum()
    obs = np.append(observed[top], n - observed[top].sum())
    p = stats.chisquare(obs, n * np.append(expected, 1 - expected.sum())).pvalue
    assert p > P_MIN, (obs, p)
