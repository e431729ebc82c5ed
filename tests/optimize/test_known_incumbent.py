"""NEI's incumbent point taken as known (``rules.Rule.prepare``,
``engine.predict.SampleSystems.condition_known``): against the GP conditioned by brute force
on an explicit kernel matrix, for forests and for a smooth share; re-measuring the incumbent
gains nothing; the search and its bound work on the conditioned systems."""

from __future__ import annotations

import numpy as np
import pytest
from acq_helpers import fit, mixed_domain, mixed_f
from test_grid_smooth import _make

from bofire_bark.engine.forest import Forest, route_all
from bofire_bark.engine.predict import KNOWN_NOISE
from bofire_bark.engine.smooth import kernel_matrix, shared_counts
from bofire_bark.optimize.problem import build_problem
from bofire_bark.optimize.rules import Rule


@pytest.fixture(scope="module", params=["forest", "smooth"])
def case(request):
    if request.param == "forest":
        domain = mixed_domain()
        space, post = fit(domain, mixed_f, n=12, n_trees=4, seed=1)
        return domain, space, post
    return _make("mixed")


def _kernel(post, s, A, B):
    """k(A, B) of sample s, from the forest's routes (and the smooth share's kernel)."""
    f = Forest.of_sample(post.samples, s)
    m = f.feat.shape[0]
    leaves = []
    for Z in (A, B):
        out = np.empty((m, len(Z)), dtype=np.int64)
        route_all(f.feat, f.thr, f.mask, f.left, f.right, post.kinds,
                  np.ascontiguousarray(Z, dtype=np.float64), out)
        leaves.append(out)
    counts = shared_counts(*leaves)
    if post.smooth is None:
        return counts / m
    k = post.smooth
    return kernel_matrix(float(post.samples["smooth_share"][s]), counts,
                         k.gram(k.coords(A), k.coords(B)), m)


def test_conditioning_on_the_known_point_is_the_gps(case):
    """Means unchanged; variances var(x) - cov(x, x*)^2 / (var(x*) + KNOWN_NOISE sigma^2),
    with var and cov of each sample's GP from its explicit kernel matrix."""
    domain, space, post = case
    Xt = space.encode(domain.inputs.sample(40, seed=9))
    star = post.X[[3]]
    systems = post.systems(None)
    m0, _ = systems.predict_each(Xt)
    systems.condition_known(star)
    m1, v1 = systems.predict_each(Xt)
    np.testing.assert_allclose(m1, m0, atol=1e-9)
    for s in range(len(post.samples["sigma2"])):
        sigma2 = float(post.samples["sigma2"][s])
        K = _kernel(post, s, post.X, post.X) + sigma2 * np.eye(len(post.X))
        Z = np.concatenate((Xt, star))
        kz = _kernel(post, s, post.X, Z)
        cov = _kernel(post, s, Z, Z) - kz.T @ np.linalg.solve(K, kz)
        want = np.diag(cov)[:-1] - cov[:-1, -1] ** 2 / (cov[-1, -1] + KNOWN_NOISE * sigma2)
        np.testing.assert_allclose(v1[s], np.maximum(want, 0.0), atol=1e-9)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_incumbent_point_gains_nothing(case, sign):
    """At x* (the measured point of the best mean) NEI is at most that of a 1 % noise sd,
    where the marginal EI credited it with about 0.4 sd_s."""
    domain, space, post = case
    problem, systems = build_problem(post, domain, space, sign=sign, gps=False, rule="nei")
    star = systems.X_known
    assert len(star) == 1
    plain = post.systems(None)
    means, _ = plain.predict_each(post.X)
    assert np.array_equal(star[0], post.X[np.argmax((sign * means).mean(axis=0))])
    rule = Rule("nei")
    at_star = rule.score(systems, star, sign, problem.incumbents)[0]
    before = rule.score(plain, star, sign, problem.incumbents)[0]
    noise_sd = np.sqrt(post.samples["sigma2"]).mean()
    assert at_star <= 0.4 * 0.011 * noise_sd + 1e-12
    assert before > 10 * at_star
