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

import dataclasses
import difflib
import json
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin, get_type_hints

from bofire_bark.expressions import parse, parse_list

# pydantic's error types for a key no field takes (a model's; a dataclass's)
UNKNOWN_KEY = ("extra_forbidden", "unexpected_keyword_argument")

NONLINEAR_TYPES = ("NonlinearInequalityConstraint", "NonlinearEqualityConstraint")
# A surrogate whose dump is ours, checked array by array before use (``BARKSurrogate.loads``);
# every other dump in BoFire 0.5 is a pickle, and unpickling runs code.
SAFE_DUMPS = ("BARKSurrogate",)
# Lists of strings BoFire hands to DataFrame.eval(engine="python").
# Spec types validated by BARK's own model (``bofire_bark.data_models``), not BoFire's union.
BARK_TYPES = ("BARKStrategy",)
DATAFRAME_EVAL = ("experiment_transforms", "candidate_transforms", "candidate_untransforms")


def load_spec(source: str | Path | dict):
    """A BoFire strategy data model from a spec that did not necessarily come from a trusted
    hand: a path to a JSON file, a JSON string or an already parsed dict.

    Every expression string is read by BARK's own parser (numbers, the constraint's features,
    ``+ - * / **``, signs and ``exp log sqrt sin cos tan asin acos atan sinh cosh tanh abs
    log10``) before any BoFire model is constructed; pickled models, data-frame transforms and
    custom DoE formulas are refused. Then the data go through BoFire's ``AnyStrategy`` union,
    except a ``BARKStrategy`` spec, which BARK's own model validates: the union's error report
    starts with some 4,000 characters naming every BoFire strategy before the cause.

    Raises:
        ValueError: naming the place in the spec (e.g. ``spec.domain.constraints.constraints[0]
            .expression``) and what is wrong. For a BARK spec a ``SpecError``, one line per
            cause (``spec.surrogate_specs.n_tree: unknown key; did you mean 'n_trees'?``),
            pydantic's full report chained as its ``__cause__``; for other strategies
            BoFire's validation error.
    """
    data = _read(source)
    check_spec_data(data)
    from bofire.data_models.strategies import api as strategy_models
    from pydantic import TypeAdapter

    import bofire_bark  # noqa: F401  (registers BARK, so the union below includes it)

    if data.get("type") in BARK_TYPES:
        return _validate_bark(data, data["type"])
    # read at call time: the union includes plugins registered after BoFire's import
    return TypeAdapter(strategy_models.AnyStrategy).validate_python(data)


class SpecError(ValueError):
    """A BARK spec its data model refused. The message starts with the causes, one line
    each, at their places in the spec; pydantic's report is the ``__cause__``."""


def _validate_bark(data: dict, name: str):
    from pydantic import ValidationError

    from bofire_bark import data_models

    model = getattr(data_models, name)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        errors = err.errors(include_url=False)
        # a union tries every alternative; the one the data's "type" names is the cause
        chosen = [e for e in errors if not _walk(model, e["loc"], data)[2]] or errors
        # a misspelt key first: the field it leaves missing follows from it
        chosen.sort(key=lambda e: e["type"] not in UNKNOWN_KEY)
        causes = _unknown_constraint_features(data)
        for line in (_describe(e, model, data) for e in chosen):
            if line not in causes:
                causes.append(line)
        raise SpecError("\n".join(causes) + f"\n(in a {name} spec; pydantic's full report is "
                        "this error's __cause__)") from err


def _describe(error: dict, model, data) -> str:
    """One pydantic error as 'place: what is wrong', a close match for an unknown key."""
    loc = tuple(p for p in error["loc"] if not _is_label(p))
    where = _where(_walk(model, loc, data)[1])
    if error["type"] in UNKNOWN_KEY:
        owner = _walk(model, loc[:-1], data)[0]
        names = sorted(_field_types(owner)) + sorted(getattr(owner, "SPEC_ALIASES", ()))
        names = list(dict.fromkeys(names))
        match = difflib.get_close_matches(str(loc[-1]), names, n=1)
        if match:
            return f"{where}: unknown key; did you mean {match[0]!r}?"
        known = f" ({owner.__name__} takes {', '.join(names)})" if names else ""
        return f"{where}: unknown key{known}"
    message = error["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    value = error.get("input")
    if not isinstance(value, (dict, list)) and len(repr(value)) <= 60 and loc:
        message += f" (got {value!r})"
    return f"{where}: {message}"


def _where(path) -> str:
    return "spec" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _walk(model, loc, data) -> tuple[Any, list, bool]:
    """Follow a pydantic error location below ``model`` and through the raw ``data``: the
    model there (None where it cannot be followed), the path as written in the spec (a
    union's tags and labels, which pydantic puts in the location, are no keys of the spec),
    and whether the location goes through a union alternative other than the one the data's
    ``type`` names."""
    tp, path, elsewhere = model, [], False
    for part in loc:
        if _is_label(part):  # e.g. 'tagged-union[...]', 'str-enum[...]'
            continue
        members = _members(tp)
        tagged = [m for m in members if _is_model(m) and part in (m.__name__, _tag(m))]
        if tagged:
            tp = tagged[0]
            named = data.get("type") if isinstance(data, dict) else None
            elsewhere |= isinstance(named, str) and named not in (tp.__name__, _tag(tp))
            continue
        path.append(part)
        data = _item(data, part)
        models = [m for m in members if _is_model(m)]
        if len(models) == 1 and isinstance(part, str):
            tp = _field_types(models[0]).get(part)
        elif len(members) == 1 and get_origin(members[0]) is not None:
            args = get_args(members[0])
            # a sequence's items at an index, a mapping's values at a key
            tp = args[-1] if args else None
        else:
            tp = None
    members = [m for m in _members(tp) if _is_model(m)]
    return (members[0] if len(members) == 1 else None), path, elsewhere


def _is_label(part) -> bool:
    return isinstance(part, str) and "[" in part


def _item(data, part):
    if isinstance(data, dict):
        return data.get(part)
    if isinstance(data, list) and isinstance(part, int) and -len(data) <= part < len(data):
        return data[part]
    return None


def _members(tp) -> list:
    """A type without Annotated, Optional, TypeVars and unions: its alternatives."""
    if tp is None or tp is type(None):
        return []
    if isinstance(tp, TypeVar):
        return _members(tp.__bound__)
    origin = get_origin(tp)
    if origin is Annotated:
        return _members(get_args(tp)[0])
    if origin is Union or isinstance(tp, UnionType):
        return [m for arg in get_args(tp) for m in _members(arg)]
    return [tp]


def _is_model(tp) -> bool:
    """A pydantic model, or a dataclass pydantic validates (``settings.SearchSettings``)."""
    from pydantic import BaseModel

    return isinstance(tp, type) and (issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp))


def _field_types(tp) -> dict:
    """Field name -> annotation of a model or dataclass ({} for anything else)."""
    if not _is_model(tp):
        return {}
    if dataclasses.is_dataclass(tp):
        hints = get_type_hints(tp)
        return {f.name: hints.get(f.name) for f in dataclasses.fields(tp)}
    return {name: field.annotation for name, field in tp.model_fields.items()}


def _tag(model) -> Any:
    fields = getattr(model, "model_fields", {})  # a dataclass has no tag
    return fields["type"].default if "type" in fields else None


def _unknown_constraint_features(data: dict) -> list[str]:
    """Constraint features that are no input of the spec's domain, read from the raw data:
    BoFire reports them under ``domain`` only, as 'not a continuous input feature'."""
    domain = data.get("domain")
    if not isinstance(domain, dict):
        return []
    inputs = domain.get("inputs")
    features = inputs.get("features") if isinstance(inputs, dict) else inputs
    constraints = domain.get("constraints")
    if isinstance(constraints, dict):
        constraints = constraints.get("constraints")
    if not isinstance(features, list) or not isinstance(constraints, list):
        return []
    keys = [f["key"] for f in features if isinstance(f, dict) and isinstance(f.get("key"), str)]
    causes = []
    for i, constraint in enumerate(constraints):
        if not isinstance(constraint, dict):
            continue
        for field in ("features", "feature"):  # "feature": an interpoint constraint
            names = constraint.get(field)
            names = [names] if isinstance(names, str) else names
            if not isinstance(names, list):
                continue
            for name in names:
                if not isinstance(name, str) or name in keys:
                    continue
                match = difflib.get_close_matches(name, keys, n=1)
                hint = f"did you mean {match[0]!r}?" if match else f"the inputs: {keys}"
                causes.append(f"spec.domain.constraints.constraints[{i}].{field}: {name!r} is "
                              f"not an input of the domain; {hint}")
    return causes


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
