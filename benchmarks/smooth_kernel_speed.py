"""The smooth share's length fit (``surrogate.smooth_kernel``) on ReactionSynergy's domain: two
continuous inputs, a discrete one and two plain categorical ones (5 solvents, 4 catalysts),
at ``--n`` random points; prints the seconds of ``--rounds`` fits (median). Run against
another checkout by ``PYTHONPATH`` (e.g. with ``farm-bench --vs``) for a ratio.

    python -m benchmarks.smooth_kernel_speed [--n 28] [--rounds 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=28)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from benchmarks.interaction import ReactionSynergy
    from bofire_bark.space import SplitSpace
    from bofire_bark.surrogate import smooth_kernel

    domain = ReactionSynergy().domain
    space = SplitSpace.from_inputs(domain.inputs, {})
    df = domain.inputs.sample(args.n, seed=0)
    X = space.encode(df)
    y = np.random.default_rng(0).standard_normal(args.n)
    seconds = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        smooth_kernel(space, X, y, 32, categories=True)
        seconds.append(time.perf_counter() - start)
    print(f"smooth_kernel fit, {args.n} points: median {np.median(seconds):.3f} s "
          f"of {args.rounds}")


if __name__ == "__main__":
    main()
