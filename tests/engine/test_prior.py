"""The sampler targets the prior when the likelihood is flat, and the prior-only sampler agrees.

With ``likelihood="flat"`` the Metropolis-Hastings chain must leave the tree prior and the
noise prior invariant; a wrong proposal ratio (grow/prune counts w0, w1*, the depth factors,
the handling of nodes that cannot split, the softplus Jacobian) shows up as a shifted
distribution of tree sizes or noise draws. References are analytic (recursions over depth,
exact enumeration for a small mixed space) or scipy's inverse gamma.

Autocorrelation: every tree runs its own chain (trees are independent under a flat
likelihood), so we use many trees and record every ``thin`` sweeps, with ``thin`` several
times the integrated autocorrelation time of the leaf count (measured while writing the
test: lag-k autocorrelation about 0.07 at k=20 for beta=2 and about 0.05 at k=80 for
beta=1). The standard error of a mean uses per-tree time averages, which are independent
across trees whatever the autocorrelation within a tree.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest
from forest_np import (
    leaf_count_pmf,
    max_depth,
    mean_leaves,
    mean_max_depth,
    n_leaves,
    pooled_bins,
    pooled_pmf,
)
from scipy import stats

from bofire_bark.engine import Chain, MCMCSettings, sample_prior
from bofire_bark.engine.priors import noise_prior_scale
from bofire_bark.engine.rng import seed_states

P_MIN = 0.001  # significance level of every goodness-of-fit test here


def continuous_space(d: int):
    return (np.zeros(d, np.int64), np.zeros(d), np.ones(d), np.zeros(d, np.int64))


def dummy_data(space, n: int = 5, seed: int = 0):
    """Valid encoded inputs (the flat likelihood ignores them) and any outputs."""
    kinds, lower, upper, _ = space
    rng = np.random.default_rng(seed)
    X = lower + (upper - lower) * rng.random((n, len(kinds)))
    X[:, kinds != 0] = np.round(X[:, kinds != 0])
    return X, rng.standard_normal(n)


def record_flat_chain(space, settings, seed, burn_in, n_records, thin):
    """Run a flat-likelihood chain; return leaves (R, m) and max depth (R, m) every ``thin``."""
    chain = Chain(space, settings, seed_states(seed, 1)[0])
    chain.set_data(*dummy_data(space))
    chain.run(burn_in)
    leaves = np.empty((n_records, settings.n_trees), dtype=np.int64)
    depths = np.empty((n_records, settings.n_trees), dtype=np.int64)
    for r in range(n_records):
        chain.run(thin)
        leaves[r] = n_leaves(chain.forest["feat"])
        depths[r] = max_depth(chain.forest["feat"], chain.forest["depth"])
    return leaves, depths, chain


def chi2_vs_pmf(values: np.ndarray, pmf_pooled: np.ndarray) -> float:
    obs = pooled_bins(values, len(pmf_pooled))
    return float(stats.chisquare(obs, pmf_pooled * obs.sum()).pvalue)


def pool_for(pmf: np.ndarray, n_draws: int, min_expected: float = 20.0) -> int:
    """Smallest k_pool such that bins 1..k_pool-1 and the tail all expect >= min_expected."""
    k = 2
    while pmf[k] * n_draws >= min_expected and (1.0 - pmf[1 : k + 1].sum()) * n_draws >= (
        min_expected
    ):
        k += 1
    return k


# (beta, trees, burn-in, records, thin): beta=1 grows deeper trees and mixes more slowly
CASES = [(2.0, 500, 200, 100, 25), (1.0, 500, 400, 80, 80)]


@pytest.mark.parametrize(("beta", "n_trees", "burn_in", "n_records", "thin"), CASES)
def test_flat_chain_leaf_counts_match_tree_prior(beta, n_trees, burn_in, n_records, thin):
    alpha = 0.95
    settings = MCMCSettings(n_trees=n_trees, alpha=alpha, beta=beta, likelihood="flat")
    leaves, depths, chain = record_flat_chain(
        continuous_space(3), settings, seed=11, burn_in=burn_in, n_records=n_records, thin=thin
    )
    assert chain.stats[0, 1] > 0 and chain.stats[1, 1] > 0 and chain.stats[2, 1] > 0

    pmf = leaf_count_pmf(alpha, beta)
    k_pool = pool_for(pmf, leaves.size)
    assert k_pool >= 5  # the test must see the shape of the tail, not only 1 vs 2 leaves
    p = chi2_vs_pmf(leaves, pooled_pmf(pmf, k_pool))
    assert p > P_MIN, f"leaf counts differ from the tree prior (chi2 p={p:.2e})"

    # means within 4 standard errors (per-tree averages are independent across trees)
    for values, expected in (
        (leaves, mean_leaves(alpha, beta)),
        (depths, mean_max_depth(alpha, beta)),
    ):
        per_tree = values.mean(axis=0)
        se = per_tree.std(ddof=1) / np.sqrt(len(per_tree))
        assert abs(per_tree.mean() - expected) < 4.0 * se, (per_tree.mean(), expected, se)


def test_flat_chain_noise_matches_inverse_gamma():
    """sigma2 draws of a flat chain ~ InvGamma(nu/2, scale): KS on a thinned series.

    One tree keeps sweeps cheap. The log-sigma2 autocorrelation is about 0.09 at lag 100
    (measured), so 2,000 draws 100 sweeps apart are close to independent. The 10/50/90 %
    quantiles use all 200,000 draws and must be within 10 % (relative) of the exact ones.
    """
    settings = MCMCSettings(n_trees=1, likelihood="flat")
    space = continuous_space(1)
    chain = Chain(space, settings, seed_states(3, 1)[0])
    chain.set_data(*dummy_data(space))
    chain.run(1000)
    draws = np.empty(200_000)
    for i in range(len(draws)):
        chain.run(1)
        draws[i] = chain.sigma2[0]
    assert 0.5 < chain.stats[3, 1] / chain.stats[3, 0] < 0.99

    prior = stats.invgamma(
        settings.noise_nu / 2.0, scale=noise_prior_scale(settings.noise_nu, settings.noise_q)
    )
    assert prior.cdf(1.0) == pytest.approx(settings.noise_q, abs=1e-9)
    p = stats.kstest(draws[::100], prior.cdf).pvalue
    assert p > P_MIN, f"noise draws differ from the inverse gamma prior (KS p={p:.2e})"
    qs = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(np.quantile(draws, qs), prior.ppf(qs), rtol=0.10)


def flat_noise_draws(settings, seed: int, n_draws: int, thin: int = 1) -> np.ndarray:
    """sigma2 of a one-tree flat chain every ``thin`` sweeps after 1,000 sweeps of burn-in."""
    space = continuous_space(1)
    chain = Chain(space, settings, seed_states(seed, 1)[0])
    chain.set_data(*dummy_data(space))
    chain.run(1000)
    draws = np.empty(n_draws)
    for i in range(n_draws):
        chain.run(thin)
        draws[i] = chain.sigma2[0]
    assert 0.5 < chain.stats[3, 1] / chain.stats[3, 0] < 0.99
    return draws


def lognormal_fit(draws: np.ndarray, loc: float, scale: float, thin: int) -> tuple[float, float]:
    """KS p-value of every ``thin``-th draw against LogNormal(loc, scale) on sigma2, and the
    largest error of the 10/50/90 % quantiles of log sigma2 (all draws) in prior sds."""
    p = stats.kstest(np.log(draws[::thin]), stats.norm(loc, scale).cdf).pvalue
    qs = np.array([0.1, 0.5, 0.9])
    err = np.quantile(np.log(draws), qs) - stats.norm(loc, scale).ppf(qs)
    return float(p), float(np.max(np.abs(err)) / scale)


# (loc, scale): BoFire's default, and a narrow prior at the data's scale, where a Jacobian
# error (a shift of scale^2 in log sigma2) is small against the prior's sd
LOGNORMAL_CASES = [(-4.0, 1.0), (0.0, 0.4)]


@pytest.mark.parametrize(("loc", "scale"), LOGNORMAL_CASES)
def test_flat_chain_noise_matches_lognormal(loc, scale):
    """sigma2 draws of a flat chain ~ LogNormal(loc, scale): KS on a thinned series (the lag-50
    autocorrelation of log sigma2 is about 0.01-0.03, measured) and quantiles of log sigma2
    within 0.1 prior sds (about 5 standard errors); the same check refuses a chain whose prior
    lacks the 1 / sigma2 of the log-normal density (its target is LogNormal(loc + scale^2,
    scale)) or counts it twice (measured: quantiles off by 0.4-1.0 prior sds, KS p < 1e-40)."""
    settings = MCMCSettings(n_trees=1, likelihood="flat", noise_prior="lognormal",
                            noise_loc=loc, noise_scale=scale)
    draws = flat_noise_draws(settings, seed=3, n_draws=100_000)
    p, err = lognormal_fit(draws, loc, scale, thin=50)
    assert p > P_MIN, f"noise draws differ from the log-normal prior (KS p={p:.2e})"
    assert err < 0.1, f"log sigma2 quantiles off by {err:.3f} prior sds"

    # the targets of the two Jacobian errors, sampled by the same chain: both must fail
    for shift in (scale**2, -(scale**2)):
        wrong = MCMCSettings(n_trees=1, likelihood="flat", noise_prior="lognormal",
                             noise_loc=loc + shift, noise_scale=scale)
        p, err = lognormal_fit(flat_noise_draws(wrong, seed=4, n_draws=100_000), loc, scale,
                               thin=50)
        assert p < P_MIN and err > 0.1, (shift, p, err)


def test_noise_prior_choice_is_checked():
    with pytest.raises(ValueError, match="noise_prior"):
        Chain(continuous_space(1), MCMCSettings(noise_prior="gamma"), seed_states(0, 1)[0])
    with pytest.raises(ValueError, match="noise_scale"):
        Chain(continuous_space(1), MCMCSettings(noise_prior="lognormal", noise_scale=0.0),
              seed_states(0, 1)[0])


def test_prior_sampler_matches_tree_and_noise_priors():
    """sample_prior draws independent forests: chi2 on leaf counts, means within 4 standard
    errors, and KS plus quantiles (10 % relative) on sigma2 (20,000 one-tree draws, so a 5 %
    error in the scale would show)."""
    alpha, beta = 0.95, 1.0
    settings = MCMCSettings(n_trees=50, alpha=alpha, beta=beta)
    space = continuous_space(3)
    post = sample_prior(*dummy_data(space), space, settings, n_samples=1000, seed=4)
    leaves = n_leaves(post.samples["feat"])  # (S, m), all independent
    pmf = leaf_count_pmf(alpha, beta)
    k_pool = pool_for(pmf, leaves.size)
    assert k_pool >= 5
    p = chi2_vs_pmf(leaves, pooled_pmf(pmf, k_pool))
    assert p > P_MIN, f"prior sampler leaf counts (chi2 p={p:.2e})"
    depths = max_depth(post.samples["feat"], post.samples["depth"])
    for values, expected in (
        (leaves, mean_leaves(alpha, beta)),
        (depths, mean_max_depth(alpha, beta)),
    ):
        se = values.std(ddof=1) / np.sqrt(values.size)
        assert abs(values.mean() - expected) < 4.0 * se, (values.mean(), expected, se)

    one_tree = MCMCSettings(n_trees=1)
    sigma2 = sample_prior(*dummy_data(space), space, one_tree, n_samples=20_000, seed=5)
    sigma2 = sigma2.samples["sigma2"]
    prior = stats.invgamma(
        one_tree.noise_nu / 2.0, scale=noise_prior_scale(one_tree.noise_nu, one_tree.noise_q)
    )
    p = stats.kstest(sigma2, prior.cdf).pvalue
    assert p > P_MIN, f"prior sampler sigma2 (KS p={p:.2e})"
    qs = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(np.quantile(sigma2, qs), prior.ppf(qs), rtol=0.10)

    lognormal = MCMCSettings(n_trees=1, noise_prior="lognormal", noise_loc=-4.0,
                             noise_scale=1.0)
    sigma2 = sample_prior(*dummy_data(space), space, lognormal, n_samples=20_000, seed=6)
    p = stats.kstest(np.log(sigma2.samples["sigma2"]), stats.norm(-4.0, 1.0).cdf).pvalue
    assert p > P_MIN, f"prior sampler log-normal sigma2 (KS p={p:.2e})"


# ------------------------------------------- features that run out of splits (mixed space)

N_DISCRETE = 3
N_CATS = 3


def mixed_space():
    return (
        np.array([1, 2], np.int64),
        np.array([0.0, 0.0]),
        np.array([N_DISCRETE - 1.0, N_CATS - 1.0]),
        np.array([N_DISCRETE, N_CATS], np.int64),
    )


def exact_mixed_pmf(alpha: float, beta: float) -> np.ndarray:
    """Exact leaf-count distribution for one discrete (3 values) and one categorical (3)
    feature, by enumerating every rule of the prior: a node is internal with probability
    p_d only if a feature can split it; the feature is uniform over those that can; a
    discrete cut is uniform over the cuts inside the node's range; a categorical rule is
    uniform over the non-empty proper subsets of the categories reaching the node.
    """
    k_max = N_DISCRETE * N_CATS

    @cache
    def pmf(d: int, lo: int, hi: int, cats: frozenset) -> tuple:
        leaf = np.zeros(k_max + 1)
        leaf[1] = 1.0
        options = []  # per splittable feature: list of (left, right) child subspaces
        if hi > lo:
            options.append([((lo, i, cats), (i + 1, hi, cats)) for i in range(lo, hi)])
        if len(cats) >= 2:
            subsets = [
                frozenset(s)
                for r in range(1, len(cats))
                for s in itertools.combinations(sorted(cats), r)
            ]
            options.append([((lo, hi, s), (lo, hi, cats - s)) for s in subsets])
        if not options:
            return tuple(leaf)
        split = np.zeros(k_max + 1)
        for rules in options:
            for a, b in rules:
                conv = np.convolve(pmf(d + 1, *a), pmf(d + 1, *b))[: k_max + 1]
                split += conv / (len(options) * len(rules))
        p = alpha * (1.0 + d) ** -beta
        return tuple((1.0 - p) * leaf + p * split)

    out = np.array(pmf(0, 0, N_DISCRETE - 1, frozenset(range(N_CATS))))
    assert out.sum() == pytest.approx(1.0, abs=1e-12)
    return out


def test_unsplittable_nodes_flat_chain_matches_prior_sampler():
    """Discrete (3 values) + categorical (3 categories), beta=0.5: trees press against the
    limits (at most 9 leaves, depth 4), so grow moves at unsplittable leaves and the leaf
    factors of unsplittable children matter. The flat chain, the prior-only sampler and the
    exact enumeration must agree (chi2, one bin per leaf count with enough mass).
    """
    alpha, beta = 0.95, 0.5
    space = mixed_space()
    settings = MCMCSettings(n_trees=300, alpha=alpha, beta=beta, likelihood="flat")
    # the leaf count mixes slowly here (autocorrelation 0.55 at lag 20, 0.07 at lag 100)
    chain_leaves, _, chain = record_flat_chain(
        space, settings, seed=21, burn_in=300, n_records=50, thin=100
    )
    assert chain.stats[0, 1] > 0 and chain.stats[1, 1] > 0
    prior_leaves = n_leaves(
        sample_prior(*dummy_data(space), space, settings, n_samples=80, seed=22).samples["feat"]
    )
    assert chain_leaves.max() <= N_DISCRETE * N_CATS and prior_leaves.max() <= 9

    exact = exact_mixed_pmf(alpha, beta)
    k_pool = pool_for(exact, chain_leaves.size)
    assert k_pool >= 6
    for name, values in (("chain", chain_leaves), ("prior sampler", prior_leaves)):
        p = chi2_vs_pmf(values, pooled_pmf(exact, k_pool))
        assert p > P_MIN, f"{name} vs exact enumeration (chi2 p={p:.2e})"
    table = np.stack([pooled_bins(chain_leaves, k_pool), pooled_bins(prior_leaves, k_pool)])
    p = stats.chi2_contingency(table).pvalue
    assert p > P_MIN, f"flat chain vs prior sampler (two-sample chi2 p={p:.2e})"
