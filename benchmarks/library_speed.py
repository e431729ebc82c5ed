"""Ask time on a finite library: exact enumeration against the grid search, same posterior.

A library of 10^4 or 10^5 points (the product of categorical and discrete inputs of 10 values
each: 4 or 5 inputs), a response of the codes, N random measured points, BARK's default model
(16 samples x 50 trees) fitted once by a ``BARKStrategy``. Then, on that one fitted strategy,
``--asks`` times each in turn:

- ``enumeration``: ``ask(1)`` with solver 'auto' (every point scored, measured points skipped);
- ``grid``: ``ask(1)`` with solver 'bnb' (the grid search, its default gap and time limit);
- ``exact``: the enumeration over every point, measured ones included (``allow_repeats``): the
  exact optimum of the objective the grid search maximizes, to check its candidate.

The path is switched on the same strategy object (its ``solver`` and ``allow_repeats``
attributes), so all three see the same posterior. Printed: median and quartiles of the ask
times, their ratio, the one-time enumeration of the library (``build_library``, cached by the
strategy), and how often the grid search's candidate is the exact optimum (same point, or the
same UCB within 1e-9 when several points tie).

    python -m benchmarks.library_speed [--sizes 4 5] [--asks 20] [--n 30]
        [--seed 0] [--out results/library_speed/speed.txt]
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import publish

N_VALUES = 10


def library_domain(n_inputs: int):
    """``n_inputs`` inputs of 10 values each (alternately categorical and discrete):
    10^n_inputs points."""
    from bofire.data_models.domain.api import Domain, Inputs, Outputs
    from bofire.data_models.features.api import CategoricalInput, ContinuousOutput, DiscreteInput
    from bofire.data_models.objectives.api import MaximizeObjective

    feats = []
    for i in range(n_inputs):
        if i % 2 == 0:
            feats.append(CategoricalInput(key=f"c{i}", categories=[f"k{k}" for k in
                                                                   range(N_VALUES)]))
        else:
            feats.append(DiscreteInput(key=f"d{i}", values=[float(v) for v in range(N_VALUES)]))
    return Domain(inputs=Inputs(features=feats),
                  outputs=Outputs(features=[ContinuousOutput(key="y",
                                                             objective=MaximizeObjective())]))


def response(df: pd.DataFrame, seed: int) -> np.ndarray:
    """A fixed random effect per category plus smooth terms of the discrete values."""
    rng = np.random.default_rng(1000 + seed)
    y = np.zeros(len(df))
    for i, key in enumerate(df.columns):
        if key.startswith("c"):
            effect = dict(zip([f"k{k}" for k in range(N_VALUES)], rng.normal(size=N_VALUES),
                              strict=True))
            y += df[key].map(effect).to_numpy(float)
        else:
            y += np.sin(df[key].to_numpy(float) * (0.5 + 0.2 * i))
    return y


def timed_asks(strategy, n: int, solver: str, allow_repeats: bool) -> tuple[list, list]:
    # the same fitted posterior searched both ways: only the solve's settings change
    strategy.settings = dataclasses.replace(strategy.settings, solver=solver)
    strategy.allow_repeats = allow_repeats
    seconds, results = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        strategy.ask(1)
        seconds.append(time.perf_counter() - t0)
        results.append(strategy.last_results[-1])
    return seconds, results


def measure(n_inputs: int, asks: int, n: int, seed: int) -> dict:
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy

    import bofire_bark  # noqa: F401 (registration)
    from bofire_bark.data_models import BARKStrategy
    from bofire_bark.optimize.library import build_library

    domain = library_domain(n_inputs)
    X = strategies.map(RandomStrategy(domain=domain, seed=seed)).ask(n)
    X = X[domain.inputs.get_keys()]
    data = X.assign(y=response(X, seed), valid_y=1)
    strategy = strategies.map(BARKStrategy(domain=domain, seed=seed))
    t0 = time.perf_counter()
    strategy.tell(data)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    library = build_library(domain, strategy.space)
    build_s = time.perf_counter() - t0
    # warm up (numba caches load at the first call of each path)
    timed_asks(strategy, 1, "auto", False)
    timed_asks(strategy, 1, "bnb", False)
    t_enum, r_enum = timed_asks(strategy, asks, "auto", False)
    t_grid, r_grid = timed_asks(strategy, asks, "bnb", False)
    t_exact, r_exact = timed_asks(strategy, asks, "auto", True)
    exact = r_exact[0]
    same_point = sum(np.array_equal(r.x, exact.x) for r in r_grid)
    same_value = sum(abs(r.ucb - exact.ucb) <= 1e-9 * max(1.0, abs(exact.ucb)) for r in r_grid)
    return {
        "points": len(library.X), "inputs": n_inputs, "measured": n, "fit_s": fit_s,
        "build_library_s": build_s,
        "enum_median_s": float(np.median(t_enum)),
        "enum_q25_s": float(np.quantile(t_enum, 0.25)),
        "enum_q75_s": float(np.quantile(t_enum, 0.75)),
        "exact_median_s": float(np.median(t_exact)),
        "grid_median_s": float(np.median(t_grid)),
        "grid_q25_s": float(np.quantile(t_grid, 0.25)),
        "grid_q75_s": float(np.quantile(t_grid, 0.75)),
        "ratio_grid_over_enum": float(np.median(t_grid) / np.median(t_enum)),
        "enum_scoring_median_s": float(np.median([r.solve_time for r in r_enum])),
        "grid_status": ",".join(sorted({r.status for r in r_grid})),
        "grid_median_gap": float(np.nanmedian([r.gap for r in r_grid])),
        "grid_same_point": f"{same_point}/{asks}",
        "grid_same_ucb": f"{same_value}/{asks}",
        "grid_ucb_median": float(np.median([r.ucb for r in r_grid])),
        "exact_ucb": exact.ucb,
        "enum_ucb": r_enum[0].ucb,
        "enum_skips_measured": not any(
            np.any(np.all(np.isclose(strategy.space.encode(data), r.x), axis=1))
            for r in r_enum),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.library_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 5],
                        help="inputs of 10 values each: 4 gives 10^4 points, 5 gives 10^5")
    parser.add_argument("--asks", type=int, default=20)
    parser.add_argument("--n", type=int, default=30, help="measured points")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="file the table is written to")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    rows = []
    for n_inputs in args.sizes:
        rows.append(measure(n_inputs, args.asks, args.n, args.seed))
        print(" ".join(f"{k}={_short(v)}" for k, v in rows[-1].items()), flush=True)
    table = pd.DataFrame(rows).set_index("points").T
    text = (f"library ask times, {args.asks} asks per path, seed {args.seed}, {args.n} measured "
            f"points\n\n{table.to_string(float_format=lambda x: f'{x:.4g}')}\n")
    if args.out is not None:
        publish(args.out, text)
    else:
        print(text)


def _short(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    main()
