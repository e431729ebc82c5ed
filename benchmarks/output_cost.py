"""What a fit costs per output: one BARKStrategy tell with one, two and three outputs on the
same experiments, at the default MCMC settings (4 chains, burn-in 1000, thinning 100,
continuation up to 12800 sweeps while the chains disagree).

Run: ``python -m benchmarks.output_cost [--n 20] [--seeds 0 1] [--out results/output_cost]``.
Prints a markdown table (one row per fit and output: seconds, sweeps per chain, largest R-hat)
and the totals per number of outputs, and writes them to ``OUT/table.md``. A throwaway fit
runs first so numba's compilation (logged at INFO, paid once per environment) is not counted.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "results" / "output_cost"
OUTPUTS = ("yield", "impurity", "cost")  # declared in this order


def domain(n_outputs: int):
    from bofire.data_models.domain.api import Domain
    from bofire.data_models.features.api import (
        CategoricalInput,
        ContinuousInput,
        ContinuousOutput,
        DiscreteInput,
    )
    from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective

    objectives = {"yield": MaximizeObjective(), "impurity": MinimizeObjective(),
                  "cost": MinimizeObjective()}
    return Domain.from_lists(
        inputs=[ContinuousInput(key="temperature", bounds=(20.0, 100.0)),
                ContinuousInput(key="time", bounds=(1.0, 60.0)),
                DiscreteInput(key="equivalents", values=[1.0, 1.5, 2.0, 3.0]),
                CategoricalInput(key="solvent", categories=["water", "ethanol", "toluene"])],
        outputs=[ContinuousOutput(key=k, objective=objectives[k])
                 for k in OUTPUTS[:n_outputs]])


def lab(X: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """A made-up reaction: yield, impurity and cost, each with noise."""
    solvent = X["solvent"].map({"water": 0.0, "ethanol": 15.0, "toluene": 5.0})
    out = X.copy()
    out["yield"] = (50 - 0.01 * (X.temperature - 70) ** 2 + solvent + 5 * np.log(X.time)
                    + rng.normal(0, 2, len(X)))
    out["impurity"] = 0.02 * X.temperature + 0.3 * X.equivalents + rng.normal(0, 0.1, len(X))
    out["cost"] = 10 * X.equivalents + 0.1 * X.time + (X.solvent == "toluene") * 5.0
    for key in OUTPUTS:
        out[f"valid_{key}"] = 1
    return out


def one_tell(n_outputs: int, data: pd.DataFrame, seed: int) -> tuple[float, pd.DataFrame]:
    import bofire.strategies.api as strategies

    import bofire_bark  # noqa: F401
    from bofire_bark.data_models import BARKStrategy

    strategy = strategies.map(BARKStrategy(domain=domain(n_outputs), seed=seed))
    keep = [c for c in data if not any(c in (k, f"valid_{k}") for k in OUTPUTS[n_outputs:])]
    start = time.perf_counter()
    strategy.tell(data[keep])
    return time.perf_counter() - start, strategy.fit_summary()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.output_cost",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="experiments told")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy

    X = strategies.map(RandomStrategy(domain=domain(3), seed=0)).ask(args.n)
    data = lab(X[domain(3).inputs.get_keys()], np.random.default_rng(0))
    one_tell(1, data.iloc[:5], seed=99)  # compiles numba's kernels if the cache is cold
    rows, totals = [], []
    for seed in args.seeds:
        for n_outputs in (1, 2, 3):
            wall, summary = one_tell(n_outputs, data, seed)
            totals.append({"outputs": n_outputs, "seed": seed, "tell_s": wall})
            for key, r in summary.iterrows():
                rows.append({"outputs": n_outputs, "seed": seed, "output": key,
                             "seconds": r.seconds, "sweeps": int(r.sweeps), "rhat": r.rhat})
    per = pd.DataFrame(rows)
    tot = pd.DataFrame(totals).groupby("outputs").tell_s.agg(["median", "min", "max"])
    load = os.getloadavg()[1]  # the machine may be shared: its 5-minute load, to read by
    lines = [f"Measured by `python -m benchmarks.output_cost --n {args.n} --seeds "
             f"{' '.join(map(str, args.seeds))}` (Python {platform.python_version()}, "
             f"{os.cpu_count()} cores, load average {load:.1f} at the end), N = {args.n}, "
             "default settings.", "",
             "| outputs | seed | output | seconds | sweeps per chain | max R-hat |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r.outputs} | {r.seed} | {r.output} | {r.seconds:.1f} | {r.sweeps} | "
              f"{r.rhat:.2f} |" for r in per.itertuples()]
    lines += ["", "| outputs | tell, median s | min | max |", "|---|---|---|---|"]
    lines += [f"| {k} | {r['median']:.1f} | {r['min']:.1f} | {r['max']:.1f} |"
              for k, r in tot.iterrows()]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.md").write_text(text)


if __name__ == "__main__":
    main()
