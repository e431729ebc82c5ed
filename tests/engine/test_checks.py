"""Bad arrays at the engine's entry points raise ValueError naming the argument; nothing
reaches a numba kernel unchecked (a short y once ended the process with a segfault)."""

from __future__ import annotations

import numpy as np
import pytest

from bofire_bark.engine import MCMCSettings, fit_posterior, sample_prior
from bofire_bark.engine.forest import CATEGORICAL, CONTINUOUS, DISCRETE

# continuous in [0, 1], discrete with 3 values, categorical with 4 categories
SPACE = (np.array([CONTINUOUS, DISCRETE, CATEGORICAL]), np.array([0.0, 0.0, 0.0]),
         np.array([1.0, 2.0, 3.0]), np.array([0, 3, 4]))
SETTINGS = MCMCSettings(n_trees=3)


def data(n=8, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 1, n), rng.integers(0, 3, n), rng.integers(0, 4, n)])
    return X.astype(float), rng.normal(size=n)


def fit(X, y, space=SPACE):
    return fit_posterior(X, y, space, SETTINGS, n_chains=1, n_samples=1, thinning=1,
                         burn_in=2, seed=0)


@pytest.fixture(scope="module")
def posterior():
    return fit(*data())


def bad_inputs():
    X, y = data()
    cases = {
        "y shorter than X": (X, y[:-1], r"y must have shape \(8,\)"),
        "y 2-D": (X, np.c_[y, y], r"y must have shape \(8,\)"),
        "NaN in y": (X, np.r_[y[:-1], np.nan], r"y has a NaN or infinite value \(row 7\)"),
        "inf in X": (np.r_[X[:-1], [[np.inf, 0, 0]]], y, r"X has a NaN .* \(row 7, column 0\)"),
        "NaN in X": (np.r_[[[np.nan, 0, 0]], X[1:]], y, r"X has a NaN .* \(row 0, column 0\)"),
        "wrong width": (X[:, :2], y, r"X must have shape \(N, 3\)"),
        "1-D X": (X[:, 0], y, r"X must have shape \(N, 3\)"),
        "no rows": (X[:0], y[:0], "X has no rows"),
        "category out of range": (np.r_[X[:-1], [[0.5, 0, 4]]], y,
                                  r"X\[7, 2\] = 4.0 is not a valid category code: expected a "
                                  r"whole number in 0 .. 3"),
        "negative category": (np.r_[X[:-1], [[0.5, 0, -1]]], y, "not a valid category code"),
        "fractional discrete index": (np.r_[X[:-1], [[0.5, 1.5, 0]]], y,
                                      r"X\[7, 1\] = 1.5 is not a valid discrete value index"),
        "discrete index out of range": (np.r_[X[:-1], [[0.5, 3, 0]]], y,
                                        "not a valid discrete value index"),
        "text in X": (np.array([["a", "b", "c"]] * 8), y, "X must be a numeric array"),
    }
    return [pytest.param(*v, id=k) for k, v in cases.items()]


@pytest.mark.parametrize("X, y, message", bad_inputs())
def test_fit_posterior_refuses(X, y, message):
    with pytest.raises(ValueError, match=message):
        fit(X, y)


@pytest.mark.parametrize("X, y, message", bad_inputs())
def test_sample_prior_refuses(X, y, message):
    with pytest.raises(ValueError, match=message):
        sample_prior(X, y, SPACE, SETTINGS, n_samples=1, seed=0)


@pytest.mark.parametrize("space, message", [
    (SPACE[:3], "space must be the 4 arrays"),
    ((SPACE[0], SPACE[1], SPACE[2], SPACE[3][:2]), "must have one length"),
    ((np.array([0, 1, 5]), *SPACE[1:]), "space kinds must be 0"),
    ((SPACE[0], np.array([2.0, 0, 0]), *SPACE[2:]), "lower <= upper"),
    ((*SPACE[:3], np.array([0, 0, 4])), "n_values must be >= 1"),
])
def test_bad_space_is_refused(space, message):
    with pytest.raises(ValueError, match=message):
        fit(*data(), space=space)


@pytest.mark.parametrize("Xnew, message", [
    (np.array([[0.5, 0, 9]]), r"Xnew\[0, 2\] = 9.0 is not a valid category code"),
    (np.array([[np.nan, 0, 0]]), "Xnew has a NaN"),
    (np.array([[0.5, 0]]), r"Xnew must have shape \(N, 3\)"),
])
def test_predict_refuses(posterior, Xnew, message):
    with pytest.raises(ValueError, match=message):
        posterior.predict(Xnew)


def test_valid_edge_cases_still_work(posterior):
    X, y = data()
    post = fit(X, np.full(len(y), 2.5))  # a constant y: early BO sees it
    assert np.isfinite(post.predict(X)["mean"]).all()
    assert fit(X.tolist(), list(y)).X.dtype == np.float64  # lists are fine
    assert posterior.predict(X[:0])["mean"].shape == (0,)  # no points to predict: no error


@pytest.mark.parametrize("field", ["high", "cat_class", "two_bits", "tbits"])
def test_a_space_with_a_wrong_derived_table_is_refused(field):
    """check_space rebuilds the tables derived from the descriptor ranks and compares: one
    bit or class changed by hand is refused before a kernel reads it."""
    from bofire_bark.engine.checks import check_space
    from bofire_bark.engine.forest import split_variables

    rng = np.random.default_rng(0)
    table = np.column_stack([rng.integers(0, 2, 70), rng.random(70)])
    space = split_variables(np.array([2]), np.zeros(1), np.array([69.0]), np.array([70]),
                            [(table, False)])
    check_space(space)  # as built: accepted
    bad = getattr(space, field).copy()
    if bad.dtype == np.uint64:
        bad.flat[0] ^= np.uint64(1)
    else:
        bad.flat[0] += 1
    with pytest.raises(ValueError, match="inconsistent"):
        check_space(space._replace(**{field: bad}))
