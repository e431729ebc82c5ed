"""The chemistry suite: its method table gives each problem a valid strategy, a tiny run
writes rows that a second invocation resumes without redoing, and the summary's paired counts
and sign tests are right on a made-up table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchmarks import chem_bo, chem_suite, max_phases
from benchmarks.chem_suite import PROBLEMS

TINY = {"n_trees": 10, "burn_in": 50, "thinning": 5, "n_chains": 2, "n_samples": 2}
EXTRA = {"surrogate_specs": TINY, "time_limit": 0.3, "n_start_points": 100}


def test_the_mixture_optimum_and_its_traps():
    x, cost = chem_suite.mixture_optimum(n_starts=3)
    assert np.isclose(cost, chem_suite.MIXTURE_OPTIMUM, atol=1e-5)
    assert (x > 1e-6).sum() == 3 and np.isclose(x.sum(), 1.0)
    # ingredient 1 alone is a local trap, the cheap pair 2 + 5 close to the best
    alone = np.eye(6)[0]
    assert np.isclose(chem_suite.mixture_cost(alone)[0], 1.2)
    problem = chem_suite.Mixture()
    X = problem.initial(0)
    assert len(X) == 12 and problem.domain().constraints.is_fulfilled(X).all()
    assert (problem.evaluate(X) > chem_suite.MIXTURE_OPTIMUM).all()
    with pytest.raises(ValueError, match="infeasible"):
        problem.evaluate(pd.DataFrame([[0.25] * 4 + [0.0] * 2], columns=problem.keys))


@pytest.mark.skipif(not max_phases.DEFAULT_DATA.exists(),
                    reason="the MAX data lives in ../shared/data/max")
def test_max_runs_the_informative_seeds():
    data = max_phases.load()
    seeds = chem_suite.seeds_of("max")
    # seeds 1, 5, 6 and 11 start with the best compound: 16 of 0-19 are left
    assert seeds == [s for s in range(20) if s not in (1, 5, 6, 11)]
    best = int(data.y.to_numpy().argmax())
    assert all(best not in max_phases.initial_compounds(len(data), s) for s in seeds)
    assert best in max_phases.initial_compounds(len(data), 1)
    assert chem_suite.seeds_of("crosscoupling", 3, 5) == [5, 6, 7]


@pytest.fixture(scope="module")
def domains():
    # CrossCoupling's emulator is a GP fitted when built: the slow one here
    names = [n for n in PROBLEMS if n != "max" or max_phases.DEFAULT_DATA.exists()]
    return {n: chem_suite.problem_domain(n) for n in names}


def test_the_method_table_builds_each_problems_strategies(domains):
    from bofire.data_models.features.api import ContinuousInput

    from bofire_bark.data_models import BARKSettings, BARKStrategy

    for name, domain in domains.items():
        continuous = bool(domain.inputs.get(ContinuousInput).get())
        for method in chem_suite.BARK_ARMS:
            settings, kwargs = chem_suite.split_changes(chem_suite.arm_changes(method))
            if (settings.get("smooth_share") and not continuous
                    and not settings.get("smooth_categories")):
                # the libraries (MAX, photoswitches) have no continuous input to be smooth in,
                # only categorical ones (smooth_categories)
                with pytest.raises(ValueError, match="smooth_share: .*no ContinuousInput"):
                    BARKStrategy(domain=domain, surrogate_specs=BARKSettings(**settings),
                                 **kwargs)
                continue
            spec = BARKStrategy(domain=domain, surrogate_specs=BARKSettings(**settings),
                                **kwargs)
            rule = type(spec.acquisition_function).__name__
            assert rule == kwargs.get("acquisition_function", {}).get("type", "qUCB")
            assert spec.surrogate_specs.noise_prior == settings.get("noise_prior",
                                                                    "inverse_gamma")
            assert spec.surrogate_specs.smooth_share == settings.get("smooth_share", False)
            assert spec.surrogate_specs.smooth_categories == settings.get(
                "smooth_categories", False)
        # through the modules' own seams: the arm's keywords reach the strategy they build
        for method in ("bark_lognormal", "bark_logei"):
            changes = chem_suite.arm_changes(method)
            if name == "max":
                strategy = max_phases.strategy_of(method, domain, 0, changes)
            elif name == "reaction_synergy":
                continue  # interaction.run_bo builds it; the tiny run below goes through it
            else:
                strategy = chem_bo.strategy_of(name, method, domain, 0, changes)
            assert strategy.surrogate.settings.noise_prior == (
                "lognormal" if method == "bark_lognormal" else "inverse_gamma")
            assert type(strategy.acquisition_function).__name__ == (
                "qLogNEI" if method == "bark_logei" else "qUCB")
    # Sobo on every problem (Tanimoto on the photoswitches; ReactionSynergy without the budget)
    for name in domains:
        domain = chem_suite.problem_domain(name, "sobo") if name == "reaction_synergy" \
            else domains[name]
        if name == "max":
            sobo = max_phases.strategy_of("sobo", domain, 0)
        else:
            sobo = chem_bo.strategy_of(name, "sobo", domain, 0)
        assert type(sobo).__name__ == "SoboStrategy"
    assert "Tanimoto" in type(chem_bo.strategy_of(
        "photoswitch", "sobo", domains["photoswitch"], 0).surrogate_specs.surrogates[0]).__name__
    with pytest.raises(ValueError, match="unknown method"):
        chem_suite.arm_changes("bark_nonsense")


def test_a_tiny_run_resumes_without_redoing_rows(tmp_path):
    kw = {"problems": ["mixture", "reaction_synergy"], "methods": ["bark_logei", "random"],
          "seeds": 1, "iterations": 1, "extra": EXTRA}
    results = chem_suite.run(tmp_path, **kw)
    assert sorted((r["problem"], r["method"], r["status"]) for r in results) == [
        ("mixture", "bark_logei", "done"), ("mixture", "random", "done"),
        ("reaction_synergy", "bark_logei", "done"), ("reaction_synergy", "random", "done")]
    runs = chem_suite.per_run(tmp_path, iterations=1)
    assert len(runs) == 4 and runs.finished.all() and not runs.error.any()
    folder = chem_suite.job_dir(tmp_path, "mixture", "bark_logei", 0)
    assert json.loads((folder / "settings.json").read_text())["changes"][
        "acquisition_function"] == {"type": "qLogNEI"}
    mixture_csv = folder / "mixture" / "runs.csv"
    rows = pd.read_csv(mixture_csv)
    assert list(rows.iteration) == [0] * 12 + [1]
    assert np.allclose(rows.best, np.minimum.accumulate(rows.y))  # a cost: lower is better

    # nothing left at this budget: the second invocation runs no job
    assert chem_suite.run(tmp_path, **kw) == []
    # one run cut after its start: only it runs, and only its missing row is added
    lines = mixture_csv.read_text().splitlines(keepends=True)
    mixture_csv.write_text("".join(lines[:-1]))
    before = mixture_csv.read_bytes()
    again = chem_suite.run(tmp_path, **kw)
    assert [(r["problem"], r["method"]) for r in again] == [("mixture", "bark_logei")]
    assert mixture_csv.read_bytes().startswith(before)
    assert list(pd.read_csv(mixture_csv).iteration) == [0] * 12 + [1]

    # a folder made under other keywords is refused before any job starts
    other = {**EXTRA, "surrogate_specs": {**TINY, "n_trees": 11}}
    with pytest.raises(RuntimeError, match="another --out"):
        chem_suite.run(tmp_path, **{**kw, "extra": other})

    text = chem_suite.summary(tmp_path, iterations=1)
    assert "| mixture | lowest cost found" in text
    assert (tmp_path / "summary.csv").exists() and (tmp_path / "per_run.csv").exists()


def _made_up() -> pd.DataFrame:
    """Eight seeds of bark and sobo on three problems, and one unfinished sobo run."""
    rows = []

    def add(problem, method, values, finished=True):
        for seed, v in enumerate(values):
            rows.append({"problem": problem, "method": method, "seed": seed, "last": 20,
                         "finished": finished, "value": v, "s_per_iteration": 1.0,
                         "error": False})

    # higher is better: bark ahead on 6, behind on 1, tied on 1 -> p = 2 * (1 + 7) / 2^7
    add("crosscoupling", "bark", [0.9, 0.8, 0.7, 0.9, 0.6, 0.8, 0.5, 0.7])
    add("crosscoupling", "sobo", [0.8, 0.7, 0.6, 0.8, 0.5, 0.7, 0.6, 0.7])
    # lower is better, inf = not found (inf against inf ties, found beats inf): bark sooner
    # on 3, later on 4, tied on 1
    inf = np.inf
    add("max", "bark", [10, 20, inf, 5, 30, 40, 50, 45])
    add("max", "sobo", [12, 25, inf, 4, 20, 30, 10, inf])
    # lower is better: sobo cheaper on all 8 -> bark significantly below (p = 2 / 256)
    add("mixture", "bark", [1.2] * 8)
    add("mixture", "sobo", [1.1] * 8)
    add("mixture", "random", [1.3] * 8)
    runs = pd.DataFrame(rows)
    # an unfinished run takes no part in the pairs
    unfinished = runs[(runs.problem == "crosscoupling") & (runs.method == "sobo")].iloc[[0]]
    return pd.concat([runs, unfinished.assign(seed=8, finished=False, value=0.0)],
                     ignore_index=True)


def test_the_summary_pairs_by_seed_and_signs_the_test():
    table, text = chem_suite.summary_text(_made_up())
    t = table.set_index(["problem", "method"])
    cc = t.loc[("crosscoupling", "bark")]
    assert (cc.vs_sobo_better, cc.vs_sobo_tied, cc.vs_sobo_worse) == (6, 1, 1)
    assert np.isclose(cc.vs_sobo_p, 2 * (1 + 7) / 2 ** 7)
    assert t.loc[("crosscoupling", "sobo"), "finished"] == 8
    assert t.loc[("crosscoupling", "sobo"), "runs"] == 9
    back = t.loc[("crosscoupling", "sobo")]
    assert (back.vs_bark_better, back.vs_bark_tied, back.vs_bark_worse) == (1, 1, 6)
    mx = t.loc[("max", "bark")]
    assert (mx.vs_sobo_better, mx.vs_sobo_tied, mx.vs_sobo_worse) == (3, 1, 4)
    assert np.isclose(mx.vs_sobo_p, 1.0)
    assert mx["median"] == 35.0  # 5, 10, 20, 30 | 40, 45, 50, inf
    sobo = t.loc[("max", "sobo")]
    assert (sobo["median"], sobo.q25, sobo.q75) == (22.5, 11.5, np.inf)  # two not found
    assert "| max | iteration the best compound is first held (inf: not found) (lower is " \
        "better) | sobo | 8 of 8 | 22.5 [11.5, not found] |" in text
    mix = t.loc[("mixture", "bark")]
    assert (mix.vs_sobo_better, mix.vs_sobo_worse) == (0, 8)
    assert np.isclose(mix.vs_sobo_p, 2 / 2 ** 8)
    rnd = t.loc[("mixture", "random")]
    assert (rnd.vs_bark_better, rnd.vs_bark_worse, rnd.vs_sobo_worse) == (0, 8, 8)

    check = chem_suite.done_when(table)
    assert check["at_least"] == ["crosscoupling"]  # max: 35 vs 22.5 iterations; mixture: dearer
    assert check["below"] == ["mixture"] and not check["met"]
    assert set(check["missing"]) == {"photoswitch", "reaction_synergy"}
    assert "| crosscoupling | best yield found (higher is better) | bark | 8 of 8 |" in text
    assert "| 6 / 1 / 1 | 0.125 |" in text
    assert "significantly below (Sobo better on more seeds, sign test p < 0.05) on: " \
           "mixture" in text and "Met: no." in text


def test_a_failed_job_is_recorded_and_the_others_go_on(tmp_path, monkeypatch):
    import dataclasses

    def boom(method, seed, iterations, folder, changes):
        raise ValueError("infeasible mixture proposed")

    monkeypatch.setitem(PROBLEMS, "mixture", dataclasses.replace(PROBLEMS["mixture"], run=boom))
    results = chem_suite.run(tmp_path, problems=["mixture", "photoswitch"], methods=["random"],
                             seeds=1, iterations=1)
    assert sorted((r["problem"], r["status"]) for r in results) == [
        ("mixture", "error"), ("photoswitch", "done")]
    error = chem_suite.job_dir(tmp_path, "mixture", "random", 0) / "error.txt"
    assert "infeasible mixture proposed" in error.read_text()
    text = chem_suite.summary(tmp_path, iterations=1)
    assert "stopped with an error (see their `error.txt`): mixture random seed 0." in text
