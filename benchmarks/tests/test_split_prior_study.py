"""Split-prior study: nuisance inputs, a tiny paired regression that resumes, BO method
folders and reuse of committed runs, and the report from small hand-made CSVs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import __main__ as cli
from benchmarks import bo
from benchmarks import regression as reg
from benchmarks import split_prior as sp

TINY = reg.BarkBudget(n_chains=1, n_samples=2, thinning=5, burn_in=20)


def toy_dataset(n: int = 60) -> reg.Dataset:
    """y depends on a only; b and c are noise (so both priors have something to find)."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(rng.uniform(size=(n, 3)), columns=["a", "b", "c"])
    frame["y"] = np.sin(6 * frame["a"]) + 0.1 * rng.normal(size=n)
    return reg.Dataset("toy", 40, "y", ["a", "b", "c"], frame=frame)


def test_nuisance_inputs_are_appended_uniform_and_fixed_per_split():
    ds = toy_dataset()
    X_tr, X_te, _, _ = reg.split(ds, 0)
    inputs, A_tr, A_te = sp.add_nuisance(ds.inputs(), X_tr, X_te, split=0)
    keys = sp.nuisance_keys()
    assert A_tr.shape == (40, 3 + 20) and A_te.shape == (20, 3 + 20)
    assert len(inputs) == 3 + 20 and set(keys) <= set(inputs.get_keys())
    assert all(inputs.get_by_key(k).bounds == (0.0, 1.0) for k in keys)
    pd.testing.assert_frame_equal(A_tr[["a", "b", "c"]], X_tr)  # originals untouched
    U = A_tr[keys].to_numpy()
    assert (U >= 0).all() and (U <= 1).all() and len(np.unique(U)) == U.size
    assert not np.allclose(U, A_te[keys].to_numpy()[:1])  # train and test draws differ
    _, B_tr, B_te = sp.add_nuisance(ds.inputs(), X_tr, X_te, split=0)
    pd.testing.assert_frame_equal(A_tr, B_tr)
    pd.testing.assert_frame_equal(A_te, B_te)
    _, C_tr, _ = sp.add_nuisance(ds.inputs(), X_tr, X_te, split=1)
    assert not np.allclose(C_tr[keys].to_numpy(), U)


def test_tiny_regression_pairs_priors_and_variants_and_resumes(tmp_path):
    out = sp.run_regression([toy_dataset()], 2, out_dir=tmp_path, budget=TINY, verbose=False)
    assert len(out) == 8
    assert set(zip(out["variant"], out["prior"], out["split"], strict=True)) == {
        (v, p, s) for v in sp.VARIANTS for p in sp.PRIORS for s in (0, 1)}
    # a split's rows come together, so an interrupted run leaves complete pairs
    assert list(out["split"]) == [0] * 4 + [1] * 4
    assert (out.loc[out["variant"] == "original", "n_features"] == 3).all()
    assert (out.loc[out["variant"] == "nuisance", "n_features"] == 23).all()
    assert np.isfinite(out[["nlpd", "mse", "fit_s"]].to_numpy()).all()
    share = out.loc[out["variant"] == "nuisance", "nuisance_share"]
    assert share.between(0, 1).all() and out.loc[out["variant"] == "original",
                                                 "nuisance_share"].isna().all()
    # same split and chain seed: only the prior differs, and it reaches the engine
    pair = out[(out["variant"] == "nuisance") & (out["split"] == 0)].set_index("prior")
    assert pair.loc["uniform", "nlpd"] != pair.loc["dirichlet", "nlpd"]
    # resume: a finished CSV is left alone; a missing row is the only one recomputed
    again = sp.run_regression([toy_dataset()], 2, out_dir=tmp_path, budget=TINY, verbose=False)
    pd.testing.assert_frame_equal(again, out)
    path = tmp_path / "regression.csv"
    # the code column is text: a hash such as 44e7267 would read as a number (inf)
    pd.read_csv(path, dtype={"code": str}).drop(index=5).to_csv(path, index=False)
    redone = sp.run_regression([toy_dataset()], 2, out_dir=tmp_path, budget=TINY,
                               verbose=False)
    assert len(redone) == 8
    pd.testing.assert_frame_equal(redone.iloc[:7], out.drop(index=5).reset_index(drop=True))
    last = redone.iloc[7]
    assert (last["variant"], last["prior"], last["split"]) == tuple(out.loc[5, [
        "variant", "prior", "split"]])
    assert last["nlpd"] == pytest.approx(out.loc[5, "nlpd"])  # seeded: the same fit again
    with pytest.raises(SystemExit, match="another --out-dir"):
        sp.run_regression([toy_dataset()], 2, out_dir=tmp_path, budget=reg.BarkBudget(),
                          verbose=False)


def test_bo_methods_choose_the_prior_and_their_folder(tmp_path):
    cfg = sp.bo_config(tmp_path)
    assert (cfg.time_limit, cfg.solver) == (2.5, "auto")  # BARKStrategy's defaults today
    domain = bo.make_benchmark("Hartmann6Spurious20").domain
    assert len(domain.inputs) == 26
    for prior in sp.PRIORS:
        base, mcfg = sp.method_config(f"BARK-{prior}", cfg)
        assert base == "BARK"
        assert bo.strategy_spec(base, domain, 0, mcfg).surrogate_specs.split_prior == prior
        assert mcfg.run_dir("B", "BARK") == tmp_path / "bo" / "runs" / "B" / f"BARK-{prior}"
    assert sp.method_config("Sobo", cfg) == ("Sobo", cfg)
    with pytest.raises(ValueError, match="split prior"):
        sp.method_config("BARK-sparse", cfg)


def test_committed_runs_are_reused_only_when_reproduced(tmp_path):
    name = "Hartmann6Spurious20"
    bench = bo.make_benchmark(name)
    keys = bench.domain.inputs.get_keys()
    source = tmp_path / "committed"
    for seed in (0, 1, 2):
        X = pd.concat([bo.initial_design(bench, seed),
                       bo.initial_design(bench, 10 + seed).iloc[:2]], ignore_index=True)
        run = X.assign(y=bench.f(X)["y"].to_numpy(),
                       iteration=[0] * bo.n_initial(bench) + [1, 2])
        if seed == 1:
            run.loc[31, "y"] += 1e-3  # a value today's function does not give
        if seed == 2:
            run = run.iloc[:-1]  # one iteration short
        (source / name / "Sobo").mkdir(parents=True, exist_ok=True)
        run[["iteration", *keys, "y"]].to_csv(source / name / "Sobo" / f"seed{seed}.csv",
                                              index=False)
    cfg = sp.bo_config(tmp_path / "study", n_iterations=2)
    notes = sp.reuse_runs(cfg, [name], [0, 1, 2, 3], source=source)
    assert len(notes) == 3
    assert "seed0: copied" in notes[0]
    assert "seed1: rerun" in notes[1] and "other values" in notes[1]
    assert "seed2: rerun" in notes[2] and "ran 1 iterations" in notes[2]
    folder = cfg.run_dir(name, "Sobo")
    assert sorted(p.name for p in folder.glob("*.csv")) == ["seed0.csv"]
    assert (folder.parent.parent / "REUSED.txt").read_text().count("\n") == 3
    assert sp.reuse_runs(cfg, [name], [0], source=source) == []  # already there: left alone


def fake_regression() -> pd.DataFrame:
    rows = []
    for s in range(6):
        for variant, shift in (("original", 0.02 * (-1) ** s), ("nuisance", -0.1 - 0.01 * s)):
            for prior in sp.PRIORS:
                nlpd = 1.0 + 0.1 * s + (shift if prior == "dirichlet" else 0.0)
                rows.append({"dataset": "concrete", "variant": variant, "prior": prior,
                             "split": s, "n_train": 300, "n_test": 730,
                             "n_features": 8 if variant == "original" else 28, "nlpd": nlpd,
                             "mse": 0.5, "fit_s": 2.0 if prior == "uniform" else 3.0,
                             "nuisance_share": (0.4 if prior == "uniform" else 0.1)
                             if variant == "nuisance" else np.nan,
                             "settings": "tiny", "code": "abc"})
    return pd.DataFrame(rows, columns=sp.REG_COLUMNS)


def write_fake_runs(root, bench: str = "Hartmann6Spurious20") -> None:
    """Three iterations per run; final best: uniform -3.0, dirichlet -3.2 on seeds 0-2 and
    -2.9 on seed 3, Sobo -3.3 (the optimum is -3.32237)."""
    finals = {"BARK-uniform": [-3.0] * 4, "BARK-dirichlet": [-3.2, -3.2, -3.2, -2.9],
              "Sobo": [-3.3] * 4}
    for method, values in finals.items():
        for seed, final in enumerate(values):
            best = [-1.0, -2.0, final]
            df = pd.DataFrame({"iteration": [0, 1, 2], "y": best, "best": best,
                               "fit_time": [np.nan, 0.5, 0.5], "acq_time": [np.nan, 2.0, 3.0]})
            (root / bench / method).mkdir(parents=True, exist_ok=True)
            df.to_csv(root / bench / method / f"seed{seed}.csv", index=False)


def test_report_from_small_csvs(tmp_path, capsys):
    fake_regression().to_csv(tmp_path / "regression.csv", index=False)
    write_fake_runs(tmp_path / "bo" / "runs")
    cli.main(["split-prior", "report", "--out-dir", str(tmp_path)])
    text = (tmp_path / "summary.md").read_text()
    assert text in capsys.readouterr().out
    # nuisance inputs: dirichlet lower on all 6 splits, so p = 2 * 0.5**6 for both tests
    assert "| concrete | nuisance | 6 | 1.250 (0.187) | 1.125 (0.168) | -0.125 (0.019) | 6/0 " \
           "| 0.031 | 0.031 |" in text
    assert "| concrete | original | 6 | 1.250 (0.187) | 1.250 (0.182) | 0.000 (0.022) | 3/3 " \
           "| 1 |" in text
    assert "| concrete | nuisance | 28 | 2.0 | 3.0 | 0.400 | 0.100 |" in text
    assert "| concrete | original | 6 | 0.500 (0.000) | 0.500 (0.000) | 0.000 (0.000) | 0/0 " \
           "| - | - |" in text  # MSE: identical, no untied pair
    # BO: regret = final best + 3.32237; dirichlet lower on 3 seeds of 4 (p 0.625)
    assert "| Hartmann6Spurious20 | BARK-uniform | 4 | 2 | 0.322 (0.322-0.322) @ 2 | 0.5 | 2.5 |" \
           in text
    assert "| Hartmann6Spurious20 | 2 | 3/0/1 | 0.62 | 0/0/4 | 0.12 | 0/0/4 | 0.12 |" in text
    for name in ("bo_regret.png", "regression.png"):
        assert (tmp_path / name).stat().st_size > 0
