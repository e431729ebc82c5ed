"""Multi-objective study runner: runs save and resume, the hypervolume follows the documented
rule, refusals are recorded and retried on request, and the summary comes out of the CSVs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain
from bofire.data_models.features.api import ContinuousInput, ContinuousOutput
from bofire.data_models.objectives.api import (
    MaximizeObjective,
    MaximizeSigmoidObjective,
    MinimizeObjective,
)

from benchmarks import __main__ as cli
from benchmarks import mo


@pytest.fixture
def cfg(tmp_path):
    return mo.MOConfig(n_iterations=2, out_dir=tmp_path)


def test_random_run_saves_resumes_and_tracks_hypervolume(cfg):
    assert mo.run_one("DTLZ2", "Random", 0, cfg) == "done"
    path = mo.run_path(cfg, "DTLZ2", "Random", 0)
    first = mo.read_run(path)
    assert list(first["iteration"]) == [0] * 12 + [1, 2]
    assert {"f_0", "f_1", "valid_f_0", "valid_f_1", "fit_time", "acq_time"} <= set(first)
    hv = first["hypervolume"].to_numpy()
    assert (np.diff(hv) >= 0).all()
    bench = mo.make_benchmark("DTLZ2")
    assert hv[-1] == pytest.approx(mo.hypervolume(bench.domain, first, bench.ref_point))
    # the same design as bo.py's for the seed
    keys = bench.domain.inputs.get_keys()
    assert np.allclose(first.loc[first["iteration"] == 0, keys],
                       mo.initial_design(bench, 0)[keys])
    # a finished run is skipped; a longer budget appends without redoing the saved rows
    assert mo.run_one("DTLZ2", "Random", 0, cfg) == "done"
    assert len(mo.read_run(path)) == 14
    cfg.n_iterations = 3
    assert mo.run_one("DTLZ2", "Random", 0, cfg) == "done"
    second = mo.read_run(path)
    assert list(second["iteration"][-2:]) == [2, 3]
    pd.testing.assert_frame_equal(second.iloc[:14][first.columns], first)
    assert second.iloc[-1]["resumes"] == 1
    assert (np.diff(second["hypervolume"]) >= 0).all()


def test_hypervolume_counts_only_points_within_the_output_limits():
    domain = Domain.from_lists(
        inputs=[ContinuousInput(key="x", bounds=(0, 1))],
        outputs=[ContinuousOutput(key="a", objective=MaximizeObjective()),
                 ContinuousOutput(key="b", objective=MinimizeObjective()),
                 ContinuousOutput(key="c", objective=MaximizeSigmoidObjective(tp=0.5,
                                                                              steepness=10))])
    ref = {"a": 0.0, "b": 1.0}
    df = pd.DataFrame({"a": [0.5, 0.9, 0.8], "b": [0.5, 0.1, 0.2], "c": [1.0, 0.0, 1.0],
                       "valid_a": 1, "valid_b": 1, "valid_c": 1})
    # the second point dominates both others but misses c >= 0.5
    assert list(mo.feasible(domain, df)) == [True, False, True]
    assert mo.hypervolume(domain, df, ref) == pytest.approx(0.8 * 0.8)
    df.loc[2, "valid_b"] = 0
    assert mo.hypervolume(domain, df, ref) == pytest.approx(0.5 * 0.5)
    assert mo.hypervolume(domain, df.iloc[[1]], ref) == 0.0


def test_reference_points_follow_the_documented_rule():
    assert mo.reference_point("DTLZ2") == {"f_0": 1.1, "f_1": 1.1}
    assert mo.reference_point("SnarBenchmark") == {"e_factor": 10.7, "sty": 2957.0}
    assert mo.reference_point("Detergent") == mo.DETERGENT_REFERENCE
    bench = mo.make_benchmark("Detergent")
    assert mo.primary_keys(bench.domain) == ["y1", "y2"]
    assert mo.derive_reference(bench, n=200) == mo.DETERGENT_REFERENCE


def test_refusals_are_kept_until_a_retry_is_asked_for(cfg):
    marker = cfg.run_dir("DTLZ2", "Random") / "UNSUPPORTED.txt"
    marker.parent.mkdir(parents=True)
    marker.write_text("Random cannot take DTLZ2: an old refusal\n")
    assert mo.run_one("DTLZ2", "Random", 1, cfg) == "unsupported"
    assert not mo.run_path(cfg, "DTLZ2", "Random", 1).exists()
    assert mo.run_one("DTLZ2", "Random", 1, cfg, retry_unsupported=True) == "done"
    assert not marker.exists()


def test_command_line_runs_the_study_and_writes_the_summary(tmp_path, capsys):
    # one run, in a process of its own as the study runs them
    cli.main(["mo", "--benchmarks", "DTLZ2", "--methods", "Random", "--seeds", "3",
              "--method-seeds", "Random=1", "--iterations", "1", "--out-dir", str(tmp_path)])
    runs = tmp_path / "runs"
    assert [p.name for p in (runs / "DTLZ2" / "Random").glob("seed*")] == ["seed0.csv"]
    plan = json.loads((runs / "plan.json").read_text())
    assert plan["DTLZ2"]["Random"] == {"first_seed": 0, "seeds": 1, "iterations": 1}
    (runs / "DTLZ2" / "BARK").mkdir()
    (runs / "DTLZ2" / "BARK" / "UNSUPPORTED.txt").write_text("BARK cannot take DTLZ2: why\n")
    cli.main(["mo-plots", "--out-dir", str(tmp_path), "--no-readme"])
    out = capsys.readouterr().out
    assert "| DTLZ2 | Random | 1 x 1 |" in out and "refuses: why" in out
    curves = pd.read_csv(tmp_path / "hypervolume.csv")
    assert set(curves["iteration"]) == {0, 1} and set(curves["seed"]) == {0}
    assert (tmp_path / "hypervolume.png").stat().st_size > 0


def test_summary_pairs_seeds_against_bark():
    rows = [("B", "BARK", s, 3, [2.0, 1.0, 0.5][s]) for s in range(3)]
    rows += [("B", "Mobo", s, 3, 1.0) for s in range(3)]
    curves = pd.DataFrame(rows, columns=["benchmark", "method", "seed", "iteration",
                                         "hypervolume"])
    runs = curves.assign(fit_time=1.0, acq_time=2.0)
    plan = {"B": {"BARK": {"seeds": 3, "iterations": 3}, "Mobo": {"seeds": 2, "iterations": 3}}}
    table = mo.summary_table(runs, curves, {}, plan).set_index("method")
    assert table.loc["Mobo", "vs_reference"] == "1/1/1"
    assert table.loc["Mobo", "p"] == pytest.approx(1.0)
    assert table.loc["BARK", "hv_median"] == 1.0
    assert "2 seeds planned (3 for another method)" in table.loc["Mobo", "note"]


def test_limits_met_is_the_share_of_bo_points_within_every_limit():
    """Detergent's rows: within every output limit or not (``feasible``); the summary's
    share counts BO points only; other benchmarks have no limits (NaN)."""
    bench = mo.detergent_with_limits(mo.make_benchmark("Detergent"))
    limits = {f.key: f.objective.tp for f in bench.domain.outputs.get()
              if f.key in ("y3", "y4", "y5")}
    row = {"y1": 1.0, "y2": 1.0, **{k: v + 1.0 for k, v in limits.items()}}
    run = pd.DataFrame([row, {**row, "y3": limits["y3"] - 1.0}])
    for key in ("y1", "y2", "y3", "y4", "y5"):
        run[f"valid_{key}"] = 1
    np.testing.assert_array_equal(mo._meets_limits("Detergent", run), [True, False])
    assert np.isnan(mo._meets_limits("DTLZ2", run)).all()
