"""The decomposition over posterior samples (benchmarks.decompose) bounds what it claims to."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from benchmarks.decompose import dual_bound, sample_searches, subgradient
from bofire_bark.defaults import DEFAULT_KAPPA
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.optimize.problem import build_problem


def _setup(mixed):
    domain, space, post = mixed
    case = SimpleNamespace(posterior=post, domain=domain, space=space, sign=1.0)
    problem, _ = build_problem(post, domain, space, DEFAULT_KAPPA, 1.0, gps=False)
    return case, problem.box, sample_searches(case)


def _priced(post, box, lam, X):
    """f_s(x) + lam_s[j, x_j] summed over categorical j, (S, n), from the engine."""
    means, var = post.predict_each(X)
    out = means + DEFAULT_KAPPA * np.sqrt(var)
    for j in range(box.n_features):
        if box.kinds[j] == CATEGORICAL:
            out += lam[:, j, X[:, j].astype(int)]
    return out


def test_each_sample_search_bounds_its_priced_ucb_and_scores_its_point_exactly(mixed):
    domain, space, post = mixed
    case, box, searches = _setup(mixed)
    S, C = post.n_samples, max(ss.n_codes for ss in searches)
    X = space.encode(domain.inputs.sample(400, seed=3))
    x0 = X[0]
    for seed in range(3):
        lam = np.random.default_rng(seed).normal(0.0, 1.0, (S, box.n_features, C))
        lam -= lam.mean(axis=0)  # zero over samples: the decomposition's condition
        bounds, values, xs = dual_bound(searches, lam, box, x0, seconds=5.0, gap=0.0)
        # every search closed its gap: its point is its maximum, scored as the engine scores it
        np.testing.assert_allclose(values, bounds, rtol=1e-9, atol=1e-9)
        at_own = np.array([_priced(post, box, lam, xs[s:s + 1])[s, 0] for s in range(S)])
        np.testing.assert_allclose(values, at_own, rtol=1e-9, atol=1e-9)
        # and no random point of the domain beats any sample's bound
        assert np.all(_priced(post, box, lam, X).max(axis=1) <= bounds + 1e-9)
        # so the mean bounds the integrated UCB (the prices cancel at a shared point)
        joint = post.systems().integrated_ucb(X, DEFAULT_KAPPA, 1.0)
        assert joint.max() <= bounds.mean() + 1e-9


def test_subgradient_steps_keep_the_prices_summing_to_zero(mixed):
    domain, space, _ = mixed
    _, box, searches = _setup(mixed)
    x0 = space.encode(domain.inputs.sample(1, seed=3))[0]
    lam, trace = subgradient(searches, box, x0, target=-1.0, steps=3, seconds=0.5)
    assert len(trace) >= 1
    np.testing.assert_allclose(lam.sum(axis=0), 0.0, atol=1e-12)
