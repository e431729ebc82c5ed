"""The acquisition study's truth check reads every reference run kept."""

from __future__ import annotations

import pandas as pd

from benchmarks.acquisition_proof import best_reference, summary


def test_the_check_takes_the_best_reference_point(tmp_path):
    pd.DataFrame({"case": ["a", "b"], "ref_ucb": [1.0, 2.0], "ref_bound": [1.0, 2.0]}).to_csv(
        tmp_path / "reference.csv", index=False)
    pd.DataFrame({"case": ["a", "b"], "ref_ucb": [1.5, 1.9], "ref_bound": [1.5, 1.9]}).to_csv(
        tmp_path / "reference_abc1234.csv", index=False)
    ref, files = best_reference(tmp_path)
    assert files == ["reference.csv", "reference_abc1234.csv"]
    assert dict(zip(ref.case, ref.ref_ucb, strict=True)) == {"a": 1.5, "b": 2.0}
    # case a: the older reference beats the default's UCB 1.2 by 25 %, but not its bound 1.6
    pd.DataFrame({"case": ["a", "b"], "status": ["gap", "gap"], "source": ["start"] * 2,
                  "wall_s": [1.0, 1.0], "gap": [0.1, 0.1], "abs_gap": [0.1, 0.1],
                  "ucb": [1.2, 2.0], "bound": [1.6, 2.1]}).to_csv(tmp_path / "cases.csv",
                                                                   index=False)
    text = summary(tmp_path)
    assert "beat the default's bound 0 times" in text
    assert "by more than 1 % 1 times (50.0 %)" in text
