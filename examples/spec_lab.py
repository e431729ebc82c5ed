"""Load a JSON strategy spec and run ask/tell against a simulated lab.

Run: python examples/spec_lab.py [specs/reaction.json] [n_rounds]

The spec is read with ``bofire_bark.load_spec``, which refuses strings BoFire would run as
code and then validates it as BoFire's ``BARKStrategy`` data model, so the same JSON works in a
pipeline that stores strategy specs. The simulated lab answers the reaction spec's domain;
failed runs (about 1 in 8) come back with ``valid_yield = 0``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
from bofire.data_models.strategies.api import RandomStrategy

from bofire_bark import load_spec  # importing bofire_bark registers BARK with BoFire

ROOT = Path(__file__).parents[1]


def lab(batch: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """A made-up reaction: yield in %, best in DMF with Pd2dba3 near 85 degC and 20 min."""
    solvent = batch["solvent"].map(
        {"MeCN": 5.0, "DMF": 15.0, "THF": 0.0, "toluene": -10.0, "EtOH": 3.0})
    catalyst = batch["catalyst"].map(
        {"Pd(OAc)2": 10.0, "Pd2dba3": 18.0, "NiCl2": 0.0, "CuI": -5.0})
    temp = -((batch["temperature"] - 85.0) / 25.0) ** 2 * 20.0
    time_ = -np.log(batch["residence_time"] / 20.0) ** 2 * 8.0
    equiv = -3.0 * (batch["equivalents"] - 1.5) ** 2
    y = 40.0 + solvent + catalyst + temp + time_ + equiv + rng.normal(0.0, 2.0, len(batch))
    failed = rng.uniform(size=len(batch)) < 0.125
    return batch.assign(**{"yield": np.clip(y, 0.0, 100.0).round(1),
                           "valid_yield": (~failed).astype(int)})


def main(spec_path: str = str(ROOT / "specs" / "reaction.json"), n_rounds: int = 4) -> None:
    spec = load_spec(Path(spec_path))  # read as data: no expression string runs
    domain = spec.domain
    keys = domain.inputs.get_keys()
    rng = np.random.default_rng(0)

    strategy = strategies.map(spec)
    start = strategies.map(RandomStrategy(domain=domain, seed=1)).ask(8)[keys]
    strategy.tell(lab(start, rng))
    for round_ in range(1, int(n_rounds) + 1):
        batch = strategy.ask(2)
        print(f"round {round_}: proposed\n"
              f"{batch[keys + ['yield_pred', 'yield_sd']].round(2).to_string()}")
        strategy.tell(lab(batch[keys], rng))
        valid = strategy.experiments[strategy.experiments["valid_yield"] == 1]
        print(f"  best valid yield so far: {valid['yield'].max():.1f} % "
              f"({len(strategy.experiments)} experiments, "
              f"{int((strategy.experiments['valid_yield'] == 0).sum())} failed)\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
