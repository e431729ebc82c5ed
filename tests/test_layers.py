"""Import layering: the data models need nothing of the optimizer or the engine (numba), even
with BoFire registration on, and the default acquisition path (the grid search) needs no Pyomo.
Each check runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def _run(*code: str, **env) -> str:
    """Run the code blocks (each dedented on its own) in one fresh interpreter."""
    source = "\n".join(textwrap.dedent(block) for block in code)
    out = subprocess.run([sys.executable, "-c", source], capture_output=True,
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


# Specs on small mixed domains: one plain, one with categorical_encodings, one finite with a
# CategoricalExcludeConstraint (validated by enumerating the domain's size). Each check below
# builds them in its own interpreter.
_SPECS = """
    from bofire.data_models.constraints.api import (
        CategoricalExcludeConstraint, SelectionCondition)
    from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
    from bofire.data_models.enum import CategoricalEncodingEnum
    from bofire.data_models.features.api import (
        CategoricalDescriptorInput, CategoricalInput, ContinuousInput, ContinuousOutput,
        DiscreteInput)

    from bofire_bark.data_models import BARKSettings, BARKStrategy

    k = DiscreteInput(key="k", values=[1.0, 2.0])
    c = CategoricalInput(key="c", categories=["a", "b", "c"])
    s = CategoricalDescriptorInput(key="s", categories=["u", "v"], descriptors=["p"],
                                   values=[[1.0], [2.0]])
    outputs = Outputs(features=[ContinuousOutput(key="y")])
    domain = Domain(inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0, 1)), k, c, s]),
                    outputs=outputs)
    finite = Domain(inputs=Inputs(features=[k, c, s]), outputs=outputs,
                    constraints=Constraints(constraints=[CategoricalExcludeConstraint(
                        features=["c", "s"], conditions=[SelectionCondition(selection=["a"]),
                                                         SelectionCondition(selection=["u"])])]))
    specs = [BARKStrategy(domain=domain, seed=0),
             BARKStrategy(domain=domain, surrogate_specs=BARKSettings(
                 categorical_encodings={"s": CategoricalEncodingEnum.ONE_HOT})),
             BARKStrategy(domain=finite, seed=1)]
"""

_LOADED = """
    import sys

    def engine_modules():
        return sorted(m for m in sys.modules if m == "numba" or m.startswith(
            ("bofire_bark.engine", "bofire_bark.optimize")))
"""


def test_data_models_validate_without_engine():
    """Registration on (the default): building, validating, dumping and loading specs loads
    neither numba nor the engine nor the optimizer."""
    out = _run(_LOADED, _SPECS, """
        import bofire_bark

        for spec in specs:
            back = bofire_bark.load_spec(spec.model_dump_json())
            assert type(back) is BARKStrategy
            assert back.model_dump_json() == spec.model_dump_json()
        assert specs[1].surrogate_specs.categorical_encodings["s"] == "ONE_HOT"
        print(engine_modules())
    """)
    assert out.strip().splitlines()[-1] == "[]"


def test_map_after_data_models_gives_bark_strategy():
    """BoFire's map loads the functional classes on demand and returns ours."""
    out = _run(_LOADED, _SPECS, """
        assert engine_modules() == [], engine_modules()
        # BoFire's functional modules come after bofire_bark here (our entries wait for them)
        import bofire.strategies.api as strategies
        import bofire.surrogates.api as surrogates

        from bofire_bark.data_models import BARKSurrogate

        mapped = [strategies.map(spec) for spec in specs]
        surrogate = surrogates.map(BARKSurrogate(inputs=domain.inputs, outputs=outputs))

        import bofire_bark.strategy
        import bofire_bark.surrogate

        assert all(isinstance(m, bofire_bark.strategy.BARKStrategy) for m in mapped)
        assert isinstance(surrogate, bofire_bark.surrogate.BARKSurrogate)
        print("ok")
    """)
    assert out.strip().splitlines()[-1] == "ok"


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
