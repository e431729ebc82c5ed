"""Import layering: the data models need nothing of the optimizer, and the default
acquisition path (the grid search) needs no Pyomo. Each check runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def _run(code: str, **env) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env={**os.environ, **env}, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_data_models_import_no_optimizer():
    out = _run("""
        import sys
        import bofire_bark.data_models
        print(sorted(m for m in sys.modules if m.startswith("bofire_bark.optimize")))
    """, BOFIRE_BARK_NO_REGISTRATION="1")
    assert out.strip() == "[]"


def test_default_ask_imports_no_pyomo():
    """A mixed domain with a linear constraint: the grid search answers, without Pyomo."""
    out = _run("""
        import sys
        import bofire.strategies.api as strategies
        import numpy as np
        from bofire.data_models.constraints.api import LinearInequalityConstraint
        from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
        from bofire.data_models.features.api import (
            CategoricalInput, ContinuousInput, ContinuousOutput, DiscreteInput)
        from bofire.data_models.objectives.api import MaximizeObjective

        from bofire_bark.data_models import BARKSettings, BARKStrategy

        inputs = Inputs(features=[
            ContinuousInput(key="x1", bounds=(0, 1)), ContinuousInput(key="x2", bounds=(0, 1)),
            DiscreteInput(key="k", values=[1.0, 2.0, 4.0]),
            CategoricalInput(key="c", categories=["a", "b"])])
        domain = Domain(inputs=inputs, outputs=Outputs(features=[
            ContinuousOutput(key="y", objective=MaximizeObjective())]),
            constraints=Constraints(constraints=[LinearInequalityConstraint(
                features=["x1", "x2"], coefficients=[1.0, 1.0], rhs=1.2)]))
        X = inputs.sample(10, seed=1)
        X["y"] = X["x1"] + X["k"] + (X["c"] == "a")
        X["valid_y"] = 1
        strategy = strategies.map(BARKStrategy(domain=domain, seed=0, time_limit=0.5,
            surrogate_specs=BARKSettings(n_trees=10, n_chains=2, n_samples=2, thinning=5,
                                         burn_in=20)))
        strategy.tell(X)
        cand = strategy.ask(1)
        assert len(cand) == 1
        print(sorted(m for m in sys.modules if m == "pyomo" or m.startswith("pyomo.")))
    """)
    assert out.strip().splitlines()[-1] == "[]"
