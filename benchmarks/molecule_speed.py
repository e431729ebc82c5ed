"""Seconds of one photoswitch BO iteration (tell and ask): BARK against BoFire's Sobo.

    python -m benchmarks.molecule_speed [--sizes 10 20 30] [--rounds 2] [--seed 0]

The problem and both strategies are ``chem_bo``'s (``photoswitch``: the 391 molecules as one
``CategoricalMolecularInput`` on ``FingerprintsFragments()``; BARK at its defaults, Sobo with
BoFire's ``TanimotoGPSurrogate`` as its tutorial). For each size N, N random molecules are
measured and each method makes one iteration on them, the methods alternating within a round
so the machine's load hits both alike; a first iteration of each (not timed) compiles and loads
what it needs. Prints the median seconds per method and size and BARK / Sobo.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from benchmarks.chem_bo import make_problem, strategy_of

METHODS = ("bark", "sobo")


def iteration_seconds(problem, method: str, n: int, seed: int) -> float:
    """One tell and ask(1) of ``method`` on ``n`` random measured molecules."""
    rng = np.random.default_rng([seed, n])
    picks = rng.choice(len(problem.smiles), n, replace=False)
    X = pd.DataFrame({"smiles": [problem.smiles[i] for i in picks]})
    measured = set(X["smiles"])
    start = time.perf_counter()
    strategy = strategy_of("photoswitch", method, problem.domain(measured), seed)
    frame = X.assign(y=problem.evaluate(X))
    strategy.tell(frame)
    strategy.ask(1)
    return time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.molecule_speed")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    problem = make_problem("photoswitch")
    for method in METHODS:  # warm-up: compilation and imports, not timed
        iteration_seconds(problem, method, min(args.sizes), args.seed + 99)
    times = {(m, n): [] for m in METHODS for n in args.sizes}
    for r in range(args.rounds):
        for n in args.sizes:
            order = METHODS if r % 2 == 0 else METHODS[::-1]
            for method in order:
                times[method, n].append(iteration_seconds(problem, method, n, args.seed + r))
                print(f"round {r} N={n} {method}: {times[method, n][-1]:.1f} s", flush=True)
    print("| measured molecules | BARK s | Sobo s | BARK / Sobo |")
    print("|---|---|---|---|")
    for n in args.sizes:
        b = statistics.median(times["bark", n])
        s = statistics.median(times["sobo", n])
        print(f"| {n} | {b:.1f} | {s:.1f} | {b / s:.2f} |")


if __name__ == "__main__":
    main()
