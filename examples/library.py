"""A solvent screen over a finite library, with the solvents' descriptors.

Run: python examples/library.py [n_iterations]

The spec ``specs/library.json`` (built by ``specs/build_specs.py``) has one
``CategoricalDescriptorInput`` (24 solvents: permittivity, boiling point, dipole moment) and a
discrete temperature: 96 points. BARK splits the solvents by their descriptors, so a solvent
never tried is predicted from similar ones, and every ask scores all 96 points exactly
(solver "enumeration", gap 0) and never proposes a measured point again. The yield here is a
made-up function of permittivity and temperature standing in for the lab.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd

from bofire_bark import load_spec

SPEC = Path(__file__).resolve().parents[1] / "specs" / "library.json"


def lab(X: pd.DataFrame, table: pd.DataFrame) -> pd.Series:
    """Yield (%): best near permittivity 30 and 60 degC (the descriptor decides, not the name)."""
    eps = table.loc[X["solvent"], "permittivity"].to_numpy()
    temp = X["temperature"].to_numpy()
    return pd.Series(90.0 * np.exp(-((np.log(eps) - np.log(30.0)) ** 2) / 0.5)
                     - 0.01 * (temp - 60.0) ** 2, index=X.index)


def main(n_iterations: int = 8) -> None:
    logging.basicConfig(level=logging.WARNING)
    spec = load_spec(SPEC)
    table = spec.domain.inputs.get_by_key("solvent").to_df()
    grid = pd.MultiIndex.from_product([table.index, [25.0, 40.0, 60.0, 80.0]],
                                      names=["solvent", "temperature"]).to_frame(index=False)
    best_possible = lab(grid, table).max()

    rng = np.random.default_rng(0)
    start = grid.iloc[rng.choice(len(grid), 6, replace=False)].reset_index(drop=True)
    experiments = start.assign(**{"yield": lab(start, table), "valid_yield": 1})
    strategy = strategies.map(spec)
    print(f"library optimum {best_possible:.1f}; best of {len(start)} random picks "
          f"{experiments['yield'].max():.1f}")
    for it in range(1, n_iterations + 1):
        strategy.tell(experiments, replace=True)
        candidate = strategy.ask(1)
        result = strategy.last_results[-1]
        y = float(lab(candidate, table).iloc[0])
        row = candidate[["solvent", "temperature"]].assign(**{"yield": y, "valid_yield": 1})
        experiments = pd.concat([experiments, row], ignore_index=True)
        print(f"{it:3d}  {row.solvent.iloc[0]:>11s} {row.temperature.iloc[0]:5.0f} degC  "
              f"yield {y:5.1f}  best {experiments['yield'].max():5.1f}  "
              f"({result.solver}, {result.status})")
    print("\nwhich descriptors the forest split on:")
    print(strategy.feature_relevance(detail=True)[["split_prob", "split_share"]].round(3))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
