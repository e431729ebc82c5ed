"""Where does BARK's candidate come from: the MIP solver or its starting point?

The acquisition solve starts from the best of ``n_start_points`` feasible random points
refined by coordinate ascent, all scored with the engine's exact integrated UCB. This script
rebuilds BARK's state at a few iterations of committed BO runs (the points evaluated so far,
the study's model settings), solves the acquisition MIP with a given time limit and prints,
per instance, the start's UCB, the solver's UCB, the relative improvement, the final gap and
the seconds. It answers whether the solver's time buys a better candidate or only a bound.

    python -m benchmarks.mip_vs_start [--time-limit 30] [--iterations 5 20 35]
        [--runs results/bo/runs_tl30] [--benchmarks ...] [--seed 0] [--solver scip]
        [--out results/bo/mip_vs_start.txt]
"""

from __future__ import annotations

import argparse
import logging
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import publish
from benchmarks.bo import DEFAULT_OUT, BOConfig, beat_start, make_strategy, read_run
from benchmarks.functions import make_benchmark


def instances(runs: Path, benchmarks: list[str] | None, seed: int) -> list[tuple[str, Path]]:
    found = sorted(Path(runs).glob(f"*/BARK/seed{seed}.csv"))
    return [(p.parents[1].name, p) for p in found
            if benchmarks is None or p.parents[1].name in benchmarks]


def measure(bench_name: str, path: Path, iterations, cfg: BOConfig, seed: int) -> list[dict]:
    bench = make_benchmark(bench_name)
    keys = bench.domain.inputs.get_keys()
    run = read_run(path)
    rows = []
    for k in iterations:
        if k > run["iteration"].max():
            continue
        data = run[run["iteration"] < k][keys + ["y"]].assign(valid_y=1)
        strategy = make_strategy("BARK", bench.domain, seed, cfg)
        strategy.tell(data)
        strategy.ask(1)
        r = strategy.last_results[-1]
        rows.append({"benchmark": bench_name, "iteration": k, "n": len(data),
                     "status": r.status, "start_ucb": r.incumbent_ucb, "ucb": r.ucb,
                     "improvement": (r.ucb - r.incumbent_ucb) / max(abs(r.incumbent_ucb), 1e-12),
                     "gap": r.gap, "start_s": r.incumbent_time, "solve_s": r.solve_time})
        print(" ".join(f"{key}={_short(v)}" for key, v in rows[-1].items()), flush=True)
    return rows


def _short(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mip_vs_start",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--iterations", type=int, nargs="+", default=[5, 20, 35])
    parser.add_argument("--runs", type=Path, default=DEFAULT_OUT / "runs_tl30")
    parser.add_argument("--benchmarks", nargs="+", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solver", default="scip", help="the search to compare with the start")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT / "mip_vs_start.txt",
                        help="file the table is written to")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    cfg = BOConfig(time_limit=args.time_limit, solver=args.solver)  # scip: as published
    rows = []
    for bench, path in instances(args.runs, args.benchmarks, args.seed):
        rows += measure(bench, path, args.iterations, cfg, args.seed)
    if not rows:
        raise SystemExit(f"no BARK runs of seed {args.seed} under {args.runs}")
    table = pd.DataFrame(rows)
    better = beat_start(table["ucb"], table["start_ucb"])
    text = (table.to_string(index=False, float_format=lambda x: f"{x:.4g}")
            + f"\n\nthe solver improved on its start in {int(better.sum())} of {len(table)} "
            f"instances (time limit {args.time_limit:g} s); median gap "
            f"{np.nanmedian(table['gap']):.3g}, median start {table['start_s'].median():.2f} s, "
            f"median solve {table['solve_s'].median():.1f} s\n")
    publish(args.out, text)


if __name__ == "__main__":
    main()
