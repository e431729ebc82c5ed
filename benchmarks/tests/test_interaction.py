"""Interaction study: the synergy pair is the optimum yet invisible to main effects, and a tiny
BO run writes the study's columns and resumes without redoing rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import interaction as study

TINY = {"n_trees": 10, "burn_in": 50, "thinning": 5, "n_chains": 2, "n_samples": 2}
FAST = {"time_limit": 0.3, "n_start_points": 100}


def test_optimum_is_the_synergy_pair_with_mediocre_main_effects():
    grid = study.combinations()
    y = study.true_yield(grid)
    best = grid.iloc[int(np.argmax(y))]
    assert (best.solvent, best.catalyst) == study.PAIR
    assert y.max() == study.OPTIMUM == 100.0 and np.sort(y)[-2] == study.PLATEAU == 90.0
    # neither input of the pair is the best by its main effect, and without the synergy the
    # pair would be far below the plateau
    assert max(study.SOLVENT, key=study.SOLVENT.get) != study.PAIR[0]
    assert max(study.CATALYST, key=study.CATALYST.get) != study.PAIR[1]
    assert y.max() - study.SYNERGY < study.PLATEAU - 10
    bench = study.ReactionSynergy()
    opt = bench.get_optima()
    assert opt["yield"].iloc[0] == 100.0
    assert bench.domain.constraints.is_fulfilled(opt).all()  # the optimum is feasible
    # no random feasible point beats it; the pair is what separates the top from the plateau
    X = study.random_points(bench.domain, 0, 100)
    assert bench.domain.constraints.is_fulfilled(X).all()
    yx = study.true_yield(X)
    assert yx.max() < 100.0 and yx[~study.is_pair(X)].max() < study.PLATEAU


def test_tiny_bo_has_the_columns_and_resumes(tmp_path, monkeypatch):
    path = study.run_bo(tmp_path, seeds=[0], n_initial=4, n_iterations=2, overrides=TINY,
                        strategy_kwargs=FAST, verbose=False)
    # the folder and the settings name the split prior and sampling budget explicitly
    assert path == tmp_path / "bo" / study.config_name(study.pinned(TINY)) / study.BO_CSV
    df = study.read_bo(path)
    assert list(df.columns) == study.BO_COLUMNS
    assert all(f'"{k}"' in df["settings"].iloc[0] for k in study.PINNED)
    assert list(df["iteration"]) == [0, 0, 0, 0, 1, 2]
    assert np.allclose(df["best"], np.maximum.accumulate(df["y_true"]))
    assert np.allclose(df["y_true"], study.true_yield(df))
    assert (df["pair_tried"] == np.logical_or.accumulate(df["pair"])).all()
    bo = df["iteration"] > 0
    assert df.loc[bo, ["pred", "pred_sd", "pair_sd_latent", "pair_ucb", "fit_s"]].notna().all(
        axis=None)
    assert (df.loc[bo, "pair_sd_latent"] > 0).all() and (df["resumes"] == 0).all()

    # interrupted after iteration 1: the rerun adds iteration 2 only, after the saved rows
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))
    before = path.read_bytes()
    study.run_bo(tmp_path, seeds=[0], n_initial=4, n_iterations=2, overrides=TINY,
                 strategy_kwargs=FAST, verbose=False)
    assert path.read_bytes().startswith(before)
    df2 = study.read_bo(path)
    assert list(df2["iteration"]) == [0, 0, 0, 0, 1, 2]
    assert df2["resumes"].tolist() == [0] * 5 + [1]
    # the measurement of a step is fixed by (seed, step): the true value plus that noise
    noise = np.random.default_rng([0, 2]).normal(0.0, study.NOISE_SD, 1)[0]
    assert np.isclose(df2["y"].iloc[-1], df2["y_true"].iloc[-1] + noise)

    # a finished run is skipped
    def no_run(*args, **kwargs):
        raise AssertionError("a finished run was run again")

    monkeypatch.setattr(study, "run_seed", no_run)
    before = path.read_bytes()
    study.run_bo(tmp_path, seeds=[0], n_initial=4, n_iterations=2, overrides=TINY,
                 strategy_kwargs=FAST, verbose=False)
    assert path.read_bytes() == before
    monkeypatch.undo()

    text = study.bo_summary(tmp_path)
    table = pd.read_csv(tmp_path / "bo_summary.csv")
    assert table["runs"].tolist() == [1] and table["iterations"].tolist() == [2]
    assert f"| {study.config_name(study.pinned(TINY))} | 1 | 2 |" in text


def test_uncertainty_table_compares_tried_and_untried():
    rows = []
    for seed in (0, 1):
        for i, r in study.combinations().iterrows():
            tried = i < 8
            pair = (r.solvent, r.catalyst) == study.PAIR
            rows.append({"config": "x", "seed": seed, "solvent": r.solvent,
                         "catalyst": r.catalyst, "tried": tried, "synergy": pair,
                         "sd": 2.0 if tried else 3.0, "sd_latent": 1.0 if tried else 2.0,
                         "sd_sample": 1.0 if tried else 1.5, "mean": 50.0,
                         "ucb": 60.0 if pair else 55.0, "y_sd": 10.0, "rhat_max": 1.0,
                         "sweeps": 10, "fit_s": 1.0})
    table = study.uncertainty_table(pd.DataFrame(rows)).iloc[0]
    assert table["fits"] == 2 and table["n_tried"] == 8
    assert table["ratio_latent"] == 2.0 and table["ratio_sample"] == 1.5
    assert table["ucb_rank_pair"] == 1 and table["pair_beats_tried"] == 2


def test_kappa_to_lead():
    mean, sd = np.array([60.0, 50.0, 55.0]), np.array([1.0, 3.0, 2.5])
    k = study.kappa_to_lead(mean, sd, 1)
    assert np.isclose(k, 10.0)  # (55 - 50) / (3 - 2.5); the first needs only 5
    assert np.isclose(mean[1] + k * sd[1], mean[2] + k * sd[2])
    assert study.kappa_to_lead(mean, sd, 0) == 0.0
    assert study.kappa_to_lead(np.array([50.0, 50.0]), np.array([3.0, 3.0]), 0) == np.inf


def test_start_without_the_pair():
    X = study.points_without_pair(0, 20)
    assert len(X) == 20 and not study.is_pair(X).any()
    assert study.config_name(None, 3.0, "no_pair") == "kappa=3,start=no_pair"
    assert study.config_name({"split_prior": "uniform"}) == "split_prior=uniform"


def test_sobo_reference_runs_without_the_heat_budget(tmp_path):
    """BoFire's GP strategy on the domain without the budget: the same starting points, its
    own folder, the BARK-only columns empty, and a summary that reads them."""
    assert len(study.ReactionSynergy(heat_budget=False).domain.constraints) == 0
    assert len(study.ReactionSynergy().domain.constraints) == 1
    with pytest.raises(ValueError, match="BARK's"):
        study.run_bo(tmp_path, seeds=[0], overrides=TINY, method="sobo", heat_budget=False)
    with pytest.raises(ValueError, match="no-heat-budget"):
        study.run_bo(tmp_path, seeds=[0], method="sobo")
    path = study.run_bo(tmp_path, seeds=[0], n_initial=4, n_iterations=1, method="sobo",
                        heat_budget=False, start="no_pair", verbose=False)
    assert path.parent.name == "method=sobo,heat_budget=off,start=no_pair"
    df = study.read_bo(path)
    X0 = study.points_without_pair(0, 4)
    assert np.allclose(df.loc[df.iteration == 0, "temperature"], X0["temperature"])
    assert df.loc[df.iteration == 1, "pair_ucb"].isna().all()
    assert df.loc[df.iteration == 1, ["pred", "pred_sd"]].notna().all(axis=None)
    assert "| method=sobo,heat_budget=off,start=no_pair | 1 | 1 |" in study.bo_summary(tmp_path)
