"""Bound calls per second of one tree (old or new), on the boxes of random dives from the root
of a few cached posteriors: ``PYTHONPATH=<tree> python results/refactor/bound_speed.py CACHE``.
Prints one JSON line: case -> (bound calls per second, checksum of the bounds)."""

from __future__ import annotations

import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

CASES = ("bo_TreeFunctionCat_0_50.pkl", "bo_Hartmann6_0_32.pkl", "bo_DiscreteAckley_0_46.pkl",
         "spec_reaction_1_50.pkl")


def grid_of(post, domain, space, sign):
    try:
        from bofire_bark.optimize import grid as gr
        from bofire_bark.optimize.problem import build_problem
    except ImportError:  # the tree before issue 24
        from bofire_bark.optimize.optimizer import build_problem

        from bofire_bark.optimize import bnb as gr
    problem, systems = build_problem(post, domain, space, 1.96, sign, gps=False)
    return gr.Grid(gr.grid_model(problem, systems, post), problem.box)


def boxes(grid, n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        lo, hi, cat = grid.root()
        for _ in range(40):
            out.append((lo, hi, cat))
            _ub, n_und, split = grid.bound(lo, hi, cat)
            if n_und == 0:
                break
            lo, hi, cat = grid.branch(lo, hi, cat, split)[rng.integers(2)]
    return out[:n]


def main() -> None:
    cache = Path(sys.argv[1])
    out = {}
    for name in CASES:
        _, domain, space, post, sign = pickle.loads((cache / name).read_bytes())
        grid = grid_of(post, domain, space, sign)
        bs = boxes(grid, 400)
        for b in bs[:20]:
            grid.bound(*b)  # compiled / loaded
        best = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            total = sum(grid.bound(*b)[0] for b in bs)
            best = min(best, time.perf_counter() - t0)
        out[name] = (len(bs) / best, float(total))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
