"""Strategy specs from outside, loaded as data: ``load_spec``.

BoFire runs some strings of a spec as code. Building a ``NonlinearInequalityConstraint`` or
``NonlinearEqualityConstraint`` derives its Jacobian with ``sympy.S(expression)`` (Python's
``eval``), evaluating it runs ``DataFrame.eval(..., engine="python")``; mapping a surrogate
with a ``dump`` (other than BARK's) or a ``CustomSoboStrategy`` unpickles it;
``ManipulateDataTransform`` strings go to ``DataFrame.eval``; a custom DoE ``formula`` goes to
``eval``. ``load_spec`` reads the raw JSON first and refuses any of these that could run code,
naming where in the spec it is, before a single BoFire model is built; only then does
BoFire's own validation run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bofire_bark.expressions import parse, parse_list

NONLINEAR_TYPES = ("NonlinearInequalityConstraint", "NonlinearEqualityConstraint")
# A surrogate whose dump is ours, checked array by array before use (``BARKSurrogate.loads``);
# every other dump in BoFire 0.5 is a pickle, and unpickling runs code.
SAFE_DUMPS = ("BARKSurrogate",)
# Lists of strings BoFire hands to DataFrame.eval(engine="python").
DATAFRAME_EVAL = ("experiment_transforms", "candidate_transforms", "candidate_untransforms")


def load_spec(source: str | Path | dict):
    """A BoFire strategy data model from a spec that did not necessarily come from a trusted
    hand: a path to a JSON file, a JSON string or an already parsed dict.

    Every expression string is read by BARK's own parser (numbers, the constraint's features,
    ``+ - * / **``, signs and ``exp log sqrt sin cos tan asin acos atan sinh cosh tanh abs
    log10``) before any BoFire model is constructed; pickled models, data-frame transforms and
    custom DoE formulas are refused. Then the data go through BoFire's ``AnyStrategy`` union.

    Raises:
        ValueError: naming the place in the spec (e.g. ``spec.domain.constraints.constraints[0]
            .expression``) and what is wrong, or BoFire's validation error.
    """
    data = _read(source)
    check_spec_data(data)
    from bofire.data_models.strategies import api as strategy_models
    from pydantic import TypeAdapter

    import bofire_bark  # noqa: F401  (registers BARK, so the union below includes it)

    # read at call time: the union includes plugins registered after BoFire's import
    return TypeAdapter(strategy_models.AnyStrategy).validate_python(data)


def _read(source) -> Any:
    if isinstance(source, dict):
        return source
    if isinstance(source, Path):
        text = source.read_text()
    elif isinstance(source, str):
        text = source if source.lstrip().startswith("{") else Path(source).read_text()
    else:
        raise ValueError(f"load_spec takes a path, a JSON string or a dict, got "
                         f"{type(source).__name__}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"the spec is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"a spec is a JSON object, got {type(data).__name__}")
    return data


def check_spec_data(data: Any, where: str = "spec") -> None:
    """Refuse, naming the place, every string in raw spec data that BoFire would run as code
    and BARK's parser does not accept (see the module docstring). Builds no model."""
    if isinstance(data, list):
        for i, item in enumerate(data):
            check_spec_data(item, f"{where}[{i}]")
        return
    if not isinstance(data, dict):
        return
    kind = data.get("type")
    if any(key in data for key in ("expression", "jacobian_expression", "hessian_expression")):
        _check_nonlinear(data, where)
    if data.get("dump") is not None and kind not in SAFE_DUMPS:
        raise ValueError(f"{where}.dump: a pickled model ({kind}); loading it would run code. "
                         "Leave the dump out and fit the model again from the data.")
    for key in DATAFRAME_EVAL:
        if data.get(key):
            raise ValueError(f"{where}.{key}: BoFire runs these strings with DataFrame.eval; "
                             "load_spec does not accept them. Build the transform in code if "
                             "you trust it.")
    formula = data.get("formula")
    if isinstance(formula, str) and formula not in _predefined_formulas():
        raise ValueError(f"{where}.formula: {formula!r} is not one of BoFire's named models "
                         f"{sorted(_predefined_formulas())}; BoFire evaluates a custom formula "
                         "as code. Build it in code if you trust it.")
    for key, value in data.items():
        check_spec_data(value, f"{where}.{key}")


def _check_nonlinear(data: dict, where: str) -> None:
    features = data.get("features")
    if not (isinstance(features, list) and all(isinstance(f, str) for f in features)):
        raise ValueError(f"{where}.features: a nonlinear constraint needs its features as a "
                         f"list of names, got {features!r}")
    variables = {f: j for j, f in enumerate(features)}
    expression = data.get("expression")
    parse(expression, variables, f"{where}.expression")
    for key in ("jacobian_expression", "hessian_expression"):
        text = data.get(key)
        if text is None:
            continue
        try:
            parse_list(text, variables, f"{where}.{key}")
        except ValueError:
            # BoFire writes derivatives of abs and log10 with sympy's own names (Derivative,
            # sign, re, im); such a string is accepted only as BoFire derives it itself.
            if text != _derived(data, key):
                raise
    return


def _derived(data: dict, key: str):
    """The derivative string BoFire builds from an expression ``parse`` accepted (sympy on a
    string of numbers, names, arithmetic and known functions runs nothing else)."""
    from bofire.data_models.constraints import api as constraints

    cls = getattr(constraints, data.get("type") or NONLINEAR_TYPES[0], None)
    if cls is None or cls.__name__ not in NONLINEAR_TYPES:
        cls = getattr(constraints, NONLINEAR_TYPES[0])
    built = cls(expression=data["expression"], features=data["features"])
    return getattr(built, key)


def _predefined_formulas() -> tuple[str, ...]:
    from typing import get_args

    from bofire.data_models.strategies.doe import PREDEFINED_MODEL_TYPES

    return get_args(PREDEFINED_MODEL_TYPES)
