"""Batch quality (issue 37, item 3): BO in batches of 8 and 24 against one point at a time,
at the same number of experiments, paired by seed.

A run is one (benchmark, batch size b, seed): the study's initial design (``bo.initial_design``,
the same points for every b of a seed), then ``ask(b)`` and ``tell`` of the b measured points,
until ``--experiments`` points beyond the design (48 by default: 48 batches of one, 6 of 8, 2 of
24). BARKStrategy at the library's defaults, seeded by the run's seed. Benchmarks (default):
``MixedConstrained`` (constraints: the Python box loop, whose batch searches share their
partition) and ``DiscreteAckley`` (no constraints: the numba loop). Both are minimized.

Rows of ``runs/<benchmark>/b<b>/seed<k>.csv``: one per evaluated point, ``batch`` (0 for the
design), the inputs, ``y``, ``best`` (running minimum), and on the first row of a batch the
seconds of the ``tell`` before it (``fit_s``) and of its ``ask`` (``ask_s``). The file is
rewritten after each batch; a partial run resumes at its last whole batch (the model refitted
on all its points).

    python -m benchmarks.batch_bo run [--benchmarks ...] [--batches 1 8 24] [--seeds 8]
        [--first-seed 0] [--experiments 48] [--out results/batch_bo]
    python -m benchmarks.batch_bo summary [--out results/batch_bo]

``summary`` writes ``summary.md``: per benchmark and batch size the finished seeds, the median
best value after the budget (the design included) and the median best of the picks alone (the
design's best often stands on a seed), each paired by seed against b = 1 (the batch better /
tied / worse, the two-sided sign test on the untied seeds), and the median seconds per
experiment (tells and asks).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import REPO, publish

DEFAULT_OUT = REPO / "results" / "batch_bo"
BENCHMARKS = ("MixedConstrained", "DiscreteAckley")


def run_path(out: Path, bench: str, b: int, seed: int) -> Path:
    return out / "runs" / bench / f"b{b}" / f"seed{seed}.csv"


def _save(rows: list[dict], path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    pd.DataFrame(rows).to_csv(tmp, index=False)
    os.replace(tmp, path)


def run_one(bench_name: str, b: int, seed: int, experiments: int, out: Path) -> str:
    """Run (or resume) one batch run; returns "done"."""
    import bofire.strategies.api as strategies

    from benchmarks.bo import initial_design
    from benchmarks.functions import make_benchmark
    from bofire_bark.data_models import BARKStrategy

    warnings.filterwarnings("ignore")
    bench = make_benchmark(bench_name)
    domain = bench.domain
    keys = domain.inputs.get_keys()
    path = run_path(out, bench_name, b, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = pd.read_csv(path).to_dict("records") if path.exists() else []
    n_design = sum(r["batch"] == 0 for r in rows)
    if rows and len(rows) - n_design >= experiments:
        return "done"
    if not rows:
        X0 = initial_design(bench, seed)
        y0 = bench.f(X0)["y"].to_numpy()
        best = np.minimum.accumulate(y0)
        rows = [{"batch": 0, **X0.iloc[i].to_dict(), "y": y0[i], "best": best[i]}
                for i in range(len(X0))]
        _save(rows, path)
    strategy = strategies.map(BARKStrategy(domain=domain, seed=seed))
    new = pd.DataFrame(rows)[keys + ["y"]].assign(valid_y=1)
    batch = max(r["batch"] for r in rows)
    while len(rows) - sum(r["batch"] == 0 for r in rows) < experiments:
        batch += 1
        t0 = time.perf_counter()
        strategy.tell(new)
        t1 = time.perf_counter()
        cand = strategy.ask(b)
        t2 = time.perf_counter()
        X = cand[keys].reset_index(drop=True)
        y = bench.f(X)["y"].to_numpy()
        for i in range(len(X)):
            rows.append({"batch": batch, **X.iloc[i].to_dict(), "y": y[i],
                         "best": min(rows[-1]["best"], y[i]),
                         "fit_s": t1 - t0 if i == 0 else np.nan,
                         "ask_s": t2 - t1 if i == 0 else np.nan})
        _save(rows, path)
        new = X.assign(y=y, valid_y=1)
    return "done"


def run(benchmarks, batches, seeds, experiments: int, out: Path) -> None:
    for seed in seeds:  # seed-major: every benchmark and batch size of a seed first
        for bench in benchmarks:
            for b in batches:
                t = time.perf_counter()
                status = run_one(bench, b, seed, experiments, out)
                print(f"{bench} b{b} seed {seed}: {status} ({time.perf_counter() - t:.0f} s)",
                      flush=True)


def summary(out: Path, experiments: int) -> pd.DataFrame:
    from benchmarks.plots import sign_test_p

    finals = []
    for path in sorted((out / "runs").glob("*/b*/seed*.csv")):
        df = pd.read_csv(path)
        bo = df[df["batch"] > 0]
        if len(bo) < experiments:
            continue
        finals.append({"benchmark": path.parent.parent.name, "b": int(path.parent.name[1:]),
                       "seed": int(path.stem[4:]), "best": float(df["best"].iloc[-1]),
                       "picks": float(bo["y"].min()),
                       "s_per_experiment": float((bo["fit_s"].sum() + bo["ask_s"].sum())
                                                 / len(bo))})
    runs = pd.DataFrame(finals)
    lines = ["# Batch quality", "",
             "Generated by `python -m benchmarks.batch_bo summary` from `runs/` (protocol: "
             "`benchmarks/batch_bo.py`). After "
             f"{experiments} experiments beyond the initial design (minimized), median over the "
             "finished seeds: the best value found (the design included) and the best of the "
             "picks alone; paired by seed against one point at a time (b = 1): the batch "
             "better / tied / worse and the two-sided sign test on the untied seeds.", "",
             "| benchmark | b | seeds | median best | vs b = 1 | p | median best pick "
             "| vs b = 1 | p | s per experiment |", "|---|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for bench, grp in runs.groupby("benchmark", sort=False) if len(runs) else []:
        one = grp[grp["b"] == 1].set_index("seed")
        for b, g in grp.groupby("b"):
            g = g.set_index("seed")
            row = {"benchmark": bench, "b": b, "seeds": len(g),
                   "s per experiment": float(g["s_per_experiment"].median())}
            cells = []
            for metric in ("best", "picks"):
                row[metric] = float(g[metric].median())
                paired = g[metric].reindex(one.index).dropna() if b != 1 else None
                if paired is not None and len(paired):
                    diff = paired - one.loc[paired.index, metric]
                    better, worse = int((diff < 0).sum()), int((diff > 0).sum())
                    vs = f"{better} / {len(diff) - better - worse} / {worse}"
                    ptxt = f"{sign_test_p(better, worse):.2g}"
                else:
                    vs, ptxt = "-", "-"
                row[f"{metric} vs b1"], row[f"{metric} p"] = vs, ptxt
                cells += [f"{row[metric]:.4g}", vs, ptxt]
            rows.append(row)
            lines.append(f"| {bench} | {b} | {len(g)} | " + " | ".join(cells)
                         + f" | {row['s per experiment']:.2f} |")
    publish(out / "summary.md", "\n".join(lines) + "\n")
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_run = sub.add_parser("run")
    p_run.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS))
    p_run.add_argument("--batches", nargs="+", type=int, default=[1, 8, 24])
    p_run.add_argument("--seeds", type=int, default=8)
    p_run.add_argument("--first-seed", type=int, default=0)
    p_run.add_argument("--experiments", type=int, default=48)
    p_run.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p_sum = sub.add_parser("summary")
    p_sum.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p_sum.add_argument("--experiments", type=int, default=48)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        run(args.benchmarks, args.batches,
            range(args.first_seed, args.first_seed + args.seeds), args.experiments, args.out)
    else:
        summary(args.out, args.experiments)


if __name__ == "__main__":
    main()
