"""BARK's BO runs with the grid search against the committed runs with the SCIP MIP.

The committed study (``results/bo/runs``) ran BARK with the Pyomo MIP (SCIP, 10 s per solve).
This reruns BARK with the current defaults (grid branch-and-bound, ``time_limit`` 2.5 s) on
the same benchmarks, seeds and initial designs into ``results/bo_bnb/runs`` and compares, per
benchmark, the best value found after the last iteration (paired by seed: regret differences
equal differences of the best value, both runs sharing f*), with a two-sided sign test, and the
median time of an ask.

    python -m benchmarks.bo_rerun run [--benchmarks ...] [--seeds 5]
    python -m benchmarks.bo_rerun table
    python -m benchmarks.bo_rerun table --out results/bo_bisect \
        --against results/bo_default     # one rerun against another
    ... [--out results/<folder>]    # another folder, e.g. a rerun after the search changed
    ... --out results/bo_max_time10 --max-time 10 --n-jobs 2   # search on up to 10 s
    ... --out results/bo_far --split-prior dirichlet --tie-break farthest
    ... --out results/bo_lognormal --split-prior dirichlet --noise-prior lognormal
    ... --out results/bo_smooth --split-prior dirichlet --noise-prior lognormal \
        --smooth continuous
    ... --out results/bo_nei --split-prior dirichlet --noise-prior lognormal --smooth all \
        --acquisition qLogNEI
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import REPO, add_backend_arguments, publish, study_backend
from benchmarks.bo import DEFAULT_OUT, STUDY_BENCHMARKS, BOConfig, read_run

NEW_OUT = DEFAULT_OUT.parent / "bo_bnb"


def run(benchmarks, seeds, iterations: int, out: Path = NEW_OUT, n_jobs: int = 1,
        max_time: float | None = None, split_prior: str = "uniform",
        tie_break: str = "none", noise_prior: str = "inverse_gamma",
        smooth: str = "off", acquisition: str = "qUCB") -> None:
    from benchmarks.bo import check_settings, run_study
    from bofire_bark.defaults import (
        DEFAULT_EXTEND_GAP,
        DEFAULT_MAX_TIME,
        DEFAULT_TIME_LIMIT,
    )

    # BARKStrategy's acquisition defaults (or another max_time); the model keeps the study's
    # settings (uniform split prior unless asked), the library's defaults for the rest
    cfg = BOConfig(n_iterations=iterations, time_limit=DEFAULT_TIME_LIMIT, out_dir=out,
                   solver="auto", max_time=DEFAULT_MAX_TIME if max_time is None else max_time,
                   extend_gap=DEFAULT_EXTEND_GAP, split_prior=split_prior, tie_break=tie_break,
                   noise_prior=noise_prior, smooth=smooth, acquisition=acquisition)
    check_settings(cfg)
    run_study(list(benchmarks), ["BARK"], list(seeds), cfg, n_jobs=n_jobs)


def _row(name, pairs, t_new, t_old, old_label, new_label) -> dict:
    from scipy.stats import binomtest

    wins, losses = int(np.sum(np.array(pairs) > 0)), int(np.sum(np.array(pairs) < 0))
    ties = len(pairs) - wins - losses
    p = binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    return {"benchmark": name, "seeds": len(pairs),
            f"{new_label} better / worse / tie": f"{wins}/{losses}/{ties}",
            "sign-test p": f"{p:.3g}",
            f"median ask s ({new_label})": f"{np.median(t_new):.2f}",
            f"median ask s ({old_label})": f"{np.median(t_old):.2f}"}


def table(old: Path = DEFAULT_OUT / "runs", new: Path = NEW_OUT / "runs",
          old_label: str = "SCIP 10 s", new_label: str = "grid") -> str:
    """Per benchmark, the reruns in ``new`` paired by seed with the runs in ``old`` (by
    default the committed SCIP-era study)."""
    rows, all_pairs, all_new, all_old = [], [], [], []
    for bench_dir in sorted(Path(new).iterdir()):
        if not bench_dir.is_dir():
            continue
        bench = bench_dir.name
        pairs, t_new, t_old = [], [], []
        for path in sorted((bench_dir / "BARK").glob("seed*.csv")):
            ref = Path(old) / bench / "BARK" / path.name
            if not ref.exists():
                continue
            a, b = read_run(path), read_run(ref)
            last = int(a["iteration"].max())
            if last < int(b["iteration"].max()):
                continue  # unfinished
            best_new = float(a.loc[a["iteration"] <= last, "best"].iloc[-1])
            best_old = float(b.loc[b["iteration"] <= last, "best"].iloc[-1])
            pairs.append(np.sign(best_old - best_new))  # +1: the new run is better
            t_new += list(a.loc[a["iteration"] > 0, "acq_time"])
            t_old += list(b.loc[(b["iteration"] > 0) & (b["iteration"] <= last), "acq_time"])
        if not pairs:
            continue
        rows.append(_row(bench, pairs, t_new, t_old, old_label, new_label))
        all_pairs += pairs
        all_new += t_new
        all_old += t_old
    if not rows:
        return "no finished reruns\n"
    if len(rows) > 1:  # every run of every benchmark in one sign test
        rows.append(_row("all", all_pairs, all_new, all_old, old_label, new_label))
    frame = pd.DataFrame(rows)
    head = "| " + " | ".join(frame.columns) + " |\n|" + "---|" * len(frame.columns) + "\n"
    return head + "".join("| " + " | ".join(map(str, r)) + " |\n" for r in frame.values)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bo_rerun")
    parser.add_argument("what", choices=["run", "table"])
    parser.add_argument("--benchmarks", nargs="+", default=list(STUDY_BENCHMARKS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--out", type=Path, default=NEW_OUT,
                        help="the reruns' folder (runs/ inside it)")
    parser.add_argument("--max-time", type=float, default=None,
                        help="let the search go on past time_limit up to this many seconds "
                        "while the gap is above extend_gap (results/bo_max_time10: 10)")
    parser.add_argument("--split-prior", choices=["uniform", "dirichlet"], default="uniform",
                        help="BARK's split prior (uniform: the study's; dirichlet: the "
                        "library's default, results/bo_defaults)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--tie-break", choices=["none", "farthest"], default="none",
                        help="which point of the candidate's grid cell (SearchSettings)")
    parser.add_argument("--noise-prior", choices=["inverse_gamma", "lognormal"],
                        default="inverse_gamma", help="BARK's noise prior (BARKSettings)")
    parser.add_argument("--smooth", choices=["off", "continuous", "all"], default="off",
                        help="BARK's smooth share by a rule over the domain "
                        "(bo.smooth_settings)")
    parser.add_argument("--acquisition", choices=["qUCB", "qLogNEI"], default="qUCB",
                        help="BARK's acquisition function (BoFire's type; qUCB: the default)")
    parser.add_argument("--against", type=Path, default=None,
                        help="table: pair with another rerun folder instead of the SCIP-era "
                        "runs (written to comparison_vs_<its name>.md)")
    add_backend_arguments(parser)
    args = parser.parse_args(argv)
    if args.what == "run":
        with study_backend(args) as n_jobs:
            run(args.benchmarks, range(args.first_seed, args.first_seed + args.seeds),
                args.iterations, args.out, n_jobs, args.max_time, args.split_prior,
                args.tie_break, args.noise_prior, args.smooth, args.acquisition)
    from benchmarks.plots import embed

    if args.against is not None:
        name = args.against.name
        text = publish(args.out / f"comparison_vs_{name}.md",
                       table(args.against / "runs", args.out / "runs", old_label=name,
                             new_label=args.out.name))
        embed(REPO / "README.md", f"bo-rerun-{args.out.name}-vs-{name}", text)
        return
    text = publish(args.out / "comparison.md", table(new=args.out / "runs"))
    # one README block per rerun folder (``<!-- bo-rerun-<folder> -->``), if it has one
    embed(REPO / "README.md", f"bo-rerun-{args.out.name}", text)


if __name__ == "__main__":
    main()
