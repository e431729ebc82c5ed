"""Fit BARK to a mixed-space toy problem and predict (the engine on its own).

Run: python examples/fit_predict.py
"""

from __future__ import annotations

import time

import numpy as np
from bofire.data_models.domain.api import Inputs
from bofire.data_models.features.api import CategoricalInput, ContinuousInput, DiscreteInput

from bofire_bark.engine import fit_posterior
from bofire_bark.space import SplitSpace


def truth(df):
    """A step in temperature, a solvent effect and a small discrete trend."""
    step = np.where(df["temperature"] > 60.0, 2.0, 0.0)
    solvent = df["solvent"].map({"water": 0.0, "ethanol": 1.5, "toluene": -1.0}).to_numpy()
    return step + solvent + 0.1 * df["equivalents"].to_numpy()


def main() -> None:
    inputs = Inputs(
        features=[
            ContinuousInput(key="temperature", bounds=(20.0, 100.0)),
            DiscreteInput(key="equivalents", values=[1.0, 1.5, 2.0, 3.0]),
            CategoricalInput(key="solvent", categories=["water", "ethanol", "toluene"]),
        ]
    )
    space = SplitSpace.from_inputs(inputs)
    rng = np.random.default_rng(0)
    train = inputs.sample(60, seed=1)
    y = truth(train) + 0.2 * rng.normal(size=len(train))

    start = time.perf_counter()
    posterior = fit_posterior(
        space.encode(train), y, space.engine_arrays(),
        n_chains=4, n_samples=4, thinning=100, burn_in=1000, seed=0,
    )
    print(f"fitted 4 chains x 4 samples in {time.perf_counter() - start:.1f} s "
          f"(the first run includes numba's one-off compilation)")

    test = inputs.sample(1000, seed=2)
    y_test = truth(test) + 0.2 * rng.normal(size=len(test))
    pred = posterior.predict(space.encode(test))
    rmse = float(np.sqrt(np.mean((pred["mean"] - y_test) ** 2)))
    sd = np.sqrt(pred["var"])
    inside = np.mean(np.abs(y_test - pred["mean"]) <= 1.645 * sd)
    print(f"test RMSE {rmse:.3f} (noise sd 0.2, y sd {y_test.std():.2f}); "
          f"share inside +-1.645 sd: {inside:.2f}")
    print(f"posterior noise sd (user units): "
          f"{np.sqrt(posterior.samples['sigma2']).mean() * posterior.y_std:.3f}")
    print(test.assign(pred=pred["mean"], sd=sd).head(5).round(3).to_string())


if __name__ == "__main__":
    main()
