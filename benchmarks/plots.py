"""Tables and figures from the BO run CSVs (``results/bo/runs/...``).

Tables and curves use the finished runs, those that reached the benchmark's last iteration;
runs in progress are named in the summary's note column.

- ``regret.png``: median and interquartile range over seeds of the simple regret
  (best value so far minus the optimum) against the iteration, one panel per benchmark.
  Where the optimum is unknown (PestControl) regret is taken against the best value any run
  of any method found on that benchmark (the tree functions' optima are exact, by a MIP).
- ``time.png``: per benchmark and method, the median (bars) and interquartile range (whiskers)
  of the fit time and the acquisition time per iteration.
- ``summary.md`` / ``summary.csv``: per benchmark and method, seeds, iterations reached, median
  (IQR) regret at the last iteration, median fit and acquisition seconds, and for BARK how often
  the MIP improved on its starting point; methods that refuse a benchmark are listed with
  BoFire's reason.
- ``comparison.md`` / ``comparison.csv``: one row per benchmark, the methods' median regret
  side by side at the last iteration, and paired counts "BARK lower / tied / higher" over
  the seeds both methods ran (a seed shares its initial design across methods, so seeds pair),
  with a two-sided sign test's p over the untied pairs.
- ``time_limit.md``: where ``runs_tl30/`` holds BARK runs with a 30 s MIP limit, their regret
  next to the same seeds with the study's limit (does the MIP time limit matter?).

    python -m benchmarks plots [--small] [--out-dir results/bo]
        # --small reads and writes out/small/bo, where ``bo --small`` puts its runs
        [--bark-runs results/bo_grid/runs ...]   # BARK from reruns (per benchmark the last
                                                 # folder with it), the study's as BARK-SCIP
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from benchmarks.bo import (
    DEFAULT_OUT,
    METHODS,
    STUDY_BENCHMARKS,
    beat_start,
    out_dir_from_args,
    read_run,
)
from benchmarks.functions import make_benchmark

# With ``--bark-runs`` the study's own BARK runs (the SCIP MIP) stay beside the rerun as this
SCIP_BARK = "BARK-SCIP"
KNOWN = (*METHODS, SCIP_BARK)
COLORS = {"BARK": "tab:green", "Sobo": "tab:blue", "Random": "tab:gray", "Entmoot": "tab:orange",
          SCIP_BARK: "tab:olive"}


def load_runs(run_root: Path) -> tuple[pd.DataFrame, dict[tuple[str, str], str]]:
    """All run rows (with benchmark, method, seed columns) and the refusals by (bench, method)."""
    frames, refused = [], {}
    for bench_dir in sorted(p for p in Path(run_root).glob("*") if p.is_dir()):
        for method_dir in sorted(p for p in bench_dir.glob("*") if p.is_dir()):
            key = (bench_dir.name, method_dir.name)
            marker = method_dir / "UNSUPPORTED.txt"
            if marker.exists():
                refused[key] = marker.read_text().strip().split(": ", 1)[-1]
            for csv in sorted(method_dir.glob("seed*.csv")):
                df = read_run(csv)
                df = df[["iteration", "y", "best", "fit_time", "acq_time"]
                        + [c for c in ("ucb", "start_ucb") if c in df]]
                df = df.assign(benchmark=bench_dir.name, method=method_dir.name,
                               seed=int(csv.stem.removeprefix("seed")))
                frames.append(df)
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["iteration", "y", "best", "fit_time", "acq_time", "benchmark", "method",
                 "seed"])
    return runs, refused


def optimum(bench: str, runs: pd.DataFrame,
            reference: pd.DataFrame | None = None) -> tuple[float, bool]:
    """(f*, known): the benchmark's optimum, else the best value found in any run of ``runs``
    or ``reference`` (runs kept outside the study, e.g. with a 30 s limit, so that no regret
    is negative)."""
    if reference is not None and len(reference):
        runs = pd.concat([runs[["benchmark", "y"]], reference[["benchmark", "y"]]])
    try:
        return float(make_benchmark(bench).get_optima()["y"].iloc[0]), True
    except (NotImplementedError, ValueError):
        return float(runs.loc[runs["benchmark"] == bench, "y"].min()), False


def regret_curves(runs: pd.DataFrame, reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Regret after each iteration (0 = the initial design) per benchmark, method and seed."""
    out = []
    # one optimum per benchmark (a tree function's is a MIP solve), not one per run
    optima = {bench: optimum(bench, runs, reference) for bench in runs["benchmark"].unique()}
    for (bench, method, seed), g in runs.groupby(["benchmark", "method", "seed"]):
        f_star, known = optima[bench]
        per_it = g.groupby("iteration")["best"].min().sort_index()
        out.append(pd.DataFrame({"benchmark": bench, "method": method, "seed": seed,
                                 "iteration": per_it.index, "regret": per_it.to_numpy() - f_star,
                                 "f_star": f_star, "known_optimum": known}))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(
        columns=["benchmark", "method", "seed", "iteration", "regret", "f_star",
                 "known_optimum"])


def _order(benches) -> list[str]:
    known = [b for b in STUDY_BENCHMARKS if b in benches]
    return known + sorted(b for b in benches if b not in known)


def _methods(present) -> list[str]:
    return [m for m in KNOWN if m in present] + sorted(m for m in present if m not in KNOWN)


def plot_regret(curves: pd.DataFrame, refused: dict, path: Path,
                colors: dict[str, str] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    benches = _order(set(curves["benchmark"]) | {b for b, _ in refused})
    ncol = min(4, max(1, len(benches)))
    nrow = int(np.ceil(len(benches) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for ax, bench in zip(axes.flat, benches, strict=False):
        sub = curves[curves["benchmark"] == bench]
        positive = sub["regret"][sub["regret"] > 0]
        log = len(positive) and positive.max() / max(positive.min(), 1e-300) > 100
        floor = positive.min() / 2 if len(positive) else 1e-9
        for method in _methods(set(sub["method"])):
            m = sub[sub["method"] == method]
            wide = m.pivot(index="iteration", columns="seed", values="regret")
            # only iterations that every seed of this method reached
            wide = wide.dropna()
            if wide.empty:
                continue
            vals = wide.to_numpy()
            if log:
                vals = np.maximum(vals, floor)
            med = np.median(vals, axis=1)
            lo, hi = np.percentile(vals, 25, axis=1), np.percentile(vals, 75, axis=1)
            color = (colors or COLORS).get(method)
            ax.plot(wide.index, med, color=color, label=f"{method} ({wide.shape[1]})")
            ax.fill_between(wide.index, lo, hi, color=color, alpha=0.2, linewidth=0)
        if log:
            ax.set_yscale("log")
        known = bool(sub["known_optimum"].all()) if len(sub) else True
        ax.set_title(bench + ("" if known else " (vs best found)"), fontsize=10)
        ax.set_xlabel("iteration")
        ax.set_ylabel("regret")
        notes = [f"{m}: refuses" for (b, m) in refused if b == bench]
        if notes:
            ax.text(0.98, 0.98, "\n".join(notes), transform=ax.transAxes, ha="right",
                    va="top", fontsize=7, color="0.4")
        ax.legend(fontsize=7, loc="lower left")
    for ax in list(axes.flat)[len(benches):]:
        ax.axis("off")
    fig.suptitle("Simple regret: median and interquartile range over seeds\n"
                 "(legend: number of seeds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_times(runs: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = runs[runs["iteration"] > 0]
    benches = _order(set(it["benchmark"]))
    methods = _methods(set(it["method"]))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), squeeze=False)
    width = 0.8 / max(1, len(methods))
    for ax, col, title in zip(axes[0], ("fit_time", "acq_time"),
                              ("fit (tell) seconds per iteration",
                               "acquisition (ask) seconds per iteration"), strict=True):
        for k, method in enumerate(methods):
            xs, meds, los, his = [], [], [], []
            for i, bench in enumerate(benches):
                v = it.loc[(it["benchmark"] == bench) & (it["method"] == method), col].dropna()
                if v.empty:
                    continue
                q1, q2, q3 = np.percentile(v, [25, 50, 75])
                xs.append(i + (k - (len(methods) - 1) / 2) * width)
                meds.append(max(q2, 1e-3))
                los.append(max(q2 - q1, 0))
                his.append(max(q3 - q2, 0))
            ax.bar(xs, meds, width, yerr=[los, his], color=COLORS.get(method), label=method,
                   capsize=2)
        ax.set_yscale("log")
        ax.set_xticks(range(len(benches)))
        ax.set_xticklabels(benches, rotation=30, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def finished_only(curves: pd.DataFrame) -> pd.DataFrame:
    """The runs that reached their benchmark's last iteration (the study's budget); runs still
    in progress would otherwise pull every comparison back to their iteration."""
    reach = curves.groupby(["benchmark", "method", "seed"])["iteration"].transform("max")
    target = curves.groupby("benchmark")["iteration"].transform("max")
    return curves[reach == target]


def summary_table(runs: pd.DataFrame, curves: pd.DataFrame, refused: dict) -> pd.DataFrame:
    """Per benchmark and method: finished seeds, regret at the benchmark's last iteration
    (median and quartiles over finished seeds), median seconds, and a note (refusal, runs in
    progress, how often BARK's search (MIP or grid) beat its start)."""
    rows = []
    done = finished_only(curves)
    for bench in _order(set(runs["benchmark"]) | {b for b, _ in refused}):
        full = curves[curves["benchmark"] == bench]
        sub = done[done["benchmark"] == bench]
        target = int(full["iteration"].max()) if len(full) else 0
        f_star, known = ((float(full["f_star"].iloc[0]), bool(full["known_optimum"].all()))
                         if len(full) else (np.nan, True))
        for method in _methods(set(full["method"]) | {m for b, m in refused if b == bench}):
            base = {"benchmark": bench, "method": method, "common_iteration": target,
                    "f_star": f_star, "known_optimum": known}
            if (bench, method) in refused and method not in set(full["method"]):
                rows.append({**base, "seeds": 0, "iterations": "-", "regret_median": np.nan,
                             "regret_q25": np.nan, "regret_q75": np.nan, "fit_s": np.nan,
                             "acq_s": np.nan, "note": "refuses: " + refused[(bench, method)]})
                continue
            at = sub[(sub["method"] == method) & (sub["iteration"] == target)]["regret"]
            reach = full[full["method"] == method].groupby("seed")["iteration"].max()
            partial = reach[reach < target]
            r = runs[(runs["benchmark"] == bench) & (runs["method"] == method)
                     & (runs["iteration"] > 0)]
            notes = [f"{len(partial)} more in progress (at iteration "
                     f"{', '.join(str(int(i)) for i in partial)})"] if len(partial) else []
            notes += [n for n in [_beat_start(r)] if n]
            rows.append({**base, "seeds": len(at), "iterations": target if len(at) else "-",
                         "regret_median": at.median(), "regret_q25": at.quantile(0.25),
                         "regret_q75": at.quantile(0.75), "fit_s": r["fit_time"].median(),
                         "acq_s": r["acq_time"].median(), "note": "; ".join(notes)})
    return pd.DataFrame(rows)


def _beat_start(rows: pd.DataFrame) -> str:
    """How often the MIP solver improved on its starting point (BARK rows that record it)."""
    if "start_ucb" not in rows:
        return ""
    r = rows.dropna(subset=["ucb", "start_ucb"])
    if r.empty:
        return ""
    better = beat_start(r["ucb"], r["start_ucb"])
    return f"search beat its start in {int(better.sum())} of {len(r)} iterations"


def _fmt(x: float) -> str:
    if not np.isfinite(x):
        return "-"
    if x == 0:
        return "0"
    return f"{x:.3g}" if abs(x) >= 1e-3 else f"{x:.1e}"


def summary_markdown(table: pd.DataFrame) -> str:
    lines = ["| benchmark | method | seeds | iterations | regret at the last iteration, median "
             "(IQR) | fit s | acq s | note |", "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        regret = "-" if not np.isfinite(r.regret_median) else (
            f"{_fmt(r.regret_median)} ({_fmt(r.regret_q25)}-{_fmt(r.regret_q75)}) "
            f"@ {r.common_iteration}")
        ref = "" if r.known_optimum else " (vs best found)"
        lines.append(f"| {r.benchmark}{ref} | {r.method} | {r.seeds} | {r.iterations} | "
                     f"{regret} | {_fmt(r.fit_s)} | {_fmt(r.acq_s)} | {r.note} |")
    return "\n".join(lines) + "\n"


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided sign test over the untied pairs: how surprising the split is if neither
    method were better (5/0 gives 0.0625, so 5 seeds never reach 0.05); NaN without pairs."""
    return binomtest(wins, wins + losses).pvalue if wins + losses else np.nan


def comparison_table(curves: pd.DataFrame, refused: dict, reference: str = "BARK") -> pd.DataFrame:
    """Median regret per method at each benchmark's common iteration (the last one, given
    finished runs), and paired seed counts of ``reference`` against every other method (lower
    regret = better; ties within 1e-9)."""
    rows = []
    for bench in _order(set(curves["benchmark"]) | {b for b, _ in refused}):
        sub = curves[curves["benchmark"] == bench]
        reach = sub.groupby(["method", "seed"])["iteration"].max()
        common = int(reach.min()) if len(reach) else 0
        at = sub[sub["iteration"] == common].pivot(index="seed", columns="method",
                                                   values="regret")
        row = {"benchmark": bench, "iteration": common}
        for method in _methods(set(sub["method"]) | {m for b, m in refused if b == bench}):
            if method in at:
                row[method] = at[method].median()
                row[f"{method}_seeds"] = int(at[method].notna().sum())
            else:
                row[method] = np.nan
                row[f"{method}_seeds"] = 0
            if method != reference and method in at and reference in at:
                pair = at[[reference, method]].dropna()
                diff = pair[reference] - pair[method]
                lower, higher = int((diff < -1e-9).sum()), int((diff > 1e-9).sum())
                row[f"vs_{method}"] = f"{lower}/{int((diff.abs() <= 1e-9).sum())}/{higher}"
                row[f"p_{method}"] = sign_test_p(lower, higher)
        rows.append(row)
    return pd.DataFrame(rows)


def comparison_markdown(table: pd.DataFrame, refused: dict, reference: str = "BARK") -> str:
    methods = _methods({c for c in table.columns if c in KNOWN})
    others = [m for m in methods if m != reference]
    head = (["benchmark", "iteration"] + [f"{m} median regret (seeds)" for m in methods]
            + [f"{reference} vs {m} (lower/tied/higher, sign test p)" for m in others])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table.to_dict("records"):
        present = {m: r.get(m, np.nan) for m in methods}
        finite = [v for v in present.values() if np.isfinite(v)]
        best = min(finite) if finite else np.nan
        cells = [r["benchmark"], str(r["iteration"])]
        for m in methods:
            v = present[m]
            if (r["benchmark"], m) in refused and not np.isfinite(v):
                cells.append("refuses")
            elif not np.isfinite(v):
                cells.append("-")
            else:
                text = f"{_fmt(v)} ({int(r[f'{m}_seeds'])})"
                cells.append(f"**{text}**" if v <= best + 1e-12 else text)
        for m in others:
            counts, p = r.get(f"vs_{m}"), r.get(f"p_{m}", np.nan)
            if not isinstance(counts, str):
                cells.append("-")
            else:
                cells.append(f"{counts} (p {p:.2g})" if np.isfinite(p) else counts)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def time_limit_table(out_dir: Path, runs_name: str = "runs", other: str = "runs_tl30",
                     method: str = "BARK") -> str:
    """BARK runs kept with a 30 s MIP limit against the same seeds in the study."""
    base, _ = load_runs(Path(out_dir) / runs_name)
    alt, _ = load_runs(Path(out_dir) / other)
    alt = alt[alt["method"] == method]
    if alt.empty or base.empty:
        return ""
    lines = ["| benchmark | seed | iterations | regret, 30 s limit | regret, study limit | "
             "acq s median, 30 s | acq s median, study |", "|---|---|---|---|---|---|---|"]
    both = pd.concat([base, alt], ignore_index=True)
    for (bench, seed), g in alt.groupby(["benchmark", "seed"]):
        b = base[(base["benchmark"] == bench) & (base["method"] == method)
                 & (base["seed"] == seed)]
        if b.empty:
            continue
        common = int(min(g["iteration"].max(), b["iteration"].max()))
        f_star, _ = optimum(bench, both)
        r_alt = g.loc[g["iteration"] <= common, "best"].min() - f_star
        r_base = b.loc[b["iteration"] <= common, "best"].min() - f_star
        a_alt = g.loc[(g["iteration"] > 0) & (g["iteration"] <= common), "acq_time"].median()
        a_base = b.loc[(b["iteration"] > 0) & (b["iteration"] <= common), "acq_time"].median()
        lines.append(f"| {bench} | {seed} | {common} | {_fmt(r_alt)} | {_fmt(r_base)} | "
                     f"{_fmt(a_alt)} | {_fmt(a_base)} |")
    return "\n".join(lines) + "\n"


def with_bark_runs(runs: pd.DataFrame, bark_root: Path | list[Path]) -> pd.DataFrame:
    """The study's runs with BARK's taken from ``bark_root`` (a rerun with the current
    acquisition, same benchmarks, seeds and initial designs); the study's own BARK runs stay
    as ``SCIP_BARK``. Of several roots, a benchmark's BARK runs come from the last root that
    has them (a later rerun of some benchmarks replaces an earlier one there)."""
    roots = [bark_root] if isinstance(bark_root, str | Path) else list(bark_root)
    by_bench: dict[str, pd.DataFrame] = {}
    for root in roots:
        rerun, _ = load_runs(root)
        rerun = rerun[rerun["method"] == "BARK"]
        if rerun.empty:
            raise SystemExit(f"no BARK runs under {root}")
        by_bench.update(dict(tuple(rerun.groupby("benchmark"))))
    rerun = pd.concat(by_bench.values(), ignore_index=True)
    runs = runs.assign(method=runs["method"].replace({"BARK": SCIP_BARK}))
    return pd.concat([runs, rerun], ignore_index=True)


def make_all(out_dir: Path = DEFAULT_OUT, runs_name: str = "runs", suffix: str = "",
             bark_runs: Path | list[Path] | None = None) -> str:
    out_dir = Path(out_dir)
    runs, refused = load_runs(out_dir / runs_name)
    if runs.empty:
        raise SystemExit(f"no runs under {out_dir / runs_name}")
    if bark_runs is not None:
        runs = with_bark_runs(runs, bark_runs)
    reference = (load_runs(out_dir / "runs_tl30")[0]
                 if not suffix and (out_dir / "runs_tl30").is_dir() else None)
    curves = regret_curves(runs, reference)
    curves.to_csv(out_dir / f"regret{suffix}.csv", index=False)
    plot_regret(finished_only(curves), refused, out_dir / f"regret{suffix}.png")
    plot_times(runs, out_dir / f"time{suffix}.png")
    table = summary_table(runs, curves, refused)
    table.to_csv(out_dir / f"summary{suffix}.csv", index=False)
    text = summary_markdown(table)
    (out_dir / f"summary{suffix}.md").write_text(text)
    comparison = comparison_table(finished_only(curves), refused)
    comparison.to_csv(out_dir / f"comparison{suffix}.csv", index=False)
    compared = comparison_markdown(comparison, refused)
    (out_dir / f"comparison{suffix}.md").write_text(compared)
    text = text + "\n" + compared
    if not suffix:
        limits = time_limit_table(out_dir, runs_name)
        if limits:
            (out_dir / "time_limit.md").write_text(limits)
            text = text + "\n" + limits
    return text


def embed(readme: Path, name: str, text: str) -> bool:
    """Replace the block between ``<!-- name -->`` and ``<!-- /name -->`` in ``readme`` (the
    hand-written reading around the tables stays); False when the markers are missing."""
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    if not readme.exists():
        return False
    body = readme.read_text()
    i, j = body.find(start), body.find(end)
    if i < 0 or j < i:
        return False
    readme.write_text(body[:i + len(start)] + "\n" + text.rstrip("\n") + "\n" + body[j:])
    return True


def update_readme(out_dir: Path) -> None:
    """Copy the generated tables into ``results/README.md`` (beside ``out_dir``) and the
    project's README (blocks without markers in a file are left alone)."""
    out_dir = Path(out_dir)
    tables = (("regression", out_dir.parent / "regression" / "summary.md"),
              ("bo-comparison", out_dir / "comparison.md"),
              ("bo-summary", out_dir / "summary.md"),
              ("bo-time-limit", out_dir / "time_limit.md"))
    for readme in (out_dir.parent / "README.md", out_dir.parent.parent / "README.md"):
        for name, path in tables:
            if path.exists():
                embed(readme, name, path.read_text())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--small", action="store_true", help="plot the --small runs")
    parser.add_argument("--out-dir", type=Path, default=None,
                        help="default results/bo; with --small out/small/bo")
    parser.add_argument("--bark-runs", type=Path, nargs="+", default=None,
                        help="BARK's runs from these runs folders (reruns with the current "
                        "acquisition; per benchmark the last folder that has it); the "
                        f"study's own BARK runs are shown as {SCIP_BARK}")


def run_from_args(args) -> None:
    out_dir = out_dir_from_args(args)  # the same folder bo's --small wrote to
    if args.small:
        print(make_all(out_dir, "runs_small", "_small"))
    else:
        print(make_all(out_dir, bark_runs=args.bark_runs))
        update_readme(out_dir)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks plots")
    add_arguments(parser)
    run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    main()
