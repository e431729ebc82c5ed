"""Reproducibility, warm starts and wide categorical features of the sampler."""

from __future__ import annotations

import numpy as np
import pytest
from forest_np import FREE, kernel_from_leaves, mask_bit, quad_logdet, route_np

from bofire_bark.engine import Chain, MCMCSettings, fit_posterior, standardize
from bofire_bark.engine.forest import Forest
from bofire_bark.engine.rng import seed_states
from bofire_bark.engine.sampler import leaf_of_all


def small_problem(n: int = 40, seed: int = 0):
    """Continuous x0, discrete x1 (4 values), categorical x2 (3); N <= 3 m: N-space."""
    space = (
        np.array([0, 1, 2], np.int64),
        np.array([0.0, 0.0, 0.0]),
        np.array([1.0, 3.0, 2.0]),
        np.array([0, 4, 3], np.int64),
    )
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.integers(0, 4, n), rng.integers(0, 3, n)])
    y = 3.0 * (X[:, 0] > 0.5) + X[:, 1] - (X[:, 2] == 1) + 0.2 * rng.standard_normal(n)
    return X.astype(float), y, space


# These chains are the uniform split prior's (the engine's default before issue 24).
UNIFORM = MCMCSettings(split_prior="uniform")
FIT = {"n_chains": 2, "n_samples": 3, "thinning": 10, "burn_in": 40, "settings": UNIFORM}


def assert_same_samples(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def samples_differ(a: dict, b: dict) -> bool:
    return any(a[k].shape != b[k].shape or not np.array_equal(a[k], b[k]) for k in a)


def test_same_seed_same_samples_and_threads_do_not_matter():
    X, y, space = small_problem()
    first = fit_posterior(X, y, space, seed=123, n_jobs=2, **FIT).samples
    again = fit_posterior(X, y, space, seed=123, n_jobs=2, **FIT).samples
    serial = fit_posterior(X, y, space, seed=123, n_jobs=1, **FIT).samples
    other = fit_posterior(X, y, space, seed=124, n_jobs=2, **FIT).samples
    assert_same_samples(first, again)
    assert_same_samples(first, serial)
    assert samples_differ(first, other)
    assert not np.array_equal(first["sigma2"], other["sigma2"])
    # chains of one fit are distinct streams (samples are ordered chain by chain)
    n = FIT["n_samples"]
    assert not np.array_equal(first["sigma2"][:n], first["sigma2"][n:])


def test_running_in_pieces_equals_running_at_once():
    """a + b sweeps in one call == a sweeps then b sweeps, bit for bit, even when node
    storage grows on the way (4 slots per tree to start with)."""
    X, y, space = small_problem()
    ys = standardize(y)[0]
    settings = MCMCSettings(refresh_every=25)
    chains = []
    for _ in range(2):
        chain = Chain(space, settings, seed_states(9, 1)[0], capacity=4)
        chain.set_data(X, ys)
        chains.append(chain)
    whole, pieces = chains
    whole.run(70)
    pieces.run(30)
    pieces.run(1)
    pieces.run(39)
    assert whole.forest["feat"].shape[1] > 4
    for key in whole.forest:
        np.testing.assert_array_equal(whole.forest[key], pieces.forest[key], err_msg=key)
    np.testing.assert_array_equal(whole.state, pieces.state)
    np.testing.assert_array_equal(whole.stats, pieces.stats)
    np.testing.assert_array_equal(whole.leaf_of, pieces.leaf_of)
    assert whole.sigma2[0] == pieces.sigma2[0]
    assert whole.loglik() == pieces.loglik()


def test_warm_start_continues_the_chains():
    X, y, space = small_problem()
    fit = {"n_chains": 2, "thinning": 10, "seed": 5, "settings": UNIFORM}
    post = fit_posterior(X, y, space, n_samples=2, burn_in=40, **fit)
    states_before = [c.state.copy() for c in post.chains]
    last = {k: v[[1, 3]] for k, v in post.samples.items()}  # last sample of each chain

    warm = fit_posterior(X, y, space, n_samples=2, burn_in=0, chains=post.chains, **fit)
    assert warm.chains[0] is post.chains[0]
    for chain, before in zip(warm.chains, states_before, strict=True):
        assert not np.array_equal(chain.state, before)
    first_warm = {k: v[[0, 2]] for k, v in warm.samples.items()}
    assert samples_differ(last, first_warm)

    # Continuing is the same as one longer run: a cold fit with 4 samples per chain has
    # the warm fit's samples as its last two per chain (same data, so only the likelihood
    # state is rebuilt; no accept/reject decision changes).
    long = fit_posterior(X, y, space, n_samples=4, burn_in=40, **fit).samples
    tail = {k: v[[2, 3, 6, 7]] for k, v in long.items()}
    cap = warm.samples["feat"].shape[2]
    assert np.all(tail["feat"][:, :, cap:] == FREE)
    assert_same_samples(
        warm.samples, {k: v[:, :, :cap] if v.ndim > 1 else v for k, v in tail.items()}
    )

    # ... and differs from a cold start with the same seed and no burn-in
    cold = fit_posterior(X, y, space, n_samples=2, burn_in=0, **fit).samples
    assert samples_differ(warm.samples, cold)


def test_warm_start_with_new_data_refits():
    """Adding points between fits rebuilds the likelihood state for the new data."""
    X, y, space = small_problem(60)
    post = fit_posterior(
        X[:40], y[:40], space, n_chains=1, n_samples=1, thinning=10, burn_in=40, seed=2
    )
    warm = fit_posterior(
        X, y, space, n_chains=1, n_samples=1, thinning=10, burn_in=0, chains=post.chains
    )
    chain = warm.chains[0]
    assert chain.leaf_of.shape == (50, 60)
    np.testing.assert_array_equal(chain.leaf_of, route_np(chain.forest, chain.kinds, X))
    np.testing.assert_array_equal(warm.y, standardize(y)[0])


def test_warm_start_across_the_likelihood_switch():
    """N = 100 (N-space) -> 260 (leaf space, N > 3 m) -> 90 (N-space again): each warm start
    rebuilds the right state; after the continued sweeps it matches a full recomputation
    (relative 1e-8)."""
    rng = np.random.default_rng(4)
    X, y, space = small_problem(260, seed=4)
    y = y + 0.5 * rng.standard_normal(len(y))
    post = fit_posterior(
        X[:100], y[:100], space, n_chains=2, n_samples=1, thinning=10, burn_in=40, seed=6
    )
    modes = [{c.mode for c in post.chains}]
    for n in (260, 90):
        post = fit_posterior(
            X[:n], y[:n], space, n_samples=1, thinning=10, burn_in=0, chains=post.chains
        )
        modes.append({c.mode for c in post.chains})
        for c in post.chains:
            K = kernel_from_leaves(route_np(c.forest, c.kinds, c.X)) + c.sigma2[0] * np.eye(n)
            np.testing.assert_allclose(c.loglik(), quad_logdet(K, c.y), rtol=1e-8)
    assert modes[0] == modes[2] != modes[1]


# --------------------------------------------------------- 70 categories: two mask words

N_CATS = 70
IN_SET = np.array([1, 7, 20, 33, 50, 63, 64, 66, 69])


def wide_categorical_problem(n: int = 140, seed: int = 0):
    space = (
        np.array([2, 0], np.int64),
        np.array([0.0, 0.0]),
        np.array([N_CATS - 1.0, 1.0]),
        np.array([N_CATS, 0], np.int64),
    )
    rng = np.random.default_rng(seed)
    codes = np.tile(np.arange(N_CATS), n // N_CATS)  # every category, twice
    X = np.column_stack([codes, rng.random(len(codes))]).astype(float)
    y = 2.0 * np.isin(codes, IN_SET) + 0.1 * rng.standard_normal(len(codes))
    return X, y, space


def reaching_categories(forest, t: int, node: int, n_cats: int, feature: int) -> set:
    """Categories of ``feature`` that reach ``node`` (walk up from the node to the root)."""
    reach = set(range(n_cats))
    feat, mask, left, parent = forest["feat"], forest["mask"], forest["left"], forest["parent"]
    child, p = node, parent[t, node]
    while p >= 0:
        if feat[t, p] == feature:
            inside = {c for c in reach if mask_bit(mask[t, p][None, :], [c])[0]}
            reach = inside if left[t, p] == child else reach - inside
        child, p = p, parent[t, p]
    return reach


def test_wide_categorical_masks_and_routing():
    X, y, space = wide_categorical_problem()
    kinds = space[0]
    post = fit_posterior(X, y, space, n_chains=2, n_samples=2, thinning=20, burn_in=150, seed=8)
    s = post.samples
    assert s["mask"].shape[-1] == 2  # 70 categories need two 64-bit words

    cat_nodes = np.argwhere(s["feat"] == 0)  # (sample, tree, node) of categorical splits
    assert len(cat_nodes) > 20
    second = s["mask"][..., 1][s["feat"] == 0]
    assert np.any(second != 0), "no split sends a category >= 64 left"
    assert np.all(second >> np.uint64(N_CATS - 64) == 0), "bits above the last category"
    assert np.all(s["mask"][s["feat"] == 1] == 0)  # continuous splits carry no mask

    # every categorical rule is a non-empty proper subset of the categories reaching it
    for si, t, node in cat_nodes[:200]:
        forest = {k: v[si] for k, v in s.items() if k != "sigma2"}
        reach = reaching_categories(forest, t, node, N_CATS, 0)
        rule = {c for c in range(N_CATS) if mask_bit(forest["mask"][t, node][None, :], [c])[0]}
        assert rule <= reach and 0 < len(rule) < len(reach), (si, t, node)

    # routing: numpy reader of the bitsets == engine router == the chain's leaf_of
    Xnew = np.column_stack([np.arange(N_CATS), np.linspace(0, 1, N_CATS)])
    for si in range(post.n_samples):
        forest = {k: v[si] for k, v in s.items() if k != "sigma2"}
        for pts in (X, Xnew):
            ours = route_np(forest, kinds, pts)
            engine = leaf_of_all(Forest.of(forest), kinds, pts)
            np.testing.assert_array_equal(ours, engine)
    for chain in post.chains:
        np.testing.assert_array_equal(route_np(chain.forest, kinds, X), chain.leaf_of)

    # and the fit separates the categories above 63 as the data do
    mean = post.predict(Xnew)["mean"]
    high = np.arange(64, N_CATS)
    in_high = np.isin(high, IN_SET)
    gap = mean[high[in_high]].mean() - mean[high[~in_high]].mean()
    assert gap > 1.0, f"predicted gap between high codes in/out of the set: {gap:.2f}"


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_chains_run_in_threads_give_chain_order(n_jobs):
    """Samples are ordered chain by chain whatever the scheduling: the samples of chain c
    equal a fit whose only chain has chain c's generator state."""
    X, y, space = small_problem()
    both = fit_posterior(X, y, space, seed=31, n_jobs=n_jobs, **FIT).samples
    states = seed_states(31, 2)
    n = FIT["n_samples"]
    for c in range(2):
        chain = Chain(space, UNIFORM, states[c])
        single = fit_posterior(
            X,
            y,
            space,
            chains=[chain],
            n_chains=1,
            n_samples=n,
            thinning=FIT["thinning"],
            burn_in=FIT["burn_in"],
        ).samples
        part = {k: v[c * n : (c + 1) * n] for k, v in both.items()}
        cap = single["feat"].shape[2]
        part = {k: (v[:, :, :cap] if v.ndim > 1 else v) for k, v in part.items()}
        assert_same_samples(single, part)


def test_progress_is_reported_per_burn_in_and_per_sample():
    X, y, space = small_problem()
    ticks = []
    fit_posterior(X, y, space, MCMCSettings(n_trees=5), n_chains=3, n_samples=2, thinning=2,
                  burn_in=3, seed=0, n_jobs=2, progress=ticks.append)
    assert ticks == [1] * (3 * (2 + 1))
