"""Compile (or load from numba's cache) the kernels a BO loop uses, before the first real fit:
``python -m bofire_bark warmup``, e.g. when a pipeline's image is built, so that no user's
first ``tell`` / ``ask`` waits for numba.

Each case is a small strategy told a few random points and asked one candidate, on a domain
that takes one of the default paths: the numba box loop (continuous inputs), the Python box
loop under linear, NChooseK and nonlinear constraints with discrete and categorical inputs,
several outputs with a limit, an enumerated finite domain, and the leaf-space likelihood. The
sizes are tiny; the kernels' types, and so their compiled code, are those of any size.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger("bofire_bark")


@dataclass
class WarmupCase:
    """What one case did: its wall seconds, the ask's status and the search's seconds."""

    name: str
    seconds: float
    status: str
    solve_seconds: float


def _domains() -> dict:
    from bofire.data_models.constraints.api import (
        LinearEqualityConstraint,
        NChooseKConstraint,
        NonlinearInequalityConstraint,
    )
    from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
    from bofire.data_models.features.api import (
        CategoricalInput,
        ContinuousInput,
        ContinuousOutput,
        DiscreteInput,
    )
    from bofire.data_models.objectives.api import (
        MaximizeObjective,
        MinimizeObjective,
        MinimizeSigmoidObjective,
    )

    y = ContinuousOutput(key="y", objective=MaximizeObjective())
    fractions = ["f1", "f2", "f3"]
    mixed = Inputs(features=[*(ContinuousInput(key=k, bounds=(0.0, 1.0)) for k in fractions),
                             ContinuousInput(key="t", bounds=(20.0, 80.0)),
                             DiscreteInput(key="e", values=[1.0, 1.5, 2.5]),
                             CategoricalInput(key="c", categories=["A", "B", "C"])])
    constraints = Constraints(constraints=[
        LinearEqualityConstraint(features=fractions, coefficients=[1.0, 1.0, 1.0], rhs=1.0),
        NChooseKConstraint(features=fractions, min_count=1, max_count=2,
                           none_also_valid=False),
        NonlinearInequalityConstraint(expression="f1 * t - 40", features=["f1", "t"])])
    return {
        "continuous": Domain(inputs=Inputs(features=[
            ContinuousInput(key=f"x{i}", bounds=(0.0, 1.0)) for i in range(3)]),
            outputs=Outputs(features=[y])),
        "constrained": Domain(inputs=mixed, outputs=Outputs(features=[y]),
                              constraints=constraints),
        "several outputs": Domain(inputs=mixed, outputs=Outputs(features=[
            y, ContinuousOutput(key="cost", objective=MinimizeObjective()),
            ContinuousOutput(key="impurity", objective=MinimizeSigmoidObjective(
                tp=0.5, steepness=10))])),
        "finite": Domain(inputs=Inputs(features=mixed.features[4:]),
                         outputs=Outputs(features=[y])),
    }


def warmup(seed: int = 0) -> list[WarmupCase]:
    """Run every case once (see the module docstring); returns what each did."""
    import bofire.strategies.api as strategies

    from bofire_bark.data_models import BARKSettings, BARKStrategy
    from bofire_bark.jit import compiling

    fast = BARKSettings(n_trees=5, n_chains=2, n_samples=2, thinning=2, burn_in=20)
    cases = [(name, domain, fast) for name, domain in _domains().items()]
    # the leaf-space likelihood (N above 3 m) on the continuous domain
    cases.append(("leaf likelihood", cases[0][1], fast.model_copy(update={"likelihood": "leaf"})))
    out = []
    rng = np.random.default_rng(seed)
    with compiling("the warm-up", "engine", "optimize"):
        for name, domain, settings in cases:
            t0 = time.perf_counter()
            strategy = strategies.map(BARKStrategy(domain=domain, surrogate_specs=settings,
                                                   seed=seed))
            X = domain.inputs.sample(8, seed=seed)
            for key in domain.outputs.get_keys():
                X[key] = rng.normal(size=len(X))
                X[f"valid_{key}"] = 1
            strategy.tell(X)
            strategy.ask(1)
            result = strategy.last_results[0]
            out.append(WarmupCase(name, time.perf_counter() - t0, result.status,
                                  float(result.solve_time)))
            logger.info("BARK warm-up %s: %.1f s (ask: %s)", name, out[-1].seconds,
                        result.status)
    return out
