"""Thompson draws (``Posterior.draw_function``): over many draws the function's mean and
variance at a point are the posterior mixture's, also where no data are."""

from __future__ import annotations

import numpy as np
import pytest

from bofire_bark.engine import MCMCSettings, fit_posterior
from bofire_bark.engine.model import FunctionDraw


@pytest.fixture(scope="module")
def posterior():
    # continuous x0, categorical x1 (4 categories, only 0 and 1 measured)
    space = (np.array([0, 2], np.int64), np.array([0.0, 0.0]), np.array([1.0, 3.0]),
             np.array([0, 4], np.int64))
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.random(12), rng.integers(0, 2, 12)]).astype(float)
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(12)
    return fit_posterior(X, y, space, MCMCSettings(n_trees=8), n_chains=2, n_samples=3,
                         thinning=10, burn_in=100, seed=2)


def test_draws_reproduce_the_posterior_mixture(posterior):
    """E[f(x)] is the mixture mean and Var[f(x)] the mixture's latent variance (the samples'
    mean variance plus the spread of their means), at measured and unmeasured categories."""
    Xnew = np.array([[0.1, 0.0], [0.5, 1.0], [0.9, 1.0], [0.5, 2.0], [0.2, 3.0]])
    means, lat = posterior.predict_each(Xnew)
    mix_mean = means.mean(axis=0)
    mix_var = lat.mean(axis=0) + means.var(axis=0)
    rng = np.random.default_rng(0)
    K = 4000
    f = np.empty((K, len(Xnew)))
    for k in range(K):
        draw = posterior.draw_function(rng)
        m, v = draw.predict_each(Xnew)
        assert np.all(v == 0.0)
        f[k] = m[0]
    se = np.sqrt(mix_var / K)
    assert np.all(np.abs(f.mean(axis=0) - mix_mean) < 4.5 * se)
    # relative sd of a variance estimate from K draws: about sqrt(2 / K) (0.022) for a normal
    np.testing.assert_allclose(f.var(axis=0), mix_var, rtol=0.12)
    # the unmeasured categories keep more spread than the measured ones
    assert mix_var[3:].min() > mix_var[:3].max()


def test_a_draw_is_one_sample_with_its_data(posterior):
    draw = posterior.draw_function(np.random.default_rng(5))
    assert isinstance(draw, FunctionDraw) and draw.n_samples == 1
    s = [i for i in range(posterior.n_samples)
         if np.array_equal(posterior.samples["feat"][i], draw.samples["feat"][0])
         and posterior.samples["sigma2"][i] == draw.samples["sigma2"][0]]
    assert s, "the draw's forest is none of the posterior's samples"
    np.testing.assert_array_equal(draw.X, posterior.X)
    np.testing.assert_array_equal(draw.y, posterior.y)
    assert (draw.y_mean, draw.y_std) == (posterior.y_mean, posterior.y_std)
    # pending points do not condition a draw
    Xp = np.array([[0.5, 2.0]])
    np.testing.assert_array_equal(draw.systems(Xp).systems[0].beta,
                                  draw.systems().systems[0].beta)


def test_draws_are_reproducible_from_the_generator(posterior):
    x = np.array([[0.3, 1.0], [0.7, 3.0]])
    a = posterior.draw_function(np.random.default_rng(9)).predict_each(x)[0]
    b = posterior.draw_function(np.random.default_rng(9)).predict_each(x)[0]
    c = posterior.draw_function(np.random.default_rng(10)).predict_each(x)[0]
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
