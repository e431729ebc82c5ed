"""Which split-feature prior should BARK default to? The paper's uniform prior against the
sparse Dirichlet prior (``BARKSettings.split_prior="dirichlet"``, DART-style), side by side.

The rule to decide by: switch only if the Dirichlet prior is no worse on the paper's regression
sets and better where inputs are irrelevant.

``regression``: the four UCI sets of ``regression.py`` (same loading, 20 random splits, test
NLPD and MSE in standardized units), BARK with each prior on (a) the original inputs and (b)
the inputs plus ``N_NUISANCE`` appended nuisance inputs, uniform on [0, 1] and independent of
the target, drawn from a seed derived from the split (the same draws for both priors). Same
MCMC budget as the committed table (4 chains x 4 samples, thinning 100, burn-in 1000) and the
same chain seed (the split's) for both priors. Runs go split by split, and within a split
data set, variant and prior in turn, so an interrupted run still holds complete pairs. Rows
in ``results/split_prior/regression.csv``; a rerun skips the rows that are there.
``nuisance_share`` is the posterior mean share of the forest's splits on the nuisance
inputs (over chains and every sweep after burn-in).

``bo``: the BO runner of ``bo.py`` with today's acquisition defaults (grid search, time limit
and start points of ``BARKStrategy``'s defaults) on DiscreteAckley, PestControl,
TreeFunctionCat and Hartmann6 with 20 spurious inputs (BoFire's ``SpuriousFeaturesWrapper``),
methods ``BARK-uniform``, ``BARK-dirichlet`` and ``Sobo`` (as ``bo.py`` runs it), seeds 0-4,
40 iterations, one CSV per run in ``results/split_prior/bo/runs/<benchmark>/<method>/`` that
resumes. Seed by seed, benchmark by benchmark, the methods in turn, so a partial study is
paired. Committed Sobo runs of ``results/bo/runs`` are copied instead of rerun when the
Sobo settings are the same and today's benchmark reproduces their initial design and every
recorded value (``REUSED.txt`` says which). BARK's committed runs (``results/bo_bnb``) are
not reused: the acquisition code changed after they were made, and the two priors should meet
the same code and machine load. ``runs/code_versions.txt`` records the code each study
process ran.

``report``: ``summary.md``, ``bo_regret.png`` and ``regression.png`` from the CSVs.

    python -m benchmarks split-prior regression [--splits 20] [--datasets ...]
    python -m benchmarks split-prior bo [--seeds 5] [--iterations 40]
    python -m benchmarks split-prior report
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import _common
from benchmarks import regression as reg
from benchmarks._common import REPO
from benchmarks.bo import BOConfig
from benchmarks.functions import BENCHMARKS

DEFAULT_OUT = REPO / "results" / "split_prior"
PRIORS = ("uniform", "dirichlet")
VARIANTS = ("original", "nuisance")
N_NUISANCE = 20
# Any fixed number: split s draws its nuisance inputs from the generator seeded [this, s].
NUISANCE_SEED = 20180801
REG_COLUMNS = ["dataset", "variant", "prior", "split", "n_train", "n_test", "n_features",
               "nlpd", "mse", "fit_s", "nuisance_share", "settings", "code"]

BO_BENCHMARKS = ("DiscreteAckley", "PestControl", "TreeFunctionCat", "Hartmann6Spurious20")
BO_METHODS = ("BARK-uniform", "BARK-dirichlet", "Sobo")
COMMITTED_RUNS = REPO / "results" / "bo" / "runs"
COLORS = {"BARK-uniform": "tab:green", "BARK-dirichlet": "tab:purple", "Sobo": "tab:blue"}


def _read_regression(path: Path) -> pd.DataFrame:
    # a commit's short hash is text even when all its characters are digits
    return pd.read_csv(path, dtype={"code": str})


def code_version() -> str:
    """HEAD's short hash, plus a digest of uncommitted changes to the package and the study code
    if any (the study code was inside the package when this column was introduced)."""
    return _common.code_version(("bofire_bark", "benchmarks"))


# --------------------------------------------------------------------------------------------
# Regression
# --------------------------------------------------------------------------------------------


def nuisance_keys(n: int = N_NUISANCE) -> list[str]:
    return [f"nuisance_{i:02d}" for i in range(n)]


def add_nuisance(inputs, X_tr: pd.DataFrame, X_te: pd.DataFrame, split: int,
                 n: int = N_NUISANCE):
    """``inputs`` and both frames with ``n`` continuous inputs on [0, 1] appended, uniform and
    independent of everything else, the same for a given split (and split sizes)."""
    from bofire.data_models.domain.api import Inputs
    from bofire.data_models.features.api import ContinuousInput

    keys = nuisance_keys(n)
    rng = np.random.default_rng([NUISANCE_SEED, split])

    def extend(X: pd.DataFrame) -> pd.DataFrame:
        U = pd.DataFrame(rng.uniform(size=(len(X), n)), columns=keys, index=X.index)
        return pd.concat([X, U], axis=1)

    X_tr, X_te = extend(X_tr), extend(X_te)
    feats = list(inputs.features) + [ContinuousInput(key=k, bounds=(0.0, 1.0)) for k in keys]
    return Inputs(features=feats), X_tr, X_te


def split_shares(post) -> np.ndarray:
    """Share of the forest's splits on each encoded input (D,), averaged over chains and the
    traced sweeps (sweeps of a forest without splits are left out)."""
    from bofire_bark.engine.sampler import TRACE_SCALARS

    D = len(post.kinds)
    shares = post.traces[:, :, len(TRACE_SCALARS) + D:len(TRACE_SCALARS) + 2 * D]
    return np.nanmean(shares.reshape(-1, D), axis=0)


def _save_csv(frame: pd.DataFrame, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    frame.to_csv(tmp, index=False)
    os.replace(tmp, path)


def run_regression(datasets=tuple(reg.PAPER), n_splits: int = 20, priors=PRIORS,
                   variants=VARIANTS, data_dir: Path | str = reg.DEFAULT_DATA_DIR,
                   out_dir: Path | str = DEFAULT_OUT, budget: reg.BarkBudget | None = None,
                   n_nuisance: int = N_NUISANCE, verbose: bool = True) -> pd.DataFrame:
    """Every (data set, variant, prior, split) row not yet in ``regression.csv``; returns the
    whole CSV. ``datasets``: names for ``regression.load`` or ``regression.Dataset`` objects."""
    from bofire_bark.engine.sampler import MCMCSettings

    budget = budget or reg.BarkBudget()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "regression.csv"
    done = _read_regression(path) if path.exists() else pd.DataFrame(columns=REG_COLUMNS)
    other = set(done["settings"]) - {budget.describe()}
    if other:
        raise SystemExit(f"{path} holds rows made with {sorted(other)}, not "
                         f"{budget.describe()!r}; use another --out-dir")
    finished = {(r.dataset, r.variant, r.prior, int(r.split)) for r in done.itertuples()}
    code = code_version()
    loaded: dict[str, reg.Dataset] = {}
    for s in range(n_splits):
        for item in datasets:
            name = item.name if isinstance(item, reg.Dataset) else item
            todo = [(v, p) for v in variants for p in priors if (name, v, p, s) not in finished]
            if not todo:
                continue
            if name not in loaded:
                loaded[name] = item if isinstance(item, reg.Dataset) else reg.load(item,
                                                                                   data_dir)
            ds = loaded[name]
            X_tr, X_te, y_tr, y_te = reg.split(ds, s)
            for variant in dict.fromkeys(v for v, _ in todo):
                inputs, Xv_tr, Xv_te = ds.inputs(), X_tr, X_te
                if variant == "nuisance":
                    inputs, Xv_tr, Xv_te = add_nuisance(inputs, X_tr, X_te, s, n_nuisance)
                elif variant != "original":
                    raise ValueError(f"unknown variant {variant!r}; choose from {VARIANTS}")
                for prior in [p for v, p in todo if v == variant]:
                    post, space, fit_s = reg.sample_bark(inputs, Xv_tr, y_tr, s, budget,
                                                         MCMCSettings(split_prior=prior))
                    nlpd, mse = reg.score_bark(post, space, Xv_te, y_te)
                    share = np.nan
                    if variant == "nuisance":
                        idx = [space.feature_index(k) for k in nuisance_keys(n_nuisance)]
                        share = float(split_shares(post)[idx].sum())
                    row = dict(zip(REG_COLUMNS, [
                        name, variant, prior, s, len(Xv_tr), len(Xv_te), space.n_features,
                        nlpd, mse, fit_s, share, budget.describe(), code], strict=True))
                    if verbose:
                        print(f"{name:9s} {variant:8s} {prior:9s} split {s:2d}: NLPD {nlpd:.3f} "
                              f"MSE {mse:.3f} fit {fit_s:.1f} s", flush=True)
                    new = pd.DataFrame([row], columns=REG_COLUMNS)
                    done = new if done.empty else pd.concat([done, new], ignore_index=True)
                    _save_csv(done, path)
    return done


# --------------------------------------------------------------------------------------------
# BO
# --------------------------------------------------------------------------------------------


@dataclass
class PriorStudyConfig(BOConfig):
    """BARK's runs go to ``BARK-<split_prior>``, so both priors share one study folder."""

    def run_dir(self, bench: str, method: str) -> Path:
        name = f"BARK-{self.split_prior}" if method == "BARK" else method
        return Path(self.out_dir) / self.runs / bench / name


def bo_config(out_dir: Path | str = DEFAULT_OUT, n_iterations: int = 40,
              **overrides) -> PriorStudyConfig:
    """The study's settings: the paper's MCMC budget and ``BARKStrategy``'s own acquisition
    defaults (search, time limit, start points; kappa and gaps are left to the strategy)."""
    from bofire_bark.settings import SearchSettings

    search = SearchSettings()  # the strategy's acquisition_optimizer defaults
    settings = dict(n_iterations=n_iterations, time_limit=search.time_limit,
                    solver=search.solver, n_start_points=search.n_start_points,
                    out_dir=Path(out_dir) / "bo")
    settings.update(overrides)
    return PriorStudyConfig(**settings)


def method_config(method: str, cfg):
    """(bo.py's method name, its config): ``BARK-<prior>`` is BARK with that split prior."""
    if method.startswith("BARK-"):
        prior = method.removeprefix("BARK-")
        if prior not in PRIORS:
            raise ValueError(f"unknown split prior in {method!r}; choose from {PRIORS}")
        return "BARK", replace(cfg, split_prior=prior)
    return method, cfg


def _reuse_problem(src: Path, bench_name: str, seed: int, n_iterations: int) -> str:
    """Why a committed run cannot stand for a rerun today ('' if it can)."""
    from benchmarks.bo import initial_design, read_run
    from benchmarks.functions import make_benchmark
    from bofire_bark.space import SplitSpace

    run = read_run(src)
    if int(run["iteration"].max()) != n_iterations:
        return f"it ran {int(run['iteration'].max())} iterations, not {n_iterations}"
    bench = make_benchmark(bench_name)
    keys = bench.domain.inputs.get_keys()
    space = SplitSpace.from_inputs(bench.domain.inputs)
    init = run[run["iteration"] == 0]
    design = initial_design(bench, seed)
    if len(init) != len(design) or not np.allclose(space.encode(init[keys]),
                                                   space.encode(design), rtol=0, atol=1e-12):
        return "its initial design differs from today's"
    y = bench.f(run[keys].reset_index(drop=True))["y"].to_numpy()
    if not np.allclose(y, run["y"].to_numpy(dtype=float), rtol=0, atol=1e-9):
        return "today's benchmark gives other values at its points"
    return ""


def reuse_runs(cfg, benchmarks, seeds, method: str = "Sobo",
               source: Path = COMMITTED_RUNS) -> list[str]:
    """Copy ``source``'s runs of ``method`` that today's code reproduces (``_reuse_problem``)
    into the study, before anything is run; returns one note per run considered, also
    appended to ``<runs>/REUSED.txt``."""
    notes = []
    for bench in benchmarks:
        for seed in seeds:
            src = Path(source) / bench / method / f"seed{seed}.csv"
            dst = cfg.run_dir(bench, method) / f"seed{seed}.csv"
            if dst.exists() or not src.exists():
                continue
            why = _reuse_problem(src, bench, seed, cfg.n_iterations)
            where = src.relative_to(REPO) if src.is_relative_to(REPO) else src
            if why:
                notes.append(f"{bench}/{method}/seed{seed}: rerun, not reused ({where}: {why})")
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            commit = subprocess.run(["git", "log", "-1", "--format=%h", "--", str(src)],
                                    cwd=REPO, capture_output=True, text=True).stdout.strip()
            notes.append(f"{bench}/{method}/seed{seed}: copied from {where}"
                         + (f" (committed at {commit})" if commit else ""))
    if notes:
        log = Path(cfg.out_dir) / cfg.runs / "REUSED.txt"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a") as f:
            f.write("".join(n + "\n" for n in notes))
    return notes


def run_bo(benchmarks=BO_BENCHMARKS, methods=BO_METHODS, seeds=range(5), cfg=None,
           reuse: bool = True, verbose: bool = True) -> list[tuple[str, str, int, str]]:
    """All runs, seed by seed, benchmark by benchmark, methods in turn (one process)."""
    from benchmarks.bo import check_settings, run_one

    cfg = cfg or bo_config()
    check_settings(cfg, ignore=("split_prior",))
    root = Path(cfg.out_dir) / cfg.runs
    with (root / "code_versions.txt").open("a") as f:
        f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {code_version()} "
                f"{' '.join(benchmarks)} | {' '.join(methods)} | seeds "
                f"{' '.join(map(str, seeds))}\n")
    if reuse and "Sobo" in methods:
        for note in reuse_runs(cfg, benchmarks, seeds):
            if verbose:
                print(note, flush=True)
    out = []
    for seed in seeds:
        for bench in benchmarks:
            for method in methods:
                base, mcfg = method_config(method, cfg)
                t = time.perf_counter()
                status = run_one(bench, base, seed, mcfg)
                if verbose:
                    print(f"{bench:20s} {method:14s} seed {seed}: {status} "
                          f"({time.perf_counter() - t:.0f} s)", flush=True)
                out.append((bench, method, seed, status))
    return out


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def _ms(x: pd.Series) -> str:
    sd = x.std(ddof=1) if len(x) > 1 else 0.0
    return f"{x.mean():.3f} ({sd:.3f})"


def _p(p: float) -> str:
    return "-" if not np.isfinite(p) else f"{p:.2g}"


def _groups(df: pd.DataFrame) -> list[tuple[str, str]]:
    """(data set, variant) pairs present, in the paper's order of data sets."""
    names = [n for n in reg.PAPER if n in set(df["dataset"])]
    names += sorted(set(df["dataset"]) - set(names))
    present = set(zip(df["dataset"], df["variant"], strict=True))
    return [(n, v) for n in names for v in VARIANTS if (n, v) in present]


def paired_regression(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per data set and variant, over the splits both priors ran: each prior's values and the
    differences dirichlet - uniform with a two-sided sign test and Wilcoxon signed-rank p."""
    from scipy.stats import wilcoxon

    from benchmarks.plots import sign_test_p

    rows = []
    for name, variant in _groups(df):
        sub = df[(df["dataset"] == name) & (df["variant"] == variant)]
        wide = sub.pivot_table(index="split", columns="prior", values=metric)
        if not set(PRIORS) <= set(wide.columns):
            continue
        pair = wide[list(PRIORS)].dropna()
        if pair.empty:
            continue
        diff = pair["dirichlet"] - pair["uniform"]
        lower, higher = int((diff < 0).sum()), int((diff > 0).sum())
        p_w = wilcoxon(diff).pvalue if len(diff) > 1 and (diff != 0).any() else np.nan
        rows.append({"dataset": name, "variant": variant, "splits": len(pair),
                     "uniform": _ms(pair["uniform"]), "dirichlet": _ms(pair["dirichlet"]),
                     "diff": _ms(diff), "diff_mean": diff.mean(),
                     "lower_higher": f"{lower}/{higher}",
                     "p_sign": sign_test_p(lower, higher), "p_wilcoxon": float(p_w)})
    return pd.DataFrame(rows)


def regression_markdown(df: pd.DataFrame) -> str:
    lines = []
    for metric, label in (("nlpd", "NLPD"), ("mse", "MSE")):
        table = paired_regression(df, metric)
        lines += [f"#### Test {label} (lower is better)", "",
                  f"| data set | inputs | paired splits | {label} uniform | {label} dirichlet | "
                  f"dirichlet - uniform | dirichlet lower/higher | sign test p | Wilcoxon p |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in table.itertuples():
            lines.append(f"| {r.dataset} | {r.variant} | {r.splits} | {r.uniform} | "
                         f"{r.dirichlet} | {r.diff} | {r.lower_higher} | {_p(r.p_sign)} | "
                         f"{_p(r.p_wilcoxon)} |")
        lines.append("")
    lines += ["#### Inputs, fit time and splits on the nuisance inputs", "",
              "| data set | inputs | D | fit s uniform | fit s dirichlet | share of splits on "
              "nuisance inputs, uniform | same, dirichlet |", "|---|---|---|---|---|---|---|"]
    for name, variant in _groups(df):
        sub = df[(df["dataset"] == name) & (df["variant"] == variant)]
        cells = [name, variant, str(int(sub["n_features"].iloc[0]))]
        cells += [f"{sub.loc[sub['prior'] == p, 'fit_s'].median():.1f}"
                  if (sub["prior"] == p).any() else "-" for p in PRIORS]
        for p in PRIORS:
            share = sub.loc[sub["prior"] == p, "nuisance_share"].dropna()
            cells.append(f"{share.mean():.3f}" if len(share) else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_regression(df: pd.DataFrame, path: Path) -> None:
    """Per-split differences dirichlet - uniform (points) and their median (bar), per data set
    and inputs, for NLPD and MSE."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, metric in zip(axes, ("nlpd", "mse"), strict=True):
        wide = df.pivot_table(index=["dataset", "variant", "split"], columns="prior",
                              values=metric)
        if not set(PRIORS) <= set(wide.columns):
            continue
        diff = (wide["dirichlet"] - wide["uniform"]).dropna()
        present = {(d, v) for d, v, _ in diff.index}
        groups = [g for g in _groups(df) if g in present]
        rng = np.random.default_rng(0)
        for i, (name, variant) in enumerate(groups):
            vals = diff.loc[(name, variant)].to_numpy()
            color = "tab:gray" if variant == "original" else "tab:purple"
            ax.scatter(i + rng.uniform(-0.15, 0.15, len(vals)), vals, s=9, color=color,
                       alpha=0.7)
            ax.hlines(np.median(vals), i - 0.3, i + 0.3, color="k")
        ax.axhline(0.0, color="0.6", lw=0.8, ls="--")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{d}\n{v}" for d, v in groups], fontsize=7)
        ax.set_title(f"{metric.upper()}: dirichlet - uniform per split (below 0: dirichlet "
                     "better)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def bo_markdown(run_root: Path) -> tuple[str, pd.DataFrame, dict]:
    """Per-method summary (finished runs) and the paired comparison of the priors."""
    from benchmarks import plots

    runs, refused = plots.load_runs(run_root)
    if runs.empty:
        return "No BO runs yet.\n", pd.DataFrame(), refused
    curves = plots.regret_curves(runs)
    text = plots.summary_markdown(plots.summary_table(runs, curves, refused))
    done = plots.finished_only(curves)
    lines = ["", "| benchmark | iteration | dirichlet vs uniform (lower/tied/higher regret) | "
             "sign test p | dirichlet vs Sobo | sign test p | uniform vs Sobo | sign test p |",
             "|---|---|---|---|---|---|---|---|"]
    by_ref = {ref: plots.comparison_table(done, refused, reference=ref).set_index("benchmark")
              for ref in ("BARK-dirichlet", "BARK-uniform")}
    for bench, row in by_ref["BARK-dirichlet"].iterrows():
        other = by_ref["BARK-uniform"].loc[bench]
        cells = [bench, str(int(row["iteration"]))]
        for r, m in ((row, "BARK-uniform"), (row, "Sobo"), (other, "Sobo")):
            counts = r.get(f"vs_{m}")
            cells += ([counts, _p(r.get(f"p_{m}", np.nan))] if isinstance(counts, str)
                      else ["-", "-"])
        lines.append("| " + " | ".join(cells) + " |")
    return text + "\n".join(lines) + "\n", done, refused


def make_report(out_dir: Path | str = DEFAULT_OUT) -> str:
    """``summary.md``, ``regression.png`` and ``bo_regret.png`` from the study's files."""
    import json

    from benchmarks import plots

    out_dir = Path(out_dir)
    parts = ["# Split-feature prior: uniform (paper) against sparse Dirichlet (DART-style)",
             "", "Generated by `python -m benchmarks split-prior report` from "
             "`regression.csv` and `bo/runs/` (see `benchmarks/split_prior.py`). "
             "Decision rule: switch the default only if the Dirichlet prior is no worse on the "
             "paper's regression sets (original inputs) and better where inputs are "
             "irrelevant.", ""]
    path = out_dir / "regression.csv"
    parts += ["## Regression", ""]
    if path.exists():
        df = _read_regression(path)
        codes = df["code"].value_counts()
        parts += [f"UCI sets of `regression.py`, random train/test splits (split s: seed s), "
                  f"BARK ({'; '.join(sorted(set(df['settings'])))}; 50 trees) with either "
                  f"split prior and the same chain seed. Inputs: original, or original plus "
                  f"{N_NUISANCE} nuisance inputs uniform on [0, 1] (drawn per split, the same "
                  "for both priors). Mean (sd) over the splits both priors ran; differences "
                  "per split, dirichlet - uniform; two-sided sign test over untied splits and "
                  "Wilcoxon signed-rank test. Rows: "
                  f"{len(df)}; code: " + ", ".join(f"{c} ({n} rows)" for c, n in codes.items())
                  + " (`+wip:<digest>`: uncommitted changes to the package were present).",
                  "", regression_markdown(df), "![regression](regression.png)", ""]
        plot_regression(df, out_dir / "regression.png")
    else:
        parts += ["No regression rows yet.", ""]
    root = out_dir / "bo" / "runs"
    parts += ["## Bayesian optimization", ""]
    if root.exists():
        settings = root / "settings.json"
        if settings.exists():
            parts += ["Settings (`bo/runs/settings.json`, both priors): `"
                      + json.dumps(json.loads(settings.read_text())) + "`; Sobo: BoFire's "
                      "SoboStrategy as `bo.py` runs it. Initial design min(2D, 30) random "
                      "points per seed, shared by all methods; then ask(1)/tell iterations. "
                      "Regret: best value so far minus the optimum (PestControl: minus the "
                      "best value any run here found). Tables use finished runs; acq s is the "
                      "median ask time.", ""]
        text, done, refused = bo_markdown(root)
        parts += [text, "![bo regret](bo_regret.png)", ""]
        if not done.empty:
            plots.plot_regret(done, refused, out_dir / "bo_regret.png", colors=COLORS)
        for name in ("REUSED.txt", "code_versions.txt"):
            f = root / name
            if f.exists():
                parts += [f"`bo/runs/{name}`:", "", "```", f.read_text().rstrip(), "```", ""]
    else:
        parts += ["No BO runs yet.", ""]
    text = "\n".join(parts).rstrip() + "\n"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.md").write_text(text)
    return text


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("regression", help="UCI sets, both priors, original and nuisance inputs")
    r.add_argument("--datasets", nargs="+", default=list(reg.PAPER), choices=list(reg.PAPER))
    r.add_argument("--splits", type=int, default=20)
    r.add_argument("--priors", nargs="+", default=list(PRIORS), choices=PRIORS)
    r.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    r.add_argument("--n-nuisance", type=int, default=N_NUISANCE)
    r.add_argument("--data-dir", type=Path, default=reg.DEFAULT_DATA_DIR)
    r.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    r.add_argument("--threads", type=int, default=1, help="threads for BARK's chains")
    b = sub.add_parser("bo", help="BO runs of BARK with both priors and Sobo")
    b.add_argument("--benchmarks", nargs="+", default=list(BO_BENCHMARKS),
                   choices=sorted(BENCHMARKS))
    b.add_argument("--methods", nargs="+", default=list(BO_METHODS), choices=BO_METHODS)
    b.add_argument("--seeds", type=int, default=5, help="seeds first-seed..first-seed+k-1")
    b.add_argument("--first-seed", type=int, default=0)
    b.add_argument("--iterations", type=int, default=40)
    b.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    b.add_argument("--no-reuse", action="store_true",
                   help="rerun Sobo even where a committed run reproduces")
    b.add_argument("--threads", type=int, default=1, help="torch threads (Sobo)")
    p = sub.add_parser("report", help="summary.md, bo_regret.png, regression.png")
    p.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)


def run_from_args(args) -> None:
    if args.what == "regression":
        budget = reg.BarkBudget(n_jobs=args.threads)
        run_regression(args.datasets, args.splits, args.priors, args.variants, args.data_dir,
                       args.out_dir, budget, args.n_nuisance)
    elif args.what == "bo":
        import torch

        torch.set_num_threads(args.threads)
        cfg = bo_config(args.out_dir, args.iterations)
        seeds = list(range(args.first_seed, args.first_seed + args.seeds))
        run_bo(args.benchmarks, args.methods, seeds, cfg, reuse=not args.no_reuse)
    else:
        print(make_report(args.out_dir))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks split-prior",
                                     description=__doc__.splitlines()[0])
    add_arguments(parser)
    run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    main()
