"""Specs are data: expression strings are read, never run, and load_spec refuses what BoFire
would run as code before any BoFire model is built."""

from __future__ import annotations

import json
import math
from pathlib import Path

import bofire.data_models.strategies.api as strategy_models
import numpy as np
import pytest
import sympy
from bofire.data_models.constraints.api import NonlinearInequalityConstraint
from pydantic import TypeAdapter

from bofire_bark import load_spec
from bofire_bark.expressions import FUNCTIONS, evaluate, parse, parse_list
from bofire_bark.loading import check_spec_data

ROOT = Path(__file__).parents[1]
SPECS = ROOT / "specs"

# every expression the tests, specs, examples and studies use (trusted strings)
USED = [
    ("f1 * temp - 40", ["f1", "temp"]),
    ("x0 - x1**2", ["x0", "x1"]),
    ("x0**2 + x2**2 - 0.25", ["x0", "x2"]),
    ("x0 - exp(x1) + 1", ["x0", "x1"]),
    ("sqrt(x1) + sin(x2) - log(1 + x0) - 0.7", ["x0", "x1", "x2"]),
    ("x1 * x2 - 0.5", ["x1", "x2"]),
    ("pressure * flow - 20", ["pressure", "flow"]),
    ("x1 * t - 0.35", ["x1", "t"]),
    ("(x00 - 0.5)**2 + (x01 - 0.5)**2 + x02 * x03 - 0.2", ["x00", "x01", "x02", "x03"]),
    # every function, division, unary signs, nested powers
    ("-x0 / (2 * x1) + +x1 ** -1.5 - 3 / x0", ["x0", "x1"]),
    (" + ".join(f"{f}(x0 / 3)" for f in sorted(FUNCTIONS)), ["x0"]),
    ("2 ** 3 * x0 - (x1 - 1) ** 2 / 4", ["x0", "x1"]),
]


def spec_expressions():
    """(expression, features) of every nonlinear constraint in the committed specs."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("expression"), str):
                found.append((node["expression"], node["features"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for path in sorted(SPECS.glob("*.json")):
        walk(json.loads(path.read_text()))
    return found


def test_specs_have_expressions():
    assert ("pressure * flow - 20", ["pressure", "flow"]) in spec_expressions()


@pytest.mark.parametrize(("text", "features"), USED + spec_expressions())
def test_parsed_tree_equals_sympy(text, features):
    """The tree computes what sympy computes from the same (trusted) string."""
    variables = {f: j for j, f in enumerate(features)}
    tree = parse(text, variables)
    symbols = {f: sympy.Symbol(f) for f in features}
    reference = sympy.lambdify([symbols[f] for f in features],
                               sympy.parse_expr(text, local_dict=symbols),
                               [{"log10": math.log10}, "math"])
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.uniform(0.2, 0.9, len(features))
        assert evaluate(tree, x) == pytest.approx(reference(*x), rel=1e-12, abs=1e-12)


def test_tree_shapes_as_the_optimizer_expects():
    v = {"a": 0, "b": 1}
    assert parse("a - b", v) == ("add", ("var", 0), ("mul", ("const", -1.0), ("var", 1)))
    assert parse("a / b", v) == ("mul", ("var", 0), ("pow", ("var", 1), ("const", -1.0)))
    assert parse("sqrt(a)", v) == ("pow", ("var", 0), ("const", 0.5))
    assert parse("2 * 3 + a", v) == ("add", ("const", 6.0), ("var", 0))
    assert parse("-2", v) == ("const", -2.0)
    assert parse_list("[[a, 1], [0, b]]", v) == [[("var", 0), ("const", 1.0)],
                                                 [("const", 0.0), ("var", 1)]]


@pytest.mark.parametrize(("text", "match"), [
    ("x0 + z", r"not one of its features \['x0', 'x1'\]: 'z'"),
    ("floor(x0) - x1", r"calls 'floor'"),
    ("x0 ^ 2", r"use \*\* for powers"),
    ("x0.real", r"'x0.real'"),
    ("exp(x0, x1)", r"exp with other than one argument"),
    ("exp", r"names the function 'exp' without calling it"),
    ("True + x0", r"'True'"),
    ("'a' + x0", r"not a finite real number"),
    ("1e999 * x0", r"not a finite real number"),
    ("9" * 400 + " * x0", r"not a finite real number"),
    ("10 ** 10 ** 10 * x0", r"raises a constant to a power above"),
    ("x0 if x1 else 1", r"'x0 if x1 else 1'"),
    ("[x0]", r"'\[x0\]'"),
    ("exp(x0 + (x1", r"not a valid expression"),
    ("(" * 500 + "x0" + ")" * 500, r"not a valid expression|nests deeper"),
    ("-" * 300 + "x0", r"nests deeper than 200"),
    ("x" * 20_000, r"characters long"),
    ("x0\0", r"not a valid expression"),
])
def test_refused_with_the_part_named(text, match):
    with pytest.raises(ValueError, match=match):
        parse(text, {"x0": 0, "x1": 1})


def test_no_eval_of_spec_strings_in_the_package():
    """No call in the library runs a string or a pickle as code (read from the syntax tree,
    so docstrings that name these calls do not count). A line marked ``# trusted:`` says why
    its data never come from a user (our own worker process, a study's own cache)."""
    import ast

    banned = {"eval", "exec", "sympify", "parse_expr", "S", "lambdify", "loads", "load"}
    found = []
    for path in (ROOT / "bofire_bark").rglob("*.py"):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or "# trusted:" in lines[node.lineno - 1]:
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                else None
            if name in ("loads", "load") and owner not in ("pickle", "torch", "cloudpickle"):
                continue  # json.loads, np.load (checked below), our own loads
            if name == "load" and owner == "np" and not any(
                    k.arg == "allow_pickle" for k in node.keywords):
                continue
            if name in banned or any(k.arg == "allow_pickle" for k in node.keywords):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)[:60]}")
    assert not found, found


# --------------------------------------------------------------------------- attacks
def attacks(flag: Path) -> dict[str, str]:
    f = str(flag)
    return {
        "os.system": f"x1 + __import__('os').system('touch {f}')",
        "pathlib": f"x1 + __import__('pathlib').Path('{f}').touch()",
        "lambda": f"x1 + (lambda: __import__('pathlib').Path('{f}').touch())()",
        "attribute chain": f"x1 + ().__class__.__base__.__subclasses__() and open('{f}', 'w')",
        "builtins call": f"exp(x1) + open('{f}', 'w').close()",
        "inside a function": f"exp(__import__('pathlib').Path('{f}').touch())",
    }


def constraint_spec(expression: str, **extra) -> dict:
    """A BARK strategy spec (raw data) whose one constraint has this expression."""
    from bofire.data_models.domain.api import Domain, Inputs, Outputs
    from bofire.data_models.features.api import ContinuousInput, ContinuousOutput
    from bofire.data_models.objectives.api import MaximizeObjective

    from bofire_bark.data_models import BARKStrategy

    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key=k, bounds=(0.0, 1.0)) for k in ("x1", "x2")]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())]))
    data = json.loads(BARKStrategy(domain=domain).model_dump_json())
    data["domain"]["constraints"]["constraints"] = [
        {"type": "NonlinearInequalityConstraint", "expression": expression,
         "features": ["x1", "x2"], **extra}]
    return data


def test_attack_runs_code_in_bofire(tmp_path):
    """The attack is real: BoFire's constraint builds its Jacobian with sympy and runs it
    (so the tests below can fail)."""
    flag = tmp_path / "FLAG"
    try:
        NonlinearInequalityConstraint(expression=attacks(flag)["pathlib"], features=["x1", "x2"])
    except Exception:  # x1 + None fails after the code ran
        pass
    assert flag.exists()


@pytest.mark.parametrize("name", list(attacks(Path("F"))))
def test_attack_refused_without_side_effect(tmp_path, name):
    flag = tmp_path / "FLAG"
    text = attacks(flag)[name]
    with pytest.raises(ValueError):
        parse(text, {"x1": 0, "x2": 1})
    spec = constraint_spec(text)
    for source in (spec, json.dumps(spec)):
        with pytest.raises(ValueError, match=r"spec\.domain\.constraints\.constraints\[0\]"
                                             r"\.expression"):
            load_spec(source)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="expression"):
        load_spec(path)
    assert not flag.exists()


@pytest.mark.parametrize("key", ["jacobian_expression", "hessian_expression"])
def test_attack_in_derivatives_refused(tmp_path, key):
    flag = tmp_path / "FLAG"
    spec = constraint_spec("x1 * x2 - 0.5", **{key: f"[{attacks(flag)['pathlib']}, x1]"})
    with pytest.raises(ValueError, match=key):
        load_spec(spec)
    assert not flag.exists()


def test_derivatives_bofire_writes_are_accepted():
    """BoFire's own Jacobians and Hessians load, including those it writes with sympy's names
    (abs: sign, re, im, Derivative), and nothing the spec said changes."""
    for expression in ("abs(x1) * x2 - 0.5", "log10(x1) + exp(x2) - 1", "sqrt(x1) * x2 - 0.2"):
        built = NonlinearInequalityConstraint(expression=expression, features=["x1", "x2"])
        spec = constraint_spec(expression, jacobian_expression=built.jacobian_expression,
                               hessian_expression=built.hessian_expression)
        loaded = load_spec(spec)
        c = loaded.domain.constraints.constraints[0]
        assert (c.expression, c.jacobian_expression, c.hessian_expression) == (
            expression, built.jacobian_expression, built.hessian_expression)


def test_edited_derivative_outside_the_grammar_refused():
    built = NonlinearInequalityConstraint(expression="abs(x1) * x2", features=["x1", "x2"])
    edited = built.jacobian_expression.replace("sign", "sign.__class__")
    with pytest.raises(ValueError, match="jacobian_expression"):
        load_spec(constraint_spec("abs(x1) * x2", jacobian_expression=edited))


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.json")), ids=lambda p: p.stem)
def test_committed_specs_load_unchanged(path):
    data = json.loads(path.read_text())
    spec = load_spec(path)
    assert json.loads(spec.model_dump_json()) == data
    same = TypeAdapter(strategy_models.AnyStrategy).validate_python(data)
    assert spec == same


@pytest.mark.parametrize(("data", "match"), [
    ({"type": "X", "surrogate_specs": {"surrogates": [
        {"type": "SingleTaskGPSurrogate", "dump": "gASV..."}]}},
     r"spec\.surrogate_specs\.surrogates\[0\]\.dump: a pickled model"),
    ({"type": "CustomSoboStrategy", "dump": "gASV..."}, r"spec\.dump: a pickled model"),
    ({"transforms": [{"type": "ManipulateDataTransform",
                      "experiment_transforms": ["a = b"]}]},
     r"spec\.transforms\[0\]\.experiment_transforms"),
    ({"criterion": {"type": "DOptimalityCriterion", "formula": "x1 + x2"}},
     r"spec\.criterion\.formula: 'x1 \+ x2'"),
    ({"c": {"type": "NonlinearEqualityConstraint", "expression": "x1", "features": "x1"}},
     r"spec\.c\.features"),
])
def test_code_paths_of_bofire_refused(data, match):
    with pytest.raises(ValueError, match=match):
        check_spec_data(data)


def test_safe_fields_pass():
    check_spec_data({"dump": None, "type": "SingleTaskGPSurrogate",
                     "criterion": {"formula": "fully-quadratic"},
                     "surrogate": {"type": "BARKSurrogate", "dump": "abc"}})


@pytest.mark.parametrize(("source", "match"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "No such file|JSON object"),
    (3, "a path, a JSON string or a dict"),
])
def test_bad_sources(source, match):
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        load_spec(source)


def test_math_of_evaluate_matches_the_functions():
    assert evaluate(parse("log10(x)", {"x": 0}), [100.0]) == 2.0
    assert evaluate(parse("abs(x)", {"x": 0}), [-3.0]) == 3.0
    with pytest.raises(ValueError):
        evaluate(parse("x ** 0.5", {"x": 0}), [-1.0])
    assert math.isclose(evaluate(parse("atan(x)", {"x": 0}), [1.0]), math.pi / 4)
