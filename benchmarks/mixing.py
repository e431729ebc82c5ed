"""Do BARK's chains mix on the small data sets of a BO run? R-hat and ESS per fit, by split
prior, data size and fit kind, with the surrogate's default MCMC settings.

The mixing warning of ``BARKSurrogate`` (any R-hat of ``diagnostics.CONVERGENCE_VARS`` above
``diagnostics.RHAT_WARN``) fires on most small fits under the sparse split prior. This study
measures how often, on which quantity the chains disagree most, and what a fit costs, before
any default changes.

A case is one (benchmark, N, split prior, fit kind, seed):

- the points are the first N of a pool of ``max(POOL, N)`` uniformly random feasible points of
  the benchmark's domain (BoFire's ``RandomStrategy(seed=seed)``, which respects constraints),
  so both priors and both fit kinds of a seed see the same data and larger N extend smaller;
- ``first``: a new ``BARKSurrogate`` (the data model's defaults: 50 trees, 4 chains x 4
  samples, thinning 100, burn-in 1000, ``seed=seed``) fitted on the N points;
- ``warm``: a new surrogate fitted on the first ``n_prefit`` points (N - 5, or N / 2 for
  N <= 10), then fitted again on all N, which continues its chains with
  ``warm_start_burn_in`` (default 0) sweeps of burn-in, as BO does between iterations. Only
  the refit is measured.

Random points are not BO's points (which cluster near the incumbent as a run goes on); the
study isolates the sampler from the acquisition.

Besides the study benchmarks (``benchmarks.functions.BENCHMARKS``), ``--benchmarks`` takes the
chemistry problems of ``CHEM_PROBLEMS`` (issue 38), each built by its own study module and
run at BO sizes (``--sizes 10 20 30``):

- ``CrossCoupling`` (``chem_bo.make_problem("crosscoupling")``): BoFire's emulator, catalyst
  and base as descriptor inputs and three continuous inputs, its ``yield``; BoFire's
  ``RandomStrategy(seed)`` points. Building the emulator fits a GP (about 30 s), so a seed's
  pool is kept in ``POOL_DIR/CrossCoupling_seed<k>_n<size>.csv`` and read back by later runs
  (every lever then fits the same points without building the emulator again).
- ``MAXPhases`` (``max_phases``): the 402 compounds as one descriptor input, bulk modulus
  ``y``; a seed's pool starts with its BO run's 30 starting compounds
  (``initial_compounds``), further ones drawn without repeats.
- ``Mixture`` (``chem_suite.Mixture``): six fractions summing to one, at most three used;
  ``RandomStrategy(seed)`` points, the cost.
- ``ReactionSynergy`` (``interaction``): solvent and catalyst as categorical labels, the heat
  budget kept; ``interaction.random_points`` and the noisy yield ``interaction.observe(X,
  seed, 0)`` (noise fixed by the seed).

Per fit: R-hat (rank-normalized split R-hat, ArviZ's default) and bulk ESS over the chains'
traces (every sweep after burn-in) of the log marginal likelihood and noise variance (what
``diagnostics.convergence`` reports and the warning reads), the leaves per tree and, under the
sparse prior, the Dirichlet concentration; for the per-input split probabilities (sparse prior)
and shares of the forest's splits, the largest and the median R-hat over the inputs (inputs
whose trace is constant in every chain have no R-hat and are left out); ``warn``, whether the
surrogate's warning fired; wall time ``fit_s`` and process CPU time ``cpu_s`` (all threads) of
the measured fit. One CSV row per case, appended as it finishes; a rerun skips the cases that
are in the CSV, so the study can be stopped and restarted (or extended with more seeds).

    python -m benchmarks.mixing run --out results/mixing [--benchmarks ...]
        [--sizes 10 20 40 60] [--seeds 3] [--priors dirichlet uniform] [--fits first warm]
        [--set burn_in=3000 ...]
    python -m benchmarks.mixing summary --out results/mixing
    python -m benchmarks.mixing compare --out results/mixing --variants DIR ...
    python -m benchmarks.mixing chains --benchmark Hartmann6 --n 20 [--seed 0]
    python -m benchmarks.mixing run --out results/mixing/chemistry --sizes 10 20 30
        --seeds 5 --priors dirichlet --benchmarks CrossCoupling MAXPhases Mixture
        ReactionSynergy

``--set`` overrides surrogate settings (recorded in the ``settings`` column; one CSV holds
one setting, so use another ``--out`` for each). ``summary`` writes ``summary.md`` and
``summary.csv`` next to ``fits.csv``; ``compare`` writes ``levers.md``, the study against such
runs on the cases they share; ``chains`` prints how the chains of one sparse-prior fit
differ (concentration, likelihood, inputs of largest split probability).
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import logging
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import _common
from benchmarks._common import REPO
from benchmarks.functions import BENCHMARKS, make_benchmark
from bofire_bark import diagnostics

DEFAULT_OUT = REPO / "results" / "mixing"
CSV_NAME = "fits.csv"
SIZES = (10, 20, 40, 60)
PRIORS = ("dirichlet", "uniform")
FITS = ("first", "warm")
POOL = 60  # points drawn per (benchmark, seed); N <= POOL takes a prefix, so sizes nest
WARM_STEP = 5  # points added before a warm refit, as a few BO iterations would
KEY = ["benchmark", "n", "prior", "fit", "seed"]
SCALARS = ("log_marginal_likelihood", "noise_var", "leaves_per_tree", "split_concentration")
VECTORS = ("split_prob", "split_share")
COLUMNS = KEY + [
    "n_prefit", "n_inputs", "warn",
    *[f"{q}_{s}" for q in SCALARS for s in ("rhat", "ess")],
    *[f"{q}_rhat_{s}" for q in VECTORS for s in ("max", "median")],
    "leaves_per_tree_mean", "split_concentration_mean", "fit_s", "cpu_s", "settings", "code",
]
# the paths whose changes alter what a fit does (another engineer edits optimize/ meanwhile)
CODE_PATHS = ("bofire_bark/engine", "bofire_bark/surrogate.py", "bofire_bark/diagnostics.py",
              "bofire_bark/data_models/surrogate.py", "bofire_bark/space")


def code_version() -> str:
    """HEAD's short hash, plus a digest of uncommitted changes to the fitting code if any."""
    return _common.code_version(CODE_PATHS)


def describe(overrides: dict | None) -> str:
    """The settings column: the overrides of the data model's defaults, as sorted JSON."""
    return json.dumps(dict(sorted((overrides or {}).items()))) if overrides else "default"


def budget(settings: str) -> tuple[int, int]:
    """(chains, traced sweeps per chain) of a ``settings`` column value."""
    from bofire_bark.data_models.surrogate import BARKSettings

    fields = {k: f.default for k, f in BARKSettings.model_fields.items()}
    if settings != "default":
        fields.update(json.loads(settings))
    return fields["n_chains"], fields["n_samples"] * fields["thinning"]


def n_prefit(n: int) -> int:
    return n // 2 if n <= 2 * WARM_STEP else n - WARM_STEP


# --------------------------------------------------------------------------------------------
# Chemistry problems (descriptor and categorical inputs), built by their own study modules
# --------------------------------------------------------------------------------------------

CHEM_PROBLEMS = ("CrossCoupling", "MAXPhases", "Mixture", "ReactionSynergy")
POOL_DIR = DEFAULT_OUT / "pools"  # pools of the problems whose outputs are slow to compute


@dataclass(frozen=True)
class ChemProblem:
    """A chemistry problem as the study reads a benchmark: its ``domain`` (one output) and
    ``draw(seed, size)``, ``size`` points of a seed with the output column."""

    name: str
    domain: object
    draw: Callable[[int, int], pd.DataFrame]


def _crosscoupling() -> ChemProblem:
    from benchmarks import chem_bo

    problem = chem_bo.make_problem("crosscoupling")  # fits the emulator's GP
    domain = problem.domain(set())

    def draw(seed: int, size: int) -> pd.DataFrame:
        path = POOL_DIR / f"CrossCoupling_seed{seed}_n{size}.csv"
        if path.exists():
            return pd.read_csv(path)
        X = point_pool_of(domain, seed, size)
        pool = X.assign(**{"yield": problem.evaluate(X)})
        path.parent.mkdir(parents=True, exist_ok=True)
        pool.to_csv(path, index=False)
        return pool

    return ChemProblem("CrossCoupling", domain, draw)


def _max_phases() -> ChemProblem:
    from benchmarks import max_phases

    data = max_phases.load()

    def draw(seed: int, size: int) -> pd.DataFrame:
        rows = list(max_phases.initial_compounds(len(data), seed))[:size]
        rest = np.setdiff1d(np.arange(len(data)), rows)
        rng = np.random.default_rng([seed, 1])
        rows += list(rng.choice(rest, max(0, size - len(rows)), replace=False))
        return data.iloc[rows][["compound", "y"]].reset_index(drop=True)

    return ChemProblem("MAXPhases", max_phases.domain_of(data, set()), draw)


def _mixture() -> ChemProblem:
    from benchmarks.chem_suite import Mixture

    problem = Mixture()
    domain = problem.domain()

    def draw(seed: int, size: int) -> pd.DataFrame:
        X = point_pool_of(domain, seed, size)
        return X.assign(cost=problem.evaluate(X))

    return ChemProblem("Mixture", domain, draw)


def _reaction_synergy() -> ChemProblem:
    from benchmarks import interaction

    domain = interaction.ReactionSynergy().domain

    def draw(seed: int, size: int) -> pd.DataFrame:
        X = interaction.random_points(domain, seed, size)
        return X.assign(**{"yield": interaction.observe(X, seed, 0)})

    return ChemProblem("ReactionSynergy", domain, draw)


@functools.cache
def make_chem_problem(name: str) -> ChemProblem:
    """A problem of ``CHEM_PROBLEMS``, built once per process (CrossCoupling's emulator)."""
    builders = {"CrossCoupling": _crosscoupling, "MAXPhases": _max_phases,
                "Mixture": _mixture, "ReactionSynergy": _reaction_synergy}
    if name not in builders:
        raise ValueError(f"unknown chemistry problem {name!r}; choose from {CHEM_PROBLEMS}")
    return builders[name]()


def make_problem(name: str):
    """A study benchmark (``benchmarks.functions``) or a chemistry problem, by name."""
    return make_chem_problem(name) if name in CHEM_PROBLEMS else make_benchmark(name)


# --------------------------------------------------------------------------------------------
# One case
# --------------------------------------------------------------------------------------------


def point_pool_of(domain, seed: int, size: int) -> pd.DataFrame:
    """``size`` uniformly random feasible inputs of ``domain`` (``RandomStrategy(seed)``)."""
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy

    X = strategies.map(RandomStrategy(domain=domain, seed=seed)).ask(size)
    return X[domain.inputs.get_keys()].reset_index(drop=True)


def point_pool(bench, seed: int, size: int = POOL) -> pd.DataFrame:
    """``size`` uniformly random feasible points with their outputs (``y``, ``valid_y``);
    a chemistry problem's own draw (see ``CHEM_PROBLEMS``)."""
    if isinstance(bench, ChemProblem):
        return bench.draw(seed, size)
    return bench.f(point_pool_of(bench.domain, seed, size), return_complete=True)


def new_surrogate(bench, prior: str, seed: int, overrides: dict | None = None):
    import bofire.surrogates.api as surrogates

    from bofire_bark.data_models import BARKSurrogate

    spec = BARKSurrogate(inputs=bench.domain.inputs, outputs=bench.domain.outputs,
                         split_prior=prior, seed=seed, **(overrides or {}))
    return surrogates.map(spec)


def _rhat_ess(az, draws: np.ndarray) -> tuple[float, float]:
    if np.isnan(draws).any():  # a chain with a forest of stumps has no split shares
        return math.nan, math.nan
    return float(az.rhat(draws)), float(az.ess(draws))


def chain_diagnostics(posterior) -> dict:
    """The CSV's diagnostic columns for one fitted posterior (see the module docstring)."""
    az = diagnostics._arviz()
    parts = diagnostics._trace_parts(posterior)
    conv = diagnostics.convergence(posterior)
    out = {"warn": bool((conv.rhat > diagnostics.RHAT_WARN).any())}
    for q in SCALARS:
        if q in diagnostics.CONVERGENCE_VARS:  # exactly the numbers the warning reads
            out[f"{q}_rhat"], out[f"{q}_ess"] = conv.loc[q, "rhat"], conv.loc[q, "ess_bulk"]
        elif q in parts:
            out[f"{q}_rhat"], out[f"{q}_ess"] = _rhat_ess(az, parts[q])
        else:
            out[f"{q}_rhat"] = out[f"{q}_ess"] = math.nan
    for q in VECTORS:
        rh = np.array([_rhat_ess(az, parts[q][..., j])[0] for j in range(parts[q].shape[-1])]
                      if q in parts else [])
        ok = rh[np.isfinite(rh)]
        out[f"{q}_rhat_max"] = float(ok.max()) if len(ok) else math.nan
        out[f"{q}_rhat_median"] = float(np.median(ok)) if len(ok) else math.nan
    out["leaves_per_tree_mean"] = float(parts["leaves_per_tree"].mean())
    conc = parts.get("split_concentration")
    out["split_concentration_mean"] = float(conc.mean()) if conc is not None else math.nan
    return out


def run_case(bench_name: str, n: int, prior: str, fit: str, seed: int,
             overrides: dict | None = None, bench=None, pool: pd.DataFrame | None = None) -> dict:
    """One CSV row (without ``settings`` and ``code``): fit, then diagnose the chains."""
    bench = bench if bench is not None else make_problem(bench_name)
    pool = pool if pool is not None else point_pool(bench, seed, max(POOL, n))
    if len(pool) < n:
        raise ValueError(f"pool of {len(pool)} points for N = {n}")
    sur = new_surrogate(bench, prior, seed, overrides)
    n0 = None
    if fit == "warm":
        n0 = n_prefit(n)
        sur.fit(pool.iloc[:n0])
    elif fit != "first":
        raise ValueError(f"unknown fit kind {fit!r}; choose from {FITS}")
    wall, cpu = time.perf_counter(), time.process_time()
    sur.fit(pool.iloc[:n])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    row = {"benchmark": bench_name, "n": n, "prior": prior, "fit": fit, "seed": seed,
           "n_prefit": n0, "n_inputs": len(bench.domain.inputs)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row.update(chain_diagnostics(sur.posterior))
    row.update(fit_s=wall, cpu_s=cpu)
    return row


# --------------------------------------------------------------------------------------------
# The grid, resumable
# --------------------------------------------------------------------------------------------


def read_fits(path: Path) -> pd.DataFrame:
    # a commit's short hash is text even when all its characters are digits
    return pd.read_csv(path, dtype={"code": str, "settings": str})


def append_rows(path: Path, rows: list[dict], columns: list[str]) -> None:
    """Rows appended to a study's CSV as they finish (with the header when it is new), so
    an interrupted study resumes from it."""
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        if new:
            writer.writeheader()
        writer.writerows(rows)


def run(out_dir: Path | str = DEFAULT_OUT, benchmarks=tuple(BENCHMARKS), sizes=SIZES,
        seeds=range(3), priors=PRIORS, fits=FITS, overrides: dict | None = None,
        verbose: bool = True) -> int:
    """Every case not yet in ``<out_dir>/fits.csv``, seed by seed (so a stopped run holds
    whole seeds), then benchmark, N, fit kind and prior; returns how many rows it added."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / CSV_NAME
    settings = describe(overrides)
    done = set()
    if path.exists():
        old = read_fits(path)
        if list(old.columns) != COLUMNS:
            raise SystemExit(f"{path} has other columns than this study writes; use another "
                             "--out")
        other = set(old["settings"]) - {settings}
        if other:
            raise SystemExit(f"{path} holds rows made with {sorted(other)}, not {settings!r}; "
                             "use another --out")
        done = {tuple(r) for r in old[KEY].itertuples(index=False)}
    code = code_version()
    # the surrogate's own warning is what this study counts; its log lines would only clutter
    logging.getLogger("bofire_bark").setLevel(logging.ERROR)
    logging.getLogger("arviz").setLevel(logging.ERROR)
    added = 0
    for seed in seeds:
        for name in benchmarks:
            todo = [(n, f, p) for n in sizes for f in fits for p in priors
                    if (name, n, p, f, seed) not in done]
            if not todo:
                continue
            bench = make_problem(name)
            pool = point_pool(bench, seed, max(POOL, *sizes))
            for n, fit, prior in todo:
                row = run_case(name, n, prior, fit, seed, overrides, bench, pool)
                row.update(settings=settings, code=code)
                append_rows(path, [row], COLUMNS)
                added += 1
                if verbose:
                    print(f"{name:19s} N {n:3d} {prior:9s} {fit:5s} seed {seed}: "
                          f"warn {int(row['warn'])} R-hat lml "
                          f"{row['log_marginal_likelihood_rhat']:.3f} noise "
                          f"{row['noise_var_rhat']:.3f} leaves {row['leaves_per_tree_rhat']:.3f}"
                          f" conc {row['split_concentration_rhat']:.3f} share max "
                          f"{row['split_share_rhat_max']:.3f} {row['fit_s']:.2f} s", flush=True)
    return added


# --------------------------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------------------------

# (label, column) of the quantities compared in the summary
QUANTITIES = (
    ("log marginal likelihood", "log_marginal_likelihood_rhat"),
    ("noise variance", "noise_var_rhat"),
    ("leaves per tree", "leaves_per_tree_rhat"),
    ("split concentration", "split_concentration_rhat"),
    ("split probability, median input", "split_prob_rhat_median"),
    ("split probability, worst input", "split_prob_rhat_max"),
    ("split share, median input", "split_share_rhat_median"),
    ("split share, worst input", "split_share_rhat_max"),
)


def _cell(values: pd.Series, fmt: str = "{:.3f}") -> str:
    values = values.dropna()
    return fmt.format(values.median()) if len(values) else "-"


def warn_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per prior x fit kind x N: fits, share warning, median R-hats and seconds."""
    rows = []
    for (prior, fit, n), sub in df.groupby(["prior", "fit", "n"], sort=True):
        row = {"prior": prior, "fit": fit, "n": n, "fits": len(sub),
               "warn_share": sub["warn"].mean()}
        for _, col in QUANTITIES:
            row[f"median_{col}"] = sub[col].median()
            row[f"over_{col}"] = (sub[col] > diagnostics.RHAT_WARN).mean() \
                if sub[col].notna().any() else math.nan
        row["median_log_marginal_likelihood_ess"] = sub["log_marginal_likelihood_ess"].median()
        row["median_noise_var_ess"] = sub["noise_var_ess"].median()
        row["median_fit_s"] = sub["fit_s"].median()
        rows.append(row)
    return pd.DataFrame(rows)


def quantity_ranking(df: pd.DataFrame, prior: str) -> pd.DataFrame:
    """Per quantity under ``prior``: median R-hat and share of fits above the threshold."""
    sub = df[df["prior"] == prior]
    rows = [{"quantity": label, "median_rhat": sub[col].median(),
             "share_over": (sub[col] > diagnostics.RHAT_WARN).mean(),
             "fits": int(sub[col].notna().sum())}
            for label, col in QUANTITIES if sub[col].notna().any()]
    return pd.DataFrame(rows).sort_values("median_rhat", ascending=False)


def paired_counts(df: pd.DataFrame, col: str = "log_marginal_likelihood_rhat") -> str:
    """How often the sparse prior's R-hat is the higher of a pair (same case and seed)."""
    wide = df.pivot_table(index=["benchmark", "n", "fit", "seed"], columns="prior",
                          values=col)
    if not set(PRIORS) <= set(wide.columns):
        return ""
    pair = wide[list(PRIORS)].dropna()
    higher = int((pair["dirichlet"] > pair["uniform"]).sum())
    return f"{higher} of {len(pair)}"


def summary(out_dir: Path | str = DEFAULT_OUT) -> str:
    """``summary.md`` and ``summary.csv`` (the per prior x fit x N table) from ``fits.csv``."""
    out_dir = Path(out_dir)
    df = read_fits(out_dir / CSV_NAME)
    df["warn"] = df["warn"].astype(str).str.lower().isin(("true", "1"))
    table = warn_table(df)
    table.to_csv(out_dir / "summary.csv", index=False)
    thr = diagnostics.RHAT_WARN
    seeds = sorted(df["seed"].unique())
    chains, sweeps = budget(df["settings"].iloc[0])
    lines = [
        "# Chain mixing of BARK fits on small data, by split prior",
        "",
        "Generated by `python -m benchmarks.mixing summary` from `fits.csv` (see "
        "`benchmarks/mixing.py`). Random feasible points of each benchmark, "
        f"surrogate settings `{'; '.join(sorted(set(df['settings'])))}` (the data model's "
        "defaults unless stated: 50 trees, 4 chains x 4 samples, thinning 100, burn-in 1000, "
        "warm-start burn-in 0). `first`: a new fit on N points; `warm`: a fit on N - 5 "
        "(N / 2 at N = 10) then a refit continuing the chains on all N (only the refit "
        f"counted). R-hat: ArviZ's rank-normalized split R-hat over {chains} chains x {sweeps} "
        "sweeps; the "
        f"surrogate warns when that of the log marginal likelihood or the noise variance "
        f"exceeds {thr}.",
        "",
        f"Rows: {len(df)}; benchmarks: {', '.join(sorted(df['benchmark'].unique()))}; seeds: "
        f"{', '.join(map(str, seeds))}; code: "
        + ", ".join(f"{c} ({k} rows)" for c, k in df["code"].value_counts().items())
        + " (`+wip:<digest>`: uncommitted changes to the fitting code were present).",
        "",
        "## Share of fits that warn",
        "",
        "Median R-hat of the two quantities the warning reads, their median bulk ESS (of "
        f"{chains * sweeps} draws) and the median wall time of the measured fit.",
        "",
        "| prior | fit | N | fits | warn | R-hat lml | R-hat noise | ESS lml | ESS noise | "
        "s per fit |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.prior} | {r.fit} | {r.n} | {r.fits} | {r.warn_share:.0%} | "
            f"{r.median_log_marginal_likelihood_rhat:.3f} | {r.median_noise_var_rhat:.3f} | "
            f"{r.median_log_marginal_likelihood_ess:.0f} | {r.median_noise_var_ess:.0f} | "
            f"{r.median_fit_s:.2f} |")
    lines += ["", "## Median R-hat per quantity", "",
              "Per prior x fit x N; in brackets the share of fits above "
              f"{thr}. \"Worst input\" is the largest R-hat over the inputs, which exceeds a "
              "single quantity's by chance alone when there are many inputs (6-26 here); "
              "\"median input\" is the typical input's.", ""]
    labels = [lab for lab, col in QUANTITIES if df[col].notna().any()]
    cols = [col for _, col in QUANTITIES if df[col].notna().any()]
    lines += ["| prior | fit | N | " + " | ".join(labels) + " |",
              "|---|---|---|" + "---|" * len(labels)]
    for r in table.itertuples():
        cells = []
        for col in cols:
            med, over = getattr(r, f"median_{col}"), getattr(r, f"over_{col}")
            cells.append("-" if pd.isna(med) else f"{med:.3f} ({over:.0%})")
        lines.append(f"| {r.prior} | {r.fit} | {r.n} | " + " | ".join(cells) + " |")
    lines += ["", "## Which quantity disagrees most between chains", ""]
    for prior in PRIORS:
        if not (df["prior"] == prior).any():
            continue
        rank = quantity_ranking(df, prior)
        lines += [f"Under `{prior}`, all fits, highest median R-hat first:", "",
                  "| quantity | median R-hat | share above " + f"{thr} | fits |",
                  "|---|---|---|---|"]
        lines += [f"| {r.quantity} | {r.median_rhat:.3f} | {r.share_over:.0%} | {r.fits} |"
                  for r in rank.itertuples()]
        single = rank[~rank["quantity"].str.contains("worst")]
        top = single.iloc[0]
        lines += ["", f"Highest median R-hat under `{prior}` (leaving out the worst-input "
                  f"maxima): {top.quantity} ({top.median_rhat:.3f}, above {thr} in "
                  f"{top.share_over:.0%} of fits).", ""]
    pairs = paired_counts(df)
    if pairs:
        lines += [f"Paired by benchmark, N, fit kind and seed (same points, same chain seeds), "
                  f"the sparse prior's R-hat of the log marginal likelihood is the higher in "
                  f"{pairs} pairs; of the noise variance in "
                  f"{paired_counts(df, 'noise_var_rhat')}.", ""]
    lines += ["## Share of fits that warn, per benchmark", "",
              "| benchmark | inputs | " + " | ".join(f"{p} {f}" for p in PRIORS for f in FITS)
              + " |", "|---|---|" + "---|" * (len(PRIORS) * len(FITS))]
    for name, sub in df.groupby("benchmark"):
        cells = []
        for p in PRIORS:
            for f in FITS:
                s = sub[(sub["prior"] == p) & (sub["fit"] == f)]
                cells.append(f"{s['warn'].mean():.0%} ({len(s)})" if len(s) else "-")
        lines.append(f"| {name} | {int(sub['n_inputs'].iloc[0])} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (out_dir / "summary.md").write_text(text)
    return text


def compare(out_dir: Path | str, variants: list[Path | str]) -> str:
    """``levers.md`` in ``out_dir``: the base study against runs with other settings (each
    variant a folder with its own ``fits.csv``), on the cases every one of them ran (same
    points and chain seeds), per prior x fit kind x N."""
    out_dir = Path(out_dir)
    frames = {}
    for folder in [out_dir, *map(Path, variants)]:
        df = read_fits(folder / CSV_NAME)
        df["warn"] = df["warn"].astype(str).str.lower().isin(("true", "1"))
        frames[df["settings"].iloc[0]] = df.set_index(KEY)
    common = None
    for df in frames.values():
        common = df.index if common is None else common.intersection(df.index)
    cols = [("log_marginal_likelihood_rhat", "R-hat lml"), ("noise_var_rhat", "R-hat noise"),
            ("split_concentration_rhat", "R-hat conc"),
            ("split_prob_rhat_median", "R-hat split prob (median input)"),
            ("split_concentration_ess", "ESS conc"), ("fit_s", "s per fit")]
    lines = ["# Mixing under other surrogate settings", "",
             "Generated by `python -m benchmarks.mixing compare`. Each row: the "
             f"cases all {len(frames)} settings ran ({len(common)}: same benchmark, N, prior, "
             "fit kind and seed, so the same points and chain seeds); medians over benchmarks "
             "and seeds. `s per fit`: the measured fit only (a warm row's refit).", "",
             "| settings | prior | fit | N | fits | warn | " + " | ".join(c[1] for c in cols)
             + " |", "|---|---|---|---|---|---|" + "---|" * len(cols)]
    for (prior, fit, n), keys in pd.Series(index=common, dtype=float).groupby(
            level=["prior", "fit", "n"]):
        for settings, df in frames.items():
            sub = df.loc[keys.index]
            cells = [f"{sub[c].median():.3f}" if sub[c].notna().any() else "-"
                     for c, _ in cols[:-2]]
            cells += [_cell(sub[cols[-2][0]], "{:.0f}"), _cell(sub["fit_s"], "{:.2f}")]
            lines.append(f"| `{settings}` | {prior} | {fit} | {n} | {len(sub)} | "
                         f"{sub['warn'].mean():.0%} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (out_dir / "levers.md").write_text(text)
    return text


def chain_table(posterior, names: list[str], top: int = 3) -> pd.DataFrame:
    """One row per chain: the concentration's median and range, the mean log marginal
    likelihood and the inputs of largest mean split probability (sparse prior only), to see
    how the chains differ, not only that they do."""
    parts = diagnostics._trace_parts(posterior)
    rows = []
    for c in range(posterior.traces.shape[0]):
        conc = parts["split_concentration"][c]
        prob = parts["split_prob"][c].mean(axis=0)
        best = np.argsort(-prob)[:top]
        rows.append({"chain": c, "conc_median": float(np.median(conc)),
                     "conc_min": float(conc.min()), "conc_max": float(conc.max()),
                     "lml_mean": float(parts["log_marginal_likelihood"][c].mean()),
                     "top_split_prob": ", ".join(f"{names[j]} {prob[j]:.2f}" for j in best)})
    return pd.DataFrame(rows)


def chains(bench_name: str, n: int, seed: int, overrides: dict | None = None) -> str:
    """``chain_table`` of a first fit under the sparse prior, as markdown with its case."""
    bench = make_problem(bench_name)
    logging.getLogger("bofire_bark").setLevel(logging.ERROR)
    sur = new_surrogate(bench, "dirichlet", seed, overrides)
    sur.fit(point_pool(bench, seed, max(POOL, n)).iloc[:n])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rhat = chain_diagnostics(sur.posterior)
    table = chain_table(sur.posterior, sur.space.split_variable_names())  # descriptors too
    lines = [f"{bench_name}, N = {n}, seed {seed}, sparse prior, first fit, settings "
             f"`{describe(overrides)}`: R-hat lml {rhat['log_marginal_likelihood_rhat']:.3f}, "
             f"concentration {rhat['split_concentration_rhat']:.3f}", "",
             "| chain | concentration median | min | max | mean lml | largest split "
             "probabilities |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.chain} | {r.conc_median:.2f} | {r.conc_min:.2f} | {r.conc_max:.1f} | "
              f"{r.lml_mean:.2f} | {r.top_split_prob} |" for r in table.itertuples()]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _override(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value  # a bare string such as likelihood=leaf


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mixing",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="fit every case not yet in <out>/fits.csv")
    r.add_argument("--out", type=Path, default=DEFAULT_OUT)
    r.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS),
                   choices=sorted(BENCHMARKS) + list(CHEM_PROBLEMS),
                   help="study benchmarks (default: all) or chemistry problems")
    r.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    r.add_argument("--seeds", type=int, default=3, help="seeds first-seed..first-seed+k-1")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--priors", nargs="+", default=list(PRIORS), choices=PRIORS)
    r.add_argument("--fits", nargs="+", default=list(FITS), choices=FITS)
    r.add_argument("--set", nargs="+", type=_override, default=[], metavar="KEY=VALUE",
                   help="override surrogate settings (e.g. burn_in=3000)")
    s = sub.add_parser("summary", help="summary.md and summary.csv from <out>/fits.csv")
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    c = sub.add_parser("compare", help="<out>/levers.md: the study against other settings")
    c.add_argument("--out", type=Path, default=DEFAULT_OUT)
    c.add_argument("--variants", nargs="+", type=Path, required=True,
                   help="folders of runs with other --set")
    h = sub.add_parser("chains", help="per-chain concentration, likelihood and top inputs of "
                       "one sparse-prior fit (markdown on stdout)")
    h.add_argument("--benchmark", required=True,
                   choices=sorted(BENCHMARKS) + list(CHEM_PROBLEMS))
    h.add_argument("--n", type=int, required=True)
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--set", nargs="+", type=_override, default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    if args.what == "chains":
        print(chains(args.benchmark, args.n, args.seed, dict(args.set) or None))
    elif args.what == "run":
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        run(args.out, args.benchmarks, args.sizes, seeds, args.priors, args.fits,
            dict(args.set) or None)
    elif args.what == "compare":
        print(compare(args.out, args.variants))
    else:
        print(summary(args.out))


if __name__ == "__main__":
    main()
