"""Several outputs from a JSON spec: maximize yield, minimize cost, keep the impurity under its
limit, log the colour; a simulated lab where some impurity assays fail.

Run: python examples/pipeline.py [n_rounds]

Every output gets its own BARK posterior, each fitted on the rows where that output was
measured (a failed assay drops the impurity only). Every candidate aims at the Pareto front of
yield and cost with its own random Chebyshev weights, among the points whose impurity may
still meet the 0.5 % limit (``bofire_bark.optimize.outputs``). At the end the feasible Pareto
front found so far is printed.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
from bofire.data_models.strategies.api import RandomStrategy

from bofire_bark import load_spec  # importing bofire_bark registers BARK with BoFire

ROOT = Path(__file__).parents[1]


def lab(batch: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """A made-up coupling: hot and loaded is fast but dirty and dear; Cs2CO3/XPhos is best."""
    base = batch["base"].map({"K2CO3": 0.0, "Cs2CO3": 8.0, "Et3N": -6.0, "DBU": 3.0})
    ligand = batch["ligand"].map({"XPhos": 6.0, "SPhos": 4.0, "PPh3": -4.0})
    t = (batch["temperature"] - 40.0) / 70.0
    load = batch["catalyst_loading"]
    eq = batch["equivalents"]
    y = 35.0 + base + ligand + 30.0 * t - 12.0 * t**2 + 6.0 * np.log(load) + 4.0 * (eq - 1.0)
    cost = 20.0 + 9.0 * load + 6.0 * eq + 5.0 * (batch["base"] == "Cs2CO3") \
        + 4.0 * (batch["ligand"] != "PPh3")
    impurity = 0.1 + 0.7 * t**2 + 0.05 * load + 0.1 * (batch["base"] == "DBU")
    colour = 50.0 + 200.0 * impurity
    failed = rng.uniform(size=len(batch)) < 0.15  # the impurity assay fails now and then
    out = batch.assign(**{
        "yield": np.clip(y + rng.normal(0, 1.5, len(batch)), 0, 100).round(1),
        "cost": (cost + rng.normal(0, 0.5, len(batch))).round(2),
        "impurity": (impurity + rng.normal(0, 0.02, len(batch))).round(3),
        "colour": colour.round(0),
    })
    out.loc[failed, "impurity"] = np.nan
    for key in ("yield", "cost", "impurity", "colour"):
        out[f"valid_{key}"] = out[key].notna().astype(int)
    return out


def pareto(df: pd.DataFrame) -> pd.DataFrame:
    """Rows meeting the impurity limit that no other such row beats in yield and cost."""
    ok = df[(df["valid_impurity"] == 1) & (df["impurity"] <= 0.5)]
    keep = [i for i, r in ok.iterrows()
            if not ((ok["yield"] >= r["yield"]) & (ok["cost"] <= r["cost"])
                    & ((ok["yield"] > r["yield"]) | (ok["cost"] < r["cost"]))).any()]
    return ok.loc[keep].sort_values("yield")


def main(n_rounds: int = 5) -> None:
    logging.basicConfig(level=logging.WARNING)
    # load_spec reads the spec as data (BoFire alone would run its expression strings)
    spec = load_spec(ROOT / "specs" / "pipeline.json")
    domain = spec.domain
    keys = domain.inputs.get_keys()
    rng = np.random.default_rng(0)
    strategy = strategies.map(spec)
    strategy.tell(lab(strategies.map(RandomStrategy(domain=domain, seed=1)).ask(10)[keys], rng))
    for round_ in range(1, int(n_rounds) + 1):
        batch = strategy.ask(2)
        cols = keys + ["yield_pred", "cost_pred", "impurity_pred", "impurity_sd"]
        print(f"round {round_}:\n{batch[cols].round(2).to_string()}")
        for r in strategy.last_results:
            print("   ", r.summary())
        strategy.tell(lab(batch[keys], rng))
    front = pareto(strategy.experiments)
    print(f"\nfeasible Pareto front after {len(strategy.experiments)} experiments "
          f"({int((strategy.experiments['valid_impurity'] == 0).sum())} failed assays):")
    print(front[keys + ["yield", "cost", "impurity"]].to_string())


if __name__ == "__main__":
    main(*sys.argv[1:2])
