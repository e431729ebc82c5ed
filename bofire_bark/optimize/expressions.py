"""Nonlinear constraint expressions as trees, parsed once with sympy (no Pyomo, no numba):
the data model validates specs with ``parse_expression`` and the optimizer builds its
constraints from the same trees (``domain_constraints.NonlinearSpec``).
"""

from __future__ import annotations

from bofire_bark.optimize.supported import TRANSLATABLE_FUNCTIONS


def describe(constraint) -> str:
    features = getattr(constraint, "features", None)
    return f"{type(constraint).__name__} on {list(features) if features else '?'}"


def parse_expression(constraint, keys: list[str]) -> tuple:
    """Expression tree (see ``NonlinearSpec``) of a nonlinear constraint's string, over the
    features' column indices in ``keys``.

    Raises:
        ValueError: naming the constraint when the expression is not a string sympy can parse
            or uses a function or symbol the MIP cannot express.
    """
    import sympy

    expression = constraint.expression
    name = describe(constraint)
    if not isinstance(expression, str):
        raise ValueError(
            f"The constraint {name} has a callable expression; BARK's acquisition optimizer "
            "needs the expression as a string.")
    symbols = {key: sympy.Symbol(key) for key in keys}
    try:
        parsed = sympy.parse_expr(expression, local_dict=symbols, evaluate=True)
    except Exception as err:  # sympy raises many types (SyntaxError, TokenError, ...)
        raise ValueError(
            f"The constraint {name} has an expression sympy cannot parse: {expression!r} "
            f"({err}).") from err
    index = {key: j for j, key in enumerate(keys)}
    return _tree(parsed, index, name, expression)


def _tree(e, index: dict[str, int], name: str, expression: str) -> tuple:
    import sympy

    if e.is_Number or isinstance(e, sympy.NumberSymbol):
        value = complex(e)
        if value.imag != 0:
            raise ValueError(f"The constraint {name} has a complex constant in {expression!r}.")
        return ("const", value.real)
    if e.is_Symbol:
        if e.name not in index:
            raise ValueError(
                f"The constraint {name} uses {e.name!r}, which is not an input feature, in "
                f"{expression!r}.")
        return ("var", index[e.name])
    args = [_tree(a, index, name, expression) for a in e.args]
    if e.is_Add:
        return ("add", *args)
    if e.is_Mul:
        return ("mul", *args)
    if e.is_Pow:
        return ("pow", *args)
    fname = "abs" if isinstance(e, sympy.Abs) else type(e).__name__
    if isinstance(e, sympy.Function) and fname in TRANSLATABLE_FUNCTIONS and len(args) == 1:
        return ("func", fname, args[0])
    raise ValueError(
        f"The constraint {name} uses {fname!r}, which BARK's acquisition optimizer cannot "
        f"translate, in {expression!r}; supported functions: {sorted(TRANSLATABLE_FUNCTIONS)}.")
