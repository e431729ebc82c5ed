"""Write ``spec_463bb32.json`` (a BARK spec as the code at commit 463bb32 wrote it, with
``kappa``), its experiments and the candidates that code asked for, for
``tests/test_acquisition_function.py``.

Run from a checkout of 463bb32: ``PYTHONPATH=. python <this file> OUT_DIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import bofire.strategies.api as strategies
import numpy as np
from bofire.data_models.constraints.api import LinearInequalityConstraint
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
)
from bofire.data_models.objectives.api import MaximizeObjective

from bofire_bark.data_models import BARKSettings, BARKStrategy


def main(out: Path) -> None:
    domain = Domain(
        inputs=Inputs(features=[
            ContinuousInput(key="x1", bounds=(0, 1)), ContinuousInput(key="x2", bounds=(0, 1)),
            CategoricalInput(key="c", categories=["a", "b", "c"])]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())]),
        constraints=Constraints(constraints=[LinearInequalityConstraint(
            features=["x1", "x2"], coefficients=[1.0, 1.0], rhs=1.5)]))
    spec = BARKStrategy(domain=domain, seed=7, kappa=1.5, time_limit=30.0, mip_gap=0.0,
                        surrogate_specs=BARKSettings(n_trees=8, n_chains=2, n_samples=4,
                                                     thinning=5, burn_in=50))
    X = domain.inputs.sample(12, seed=3)
    X["y"] = np.sin(4 * X["x1"]) + X["x2"] * (X["c"] == "b") - 0.5 * (X["c"] == "c")
    X["valid_y"] = 1
    strategy = strategies.map(spec)
    strategy.tell(X)
    cand = strategy.ask(2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "spec_463bb32.json").write_text(spec.model_dump_json(indent=1))
    X.to_csv(out / "spec_463bb32_experiments.csv", index=False)
    cand.to_csv(out / "spec_463bb32_candidates.csv", index=False)
    print(json.dumps([r.status for r in strategy.last_results]), cand)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
