"""What the adaptive continuation costs: the same fits with and without it, alternating in
one process (so the ratio does not depend on the machine's load at different times).

Run: ``python -m benchmarks.mixing_cost [--out results/mixing/cost.csv]
[--set max_sampling_sweeps=6400] [--baseline max_sampling_sweeps=0] [--seeds 2]
[--benchmarks ...]`` (the study benchmarks or ``mixing.CHEM_PROBLEMS``).
One row per (benchmark, N, prior, fit kind, seed, variant): wall seconds of the measured
fit, sweeps per chain (``last_fit.sweeps``) and whether it warned; the summary prints total
and median time ratios, variant over baseline.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.mixing import (
    BENCHMARKS,
    DEFAULT_OUT,
    FITS,
    POOL,
    PRIORS,
    SIZES,
    _override,
    make_problem,
    n_prefit,
    new_surrogate,
    point_pool,
)


def one_fit(bench, pool, n: int, prior: str, fit: str, seed: int, overrides: dict) -> dict:
    sur = new_surrogate(bench, prior, seed, overrides)
    if fit == "warm":
        sur.fit(pool.iloc[:n_prefit(n)])
    start = time.perf_counter()
    sur.fit(pool.iloc[:n])
    return {"fit_s": time.perf_counter() - start, "sweeps": sur.last_fit.sweeps,
            "warn": sur.last_fit.warned}


def run(out: Path, overrides: dict, benchmarks, sizes, priors, fits, seeds: int,
        baseline: dict | None = None) -> pd.DataFrame:
    rows = []
    variants = {"baseline": baseline or {}, "variant": overrides}
    # one fit first, untimed: kernels load from numba's cache at their first call
    bench = make_problem(benchmarks[0])
    one_fit(bench, point_pool(bench, 0, max(POOL, *sizes)), min(sizes), priors[0], "first", 0, {})
    for name in benchmarks:
        bench = make_problem(name)
        for seed in range(seeds):
            pool = point_pool(bench, seed, max(POOL, *sizes))  # the study's pool
            for n in sizes:
                for prior in priors:
                    for fit in fits:
                        # alternate which goes first, so neither always meets a cold cache
                        order = list(variants) if (n + seed) % 2 else list(variants)[::-1]
                        for variant in order:
                            row = one_fit(bench, pool, n, prior, fit, seed, variants[variant])
                            rows.append({"benchmark": name, "n": n, "prior": prior, "fit": fit,
                                         "seed": seed, "variant": variant, **row})
                        print(rows[-2]["benchmark"], n, prior, fit, seed,
                              {r["variant"]: round(r["fit_s"], 2) for r in rows[-2:]},
                              flush=True)
    df = pd.DataFrame(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    return df


def summary(df: pd.DataFrame) -> str:
    lines = []
    for prior, part in df.groupby("prior"):
        wide = part.pivot_table(index=["benchmark", "n", "fit", "seed"], columns="variant",
                                values=["fit_s", "sweeps", "warn"])
        ratio = wide["fit_s"]["variant"] / wide["fit_s"]["baseline"]
        lines.append(
            f"{prior}: {len(wide)} fits; time variant / baseline total "
            f"{wide['fit_s']['variant'].sum() / wide['fit_s']['baseline'].sum():.2f}, median "
            f"{np.median(ratio):.2f}, 90th pct {np.quantile(ratio, 0.9):.2f}; sweeps per chain "
            f"mean {wide['sweeps']['baseline'].mean():.0f} -> "
            f"{wide['sweeps']['variant'].mean():.0f}; warned {wide['warn']['baseline'].mean():.0%}"
            f" -> {wide['warn']['variant'].mean():.0%}")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mixing_cost")
    parser.add_argument("--out", default=str(DEFAULT_OUT / "cost.csv"))
    parser.add_argument("--set", nargs="+", default=["max_sampling_sweeps=6400"],
                        metavar="KEY=VALUE", help="the variant's surrogate settings")
    parser.add_argument("--baseline", nargs="*", default=["max_sampling_sweeps=0"],
                        metavar="KEY=VALUE", help="the baseline's (default: no continuation)")
    parser.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS),
                        help="study benchmarks or chemistry problems (mixing.CHEM_PROBLEMS)")
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--priors", nargs="+", default=list(PRIORS))
    parser.add_argument("--fits", nargs="+", default=list(FITS))
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args(argv)
    overrides = dict(_override(text) for text in args.set)
    baseline = dict(_override(text) for text in args.baseline)
    df = run(Path(args.out), overrides, args.benchmarks, args.sizes, args.priors, args.fits,
             args.seeds, baseline)
    print(summary(df))


if __name__ == "__main__":
    main()
