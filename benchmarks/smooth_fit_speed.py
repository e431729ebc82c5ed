"""Why the smooth share fits its lengths on one torch thread: the fit of BoTorch's
``SingleTaskGP`` on a BO-sized problem (N points, D columns of random data) timed on one
thread and on torch's default, alternating, in one run.

    python -m benchmarks.smooth_fit_speed [--n 30] [--d 25] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def fit_seconds(n: int, d: int, threads: int | None, seed: int) -> float:
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    default = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        rng = np.random.default_rng(seed)
        gp = SingleTaskGP(torch.tensor(rng.random((n, d))),
                          torch.tensor(rng.standard_normal((n, 1))))
        start = time.perf_counter()
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        return time.perf_counter() - start
    finally:
        torch.set_num_threads(default)


def main(argv=None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--d", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    one, many = [], []
    for r in range(args.rounds):
        one.append(fit_seconds(args.n, args.d, 1, r))
        many.append(fit_seconds(args.n, args.d, None, r))
    print(f"N {args.n}, D {args.d}, torch's default {torch.get_num_threads()} threads: "
          f"one thread {np.median(one):.2f} s, default {np.median(many):.2f} s (medians of "
          f"{args.rounds}), ratio default / one {np.median(many) / np.median(one):.1f}")


if __name__ == "__main__":
    main()
