"""The cost study pairs each fit with and without the setting, in one process."""

from __future__ import annotations

from benchmarks import mixing_cost


def test_pairs_and_summary(tmp_path):
    out = tmp_path / "cost.csv"
    df = mixing_cost.run(out, {"max_sampling_sweeps": 3200}, ["Hartmann6"], [10], ["uniform"],
                         ["first", "warm"], 1, baseline={"max_sampling_sweeps": 0})
    assert out.exists()
    assert sorted(df.variant) == ["baseline", "baseline", "variant", "variant"]
    base = df[df.variant == "baseline"]
    assert (base.sweeps == [1400, 400]).all()  # burn-in 1000 + 400 first, 400 on a refit
    var = df[df.variant == "variant"]
    assert (var.sweeps >= base.sweeps.to_numpy()).all()
    text = mixing_cost.summary(df)
    assert text.startswith("uniform: 2 fits; time variant / baseline total")
