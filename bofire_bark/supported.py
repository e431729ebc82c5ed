"""What the acquisition MIP can express, importable without Pyomo (for the data models).

``GOAL_OBJECTIVES`` / ``LIMIT_OBJECTIVES``: objective types BARK aims at and objective types it
treats as output limits (exact types; ``outputs`` says what each becomes).
``SCALARIZATIONS``: how several objectives are combined.
``ACQUISITION_RULES`` / ``HYPERVOLUME_ACQUISITIONS``: BoFire's acquisition function types BARK
answers exactly for one objective / for several, and the rule of ``optimize.rules`` each
becomes (``acquisition_rule``).
``SUPPORTED_CONSTRAINTS``: exact constraint types (subclasses are not implied; interpoint and
categorical-exclusion constraints are not supported by the searches).
``LIBRARY_CONSTRAINTS``: what the enumeration of a finite domain (``library``) tests point by
point: the above and categorical exclusions. ``TRANSLATABLE_FUNCTIONS``: function
names a nonlinear expression may use (defined with the parser, ``bofire_bark.expressions``).
"""

from __future__ import annotations

from bofire.data_models.acquisition_functions.api import (
    qEHVI,
    qEI,
    qLogEHVI,
    qLogEI,
    qLogNEHVI,
    qLogNEI,
    qNEHVI,
    qNEI,
    qPI,
    qUCB,
)
from bofire.data_models.constraints.api import (
    CategoricalExcludeConstraint,
    LinearEqualityConstraint,
    LinearInequalityConstraint,
    NChooseKConstraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
    ProductEqualityConstraint,
    ProductInequalityConstraint,
)
from bofire.data_models.objectives.api import (
    CloseToTargetObjective,
    MaximizeObjective,
    MaximizeSigmoidObjective,
    MinimizeObjective,
    MinimizeSigmoidObjective,
    TargetObjective,
)

from bofire_bark.defaults import DEFAULT_KAPPA
from bofire_bark.expressions import FUNCTIONS as TRANSLATABLE_FUNCTIONS  # noqa: F401

GOAL_OBJECTIVES: tuple[type, ...] = (MaximizeObjective, MinimizeObjective,
                                     CloseToTargetObjective)
LIMIT_OBJECTIVES: tuple[type, ...] = (MaximizeSigmoidObjective, MinimizeSigmoidObjective,
                                      TargetObjective)
SCALARIZATIONS = ("chebyshev", "weighted_sum")

SUPPORTED_CONSTRAINTS: tuple[type, ...] = (
    LinearEqualityConstraint,
    LinearInequalityConstraint,
    NChooseKConstraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
    ProductEqualityConstraint,
    ProductInequalityConstraint,
)


LIBRARY_CONSTRAINTS: tuple[type, ...] = (*SUPPORTED_CONSTRAINTS, CategoricalExcludeConstraint)

# The rule's name in ``optimize.rules``. qLogEI / qLogNEI have qEI's / qNEI's maximizers (the
# log of the same average), so one search answers both; the same for the hypervolume rules.
ACQUISITION_RULES: dict[type, str] = {qUCB: "ucb", qEI: "ei", qLogEI: "ei", qNEI: "nei",
                                      qLogNEI: "nei", qPI: "pi"}
# Two or more Maximize / Minimize objectives (``optimize.hypervolume``).
HYPERVOLUME_ACQUISITIONS: dict[type, str] = {qEHVI: "ehvi", qLogEHVI: "ehvi",
                                             qNEHVI: "nehvi", qLogNEHVI: "nehvi"}


def acquisition_rule(acquisition_function) -> tuple[str, float]:
    """(rule name, UCB kappa) of a BoFire acquisition function BARK answers: kappa =
    sqrt(beta) for qUCB (BoTorch's convention), the default 1.96 for the others (unused)."""
    name = {**ACQUISITION_RULES, **HYPERVOLUME_ACQUISITIONS}[type(acquisition_function)]
    if name == "ucb":
        return name, float(acquisition_function.beta) ** 0.5
    return name, DEFAULT_KAPPA
