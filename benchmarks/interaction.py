"""Does BARK understate its uncertainty at category combinations it has never seen, and does
its UCB then fail to explore them? (issue 22, item 3)

The problem, ``ReactionSynergy`` (maximize ``yield``):

- ``solvent`` (categorical: MeCN, DMF, THF, toluene, EtOH), ``catalyst`` (categorical:
  Pd(OAc)2, Pd2dba3, NiCl2, CuI), ``temperature`` (continuous, 25-120 degC),
  ``residence_time`` (continuous, 1-60 min), ``equivalents`` (discrete: 1, 1.2, 1.5, 2, 3);
- constraint ``temperature * residence_time - 5000 <= 0`` (a heat budget; the optimum lies
  inside it);
- true yield ``60 + S[solvent] + C[catalyst] - 20 ((T - 85) / 40)^2 - 3 log(t / 30)^2
  - 4 (e - 1.5)^2 + 28 [solvent = THF and catalyst = NiCl2]`` with main effects
  S = DMF 15, MeCN 9, THF 6, EtOH 3, toluene -8 and C = Pd2dba3 15, Pd(OAc)2 9, NiCl2 6,
  CuI -6; measurements add N(0, 1) noise.

The best pair by main effects, (DMF, Pd2dba3), peaks at 90; the synergy pair (THF, NiCl2)
has mediocre main effects (third of five solvents, third of four catalysts: 72 without the
synergy) and peaks at 100 (T = 85, t = 30, e = 1.5), the global optimum. A model that learns
main effects only never predicts the pair above the plateau; only the uncertainty at a
combination it has not seen can send the UCB there.

Measure A (``uncertainty``): per seed, ``--points`` (14) uniformly random feasible points
without the synergy pair (BoFire's ``RandomStrategy(seed=seed)``, pair rows dropped), a
``BARKSurrogate`` fitted under each configuration (split prior dirichlet / uniform, default
sampling / ``max_sampling_sweeps=6400``, and forests from the prior, ``prior_only``), then
predictions at the 20 (solvent, catalyst) combinations at T = 85, t = 30, e = 1.5: mean,
predictive sd (noise included), sd of the latent mean (``var_latent``), the mean over
posterior samples of each sample's latent sd (the sd the UCB uses) and the integrated UCB
(mean over samples of mean_s + kappa sd_s, kappa 1.96). A combination is "tried" when some
training row has it (at any temperature). Without data the latent sd of f is the output's sd
(the kernel's variance is 1 on standardized y), which the table lists for reference. One
CSV row per (configuration, seed, combination) in ``uncertainty.csv``; a rerun skips the
(configuration, seed) fits already there.

Measure B (``bo``): per seed, 8 random initial points (``RandomStrategy(seed=seed)``; the
same for every configuration, so the pair may already be among them; ``--start no_pair``
draws them without the pair), then ``--iterations`` (20) ``BARKStrategy`` ask(1)/tell steps
with the strategy's defaults and ``--set`` overrides of the surrogate settings (``--kappa``,
``--time-limit`` for the strategy). ``split_prior`` and ``max_sampling_sweeps`` are always
recorded explicitly (from the data model's defaults when not set: those defaults are being
changed), and the folder is named after them: ``bo/<config>/iterations.csv``, one CSV row per
evaluated point (iteration 0: the initial design): the
point, the noisy ``y`` the strategy saw and the true ``y_true``, ``pair`` (this point is the
synergy pair), ``pair_tried`` (so far), ``best`` (running maximum of ``y_true``), the model's
mean, latent sd and UCB at the pair (T = 85, t = 30, e = 1.5) and at the best-UCB tried
combination when the candidate was chosen, fit and ask seconds, the fit's sweeps and R-hat.
Rows are appended as they come; a rerun skips finished seeds and continues an interrupted one
from its saved points (a fresh strategy told all of them: its chains restart with a full
burn-in; ``resumes`` counts the restarts).

``--method sobo`` runs BoFire's ``SoboStrategy`` (its defaults: a GP, qLogNEI) instead, as a
reference for how a GP explores the untried pair; it refuses the heat budget, so it needs
``--no-heat-budget`` (the budget is slack at the optimum; the initial points are the same,
they satisfy it). Its rows leave the BARK-only columns (the model's view of the pair, sweeps,
R-hat) empty. ``--method random`` proposes BoFire's ``RandomStrategy`` points (the heat budget
kept; no model, so the prediction columns are empty too). From Python, ``run_bo``'s
``strategy_kwargs`` may give BARK another ``acquisition_function`` (``kappa`` then only
weighs the pair's UCB in the diagnostic columns).

    python -m benchmarks.interaction uncertainty --out results/interaction
        [--seeds 8] [--points 14] [--configs ...] [--set KEY=VALUE ...]
    python -m benchmarks.interaction bo --out results/interaction [--seeds 12]
        [--iterations 20] [--initial 8] [--set split_prior=uniform ...] [--kappa 1.96]
        [--method bark|sobo|random] [--no-heat-budget] [--name NAME]
    python -m benchmarks.interaction summary --out results/interaction

``summary`` writes ``uncertainty.md`` and ``bo_summary.md`` (and ``.csv``) from the CSVs.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from bofire.benchmarks.api import Benchmark
from bofire.data_models.constraints.api import NonlinearInequalityConstraint
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MaximizeObjective

from benchmarks._common import REPO
from benchmarks.bo import tell_ask
from benchmarks.mixing import _override, append_rows, code_version, describe, read_fits

DEFAULT_OUT = REPO / "results" / "interaction"

# --------------------------------------------------------------------------------------------
# The problem
# --------------------------------------------------------------------------------------------

SOLVENT = {"MeCN": 9.0, "DMF": 15.0, "THF": 6.0, "toluene": -8.0, "EtOH": 3.0}
CATALYST = {"Pd(OAc)2": 9.0, "Pd2dba3": 15.0, "NiCl2": 6.0, "CuI": -6.0}
PAIR = ("THF", "NiCl2")
SYNERGY = 28.0
BASE = 60.0
NOISE_SD = 1.0
# where every combination peaks (the optimum of the continuous and discrete inputs)
GOOD = {"temperature": 85.0, "residence_time": 30.0, "equivalents": 1.5}
EQUIVALENTS = [1.0, 1.2, 1.5, 2.0, 3.0]
HEAT_BUDGET = "temperature * residence_time - 5000"
OPTIMUM = BASE + SOLVENT[PAIR[0]] + CATALYST[PAIR[1]] + SYNERGY  # 100
PLATEAU = BASE + max(SOLVENT.values()) + max(CATALYST.values())  # 90


def true_yield(X: pd.DataFrame) -> np.ndarray:
    """The noiseless yield of rows ``X`` (see the module docstring)."""
    solvent, catalyst = X["solvent"].to_numpy(), X["catalyst"].to_numpy()
    T = X["temperature"].to_numpy(dtype=float)
    t = X["residence_time"].to_numpy(dtype=float)
    e = X["equivalents"].to_numpy(dtype=float)
    return (BASE + np.array([SOLVENT[s] for s in solvent]) + np.array([CATALYST[c] for c in
                                                                       catalyst])
            - 20.0 * ((T - 85.0) / 40.0) ** 2 - 3.0 * np.log(t / 30.0) ** 2
            - 4.0 * (e - 1.5) ** 2 + SYNERGY * is_pair(X))


def is_pair(X: pd.DataFrame) -> np.ndarray:
    return ((X["solvent"] == PAIR[0]) & (X["catalyst"] == PAIR[1])).to_numpy()


def observe(X: pd.DataFrame, seed: int, step: int) -> np.ndarray:
    """Noisy measurements: the noise of a run's step is fixed by (seed, step), so a resumed
    run measures what an uninterrupted one would for the same points."""
    return true_yield(X) + np.random.default_rng([seed, step]).normal(0.0, NOISE_SD, len(X))


class ReactionSynergy(Benchmark):
    """A reaction whose best (solvent, catalyst) pair shows only as an interaction: maximize
    ``yield`` (module docstring). ``f`` adds N(0, ``noise_sd``) noise from ``seed``."""

    def __init__(self, noise_sd: float = NOISE_SD, seed: int | None = None,
                 heat_budget: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.noise_sd = noise_sd
        self._rng = np.random.default_rng(seed)
        self._domain = Domain(
            inputs=Inputs(features=[
                CategoricalInput(key="solvent", categories=list(SOLVENT)),
                CategoricalInput(key="catalyst", categories=list(CATALYST)),
                ContinuousInput(key="temperature", bounds=(25.0, 120.0)),
                ContinuousInput(key="residence_time", bounds=(1.0, 60.0)),
                DiscreteInput(key="equivalents", values=EQUIVALENTS),
            ]),
            outputs=Outputs(features=[ContinuousOutput(key="yield",
                                                       objective=MaximizeObjective())]),
            constraints=Constraints(constraints=[NonlinearInequalityConstraint(
                features=["temperature", "residence_time"], expression=HEAT_BUDGET)]
                if heat_budget else []))

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        y = true_yield(candidates) + self._rng.normal(0.0, self.noise_sd, len(candidates))
        return pd.DataFrame({"yield": y, "valid_yield": 1}, index=candidates.index)

    def get_optima(self) -> pd.DataFrame:
        x = pd.DataFrame([{"solvent": PAIR[0], "catalyst": PAIR[1], **GOOD}])
        return x.assign(**{"yield": true_yield(x)})


def combinations() -> pd.DataFrame:
    """The 20 (solvent, catalyst) combinations at the good conditions ``GOOD``."""
    return pd.DataFrame([{"solvent": s, "catalyst": c, **GOOD}
                         for s in SOLVENT for c in CATALYST])


def random_points(domain, seed: int, n: int) -> pd.DataFrame:
    """``n`` uniformly random feasible points (BoFire's ``RandomStrategy(seed=seed)``)."""
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy

    X = strategies.map(RandomStrategy(domain=domain, seed=seed)).ask(n)
    return X[domain.inputs.get_keys()].reset_index(drop=True)


def combo_summary(posterior, space, X: pd.DataFrame, kappa: float) -> pd.DataFrame:
    """Mean, sds and integrated UCB of ``posterior`` at rows ``X`` (user units)."""
    pred = posterior.predict(space.encode(X))
    sample_sd = np.sqrt(pred["sample_var"])
    return pd.DataFrame({
        "mean": pred["mean"], "sd": np.sqrt(pred["var"]),
        "sd_latent": np.sqrt(pred["var_latent"]), "sd_sample": sample_sd.mean(axis=0),
        "ucb": (pred["sample_mean"] + kappa * sample_sd).mean(axis=0)}, index=X.index)


def _quiet() -> None:
    warnings.filterwarnings("ignore")
    logging.getLogger("bofire_bark").setLevel(logging.ERROR)
    logging.getLogger("arviz").setLevel(logging.ERROR)


def _rhat(fit) -> float:
    if fit is None or not fit.rhat:
        return math.nan
    return float(max(fit.rhat.values()))


# --------------------------------------------------------------------------------------------
# Measure A: uncertainty at tried and untried combinations
# --------------------------------------------------------------------------------------------

UNCERTAINTY_CSV = "uncertainty.csv"
# configuration -> surrogate settings
# every configuration names both settings: the library's defaults of them are being changed
CONFIGS = {
    "dirichlet": {"split_prior": "dirichlet", "max_sampling_sweeps": 0},
    "dirichlet, sweeps 6400": {"split_prior": "dirichlet", "max_sampling_sweeps": 6400},
    "dirichlet, prior only": {"split_prior": "dirichlet", "prior_only": True},
    "uniform": {"split_prior": "uniform", "max_sampling_sweeps": 0},
    "uniform, sweeps 6400": {"split_prior": "uniform", "max_sampling_sweeps": 6400},
    "uniform, prior only": {"split_prior": "uniform", "prior_only": True},
}
UNCERTAINTY_COLUMNS = [
    "config", "seed", "n_points", "solvent", "catalyst", "tried", "n_rows", "synergy",
    "true", "mean", "sd", "sd_latent", "sd_sample", "ucb", "y_sd", "noise_sd", "sweeps",
    "rhat_max", "fit_s", "settings", "code"]
KAPPA = 1.96


def points_without_pair(seed: int, n: int) -> pd.DataFrame:
    """The first ``n`` of ``4 n`` random feasible points that are not the synergy pair."""
    X = random_points(ReactionSynergy().domain, seed, 4 * n)
    X = X[~is_pair(X)].iloc[:n].reset_index(drop=True)
    if len(X) < n:
        raise ValueError(f"only {len(X)} points without the pair for n = {n}")
    return X


def training_set(seed: int, n: int) -> pd.DataFrame:
    """``points_without_pair`` with noisy yields (``yield``, ``valid_yield``)."""
    X = points_without_pair(seed, n)
    return X.assign(**{"yield": observe(X, seed, 0), "valid_yield": 1})


def uncertainty_case(config: str, seed: int, data: pd.DataFrame,
                     overrides: dict | None = None) -> list[dict]:
    """One fit on ``data`` under ``CONFIGS[config]`` (plus ``overrides``): 20 rows."""
    import bofire.surrogates.api as surrogates

    from bofire_bark.data_models import BARKSurrogate

    domain = ReactionSynergy().domain
    settings = {**CONFIGS[config], **(overrides or {})}
    sur = surrogates.map(BARKSurrogate(inputs=domain.inputs, outputs=domain.outputs,
                                       seed=seed, **settings))
    start = time.perf_counter()
    sur.fit(data)
    seconds = time.perf_counter() - start
    grid = combinations()
    out = combo_summary(sur.posterior, sur.space, grid, KAPPA)
    seen = data.groupby(["solvent", "catalyst"]).size()
    post = sur.posterior
    rows = []
    for i, r in grid.iterrows():
        rows.append({
            "config": config, "seed": seed, "n_points": len(data), "solvent": r.solvent,
            "catalyst": r.catalyst, "tried": (r.solvent, r.catalyst) in seen.index,
            "n_rows": int(seen.get((r.solvent, r.catalyst), 0)),
            "synergy": (r.solvent, r.catalyst) == PAIR,
            "true": float(true_yield(grid.iloc[[i]])[0]), **out.loc[i].to_dict(),
            "y_sd": post.y_std,
            "noise_sd": float(np.sqrt(post.samples["sigma2"]).mean() * post.y_std),
            "sweeps": sur.last_fit.sweeps, "rhat_max": _rhat(sur.last_fit), "fit_s": seconds})
    return rows


def run_uncertainty(out_dir: Path | str = DEFAULT_OUT, seeds=range(8), n_points: int = 14,
                    configs=tuple(CONFIGS), overrides: dict | None = None,
                    verbose: bool = True) -> int:
    """Every (configuration, seed) fit not yet in ``uncertainty.csv``; returns fits added."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / UNCERTAINTY_CSV
    settings = describe(overrides)
    done = set()
    if path.exists():
        old = read_fits(path)
        other = set(old["settings"]) - {settings}
        if other or set(old["n_points"]) != {n_points}:
            raise SystemExit(f"{path} holds rows made with other settings or sizes; use "
                             "another --out")
        done = set(zip(old["config"], old["seed"], strict=True))
    code = code_version()
    _quiet()
    added = 0
    for seed in seeds:
        data = training_set(seed, n_points)
        for config in configs:
            if (config, seed) in done:
                continue
            rows = uncertainty_case(config, seed, data, overrides)
            for r in rows:
                r.update(settings=settings, code=code)
            append_rows(path, rows, UNCERTAINTY_COLUMNS)
            added += 1
            if verbose:
                df = pd.DataFrame(rows)
                print(f"seed {seed} {config:24s}: sd_latent tried "
                      f"{df.loc[df.tried, 'sd_latent'].mean():.2f} untried "
                      f"{df.loc[~df.tried, 'sd_latent'].mean():.2f} pair "
                      f"{df.loc[df.synergy, 'sd_latent'].iloc[0]:.2f}; "
                      f"{rows[0]['fit_s']:.1f} s, {rows[0]['sweeps']} sweeps", flush=True)
    return added


def kappa_to_lead(mean: np.ndarray, sd: np.ndarray, i: int) -> float:
    """The smallest kappa at which row ``i``'s mean + kappa sd exceeds every other row's
    (inf if some row is no lower in mean and no lower in sd). The integrated UCB is linear in
    kappa: the mean of the sample means plus kappa times the mean of the samples' sds."""
    need = 0.0
    for j in range(len(mean)):
        if j == i or mean[j] < mean[i]:
            continue
        if sd[j] >= sd[i]:
            return math.inf
        need = max(need, (mean[j] - mean[i]) / (sd[i] - sd[j]))
    return need


def uncertainty_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: medians over seeds of the per-fit averages at tried and untried
    combinations, and how the synergy pair's UCB ranks among the 20."""
    per_fit = []
    for (config, seed), sub in df.groupby(["config", "seed"], sort=False):
        tried, untried, pair = sub[sub.tried], sub[~sub.tried], sub[sub.synergy].iloc[0]
        rank = int((sub["ucb"] > pair["ucb"]).sum()) + 1
        lead = kappa_to_lead(sub["mean"].to_numpy(), sub["sd_sample"].to_numpy(),
                             int(np.flatnonzero(sub["synergy"].to_numpy())[0]))
        per_fit.append({
            "config": config, "seed": seed, "n_tried": len(tried), "y_sd": pair["y_sd"],
            **{f"{q}_{part}": s[q].mean() for q in ("sd", "sd_latent", "sd_sample")
               for part, s in (("tried", tried), ("untried", untried))},
            "sd_latent_pair": pair["sd_latent"], "sd_sample_pair": pair["sd_sample"],
            "mean_pair": pair["mean"], "ucb_rank_pair": rank,
            "pair_beats_tried": bool(pair["ucb"] > tried["ucb"].max()), "kappa_lead": lead,
            "mean_best_tried": tried["mean"].max(), "rhat_max": pair["rhat_max"],
            "sweeps": pair["sweeps"], "fit_s": pair["fit_s"]})
    per_fit = pd.DataFrame(per_fit)
    rows = []
    for config, sub in per_fit.groupby("config", sort=False):
        med = sub.drop(columns=["config", "seed"]).median(numeric_only=True)
        rows.append({"config": config, "fits": len(sub),
                     **med.to_dict(),
                     "ratio_latent": (sub["sd_latent_untried"] / sub["sd_latent_tried"]).median(),
                     "ratio_sample": (sub["sd_sample_untried"] / sub["sd_sample_tried"]).median(),
                     "pair_beats_tried": int(sub["pair_beats_tried"].sum()),
                     "kappa_finite": int(np.isfinite(sub["kappa_lead"]).sum()),
                     "kappa_lead_finite": sub.loc[np.isfinite(sub["kappa_lead"]),
                                                  "kappa_lead"].median()})
    return pd.DataFrame(rows)


def uncertainty_summary(out_dir: Path | str = DEFAULT_OUT) -> str:
    out_dir = Path(out_dir)
    df = read_fits(out_dir / UNCERTAINTY_CSV)
    for col in ("tried", "synergy"):
        df[col] = df[col].astype(str).str.lower().isin(("true", "1"))
    order = [c for c in CONFIGS if c in set(df["config"])]
    df["config"] = pd.Categorical(df["config"], order)
    table = uncertainty_table(df.sort_values(["config", "seed"]))
    table.to_csv(out_dir / "uncertainty_table.csv", index=False)
    seeds = sorted(df["seed"].unique())
    lines = [
        "# Uncertainty at tried and untried (solvent, catalyst) combinations",
        "",
        "Generated by `python -m benchmarks.interaction summary` from "
        f"`{UNCERTAINTY_CSV}` (see `benchmarks/interaction.py`). ReactionSynergy, "
        f"{int(df['n_points'].iloc[0])} random points without the synergy pair "
        f"{PAIR} per seed (seeds {', '.join(map(str, seeds))}); the same points for every "
        "configuration. Predictions at the 20 combinations at T = 85, t = 30, e = 1.5 "
        f"(the pair: true yield {OPTIMUM:.0f}; the best combination by main effects: "
        f"{PLATEAU:.0f}). Medians over seeds of each fit's average over the tried and "
        "the untried combinations (\"tried\": some training row has the combination, at any "
        "temperature). sd: predictive (noise included); latent: sd of the latent mean "
        "(`var_latent`, the mixture over samples); per-sample: the mean over posterior samples "
        "of each sample's latent sd, the sd the UCB uses. `y sd`: the training outputs' sd, "
        "which is the latent sd of f before any data (kernel variance 1 on standardized y). "
        "`pair rank`: the synergy pair's integrated UCB (kappa 1.96) among the 20 "
        "combinations (1 = highest); `pair > tried`: fits in which the pair's UCB beats every "
        "tried combination's; `kappa to lead`: the smallest kappa at which the pair's UCB "
        "would be the highest of the 20, median over fits (inf: some combination is no lower in "
        "mean and sd), and in brackets the fits where some kappa would do and their median. "
        "Code: "
        + ", ".join(f"{c} ({k // 20} fits)" for c, k in df["code"].value_counts().items()) + ".",
        "",
        "| configuration | fits | tried | y sd | sd tried | sd untried | latent tried | "
        "latent untried | latent pair | untried / tried (latent) | per-sample tried | "
        "per-sample untried | per-sample pair | untried / tried (per-sample) | pair mean | "
        "best tried mean | pair rank | pair > tried | kappa to lead | sweeps | max R-hat | "
        "s per fit |",
        "|---|" + "---|" * 21,
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.config} | {r.fits} | {r.n_tried:.0f} | {r.y_sd:.1f} | {r.sd_tried:.2f} | "
            f"{r.sd_untried:.2f} | {r.sd_latent_tried:.2f} | {r.sd_latent_untried:.2f} | "
            f"{r.sd_latent_pair:.2f} | {r.ratio_latent:.2f} | {r.sd_sample_tried:.2f} | "
            f"{r.sd_sample_untried:.2f} | {r.sd_sample_pair:.2f} | {r.ratio_sample:.2f} | "
            f"{r.mean_pair:.1f} | {r.mean_best_tried:.1f} | {r.ucb_rank_pair:.0f} | "
            f"{r.pair_beats_tried} of {r.fits} | {r.kappa_lead:.1f} ({r.kappa_finite}: "
            f"{r.kappa_lead_finite:.1f}) | {r.sweeps:.0f} | "
            + ("-" if pd.isna(r.rhat_max) else f"{r.rhat_max:.2f}") + f" | {r.fit_s:.1f} |")
    text = "\n".join(lines) + "\n"
    (out_dir / "uncertainty.md").write_text(text)
    return text


# --------------------------------------------------------------------------------------------
# Measure B: BO runs
# --------------------------------------------------------------------------------------------

BO_CSV = "iterations.csv"
STARTS = ("random", "no_pair")
METHODS = ("bark", "sobo", "random")
# surrogate settings every run records explicitly (taken from the data model's defaults when
# not set), so a change of those defaults cannot slip into a configuration's folder
PINNED = ("split_prior", "max_sampling_sweeps")


def pinned(overrides: dict | None) -> dict:
    """``overrides`` with ``PINNED`` settings filled in from the data model's defaults."""
    from bofire_bark.data_models import BARKSettings

    fields = BARKSettings.model_fields
    return {**{k: fields[k].default for k in PINNED}, **(overrides or {})}
INPUTS = ["solvent", "catalyst", "temperature", "residence_time", "equivalents"]
BO_COLUMNS = [
    "config", "seed", "iteration", *INPUTS, "y", "y_true", "pair", "pair_tried", "best",
    "pred", "pred_sd", "pair_mean", "pair_sd_latent", "pair_ucb", "top_tried_ucb", "fit_s",
    "ask_s", "sweeps", "rhat_max", "resumes", "settings", "kappa", "code"]


def config_name(overrides: dict | None, kappa: float = KAPPA, start: str = "random",
                method: str = "bark", heat_budget: bool = True) -> str:
    """A folder name from the overrides: ``defaults``, ``split_prior=uniform``, ..."""
    parts = [f"{k}={v}" for k, v in sorted((overrides or {}).items())]
    if method != "bark":
        parts.append(f"method={method}")
    if not heat_budget:
        parts.append("heat_budget=off")
    if kappa != KAPPA:
        parts.append(f"kappa={kappa:g}")
    if start != "random":
        parts.append(f"start={start}")
    return ",".join(parts) or "defaults"


def read_bo(path: Path) -> pd.DataFrame:
    # category names stay strings; a commit's short hash is text even when all digits
    return pd.read_csv(path, keep_default_na=False, na_values=[""],
                       dtype={"code": str, "settings": str})


def _pair_state(strategy, tried: set, kappa: float) -> dict:
    """The model's view of the synergy pair and of the best tried combination, at the good
    conditions, when the candidate was chosen (the UCB with weight ``kappa``, whatever rule
    chose the candidate)."""
    grid = combinations()
    out = combo_summary(strategy.surrogate.posterior, strategy.space, grid, kappa)
    pair = out[is_pair(grid)].iloc[0]
    seen = [(s, c) in tried for s, c in zip(grid["solvent"], grid["catalyst"], strict=True)]
    return {"pair_mean": pair["mean"], "pair_sd_latent": pair["sd_latent"],
            "pair_ucb": pair["ucb"],
            "top_tried_ucb": out.loc[seen, "ucb"].max() if any(seen) else math.nan}


def run_seed(seed: int, path: Path, rows: list[dict], n_initial: int, n_iterations: int,
             overrides: dict | None, kappa: float, strategy_kwargs: dict,
             common: dict, start: str = "random", method: str = "bark",
             heat_budget: bool = True) -> None:
    """Run (or continue from ``rows``) one BO run, appending each new point to ``path``."""
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy, SoboStrategy

    import bofire_bark  # noqa: F401  (registers BARK with BoFire)
    from bofire_bark.data_models import BARKSettings, BARKStrategy

    domain = ReactionSynergy(heat_budget=heat_budget).domain
    bark = method == "bark"
    if bark:
        # kappa is the UCB's weight: another acquisition_function replaces it
        weight = {} if "acquisition_function" in strategy_kwargs else {"kappa": kappa}
        spec = BARKStrategy(domain=domain, seed=seed,
                            surrogate_specs=BARKSettings(**(overrides or {})),
                            **weight, **strategy_kwargs)
    elif method == "random":
        # not the initial design's stream (RandomStrategy(seed) drew it), and a resumed run
        # does not replay its earlier picks
        stream = int(np.random.SeedSequence([seed, len(rows)]).generate_state(1)[0])
        spec = RandomStrategy(domain=domain, seed=stream, **strategy_kwargs)
    else:
        spec = SoboStrategy(domain=domain, seed=seed, **strategy_kwargs)
    strategy = strategies.map(spec)
    base = {"config": common["config"], "seed": seed, "settings": common["settings"],
            "kappa": kappa, "code": common["code"]}
    if not rows:
        # no_pair: every run has to find the pair by itself (a random start has it in about
        # a third of the runs, 1 - (19/20)^8)
        X0 = (random_points(domain, seed, n_initial) if start == "random"
              else points_without_pair(seed, n_initial))
        y0, t0 = observe(X0, seed, 0), true_yield(X0)
        pair0 = is_pair(X0)
        for i in range(n_initial):
            rows.append({**base, "iteration": 0, **X0.iloc[i].to_dict(), "y": y0[i],
                         "y_true": t0[i], "pair": pair0[i],
                         "pair_tried": bool(pair0[: i + 1].any()),
                         "best": t0[: i + 1].max(), "resumes": 0})
        append_rows(path, rows, BO_COLUMNS)
    done = pd.DataFrame(rows)
    experiments = done[INPUTS].assign(**{"yield": done["y"].astype(float), "valid_yield": 1})
    tried = set(zip(done["solvent"], done["catalyst"], strict=True))
    pair_tried = bool(done["pair"].astype(str).str.lower().isin(("true", "1")).any())
    best = float(done["best"].astype(float).iloc[-1])
    first = int(done["iteration"].max()) + 1
    resumes = int(pd.to_numeric(done["resumes"]).max()) + (first > 1)
    new = experiments
    for it in range(first, n_iterations + 1):
        step = tell_ask(strategy, new, INPUTS, domain)
        cand, X = step.candidate, step.X
        state = _pair_state(strategy, tried, kappa) if bark else {}
        y, y_true, pair = observe(X, seed, it)[0], true_yield(X)[0], bool(is_pair(X)[0])
        pair_tried |= pair
        best = max(best, float(y_true))
        fit = strategy.surrogate.last_fit if bark else None
        row = {**base, "iteration": it, **X.iloc[0].to_dict(), "y": y, "y_true": y_true,
               "pair": pair, "pair_tried": pair_tried, "best": best,
               # random picks come without predictions
               "pred": float(cand["yield_pred"].iloc[0]) if "yield_pred" in cand else math.nan,
               "pred_sd": float(cand["yield_sd"].iloc[0]) if "yield_sd" in cand else math.nan,
               **state, "fit_s": step.fit_time,
               "ask_s": step.acq_time, "sweeps": fit.sweeps if fit else math.nan,
               "rhat_max": _rhat(fit), "resumes": resumes}
        append_rows(path, [row], BO_COLUMNS)
        tried.add((X["solvent"].iloc[0], X["catalyst"].iloc[0]))
        new = X.assign(**{"yield": y, "valid_yield": 1})


def run_bo(out_dir: Path | str = DEFAULT_OUT, seeds=range(12), n_initial: int = 8,
           n_iterations: int = 20, overrides: dict | None = None, kappa: float = KAPPA,
           name: str | None = None, strategy_kwargs: dict | None = None,
           start: str = "random", verbose: bool = True, method: str = "bark",
           heat_budget: bool = True) -> Path:
    """Every seed of one configuration not yet finished in ``bo/<name>/iterations.csv``;
    ``start`` "random" (the initial points as drawn) or "no_pair" (drawn without the pair);
    ``method`` "bark", "sobo" (BoFire's GP strategy, which needs ``heat_budget=False``) or
    "random" (BoFire's ``RandomStrategy``)."""
    if start not in STARTS:
        raise ValueError(f"start {start!r}; choose from {STARTS}")
    if method not in METHODS:
        raise ValueError(f"method {method!r}; choose from {METHODS}")
    if method == "bark":
        overrides = pinned(overrides)
    elif overrides or kappa != KAPPA:
        raise ValueError(f"--set and --kappa are BARK's; method {method!r} runs BoFire's "
                         "defaults")
    elif method == "sobo" and heat_budget:
        raise ValueError("SoboStrategy refuses the nonlinear heat budget: pass "
                         "--no-heat-budget (heat_budget=False)")
    name = name or config_name(overrides, kappa, start, method, heat_budget)
    folder = Path(out_dir) / "bo" / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / BO_CSV
    settings = describe({**(overrides or {}), **(strategy_kwargs or {}),
                         **({} if start == "random" else {"start": start}),
                         **({} if method == "bark" else {"method": method}),
                         **({} if heat_budget else {"heat_budget": False})})
    old = read_bo(path) if path.exists() else pd.DataFrame(columns=BO_COLUMNS)
    if len(old) and (set(old["settings"]) != {settings} or set(old["kappa"]) != {kappa}):
        raise SystemExit(f"{path} holds rows made with other settings; use another --name")
    common = {"config": name, "settings": settings, "code": code_version()}
    _quiet()
    for seed in seeds:
        rows = old[old["seed"] == seed].to_dict("records")
        if rows and max(r["iteration"] for r in rows) >= n_iterations:
            continue
        began = time.perf_counter()
        run_seed(seed, path, rows, n_initial, n_iterations, overrides, kappa,
                 strategy_kwargs or {}, common, start, method, heat_budget)
        if verbose:
            run = read_bo(path)
            run = run[run["seed"] == seed]
            first = run.loc[run["pair"].astype(str).str.lower() == "true", "iteration"]
            print(f"{name} seed {seed}: best {run['best'].iloc[-1]:.1f}, pair "
                  + (f"first at iteration {first.min()}" if len(first) else "never tried")
                  + f" ({time.perf_counter() - began:.0f} s)", flush=True)
    return path


def bo_table(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per run: final best, first iteration with the pair (NaN: never), whether the initial
    design had it; per configuration: the summary over its finished runs."""
    df = df.copy()
    df["pair"] = df["pair"].astype(str).str.lower().isin(("true", "1"))
    runs = []
    for (config, seed), sub in df.groupby(["config", "seed"], sort=False):
        hit = sub.loc[sub["pair"], "iteration"]
        runs.append({"config": config, "seed": seed, "iterations": int(sub["iteration"].max()),
                     "final_best": float(sub["best"].iloc[-1]),
                     "first_pair": float(hit.min()) if len(hit) else math.nan,
                     "pair_initial": bool(len(hit) and hit.min() == 0),
                     "pair_tries": int(sub["pair"].sum()),
                     "fit_s": sub["fit_s"].median(), "ask_s": sub["ask_s"].median(),
                     # Sobo's rows have no sweeps ("nan")
                     "sweeps": pd.to_numeric(sub["sweeps"], errors="coerce").median()})
    runs = pd.DataFrame(runs)
    rows = []
    for config, sub in runs.groupby("config", sort=False):
        full = sub[sub["iterations"] == sub["iterations"].max()]
        later = full[~full["pair_initial"]]
        found = later["first_pair"].notna()
        rows.append({
            "config": config, "runs": len(full), "iterations": int(full["iterations"].max()),
            "seeds": " ".join(map(str, sorted(full["seed"]))),
            "tried": int(full["first_pair"].notna().sum()),
            "initial": int(full["pair_initial"].sum()),
            "bo_found": int(found.sum()), "bo_runs": len(later),
            "first_bo_iteration": later.loc[found, "first_pair"].median(),
            "median_best": full["final_best"].median(),
            "q25_best": full["final_best"].quantile(0.25),
            "q75_best": full["final_best"].quantile(0.75),
            "near_optimum": int((full["final_best"] >= OPTIMUM - 5).sum()),
            "fit_s": full["fit_s"].median(), "ask_s": full["ask_s"].median(),
            "sweeps": full["sweeps"].median()})
    return runs, pd.DataFrame(rows)


def bo_summary(out_dir: Path | str = DEFAULT_OUT) -> str:
    out_dir = Path(out_dir)
    paths = sorted((out_dir / "bo").glob(f"*/{BO_CSV}"))
    df = pd.concat([read_bo(p) for p in paths], ignore_index=True)
    runs, table = bo_table(df)
    runs.to_csv(out_dir / "bo_runs.csv", index=False)
    table.to_csv(out_dir / "bo_summary.csv", index=False)
    lines = [
        "# BO on ReactionSynergy: does BARK try the synergy pair?",
        "",
        "Generated by `python -m benchmarks.interaction summary` from "
        "`bo/<config>/iterations.csv` (see `benchmarks/interaction.py`). Per seed "
        "8 random initial points (the same for every configuration), then BARKStrategy "
        f"ask(1)/tell, strategy defaults except the configuration's overrides. Optimum "
        f"{OPTIMUM:.0f} at {PAIR}; the best other pair peaks at {PLATEAU:.0f}. `tried`: runs "
        "that evaluated the pair at all; `in initial`: of those, runs whose random start "
        "already had it; `found by BO`: runs that tried it in a BO iteration, of the runs "
        "whose start did not have it, and the median BO iteration of the first try; "
        f"`best`: the true (noiseless) yield of the best point, median [quartiles]; "
        f"`>= {OPTIMUM - 5:.0f}`: runs ending within 5 of the optimum. Only runs with the "
        "configuration's full number of iterations are counted.",
        "",
        "| configuration | runs | iterations | tried | in initial | found by BO | first BO "
        f"iteration | best | >= {OPTIMUM - 5:.0f} | s fit | s ask | sweeps |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        first = "-" if pd.isna(r.first_bo_iteration) else f"{r.first_bo_iteration:.0f}"
        lines.append(
            f"| {r.config} | {r.runs} | {r.iterations} | {r.tried} of {r.runs} | {r.initial} | "
            f"{r.bo_found} of {r.bo_runs} | {first} | {r.median_best:.1f} [{r.q25_best:.1f}, "
            f"{r.q75_best:.1f}] | {r.near_optimum} | {r.fit_s:.1f} | {r.ask_s:.1f} | "
            f"{r.sweeps:.0f} |")
    lines += ["", "## Per seed: final best (first iteration with the pair; - never)", ""]
    configs = list(table["config"])
    seeds = sorted(runs["seed"].unique())
    lines += ["| seed | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]
    by = runs.set_index(["config", "seed"])
    for seed in seeds:
        cells = []
        for c in configs:
            if (c, seed) not in by.index:
                cells.append("")
                continue
            r = by.loc[(c, seed)]
            first = "-" if pd.isna(r.first_pair) else f"{r.first_pair:.0f}"
            cells.append(f"{r.final_best:.1f} ({first})"
                         + ("" if r.iterations == table.set_index("config").loc[
                             c, "iterations"] else f" [{r.iterations} it]"))
        lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (out_dir / "bo_summary.md").write_text(text)
    return text


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.interaction",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    u = sub.add_parser("uncertainty", help="Measure A: sds at tried and untried combinations")
    u.add_argument("--out", type=Path, default=DEFAULT_OUT)
    u.add_argument("--seeds", type=int, default=8, help="seeds first-seed..first-seed+k-1")
    u.add_argument("--first-seed", type=int, default=0)
    u.add_argument("--points", type=int, default=14)
    u.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    u.add_argument("--set", nargs="+", type=_override, default=[], metavar="KEY=VALUE",
                   help="override surrogate settings of every configuration")
    b = sub.add_parser("bo", help="Measure B: BO runs of one configuration")
    b.add_argument("--out", type=Path, default=DEFAULT_OUT)
    b.add_argument("--seeds", type=int, default=12, help="seeds first-seed..first-seed+k-1")
    b.add_argument("--first-seed", type=int, default=0)
    b.add_argument("--initial", type=int, default=8)
    b.add_argument("--iterations", type=int, default=20)
    b.add_argument("--set", nargs="+", type=_override, default=[], metavar="KEY=VALUE",
                   help="override surrogate settings (e.g. split_prior=uniform)")
    b.add_argument("--kappa", type=float, default=KAPPA)
    b.add_argument("--time-limit", type=float, default=None,
                   help="the strategy's search seconds per candidate (default: its own)")
    b.add_argument("--start", default="random", choices=STARTS,
                   help="initial points as drawn, or drawn without the synergy pair")
    b.add_argument("--method", default="bark", choices=METHODS,
                   help="BARKStrategy, or BoFire's SoboStrategy as a reference")
    b.add_argument("--no-heat-budget", action="store_true",
                   help="drop the heat-budget constraint (Sobo refuses it)")
    b.add_argument("--name", default=None, help="folder under bo/ (default: from --set)")
    s = sub.add_parser("summary", help="uncertainty.md and bo_summary.md from the CSVs")
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.what == "uncertainty":
        run_uncertainty(args.out, range(args.first_seed, args.first_seed + args.seeds),
                        args.points, args.configs, dict(args.set) or None)
        print(uncertainty_summary(args.out))
    elif args.what == "bo":
        kwargs = {} if args.time_limit is None else {"time_limit": args.time_limit}
        run_bo(args.out, range(args.first_seed, args.first_seed + args.seeds), args.initial,
               args.iterations, dict(args.set) or None, args.kappa, args.name, kwargs,
               args.start, method=args.method, heat_budget=not args.no_heat_budget)
    else:
        out = Path(args.out)
        if (out / UNCERTAINTY_CSV).exists():
            print(uncertainty_summary(out))
        if list((out / "bo").glob(f"*/{BO_CSV}")):
            print(bo_summary(out))


if __name__ == "__main__":
    main()
