"""The library speed study runs end to end on a small library and reports both paths."""

from __future__ import annotations

from benchmarks import library_speed


def test_measure_small_library():
    row = library_speed.measure(3, asks=2, n=8, seed=0)
    assert row["points"] == 1000 and row["measured"] == 8
    assert row["enum_median_s"] > 0 and row["grid_median_s"] > 0
    assert row["enum_skips_measured"] is True
    assert row["grid_same_point"].endswith("/2")
    assert row["exact_ucb"] >= row["grid_ucb_median"] - 1e-9
