"""Expression strings of nonlinear constraints, parsed without running them.

A spec is data: its strings must never reach ``eval``, ``sympify`` or ``parse_expr`` (each
runs Python). ``parse`` reads a string with ``ast`` and accepts only numbers, the names it is
given, ``+ - * / **``, unary signs and one-argument calls of ``FUNCTIONS``; anything else is a
``ValueError`` naming the offending part. The result is the expression tree the optimizer
uses (``("const", v)``, ``("var", j)``, ``("add", *args)``, ``("mul", *args)``,
``("pow", base, exponent)``, ``("func", name, arg)``), in the shape sympy gave it before:
``a - b`` is ``a + (-1) b``, ``a / b`` is ``a b^-1``, ``sqrt(a)`` is ``a^0.5``; subtrees of
constants are folded.

A module with no package imports, at the bottom of the package: the data models, the spec
loader and the optimizer read the same parser and the same function list.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence

import numpy as np

# Functions an expression may call (the optimizer translates each; sqrt becomes a power).
FUNCTIONS = frozenset({
    "exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "abs", "log10",
})

# Longer or deeper strings are refused before parsing: Python's parser and our recursion have
# limits, and no constraint a chemist writes comes near these.
MAX_LENGTH = 10_000
MAX_DEPTH = 200
MAX_EXPONENT = 1024.0

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def parse(text, variables: Mapping[str, int], what: str = "the expression") -> tuple:
    """Expression tree of ``text`` over ``variables`` (name -> column index).

    Raises:
        ValueError: starting with ``what``, naming the part of ``text`` that is not allowed.
    """
    node = _parse_ast(text, what)
    return _Reader(text, variables, what).read(node.body, 0)


def parse_list(text, variables: Mapping[str, int], what: str = "the expression") -> list:
    """Trees of a bracketed (possibly nested) list of expressions, as BoFire writes a
    constraint's Jacobian ``"[e1, e2]"`` and Hessian ``"[[e11, e12], [e21, e22]]"``."""
    node = _parse_ast(text, what)
    reader = _Reader(text, variables, what)

    def items(n, depth):
        if isinstance(n, (ast.List, ast.Tuple)):
            if depth > 1:
                raise ValueError(f"{what} nests lists more than two deep: {text!r}")
            return [items(e, depth + 1) for e in n.elts]
        return reader.read(n, 0)

    return items(node.body, 0)


def _parse_ast(text, what: str) -> ast.Expression:
    if not isinstance(text, str):
        raise ValueError(f"{what} must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"{what} is {len(text)} characters long (at most {MAX_LENGTH})")
    try:
        return ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise ValueError(f"{what} is not a valid expression: {text!r} ({err})") from None


class _Reader:
    def __init__(self, text: str, variables: Mapping[str, int], what: str):
        self.text = text
        self.variables = variables
        self.what = what

    def refuse(self, node, why: str):
        part = ast.get_source_segment(self.text.strip(), node) or type(node).__name__
        raise ValueError(f"{self.what} {why}: {part!r} in {self.text!r}")

    def read(self, node, depth: int) -> tuple:
        if depth > MAX_DEPTH:
            self.refuse(node, f"nests deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            v = node.value
            try:
                ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
            except OverflowError:  # an integer literal too large for a float
                ok = False
            if not ok:
                self.refuse(node, "has a constant that is not a finite real number")
            return ("const", float(v))
        if isinstance(node, ast.Name):
            if node.id in self.variables:
                return ("var", int(self.variables[node.id]))
            if node.id in FUNCTIONS:
                self.refuse(node, f"names the function {node.id!r} without calling it")
            self.refuse(node, "uses a name that is not one of its features "
                        f"{sorted(self.variables)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            arg = self.read(node.operand, depth + 1)
            return arg if isinstance(node.op, ast.UAdd) else _mul(("const", -1.0), arg)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            a = self.read(node.left, depth + 1)
            b = self.read(node.right, depth + 1)
            op = type(node.op)
            if op is ast.Pow and a[0] == b[0] == "const" and abs(b[1]) > MAX_EXPONENT \
                    and abs(a[1]) not in (0.0, 1.0):
                # sympy (in BoFire) would compute such a power exactly, without end
                self.refuse(node, f"raises a constant to a power above {MAX_EXPONENT:g}")
            if op is ast.Add:
                return _fold(("add", a, b))
            if op is ast.Sub:
                return _fold(("add", a, _mul(("const", -1.0), b)))
            if op is ast.Mult:
                return _mul(a, b)
            if op is ast.Div:
                return _mul(a, _fold(("pow", b, ("const", -1.0))))
            return _fold(("pow", a, b))
        if isinstance(node, ast.BinOp):
            hint = " (use ** for powers)" if isinstance(node.op, ast.BitXor) else ""
            self.refuse(node, f"uses an operator that is not + - * / **{hint}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                self.refuse(node, "calls something that is not a function's name")
            name = node.func.id
            if name not in FUNCTIONS:
                self.refuse(node, f"calls {name!r}, which is not one of the functions "
                            f"{sorted(FUNCTIONS)}")
            if len(node.args) != 1 or node.keywords:
                self.refuse(node, f"calls {name} with other than one argument")
            if isinstance(node.args[0], ast.Starred):
                self.refuse(node, f"calls {name} with a starred argument")
            arg = self.read(node.args[0], depth + 1)
            if name == "sqrt":
                return _fold(("pow", arg, ("const", 0.5)))
            return _fold(("func", name, arg))
        return self.refuse(node, "has a part that is not a number, a feature, + - * / **, a "
                           "sign or a function call")


def _mul(a: tuple, b: tuple) -> tuple:
    return _fold(("mul", a, b))


def _fold(tree: tuple) -> tuple:
    """A constant for an operation on constants (as sympy folded them), else the tree, with
    nested sums and products flattened."""
    op = tree[0]
    args = tree[2:] if op == "func" else tree[1:]
    if all(a[0] == "const" for a in args):
        try:
            value = evaluate(tree, ())
        except (ValueError, OverflowError, ZeroDivisionError):
            return tree  # undefined or huge (log(-1), 0**-1, exp(1e4)): evaluated as written
        return ("const", value) if math.isfinite(value) else tree
    if op in ("add", "mul"):
        flat = []
        for a in args:
            flat.extend(a[1:] if a[0] == op else (a,))
        return (op, *flat)
    return tree


_MATH = {"abs": abs, **{name: getattr(math, name) for name in FUNCTIONS if name != "abs"}}


def evaluate(tree: tuple, x: Sequence[float]) -> float:
    """Value of an expression tree at feature values ``x`` (indexable by column)."""
    op = tree[0]
    if op == "const":
        return float(tree[1])
    if op == "var":
        return float(x[tree[1]])
    if op == "add":
        return sum(evaluate(a, x) for a in tree[1:])
    if op == "mul":
        return math.prod(evaluate(a, x) for a in tree[1:])
    if op == "pow":
        value = evaluate(tree[1], x) ** evaluate(tree[2], x)
        if isinstance(value, complex):
            raise ValueError("a negative number to a fractional power")
        return value
    return _MATH[tree[1]](evaluate(tree[2], x))


_NUMPY = {"exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
          "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
          "cosh": np.cosh, "tanh": np.tanh, "abs": np.abs, "log10": np.log10, "sqrt": np.sqrt}


def evaluate_rows(tree: tuple, V: np.ndarray) -> np.ndarray:
    """``evaluate`` at every row of ``V`` (n, D) at once, with numpy's arithmetic: where a
    value is undefined (a negative number to a fractional power, log of a negative) it is
    nan, as in BoFire's own evaluation of the string, instead of an error. Call it under
    ``np.errstate(all="ignore")``."""
    op = tree[0]
    if op == "const":
        return np.full(len(V), float(tree[1]))
    if op == "var":
        return V[:, tree[1]].astype(np.float64)
    if op == "add":
        return sum(evaluate_rows(a, V) for a in tree[1:])
    if op == "mul":
        out = evaluate_rows(tree[1], V)
        for a in tree[2:]:
            out = out * evaluate_rows(a, V)
        return out
    if op == "pow":
        return np.power(evaluate_rows(tree[1], V), evaluate_rows(tree[2], V))
    return _NUMPY[tree[1]](evaluate_rows(tree[2], V))


def describe(constraint) -> str:
    """A constraint's name in messages: its type and features."""
    features = getattr(constraint, "features", None)
    return f"{type(constraint).__name__} on {list(features) if features else '?'}"


def parse_constraint(constraint, keys: Sequence[str]) -> tuple:
    """Expression tree of a nonlinear constraint's string over the column indices of its
    features in ``keys`` (the split space's column order).

    Raises:
        ValueError: naming the constraint when the expression is a callable, is not a string
            ``parse`` accepts, or names a feature outside ``keys``.
    """
    name = describe(constraint)
    expression = constraint.expression
    if callable(expression):
        raise ValueError(
            f"The constraint {name} has a callable expression; BARK's acquisition optimizer "
            "needs the expression as a string.")
    index = {key: j for j, key in enumerate(keys)}
    missing = [f for f in constraint.features if f not in index]
    if missing:
        raise ValueError(f"The constraint {name} names {missing}, which are not input features.")
    variables = {f: index[f] for f in constraint.features}
    return parse(expression, variables, f"The expression of the constraint {name}")
