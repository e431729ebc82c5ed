"""The batch-quality study's summary: pairs by seed against b = 1 on both metrics, and counts
finished runs only."""

from __future__ import annotations

import pandas as pd

from benchmarks import batch_bo


def _run(out, b, seed, design, picks):
    rows = [{"batch": 0, "y": y} for y in design] + [
        {"batch": 1 + i // b, "y": y, "fit_s": 1.0 if i % b == 0 else None,
         "ask_s": 2.0 if i % b == 0 else None} for i, y in enumerate(picks)]
    df = pd.DataFrame(rows)
    df["best"] = df["y"].cummin()
    path = batch_bo.run_path(out, "Toy", b, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False)


def test_summary_pairs_by_seed(tmp_path):
    for seed in range(3):
        _run(tmp_path, 1, seed, [0.0], [0.5, -1.0, 0.2, 0.3])
        _run(tmp_path, 2, seed, [0.0], [0.5, -2.0 if seed < 2 else 0.1, 0.2, 0.3])
    _run(tmp_path, 2, 3, [0.0], [0.5])  # unfinished: not counted
    table = batch_bo.summary(tmp_path, experiments=4).set_index("b")
    assert table.loc[1, "seeds"] == 3 and table.loc[2, "seeds"] == 3
    assert table.loc[2, "picks vs b1"] == "2 / 0 / 1"  # -2 < -1 twice, 0.1 > -1 once
    assert table.loc[2, "best vs b1"] == "2 / 0 / 1"
    assert table.loc[1, "picks"] == -1.0
    # one tell + ask per batch: (1 + 2) s per 2 experiments at b = 2, per 1 at b = 1
    assert table.loc[2, "s per experiment"] == 1.5 and table.loc[1, "s per experiment"] == 3.0
    assert (tmp_path / "summary.md").read_text().startswith("# Batch quality")
