"""BO runner: a run saves every iteration, resumes where it stopped, records refusals, and
the plots and tables come out of the saved CSVs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import __main__ as cli
from benchmarks import bo, plots


@pytest.fixture
def cfg(tmp_path):
    return bo.BOConfig(n_iterations=1, time_limit=5.0, n_trees=10, n_chains=1, n_samples=2,
                       thinning=5, burn_in=10, n_start_points=50, out_dir=tmp_path)


def test_initial_design_is_shared_and_sized():
    bench = bo.make_benchmark("MixedConstrained")
    a, b = bo.initial_design(bench, 3), bo.initial_design(bench, 3)
    assert len(a) == bo.n_initial(bench) == 10
    assert a.equals(b)
    assert bench.domain.constraints.is_fulfilled(a, tol=1e-4).all()
    assert bo.n_initial(bo.make_benchmark("PestControl")) == 30


def test_run_saves_resumes_and_times(cfg):
    status = bo.run_one("DiscreteAckley", "BARK", 0, cfg)
    assert status == "done"
    path = bo.run_path(cfg, "DiscreteAckley", "BARK", 0)
    first = bo.read_run(path)
    assert list(first["iteration"]) == [0] * 26 + [1]
    last = first.iloc[-1]
    assert last["fit_time"] > 0 and last["acq_time"] > 0
    assert last["mip_status"] and np.isfinite(last["mip_gap"])
    assert last["ucb"] >= last["start_ucb"] - 1e-9  # the solver never returns worse
    assert last["fit_sweeps"] > 0 and "fit_warned" in first.columns  # the fit's diagnostics
    assert last["best"] == first["y"].min()
    # finished runs are skipped; a longer budget continues from the saved points
    assert bo.run_one("DiscreteAckley", "BARK", 0, cfg) == "done"
    assert len(bo.read_run(path)) == 27
    cfg.n_iterations = 2
    assert bo.run_one("DiscreteAckley", "BARK", 0, cfg) == "done"
    second = bo.read_run(path)
    assert list(second["iteration"][-2:]) == [1, 2]
    assert second.iloc[:27].equals(first)
    assert list(second["resumes"][-2:]) == [0, 1]  # the refit after the restart is marked


def test_categories_survive_the_csv_and_refusals_are_recorded(cfg):
    assert bo.run_one("PestControl", "Random", 1, cfg) == "done"
    df = bo.read_run(bo.run_path(cfg, "PestControl", "Random", 1))
    assert set(df["s00"]) <= set(bo.make_benchmark("PestControl").choices)
    assert bo.run_one("MixedConstrained", "Sobo", 0, cfg) == "unsupported"
    text = (cfg.run_dir("MixedConstrained", "Sobo") / "UNSUPPORTED.txt").read_text()
    assert "NonlinearInequalityConstraint" in text
    assert bo.run_one("DiscreteRosenbrock", "Entmoot", 0, cfg) == "unsupported"


def test_study_through_joblib_then_plots_and_tables(cfg):
    # two joblib workers (separate processes), as a cluster backend would run them
    results = bo.run_study(["MixedConstrained"], ["Random", "Sobo"], [0, 1], cfg, n_jobs=2,
                           verbose=False)
    assert sorted(r[3] for r in results) == ["done", "done", "unsupported", "unsupported"]
    text = plots.make_all(cfg.out_dir)
    assert "refuses" in text and "| MixedConstrained | Random | 2 | 1 |" in text
    for name in ("regret.png", "time.png", "summary.csv", "regret.csv"):
        assert (cfg.out_dir / name).stat().st_size > 0
    curves = plots.regret_curves(plots.load_runs(cfg.out_dir / "runs")[0])
    assert (curves["regret"] >= -1e-9).all()  # the optimum is known here


def test_command_line_runs_bo_and_plots(tmp_path, capsys):
    cli.main(["bo", "--benchmarks", "PestControl", "--methods", "Random", "--seeds", "2",
              "--iterations", "2", "--out-dir", str(tmp_path)])
    assert len(list((tmp_path / "runs" / "PestControl" / "Random").glob("seed*.csv"))) == 2
    cli.main(["plots", "--out-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "| PestControl (vs best found) | Random | 2 | 2 |" in out
    assert (tmp_path / "regret.png").exists()


def test_comparison_pairs_seeds_and_names_refusals():
    rows = []
    # seed s: BARK regret s, Sobo regret 2 - s at iteration 3 (BARK lower on seed 0, tied on
    # seed 1, higher on seed 2); Random only ran seeds 0 and 1 to iteration 3.
    for s in range(3):
        rows += [("B", "BARK", s, 3, float(s)), ("B", "Sobo", s, 3, 2.0 - s)]
    rows += [("B", "Random", s, 3, 5.0) for s in range(2)]
    curves = pd.DataFrame(rows, columns=["benchmark", "method", "seed", "iteration", "regret"])
    refused = {("B", "Entmoot"): "nope"}
    table = plots.comparison_table(curves, refused)
    row = table.iloc[0]
    assert row["iteration"] == 3 and row["BARK"] == 1.0 and row["Sobo"] == 1.0
    assert row["vs_Sobo"] == "1/1/1" and row["vs_Random"] == "2/0/0"
    # sign test over untied pairs: 1 of 2 is p = 1, 2 of 2 is p = 2 * 0.5**2
    assert row["p_Sobo"] == pytest.approx(1.0) and row["p_Random"] == pytest.approx(0.5)
    assert row["Entmoot_seeds"] == 0
    text = plots.comparison_markdown(table, refused)
    assert ("| B | 3 | **1 (3)** | **1 (3)** | 5 (2) | refuses | 1/1/1 (p 1) | 2/0/0 (p 0.5) | - |"
            in text)


def test_a_study_folder_refuses_other_settings(cfg):
    assert bo.check_settings(cfg)["time_limit"] == 5.0
    cfg.n_iterations = 7  # more iterations resume the same runs
    bo.check_settings(cfg)
    cfg.time_limit = 30.0
    with pytest.raises(SystemExit, match="time_limit"):
        bo.check_settings(cfg)


def test_tables_are_embedded_between_markers_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- t -->\nold table\n<!-- /t -->\nreading\n")
    assert plots.embed(readme, "t", "| new |\n")
    assert readme.read_text() == "intro\n<!-- t -->\n| new |\n<!-- /t -->\nreading\n"
    assert not plots.embed(readme, "missing", "x")


def test_summary_counts_iterations_where_the_mip_beat_its_start():
    rows = pd.DataFrame({"ucb": [1.0, 2.0, 3.0, np.nan], "start_ucb": [1.0, 1.5, 3.0, 1.0]})
    assert plots._beat_start(rows) == "search beat its start in 1 of 3 iterations"
    assert plots._beat_start(rows.drop(columns=["ucb", "start_ucb"])) == ""


def test_beat_start_ignores_round_off_relative_to_the_start():
    # both the summary and mip_vs_start count with this one rule
    ucb = [1.0 + 1e-12, 1e6 + 1e-4, 1e6 + 1e-2, -2.0 + 1e-8]
    start = [1.0, 1e6, 1e6, -2.0]
    assert bo.beat_start(ucb, start).tolist() == [False, False, True, True]


def test_runs_in_progress_leave_the_tables_and_are_named():
    rows = [("B", "BARK", s, it, 3.0 - it) for s in range(2) for it in range(4)]
    rows += [("B", "Sobo", 0, it, 3.5 - it) for it in range(4)]
    rows += [("B", "Sobo", 1, it, 9.0) for it in range(2)]  # still at iteration 1
    curves = pd.DataFrame(rows, columns=["benchmark", "method", "seed", "iteration", "regret"])
    done = plots.finished_only(curves)
    assert set(map(tuple, done[["method", "seed"]].drop_duplicates().to_numpy())) == {
        ("BARK", 0), ("BARK", 1), ("Sobo", 0)}
    row = plots.comparison_table(done, {}).iloc[0]
    assert row["iteration"] == 3 and row["vs_Sobo"] == "1/0/0" and row["Sobo_seeds"] == 1
    runs = curves.rename(columns={"regret": "y"}).assign(best=curves["regret"], fit_time=0.1,
                                                          acq_time=0.2)
    curves = curves.assign(f_star=0.0, known_optimum=True)
    table = plots.summary_table(runs, curves, {}).set_index("method")
    assert table.loc["Sobo", "seeds"] == 1 and table.loc["Sobo", "regret_median"] == 0.5
    assert "1 more in progress (at iteration 1)" in table.loc["Sobo", "note"]


def test_candidates_off_bounds_by_round_off_are_clipped_and_larger_misses_raise():
    domain = bo.make_benchmark("Hartmann6").domain
    X = pd.DataFrame([[0.5] * 6], columns=domain.inputs.get_keys())
    X.loc[0, "x_3"] = 1 + 7e-8
    X.loc[0, "x_1"] = -2e-7
    clipped, excess = bo.to_bounds(X, domain)
    assert clipped.loc[0, "x_3"] == 1.0 and clipped.loc[0, "x_1"] == 0.0
    assert excess == pytest.approx(2e-7)
    assert X.loc[0, "x_3"] > 1  # the caller's frame is left as it was
    X.loc[0, "x_3"] = 1.01
    with pytest.raises(ValueError, match="x_3"):
        bo.to_bounds(X, domain)


def _write_run(root, bench, method, seed, best):
    """A two-iteration run ending at ``best``, where ``load_runs`` reads it."""
    d = root / bench / method
    d.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"iteration": [0, 1], "y": [best + 1.0, best], "best": [best + 1.0, best],
                  "fit_time": 0.1, "acq_time": 0.2}).to_csv(d / f"seed{seed}.csv", index=False)


def test_bark_from_a_rerun_replaces_the_study_bark_and_keeps_it_beside(tmp_path):
    study, rerun = tmp_path / "runs", tmp_path / "rerun"
    for s in range(2):
        _write_run(study, "B", "BARK", s, 3.0)   # the SCIP-era runs
        _write_run(study, "B", "Sobo", s, 2.0)
        _write_run(rerun, "B", "BARK", s, 1.0)   # the rerun: better than both on every seed
    runs = plots.with_bark_runs(plots.load_runs(study)[0], rerun)
    assert set(runs["method"]) == {"BARK", plots.SCIP_BARK, "Sobo"}
    assert runs.loc[runs["method"] == "BARK", "best"].min() == 1.0
    assert runs.loc[runs["method"] == plots.SCIP_BARK, "best"].min() == 3.0
    row = plots.comparison_table(plots.regret_curves(runs), {}).iloc[0]
    assert row["vs_Sobo"] == "2/0/0" and row[f"vs_{plots.SCIP_BARK}"] == "2/0/0"
    assert plots.SCIP_BARK in plots.comparison_markdown(pd.DataFrame([row]), {})
    with pytest.raises(SystemExit, match="no BARK runs"):
        plots.with_bark_runs(runs, tmp_path / "empty")


def test_a_later_rerun_replaces_an_earlier_one_per_benchmark(tmp_path):
    """``--bark-runs a b``: a benchmark's BARK runs come from b where b has it, else from a."""
    study, first, later = tmp_path / "runs", tmp_path / "first", tmp_path / "later"
    for s in range(3):
        _write_run(study, "A", "BARK", s, 9.0)
        _write_run(study, "B", "BARK", s, 9.0)
        _write_run(first, "A", "BARK", s, 1.0)
        _write_run(first, "B", "BARK", s, 2.0)
    _write_run(later, "B", "BARK", 0, 5.0)  # a rerun of B with one seed only
    runs = plots.with_bark_runs(plots.load_runs(study)[0], [first, later])
    bark = runs[runs["method"] == "BARK"]
    a, b = bark[bark["benchmark"] == "A"], bark[bark["benchmark"] == "B"]
    assert sorted(a["seed"].unique()) == [0, 1, 2] and a["best"].min() == 1.0
    assert b["seed"].unique().tolist() == [0] and b["best"].min() == 5.0
    assert runs.loc[runs["method"] == plots.SCIP_BARK, "best"].min() == 9.0


def test_tuning_benchmarks_run_by_name_only(cfg):
    """SVRBench and XGBoostMNIST are left out of the default study and run when named."""
    import argparse

    assert set(bo.TUNING_STUDY_BENCHMARKS) == {"SVRBench", "XGBoostMNIST"}
    assert not set(bo.TUNING_STUDY_BENCHMARKS) & set(bo.STUDY_BENCHMARKS)
    parser = argparse.ArgumentParser()
    bo.add_arguments(parser)
    assert bo.config_from_args(parser.parse_args([]))[1] == list(bo.STUDY_BENCHMARKS)
    named = parser.parse_args(["--benchmarks", "SVRBench", "XGBoostMNIST"])
    assert bo.config_from_args(named)[1] == ["SVRBench", "XGBoostMNIST"]
    # a run through the runner (BARK's takes minutes on this domain; test_functions checks
    # that BARKStrategy validates it, and the study's smoke run ran it end to end)
    assert bo.run_one("SVRBench", "Random", 0, cfg) == "done"
    df = bo.read_run(bo.run_path(cfg, "SVRBench", "Random", 0))
    assert list(df["iteration"]) == [0] * 30 + [1]
    assert set(df["h00"]) <= {"exclude", "include"} and np.isfinite(df["y"]).all()


def test_bark_takes_the_study_rule_and_a_folder_records_it(cfg):
    cfg.solver = "auto"  # bo_rerun's grid search: the MIP maximizes qUCB only
    domain = bo.make_benchmark("DiscreteAckley").domain
    default = bo.make_strategy("BARK", domain, 0, cfg)
    assert type(default.acquisition_function).__name__ == "qUCB"
    bo.check_settings(cfg)
    cfg.acquisition = "qLogNEI"
    nei = bo.make_strategy("BARK", domain, 0, cfg)
    assert type(nei.acquisition_function).__name__ == "qLogNEI"
    with pytest.raises(SystemExit, match="acquisition"):
        bo.check_settings(cfg)
