"""Domain constraints in the MIP, from plain specs (no BoFire import: solver children stay light).

``bofire_bark.optimize.constraints`` translates a BoFire domain into specs; here they
become Pyomo components over ``value[j]`` (the feature's numeric value):

- ``LinearSpec``: sum_i a_i value[j_i] == rhs (or <= rhs).
- ``NChooseKSpec``: activity binaries ``b[j]`` with value <= ub b (big-M from the bound) and,
  when at least one feature must be active, value >= delta b (delta above BoFire's zero
  tolerance); min_count <= sum b <= max_count, or sum b == 0 when ``none_also_valid``
  (through one binary ``any``).
- ``NonlinearSpec``: an expression tree, expr == 0 (or <= 0).
"""

from __future__ import annotations

import pyomo.environ as pyo

from bofire_bark.optimize.specs import LinearSpec, NChooseKSpec, NonlinearSpec, specs_nck

FUNCTIONS = {
    "exp": pyo.exp, "log": pyo.log, "sqrt": pyo.sqrt, "sin": pyo.sin, "cos": pyo.cos,
    "tan": pyo.tan, "asin": pyo.asin, "acos": pyo.acos, "atan": pyo.atan, "sinh": pyo.sinh,
    "cosh": pyo.cosh, "tanh": pyo.tanh, "abs": abs, "log10": pyo.log10,
}


def to_pyomo(expr: tuple, value):
    """Pyomo expression of an expression tree; ``value[j]`` gives feature j."""
    op = expr[0]
    if op == "const":
        return float(expr[1])
    if op == "var":
        return value[expr[1]]
    if op == "add":
        return sum(to_pyomo(a, value) for a in expr[1:])
    if op == "mul":
        out = 1.0
        for a in expr[1:]:
            out = out * to_pyomo(a, value)
        return out
    if op == "pow":
        base, exponent = expr[1], expr[2]
        if exponent[0] == "const" and float(exponent[1]) == 0.5:
            return pyo.sqrt(to_pyomo(base, value))
        if exponent[0] == "const" and float(exponent[1]).is_integer():
            return to_pyomo(base, value) ** int(exponent[1])
        return to_pyomo(base, value) ** to_pyomo(exponent, value)
    if op == "func":
        return FUNCTIONS[expr[1]](to_pyomo(expr[2], value))
    raise ValueError(f"Unknown expression node {op!r}.")


def _add_linear(m: pyo.ConcreteModel, specs: list[LinearSpec]) -> None:
    def rule(m, i):
        spec = specs[i]
        pairs = zip(spec.coefficients, spec.features, strict=True)
        lhs = sum(float(a) * m.value[j] for a, j in pairs)
        return lhs == spec.rhs if spec.equality else lhs <= spec.rhs

    m.domain_linear = pyo.Constraint(range(len(specs)), rule=rule)


def _add_nchoosek(m: pyo.ConcreteModel, specs: list[NChooseKSpec], upper, delta) -> None:
    feats = sorted({j for spec in specs for j in spec.features} - set(m.b.index_set()))
    m.b_nck = pyo.Var(feats, domain=pyo.Binary)
    need_lo = sorted({j for spec in specs if spec.min_count > 0 for j in spec.features})

    def active(j):
        return m.b[j] if j in m.b.index_set() else m.b_nck[j]

    m.nck_hi = pyo.Constraint(feats, rule=lambda m, j: m.x[j] <= float(upper[j]) * active(j))
    m.nck_lo = pyo.Constraint(
        [j for j in need_lo if j in feats],
        rule=lambda m, j: m.x[j] >= float(delta[j]) * active(j))
    with_none = [i for i, s in enumerate(specs) if s.none_also_valid and s.min_count > 0]
    m.nck_any = pyo.Var(with_none, domain=pyo.Binary)

    def count(i):
        return sum(active(j) for j in specs[i].features)

    def lo(m, i):
        spec = specs[i]
        if spec.min_count == 0:
            return pyo.Constraint.Skip
        if i in with_none:
            return count(i) >= spec.min_count * m.nck_any[i]
        return count(i) >= spec.min_count

    def hi(m, i):
        spec = specs[i]
        if i in with_none:
            return count(i) <= spec.max_count * m.nck_any[i]
        return count(i) <= spec.max_count

    m.nck_min = pyo.Constraint(range(len(specs)), rule=lo)
    m.nck_max = pyo.Constraint(range(len(specs)), rule=hi)
    m.nck_features = feats


def _add_nonlinear(m: pyo.ConcreteModel, specs: list[NonlinearSpec]) -> None:
    def rule(m, i):
        spec = specs[i]
        body = to_pyomo(spec.expr, m.value)
        return body == 0.0 if spec.equality else body <= 0.0

    m.domain_nonlinear = pyo.Constraint(range(len(specs)), rule=rule)


def add_domain_constraints(m: pyo.ConcreteModel, specs: tuple, upper, delta) -> None:
    """All domain constraints; ``upper`` / ``delta`` (D,) are the big-M and activity bounds."""
    _add_linear(m, [s for s in specs if isinstance(s, LinearSpec)])
    _add_nchoosek(m, [s for s in specs if isinstance(s, NChooseKSpec)], upper, delta)
    _add_nonlinear(m, [s for s in specs if isinstance(s, NonlinearSpec)])


def domain_start(m: pyo.ConcreteModel, specs: tuple, x) -> None:
    """Set the NChooseK binaries to the activity of the point ``x`` (D,)."""
    for j in m.nck_features:
        m.b_nck[j].set_value(float(x[j] != 0.0))
    for i in m.nck_any.index_set():
        spec = specs_nck(specs)[i]
        m.nck_any[i].set_value(float(any(x[j] != 0.0 for j in spec.features)))
