"""Mixing study: the diagnostics of one fit read the right traces, a tiny grid writes the
study's columns and resumes without refitting, and the summary reads the CSV."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from benchmarks import mixing
from bofire_bark import diagnostics
from bofire_bark.engine.sampler import TRACE_SCALARS, trace_width

# small enough for seconds, large enough for ArviZ (2 chains x 10 sweeps)
TINY = {"n_trees": 5, "burn_in": 20, "thinning": 5, "n_samples": 2, "n_chains": 2}


def fake_posterior(shift_lml: float, shift_conc: float, dirichlet: bool = True):
    """Four chains of i.i.d. normal traces, with chain 0's log likelihood and concentration
    moved by the given amounts (so only those should show disagreement)."""
    rng = np.random.default_rng(0)
    d = 3
    tr = rng.normal(size=(4, 200, trace_width(d))) + 5.0
    tr[0, :, TRACE_SCALARS.index("log_likelihood")] += shift_lml
    tr[0, :, TRACE_SCALARS.index("split_concentration")] += shift_conc
    samples = {"split_prob": np.zeros((4, d))} if dirichlet else {}
    space = SimpleNamespace(var_col=np.arange(d))  # one split variable per input
    return SimpleNamespace(traces=tr, kinds=np.zeros(d), y=np.zeros(10), y_std=1.0,
                           samples=samples, space=space)


def test_diagnostics_point_at_the_chain_that_disagrees():
    mixed = mixing.chain_diagnostics(fake_posterior(0.0, 0.0))
    assert not mixed["warn"]
    for q in ("log_marginal_likelihood", "noise_var", "leaves_per_tree", "split_concentration"):
        assert mixed[f"{q}_rhat"] < 1.05 and mixed[f"{q}_ess"] > 300, q
    conc = mixing.chain_diagnostics(fake_posterior(0.0, 3.0))
    # the concentration is not one of the warning's quantities: it is reported, not warned on
    assert conc["split_concentration_rhat"] > 1.3 and not conc["warn"]
    assert conc["log_marginal_likelihood_rhat"] < 1.05
    lml = mixing.chain_diagnostics(fake_posterior(3.0, 0.0))
    assert lml["warn"] and lml["log_marginal_likelihood_rhat"] > 1.3
    assert lml["noise_var_rhat"] < 1.05 and lml["split_concentration_rhat"] < 1.05
    uniform = mixing.chain_diagnostics(fake_posterior(0.0, 0.0, dirichlet=False))
    assert math.isnan(uniform["split_concentration_rhat"])
    assert math.isnan(uniform["split_prob_rhat_max"])
    assert 0.99 < uniform["split_share_rhat_median"] <= uniform["split_share_rhat_max"] < 1.1


def test_tiny_grid_has_the_columns_and_resumes(tmp_path, monkeypatch):
    added = mixing.run(tmp_path, ["Hartmann6"], sizes=[10], seeds=[0], overrides=TINY,
                       verbose=False)
    path = tmp_path / mixing.CSV_NAME
    df = mixing.read_fits(path)
    assert added == 4 and list(df.columns) == mixing.COLUMNS
    assert set(zip(df["prior"], df["fit"], strict=True)) == {
        (p, f) for p in mixing.PRIORS for f in mixing.FITS}
    assert (df["n"] == 10).all() and (df["n_inputs"] == 6).all()
    warm = df["fit"] == "warm"
    assert (df.loc[warm, "n_prefit"] == 5).all() and df.loc[~warm, "n_prefit"].isna().all()
    over = (df[["log_marginal_likelihood_rhat", "noise_var_rhat"]]
            > diagnostics.RHAT_WARN).any(axis=1)
    assert (df["warn"] == over).all()
    sparse = df["prior"] == "dirichlet"
    for col in ("split_concentration_rhat", "split_prob_rhat_max", "split_concentration_mean"):
        assert df.loc[sparse, col].notna().all() and df.loc[~sparse, col].isna().all(), col
    assert np.isfinite(df[["log_marginal_likelihood_rhat", "noise_var_ess",
                           "leaves_per_tree_mean", "fit_s"]].to_numpy()).all()
    assert (df["settings"] == mixing.describe(TINY)).all()

    # a rerun fits nothing and leaves the file as it was
    before = path.read_bytes()

    def no_fit(*args, **kwargs):
        raise AssertionError("a done case was fitted again")

    monkeypatch.setattr(mixing, "run_case", no_fit)
    assert mixing.run(tmp_path, ["Hartmann6"], sizes=[10], seeds=[0], overrides=TINY,
                      verbose=False) == 0
    assert path.read_bytes() == before
    monkeypatch.undo()
    # another seed adds only its own rows
    assert mixing.run(tmp_path, ["Hartmann6"], sizes=[10], seeds=[0, 1], overrides=TINY,
                      verbose=False) == 4
    df = mixing.read_fits(path)
    assert len(df) == 8 and not df.duplicated(mixing.KEY).any()
    assert path.read_bytes().startswith(before)  # appended, not rewritten
    # rows of other settings never mix into one CSV
    with pytest.raises(SystemExit, match="use another --out"):
        mixing.run(tmp_path, ["Hartmann6"], sizes=[10], seeds=[2],
                   overrides={**TINY, "burn_in": 30}, verbose=False)

    text = mixing.summary(tmp_path)
    table = pd.read_csv(tmp_path / "summary.csv")
    assert len(table) == 4 and (table["fits"] == 2).all()
    assert table["warn_share"].between(0, 1).all()
    assert "| dirichlet | first | 10 | 2 |" in text and "2 chains x 10 sweeps" in text
    assert "Highest median R-hat under `dirichlet`" in text

    # another setting in its own folder, compared on the cases both ran (seed 0 only)
    other = {**TINY, "burn_in": 30}
    assert mixing.run(tmp_path / "v", ["Hartmann6"], sizes=[10], seeds=[0], overrides=other,
                      verbose=False) == 4
    text = mixing.compare(tmp_path, [tmp_path / "v"])
    assert "(4: same benchmark" in text
    rows = [r for r in text.splitlines() if r.startswith("| `")]
    assert len(rows) == 8 and all(" | 1 | " in r for r in rows)
    assert sum(mixing.describe(other) in r for r in rows) == 4


def test_chain_table_shows_each_chains_concentration_and_top_inputs():
    post = fake_posterior(0.0, 3.0)
    d = len(post.kinds)
    k = len(TRACE_SCALARS)
    post.traces[1, :, k:k + d] = [0.1, 0.7, 0.2]  # chain 1 puts its weight on input b
    table = mixing.chain_table(post, ["a", "b", "c"], top=2)
    assert list(table["chain"]) == [0, 1, 2, 3]
    assert table["conc_median"].iloc[0] > table["conc_median"].iloc[1:].max() + 2
    assert table["top_split_prob"].iloc[1] == "b 0.70, c 0.20"


@pytest.mark.parametrize("name", ["MAXPhases", "Mixture", "ReactionSynergy"])
def test_chemistry_problems_build_cases(tmp_path, name):
    """Each chemistry problem's pool is fixed by its seed, and a tiny first and warm fit write
    the study's row (CrossCoupling's emulator is too slow here; its pool cache is checked
    below)."""
    problem = mixing.make_problem(name)
    small, large = mixing.point_pool(problem, 0, 12), mixing.point_pool(problem, 0, 14)
    assert len(small) == 12 and small.equals(mixing.point_pool(problem, 0, 12))
    assert not small.equals(mixing.point_pool(problem, 1, 12))
    output = problem.domain.outputs.get_keys()[0]
    assert np.isfinite(small[output]).all()
    assert set(problem.domain.inputs.get_keys()) <= set(small.columns)
    if name == "MAXPhases":  # a BO run's first compounds, none twice
        from benchmarks import max_phases

        data = max_phases.load()
        start = data["compound"].iloc[max_phases.initial_compounds(len(data), 0)]
        assert list(large["compound"].iloc[:12]) == list(start.iloc[:12])
        assert not mixing.point_pool(problem, 0, 60)["compound"].duplicated().any()
    added = mixing.run(tmp_path, [name], sizes=[10], seeds=[0], priors=["dirichlet"],
                       overrides=TINY, verbose=False)
    df = mixing.read_fits(tmp_path / mixing.CSV_NAME)
    assert added == 2 and list(df.columns) == mixing.COLUMNS
    assert (df["benchmark"] == name).all()
    assert (df["n_inputs"] == len(problem.domain.inputs)).all()
    assert np.isfinite(df[["log_marginal_likelihood_rhat", "fit_s"]].to_numpy()).all()


def test_crosscoupling_pool_is_computed_once_per_seed(tmp_path, monkeypatch):
    """The emulator's outputs are kept per seed and size and read back, not recomputed."""
    from benchmarks import chem_bo
    from benchmarks.interaction import ReactionSynergy

    calls = []

    class FakeEmulator:  # ReactionSynergy's domain has the one output "yield" too
        def domain(self, measured):
            return ReactionSynergy().domain

        def evaluate(self, X):
            calls.append(len(X))
            return np.arange(len(X), dtype=float)

    monkeypatch.setattr(chem_bo, "make_problem", lambda name: FakeEmulator())
    monkeypatch.setattr(mixing, "POOL_DIR", tmp_path)
    problem = mixing._crosscoupling()
    first = mixing.point_pool(problem, 3, 7)
    again = mixing.point_pool(problem, 3, 7)
    assert calls == [7] and (tmp_path / "CrossCoupling_seed3_n7.csv").exists()
    pd.testing.assert_frame_equal(first, again, check_dtype=False)
    assert list(first["yield"]) == list(range(7))
