"""Quickstart: a BARK Bayesian-optimization loop on BoFire's Hartmann-6 benchmark.

Run: python examples/quickstart.py [n_iterations]

Each iteration tells BARK the experiments so far (the MCMC continues its chains from the last
fit) and asks for one candidate: the grid branch-and-bound search maximizes the integrated UCB
over all posterior samples and proves how far from optimal its answer can be (the gap). In a
fresh environment the first fit and the first two asks compile numba's kernels (about a
minute in all here; logged at INFO); later runs load them from the cache.
"""

from __future__ import annotations

import logging
import sys
import time

import bofire.strategies.api as strategies
from bofire.benchmarks.api import Hartmann
from bofire.data_models.strategies.api import RandomStrategy

import bofire_bark  # noqa: F401  (registers BARK with BoFire)
from bofire_bark.data_models import BARKStrategy


def main(n_iterations: int = 10) -> None:
    logging.basicConfig(level=logging.WARNING)
    bench = Hartmann(dim=6)  # minimize; global minimum -3.32237
    domain = bench.domain

    initial = strategies.map(RandomStrategy(domain=domain, seed=0)).ask(12)
    experiments = bench.f(initial, return_complete=True)

    # Paper defaults for the model (4 chains x 4 samples, 50 trees); up to 20 s of search per
    # candidate (the default is 2.5 s; the search stops earlier once its gap is proven).
    strategy = strategies.map(BARKStrategy(domain=domain, seed=0, time_limit=20.0))
    strategy.tell(experiments)
    print(f"initial best of {len(experiments)} random points: {experiments['y'].min():.4f}")
    print(" iter        y     best   fit s   ask s   solver status")
    for it in range(1, n_iterations + 1):
        start = time.perf_counter()
        candidate = strategy.ask(1)
        ask_s = time.perf_counter() - start
        result = strategy.last_results[-1]
        new = bench.f(candidate[domain.inputs.get_keys()], return_complete=True)
        start = time.perf_counter()
        strategy.tell(new)
        fit_s = time.perf_counter() - start
        best = strategy.experiments["y"].min()
        print(f"{it:5d} {new['y'].iloc[0]:8.4f} {best:8.4f} {fit_s:7.2f} {ask_s:7.2f}   "
              f"{result.solver} {result.status} (gap {result.gap:.3f})")
    print(f"best found: {strategy.experiments['y'].min():.4f} (global minimum -3.3224)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
