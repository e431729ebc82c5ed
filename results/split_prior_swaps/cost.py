"""Fit time with label swaps against without, alternating in one process on the first split of
each of the paper's four UCI sets (sparse prior, the study's budget: 4 chains x 4 samples,
thinning 100, burn-in 1000, one thread).

    PYTHONPATH=. python results/split_prior_swaps/cost.py [--reps 2]   # writes cost.md here
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks import regression as reg
from bofire_bark.engine import MCMCSettings

HERE = Path(__file__).resolve().parent


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args(argv)
    budget = reg.BarkBudget()
    lines = ["| data set | N | fit s with swaps | without | ratio |", "|---|---|---|---|---|"]
    ratios = []
    for name in reg.PAPER:
        ds = reg.load(name)
        X_tr, _, y_tr, _ = reg.split(ds, 0)
        y = (y_tr - y_tr.mean()) / y_tr.std()
        inputs = ds.inputs()
        times = {10: [], 0: []}
        reg.sample_bark(inputs, X_tr, y, 0, budget, MCMCSettings(label_swap_every=10))  # warm
        for rep in range(args.reps):
            for every in ((10, 0) if rep % 2 == 0 else (0, 10)):
                times[every].append(reg.sample_bark(inputs, X_tr, y, rep, budget,
                                                    MCMCSettings(label_swap_every=every))[2])
        on, off = sum(times[10]), sum(times[0])
        ratios.append(on / off)
        lines.append(f"| {name} | {len(y)} | {on / args.reps:.2f} | {off / args.reps:.2f} | "
                     f"{on / off:.2f} |")
    lines.append(f"| geometric mean | | | | {float(np.exp(np.mean(np.log(ratios)))):.2f} |")
    text = "\n".join(lines) + "\n"
    (HERE / "cost.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
