"""A mistake in a BARK spec is reported by load_spec with its cause first: the place in the
spec, what was expected, a close match for a misspelt key or feature. Other strategies keep
BoFire's own report."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from bofire_bark import load_spec
from bofire_bark.data_models import BARKSettings, BARKStrategy
from bofire_bark.loading import SpecError

REACTION = Path(__file__).parents[1] / "specs" / "reaction.json"
SPEC = json.loads(REACTION.read_text())
HEAD = 300  # where the cause must appear


def edited(edit) -> dict:
    data = copy.deepcopy(SPEC)
    edit(data)
    return data


def rename(mapping: dict, old: str, new: str) -> None:
    mapping[new] = mapping.pop(old)


def add_constraint(data: dict, features: list[str]) -> None:
    data["domain"]["constraints"]["constraints"].append(
        {"type": "LinearInequalityConstraint", "features": features,
         "coefficients": [1.0] * len(features), "rhs": 150.0})


# (edit, what the first HEAD characters must name)
TYPOS = {
    "n_tree": (lambda d: rename(d["surrogate_specs"], "n_trees", "n_tree"),
               "spec.surrogate_specs.n_tree"),
    "time_limt": (lambda d: rename(d["acquisition_optimizer"], "time_limit", "time_limt"),
                  "spec.acquisition_optimizer.time_limt: unknown key; did you mean "
                  "'time_limit'?"),
    "n_dul": (lambda d: rename(d["acquisition_optimizer"]["grid"], "n_dual", "n_dul"),
              "spec.acquisition_optimizer.grid.n_dul: unknown key; did you mean 'n_dual'?"),
    # at the top level, as specs before acquisition_optimizer gave the search's keys
    "top time_limt": (lambda d: d.update(time_limt=1.0),
                      "spec.time_limt: unknown key; did you mean 'time_limit'?"),
    "temprature": (lambda d: add_constraint(d, ["temprature", "residence_time"]),
                   "'temprature' is not an input"),
    "categorical_encodings": (
        lambda d: d["surrogate_specs"]["categorical_encodings"].update(temperature="ONE_HOT"),
        "categorical_encodings names 'temperature', which is not a categorical input"),
    "kappa": (lambda d: d.update(kappa=-1.0), "kappa: the UCB weight must be a finite "
              "number >= 0"),
}


def error_of(data) -> ValueError:
    with pytest.raises(ValueError) as info:
        load_spec(data)
    return info.value


@pytest.mark.parametrize("name", list(TYPOS))
def test_cause_comes_first(name):
    edit, cause = TYPOS[name]
    err = error_of(edited(edit))
    assert isinstance(err, SpecError)
    assert cause in str(err)[:HEAD], str(err)[:HEAD]
    # BoFire's union header (every strategy it knows) is not in the message at all
    assert "SoboStrategy" not in str(err)
    # pydantic's full report stays at hand
    assert isinstance(err.__cause__, ValidationError)


def test_suggestion_for_a_misspelt_setting():
    err = error_of(edited(TYPOS["n_tree"][0]))
    assert str(err).startswith("spec.surrogate_specs.n_tree: unknown key; did you mean "
                               "'n_trees'?")


def test_suggestion_for_a_misspelt_feature_in_a_constraint():
    err = error_of(edited(TYPOS["temprature"][0]))
    assert str(err).startswith("spec.domain.constraints.constraints[0].features: 'temprature' "
                               "is not an input of the domain; did you mean 'temperature'?")


def test_suggestion_for_a_misspelt_encoding_key():
    err = error_of(edited(lambda d: rename(d["surrogate_specs"]["categorical_encodings"],
                                           "solvent", "solvnt")))
    assert "'solvnt'" in str(err)[:HEAD]
    assert "did you mean 'solvent'?" in str(err)


@pytest.mark.parametrize(("edit", "first"), [
    # inside BoFire's tagged unions: the tag is no key of the spec and is left out
    (lambda d: rename(d["domain"]["inputs"]["features"][2], "bounds", "bonds"),
     "spec.domain.inputs.features[2].bonds: unknown key; did you mean 'bounds'?"),
    (lambda d: d["domain"]["outputs"]["features"][0]["objective"].update(ww=1.0),
     "spec.domain.outputs.features[0].objective.ww: unknown key; did you mean 'w'?"),
])
def test_suggestion_inside_domain(edit, first):
    assert str(error_of(edited(edit))).startswith(first)


def test_misspelt_constraint_key_named():
    def edit(d):
        add_constraint(d, ["temperature", "residence_time"])
        rename(d["domain"]["constraints"]["constraints"][0], "features", "featurs")

    text = str(error_of(edited(edit)))
    assert "spec.domain.constraints.constraints[0].featurs: unknown key; did you mean " \
           "'features'?" in text[:HEAD]


@pytest.mark.parametrize(("model", "where"), [(BARKStrategy, ()),
                                              (BARKSettings, ("surrogate_specs",))])
def test_every_field_suggested(model, where):
    """Field names come from the models themselves, so a field added later is suggested too."""
    for field in model.model_fields:
        if field == "type" or len(field) < 5:
            continue
        typo = field[:2] + field[3:]  # one letter dropped

        def edit(d, typo=typo):
            target = d
            for key in where:
                target = target[key]
            target[typo] = None

        text = str(error_of(edited(edit)))
        assert f"unknown key; did you mean '{field}'?" in text.splitlines()[0], (field, text)


def test_other_strategies_keep_bofire_errors():
    from bofire.data_models.strategies.api import SoboStrategy

    data = json.loads(SoboStrategy(domain=BARKStrategy.model_validate(SPEC).domain)
                      .model_dump_json())
    assert load_spec(data).type == "SoboStrategy"
    data["seeed"] = 1
    err = error_of(data)
    assert isinstance(err, ValidationError)
    assert not isinstance(err, SpecError)
    assert "seeed" in str(err)


def test_import_order_of_bofire_union():
    """BoFire's AnyStrategy is a new union object once BARK registers; a name bound before
    ``import bofire_bark`` is the old union, without BARK. The ways the docs give work."""
    code = textwrap.dedent("""
        import json, sys
        from bofire.data_models.strategies.api import AnyStrategy as bound_early
        from pydantic import TypeAdapter, ValidationError

        import bofire_bark
        import bofire.data_models.strategies.api as strategy_models
        from bofire.data_models.strategies.api import AnyStrategy as bound_late

        data = json.loads(open(sys.argv[1]).read())
        try:
            TypeAdapter(bound_early).validate_python(data)
            print("early: loaded")
        except ValidationError as err:
            print("early:", err.errors()[0]["type"])
        print("load_spec:", bofire_bark.load_spec(data).type)
        print("at call time:",
              TypeAdapter(strategy_models.AnyStrategy).validate_python(data).type)
        print("bound late:", TypeAdapter(bound_late).validate_python(data).type)
    """)
    out = subprocess.run([sys.executable, "-c", code, str(REACTION)], capture_output=True,
                         text=True, timeout=600, env={**os.environ})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "early: union_tag_invalid",  # the trap the docs describe
        "load_spec: BARKStrategy",
        "at call time: BARKStrategy",
        "bound late: BARKStrategy",
    ]
