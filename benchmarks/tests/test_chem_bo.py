"""The chem_bo study's bookkeeping: a random run over the photoswitch library (no model fit)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.chem_bo import Photoswitch, run_one, summary


def test_random_photoswitch_run_resumes_and_never_repeats(tmp_path):
    problem = Photoswitch()
    run_one(problem, "photoswitch", "random", 0, 3, tmp_path)
    run_one(problem, "photoswitch", "random", 0, 5, tmp_path)  # resumes from the CSV
    runs = pd.read_csv(tmp_path / "photoswitch" / "runs.csv")
    assert len(runs) == 10 + 5
    assert list(runs.iteration) == [0] * 10 + [1, 2, 3, 4, 5]
    assert not runs.smiles.duplicated().any()
    np.testing.assert_array_equal(runs.y, [problem.y[s] for s in runs.smiles])
    np.testing.assert_array_equal(runs.best, np.maximum.accumulate(runs.y))
    text = summary(tmp_path)
    assert "| random | 1 (to iteration 5-5) |" in text
    assert f"The library's best: {problem.best_y:.1f}." in text
