"""BoFire integration of the data models: registration, mapping, JSON round trips, validation."""

from __future__ import annotations

import json
from pathlib import Path

import bofire.data_models.strategies.api as strategy_models
import bofire.strategies.api as strategies
import bofire.surrogates.api as surrogates
import pytest
from bofire.data_models.constraints.api import InterpointEqualityConstraint
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    ContinuousInput,
    ContinuousMolecularInput,
    ContinuousOutput,
)
from bofire.data_models.objectives.api import MaximizeObjective, TargetObjective
from bofire.data_models.strategies.api import RandomStrategy
from bofire.data_models.strategies.stepwise.conditions import (
    AlwaysTrueCondition,
    NumberOfExperimentsCondition,
)
from bofire.data_models.strategies.stepwise.stepwise import Step, StepwiseStrategy
from pydantic import TypeAdapter, ValidationError

import bofire_bark
from bofire_bark.data_models import AnySurrogate, BARKSettings, BARKStrategy, BARKSurrogate
from bofire_bark.strategy import BARKStrategy as FunctionalStrategy
from bofire_bark.surrogate import BARKSurrogate as FunctionalSurrogate

SPECS = Path(__file__).parents[1] / "specs"


def domain(n=2, objective=None, constraints=None):
    return Domain(
        inputs=Inputs(features=[ContinuousInput(key=f"x_{i}", bounds=(0.0, 1.0))
                                for i in range(n)]),
        outputs=Outputs(features=[ContinuousOutput(
            key="y", objective=objective or MaximizeObjective())]),
        constraints=Constraints(constraints=constraints or []),
    )


def same_json(a, b) -> bool:
    return json.loads(a.model_dump_json()) == json.loads(b.model_dump_json())


def test_map_returns_our_classes():
    assert isinstance(strategies.map(BARKStrategy(domain=domain())), FunctionalStrategy)
    d = domain()
    sur = BARKSurrogate(inputs=d.inputs, outputs=d.outputs)
    assert isinstance(surrogates.map(sur), FunctionalSurrogate)


def test_registration_is_idempotent():
    bofire_bark._register.register()
    assert isinstance(strategies.map(BARKStrategy(domain=domain())), FunctionalStrategy)


def test_json_round_trip_through_bofire_union():
    spec = BARKStrategy(domain=domain(), seed=3, kappa=2.5,
                        surrogate_specs=BARKSettings(n_trees=20, thinning=10))
    # read the union at call time: names imported before registration are stale
    back = TypeAdapter(strategy_models.AnyStrategy).validate_json(spec.model_dump_json())
    # BoFire's own models compare unequal after JSON (tuple bounds come back as lists), so
    # equality is of the JSON documents
    assert same_json(back, spec) and isinstance(back, BARKStrategy)
    assert back.surrogate_specs.n_trees == 20


def test_json_round_trip_inside_stepwise_strategy():
    d = domain()
    spec = StepwiseStrategy(domain=d, steps=[
        Step(strategy_data=RandomStrategy(domain=d),
             condition=NumberOfExperimentsCondition(n_experiments=5)),
        Step(strategy_data=BARKStrategy(domain=d, seed=1), condition=AlwaysTrueCondition()),
    ])
    back = TypeAdapter(strategy_models.AnyStrategy).validate_json(spec.model_dump_json())
    assert same_json(back, spec)
    assert isinstance(back.steps[1].strategy_data, BARKStrategy)


def test_surrogate_union_accepts_ours_and_bofires():
    from bofire.data_models.surrogates.api import SingleTaskGPSurrogate

    d = domain()
    adapter = TypeAdapter(AnySurrogate)
    ours = BARKSurrogate(inputs=d.inputs, outputs=d.outputs, n_trees=10)
    theirs = SingleTaskGPSurrogate(inputs=d.inputs, outputs=d.outputs)
    back = adapter.validate_json(ours.model_dump_json())
    assert isinstance(back, BARKSurrogate) and same_json(back, ours)
    assert same_json(adapter.validate_json(theirs.model_dump_json()), theirs)


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.json")), ids=lambda p: p.stem)
def test_specs_load_with_bofires_loader_and_map(path):
    data = json.loads(path.read_text())
    spec = TypeAdapter(strategy_models.AnyStrategy).validate_python(data)
    assert isinstance(spec, BARKStrategy)
    assert isinstance(strategies.map(spec), FunctionalStrategy)


def test_at_least_four_specs():
    assert len(list(SPECS.glob("*.json"))) >= 4


@pytest.mark.parametrize(
    ("settings", "field"),
    [({"n_trees": 0}, "n_trees"), ({"alpha": 1.0}, "alpha"), ({"beta": -1}, "beta"),
     ({"noise_q": 1.5}, "noise_q"), ({"n_chains": 0}, "n_chains"),
     ({"thinning": 0}, "thinning"), ({"burn_in": -1}, "burn_in"), ({"trees": 5}, "trees"),
     ({"noise_prior": "gamma"}, "noise_prior"), ({"noise_loc": float("nan")}, "noise_loc"),
     ({"noise_loc": float("-inf")}, "noise_loc"), ({"noise_scale": 0.0}, "noise_scale"),
     ({"noise_scale": float("inf")}, "noise_scale")],
)
def test_bad_settings_name_the_field(settings, field):
    with pytest.raises(ValidationError, match=field):
        BARKSettings(**settings)


def test_bad_bounds_are_refused():
    with pytest.raises(ValidationError, match="bounds"):
        ContinuousInput(key="x", bounds=(1.0, 0.0))


def test_unknown_constraint_type_in_json_is_refused():
    data = json.loads(BARKStrategy(domain=domain()).model_dump_json())
    data["domain"]["constraints"]["constraints"] = [{"type": "MagicConstraint", "features": []}]
    with pytest.raises(ValidationError, match="MagicConstraint"):
        TypeAdapter(strategy_models.AnyStrategy).validate_python(data)


def test_unsupported_constraint_named():
    c = InterpointEqualityConstraint(features=["x_0"], multiplicity=2)
    with pytest.raises(ValidationError, match="InterpointEqualityConstraint"):
        BARKStrategy(domain=domain(constraints=[c]))


def test_unsupported_feature_named():
    d = Domain(
        inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0, 1)),
                                ContinuousMolecularInput(key="mol", bounds=(0, 1),
                                                         molecule="CCO")]),
        outputs=Outputs(features=[ContinuousOutput(key="y")]),
    )
    with pytest.raises(ValidationError, match="ContinuousMolecularInput"):
        BARKStrategy(domain=d)


def test_unsupported_objective_named():
    from bofire.data_models.objectives.api import MovingMaximizeSigmoidObjective

    d = domain(objective=MovingMaximizeSigmoidObjective(tp=0.0, steepness=1.0))
    with pytest.raises(ValidationError, match="MovingMaximizeSigmoidObjective"):
        BARKStrategy(domain=d)


def test_output_limits_alone_refused():
    d = domain(objective=TargetObjective(target_value=0.5, steepness=1, tolerance=0.1))
    with pytest.raises(ValidationError, match="at least one output with a MaximizeObjective"):
        BARKStrategy(domain=d)


def test_unparseable_nonlinear_expression_named():
    from bofire.data_models.constraints.api import NonlinearInequalityConstraint

    # BoFire refuses an expression sympy cannot parse when the constraint is built
    with pytest.raises(ValidationError, match="exp\\(x_0"):
        NonlinearInequalityConstraint(expression="exp(x_0 + (x_1", features=["x_0", "x_1"])
    unknown = NonlinearInequalityConstraint(expression="x_0 + z", features=["x_0", "x_1"])
    with pytest.raises(ValidationError, match="'z'"):
        BARKStrategy(domain=domain(constraints=[unknown]))
    untranslatable = NonlinearInequalityConstraint(expression="floor(x_0) - x_1",
                                                   features=["x_0", "x_1"])
    with pytest.raises(ValidationError, match="floor"):
        BARKStrategy(domain=domain(constraints=[untranslatable]))


def test_one_list_of_translatable_functions():
    """The names the spec accepts are exactly those the MIP translates."""
    from bofire_bark.optimize.mip.constraints import FUNCTIONS
    from bofire_bark.supported import TRANSLATABLE_FUNCTIONS

    assert set(FUNCTIONS) == set(TRANSLATABLE_FUNCTIONS)
