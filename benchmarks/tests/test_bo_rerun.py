"""The rerun table: runs paired by seed, a sign test per benchmark, the labels of both sides."""

from __future__ import annotations

import pandas as pd

from benchmarks.bo_rerun import main, table


def _run(folder, bench, seed, bests, ask):
    path = folder / "runs" / bench / "BARK" / f"seed{seed}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"iteration": range(len(bests)), "best": bests,
                  "acq_time": [None] + [ask] * (len(bests) - 1)}).to_csv(path, index=False)


def test_pairs_runs_by_seed_and_names_both_sides(tmp_path, monkeypatch):
    old, new = tmp_path / "bo_default", tmp_path / "bo_bisect"
    # minimization: lower best is better; new wins seeds 0 and 1, loses seed 2, ties seed 3
    for seed, (b_old, b_new) in enumerate([(3.0, 2.0), (5.0, 1.0), (1.0, 4.0), (2.0, 2.0)]):
        _run(old, "Bench", seed, [9.0, b_old], 2.0)
        _run(new, "Bench", seed, [9.0, b_new], 1.0)
    _run(new, "Bench", 4, [9.0], 1.0)  # unfinished against a finished run: left out
    _run(old, "Bench", 4, [9.0, 8.0], 2.0)
    _run(old, "Other", 0, [9.0, 2.0], 2.0)  # a second benchmark: one more win
    _run(new, "Other", 0, [9.0, 1.0], 3.0)
    text = table(old / "runs", new / "runs", old_label="bo_default", new_label="bo_bisect")
    assert "bo_bisect better / worse / tie" in text
    assert "median ask s (bo_default)" in text
    row = next(line for line in text.splitlines() if line.startswith("| Bench"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:5] == ["4", "2/1/1", "1", "1.00"]
    assert cells[5] == "2.00"
    pooled = next(line for line in text.splitlines() if line.startswith("| all"))
    assert [c.strip() for c in pooled.strip("|").split("|")][1:3] == ["5", "3/1/1"]
    # the CLI writes the pairing beside the new runs and into its README block
    blocks = {}
    monkeypatch.setattr("benchmarks.plots.embed",
                        lambda readme, name, body: blocks.setdefault(name, body))
    main(["table", "--out", str(new), "--against", str(old)])
    assert (new / "comparison_vs_bo_default.md").read_text() == text
    assert blocks == {"bo-rerun-bo_bisect-vs-bo_default": text}
