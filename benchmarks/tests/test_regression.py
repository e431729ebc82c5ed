"""Regression benchmark: data loading, splits, metrics, and a tiny resumable run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from benchmarks import regression as reg

needs_data = pytest.mark.skipif(not (reg.DEFAULT_DATA_DIR / "concrete.csv").exists(),
                                reason="UCI data not present")


def test_mixture_nlpd_matches_direct_density():
    rng = np.random.default_rng(0)
    means, var = rng.normal(size=(3, 5)), rng.uniform(0.5, 2.0, size=(3, 5))
    y = rng.normal(size=5)
    direct = -np.log(np.mean(stats.norm.pdf(y, means, np.sqrt(var)), axis=0))
    np.testing.assert_allclose(reg.mixture_nlpd(y, means, var), direct)
    np.testing.assert_allclose(reg.mixture_nlpd(y, means[:1], var[:1]),
                               reg.gaussian_nlpd(y, means[0], var[0]))


@needs_data
@pytest.mark.parametrize("name,n,label,rows", [
    ("abalone", 400, "7+0+1", 4177), ("auto-mpg", 100, "4+3+0", 392),
    ("concrete", 300, "8+0+0", 1030), ("student", 250, "0+13+17", 649)])
def test_datasets_match_the_paper(name, n, label, rows):
    ds = reg.load(name)
    assert (ds.n_train, ds.label, len(ds.frame)) == (n, label, rows)
    inputs = ds.inputs()
    assert len(inputs) == len(ds.keys)
    X_tr, X_te, y_tr, y_te = reg.split(ds, 3)
    assert len(X_tr) == n and len(X_te) == rows - n
    assert y_tr.mean() == pytest.approx(0.0, abs=1e-12) and y_tr.std() == pytest.approx(1.0)
    inputs.validate_experiments(pd.concat([X_tr, X_te]), strict=False)
    again = reg.split(ds, 3)
    np.testing.assert_array_equal(again[2], y_tr)
    assert not np.array_equal(reg.split(ds, 4)[2], y_tr)


@needs_data
def test_small_bark_run_resumes_and_summarizes(tmp_path):
    budget = reg.BarkBudget(n_chains=1, n_samples=2, thinning=5, burn_in=20)
    out = reg.run(["auto-mpg"], 1, ["BARK"], out_dir=tmp_path, budget=budget, verbose=False)
    assert len(out) == 1
    row = out.iloc[0]
    assert np.isfinite(row["nlpd"]) and 0.0 < row["mse"] < 2.0 and row["fit_time"] > 0
    again = reg.run(["auto-mpg"], 1, ["BARK"], out_dir=tmp_path, budget=budget, verbose=False)
    assert len(again) == 1  # nothing recomputed
    text = reg.summarize(again)
    assert "auto-mpg" in text and "0.45 / 0.50" in text
