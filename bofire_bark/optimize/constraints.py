"""BoFire domains for the acquisition MIP: supported constraints, the candidate box, and
translation of constraints into the plain specs of ``specs``.

Semantics follow BoFire 0.5: linear ``sum a_i x_i == rhs`` / ``<= rhs``; nonlinear ``expr == 0``
/ ``expr <= 0`` with ``expr`` a string (read by ``bofire_bark.expressions``, never run);
product ``sign * prod x_i^e_i == rhs`` / ``<= rhs``; NChooseK counts features with ``|x| > 1e-6`` as
active. Any other constraint (interpoint, categorical exclusion, a callable expression) is
refused with its name, never dropped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from bofire.data_models.constraints.api import (
    LinearEqualityConstraint,
    LinearInequalityConstraint,
    NChooseKConstraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
    ProductEqualityConstraint,
)
from bofire.data_models.domain.api import Domain
from bofire.data_models.features.api import ContinuousInput

from bofire_bark.expressions import describe, evaluate_rows, parse_constraint
from bofire_bark.optimize.ensemble import CATEGORICAL, CONTINUOUS, DISCRETE, InputBox
from bofire_bark.optimize.specs import LinearSpec, NChooseKSpec, NonlinearSpec  # noqa: F401
from bofire_bark.space import SplitSpace
from bofire_bark.supported import SUPPORTED_CONSTRAINTS

# Relative margin kept to the right of a continuous threshold (x >= t + margin goes right).
MARGIN = 1e-6
# Smallest active value of an NChooseK feature with lower bound 0, relative to its upper bound
# (at least 1e-5, above BoFire's zero tolerance of 1e-6).
ACTIVE_FRACTION = 1e-4


def check_domain_supported(domain: Domain) -> None:
    """Raise ``ValueError`` naming the first constraint the MIP cannot express.

    Nonlinear expressions are parsed here too, so an untranslatable string fails early.
    """
    keys = domain.inputs.get_keys()
    for c in domain.constraints.constraints:
        if type(c) not in SUPPORTED_CONSTRAINTS:
            names = ", ".join(t.__name__ for t in SUPPORTED_CONSTRAINTS)
            raise ValueError(
                f"BARK's acquisition optimizer cannot express the constraint {describe(c)} "
                f"(type {type(c).__name__}); supported constraint types: {names}.")
        if isinstance(c, (NonlinearEqualityConstraint, NonlinearInequalityConstraint)):
            parse_constraint(c, keys)


def constraint_specs(domain: Domain, space: SplitSpace) -> tuple:
    """Plain specs of every domain constraint (``check_domain_supported`` first)."""
    check_domain_supported(domain)
    keys = list(space.keys)
    index = {key: j for j, key in enumerate(keys)}
    specs = []
    for c in domain.constraints.constraints:
        name = describe(c)
        if isinstance(c, (LinearEqualityConstraint, LinearInequalityConstraint)):
            specs.append(LinearSpec(name, tuple(index[f] for f in c.features),
                                    tuple(float(a) for a in c.coefficients), float(c.rhs),
                                    isinstance(c, LinearEqualityConstraint)))
        elif isinstance(c, NChooseKConstraint):
            specs.append(NChooseKSpec(name, tuple(index[f] for f in c.features),
                                      int(c.min_count), int(c.max_count),
                                      bool(c.none_also_valid)))
        elif isinstance(c, (NonlinearEqualityConstraint, NonlinearInequalityConstraint)):
            specs.append(NonlinearSpec(name, parse_constraint(c, keys),
                                       isinstance(c, NonlinearEqualityConstraint)))
        else:  # product
            product = ("mul", ("const", float(c.sign)),
                       *[("pow", ("var", index[f]), ("const", float(e)))
                         for f, e in zip(c.features, c.exponents, strict=True)])
            specs.append(NonlinearSpec(name, ("add", product, ("const", -float(c.rhs))),
                                       isinstance(c, ProductEqualityConstraint)))
    return tuple(specs)


def input_box(domain: Domain, space: SplitSpace) -> InputBox:
    """The encoded candidate space, including ``allow_zero`` features' zero."""
    d = space.n_features
    lower = np.array(space.lower, dtype=np.float64)
    upper = np.array(space.upper, dtype=np.float64)
    semi = np.zeros(d, dtype=bool)
    active_lower = lower.copy()  # lower bound of an active semicontinuous feature
    for j, key in enumerate(space.keys):
        feature = domain.inputs.get_by_key(key)
        if isinstance(feature, ContinuousInput) and feature.allow_zero:
            lower[j] = min(lower[j], 0.0)
            if feature.lower_bound > 0:
                semi[j] = True
                active_lower[j] = float(feature.lower_bound)
    margin = np.where(space.kinds == CONTINUOUS, MARGIN * (upper - lower), 0.0)
    allowed = tuple(None if space.kinds[j] != CATEGORICAL
                    else tuple(int(k) for k in np.flatnonzero(space.allowed[j]))
                    for j in range(d))
    return InputBox(np.array(space.kinds), lower, upper, space.values, allowed, semi,
                    active_lower, margin)


def active_delta(box: InputBox) -> np.ndarray:
    """(D,) smallest value of an active NChooseK feature."""
    return np.maximum(ACTIVE_FRACTION * box.upper, 1e-5)


def feasible(domain: Domain, space: SplitSpace, box: InputBox, X: np.ndarray,
             tol: float = 1e-6, specs: tuple | None = None) -> np.ndarray:
    """(n,) bool: encoded points that satisfy the domain's constraints and bounds.

    BoFire's ``is_fulfilled`` decides, on the decoded points; with ``specs`` (every
    constraint of the domain translated, ``constraint_specs``) the same tests run on the
    encoded array (``specs_fulfilled``): the start's many small checks then cost microseconds,
    not a data frame each.
    """
    if len(X) == 0:
        return np.zeros(0, dtype=bool)
    ok = np.ones(len(X), dtype=bool)
    for j in np.flatnonzero(box.semicontinuous):
        ok &= (X[:, j] == 0.0) | (X[:, j] >= box.active_lower[j] - tol)
    if len(domain.constraints) == 0:
        return ok
    if specs is not None:
        return ok & specs_fulfilled(specs, box, X, tol)
    frame = space.decode(X)
    with np.errstate(all="ignore"):
        fulfilled = domain.constraints.is_fulfilled(frame, tol=tol)
    return ok & np.asarray(pd.Series(fulfilled).fillna(False), dtype=bool)


def feature_values(X: np.ndarray, box: InputBox) -> np.ndarray:
    """(n, D) the features' values at encoded points (a discrete feature's value, not its
    index; categorical columns keep their codes)."""
    V = np.array(X, dtype=np.float64)
    for j in np.flatnonzero(box.kinds == DISCRETE):
        V[:, j] = box.values[j][np.rint(X[:, j]).astype(np.int64)]
    return V


def specs_fulfilled(specs: tuple, box: InputBox, X: np.ndarray, tol: float = 1e-6
                    ) -> np.ndarray:
    """(n,) bool: BoFire 0.5's ``is_fulfilled`` of each spec's constraint, on encoded points:
    linear ``(a.x - rhs) / |a|`` at most ``tol`` (equality: within ``tol`` of 0); NChooseK
    counting ``|x| > tol``; nonlinear and product expressions at most ``tol`` (equality:
    within ``tol`` of 0), undefined values failing."""
    V = feature_values(X, box)
    ok = np.ones(len(V), dtype=bool)
    with np.errstate(all="ignore"):
        for spec in specs:
            idx = list(spec.features) if not isinstance(spec, NonlinearSpec) else None
            if isinstance(spec, LinearSpec):
                a = np.asarray(spec.coefficients, dtype=np.float64)
                value = (V[:, idx] @ a - spec.rhs) / np.linalg.norm(a)
            elif isinstance(spec, NChooseKSpec):
                count = (np.abs(V[:, idx]) > tol).sum(axis=1)
                inside = (count >= spec.min_count) & (count <= spec.max_count)
                ok &= inside | (spec.none_also_valid & (count == 0))
                continue
            else:
                value = evaluate_rows(spec.expr, V)
            ok &= np.abs(value) <= tol if spec.equality else value <= tol
    return ok
