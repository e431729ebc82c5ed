"""Data model of the BARK strategy (pydantic and sympy only: no numba or pyomo here)."""

from __future__ import annotations

from typing import Annotated, Literal

from bofire.data_models.constraints.api import (
    Constraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
)
from bofire.data_models.domain.api import Domain
from bofire.data_models.features.api import ContinuousOutput, Feature
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective, Objective
from bofire.data_models.strategies.api import PredictiveStrategy
from bofire.data_models.strategies.convergence_criteria.api import ConvergenceCriterion
from pydantic import Field, field_validator

from bofire_bark.data_models.surrogate import SUPPORTED_INPUTS, BARKSettings

# What the MIP can express is declared next to it, in a module free of Pyomo.
from bofire_bark.optimize.defaults import (
    DEFAULT_ABS_GAP,
    DEFAULT_KAPPA,
    DEFAULT_MIP_GAP,
    DEFAULT_TIME_LIMIT,
    SOLVERS,
)
from bofire_bark.optimize.supported import SUPPORTED_CONSTRAINTS


class BARKStrategy(PredictiveStrategy):
    """Bayesian optimization with BARK and a global MIP over the integrated UCB.

    The acquisition is the average over posterior samples of ``mu_s + kappa * sigma_s`` for a
    MaximizeObjective (``mu_s - kappa * sigma_s`` minimized for a MinimizeObjective).
    ``kappa = 1.96`` (a 97.5 % one-sided bound per sample) is BoFire's EntingStrategy default.
    """

    type: Literal["BARKStrategy"] = "BARKStrategy"
    surrogate_specs: BARKSettings = Field(default_factory=BARKSettings)
    kappa: Annotated[float, Field(ge=0.0, description="UCB exploration weight.")] = (
        DEFAULT_KAPPA)
    solver: Annotated[Literal[SOLVERS], Field(
        description="'auto': the grid branch-and-bound ('bnb'), or the MIP (SCIP, Gurobi with a "
        "full licence) when a nonlinear equality constraint needs it.")] = "auto"
    time_limit: Annotated[float, Field(
        gt=0.0, description="Seconds of search per candidate after the starting point; the "
        "search stops earlier once the gap is proven.")] = DEFAULT_TIME_LIMIT
    mip_gap: Annotated[float, Field(
        ge=0.0, lt=1.0, description="Relative gap (bound - value) / |value| at which the "
        "search stops.")] = DEFAULT_MIP_GAP
    abs_gap: Annotated[float, Field(
        ge=0.0, description="Absolute gap, in standard deviations of the output, at which the "
        "search also stops (meaningful when the UCB is near zero).")] = DEFAULT_ABS_GAP
    n_start_points: Annotated[
        int, Field(ge=1, description="Random feasible points scored for the incumbent.")
    ] = 2000
    progress_bar: bool = False

    def is_constraint_implemented(self, my_type: type[Constraint]) -> bool:
        return my_type in SUPPORTED_CONSTRAINTS

    @classmethod
    def is_feature_implemented(cls, my_type: type[Feature]) -> bool:
        return my_type in SUPPORTED_INPUTS or my_type is ContinuousOutput

    @classmethod
    def is_objective_implemented(cls, my_type: type[Objective]) -> bool:
        return my_type in (MinimizeObjective, MaximizeObjective)

    @classmethod
    def is_criterion_implemented(cls, my_type: type[ConvergenceCriterion]) -> bool:
        return my_type.is_applicable_to_singleobjective()

    @field_validator("domain")
    @classmethod
    def validate_single_objective(cls, domain: Domain) -> Domain:
        keys = domain.outputs.get_keys_by_objective(Objective)
        if len(keys) != 1 or len(domain.outputs) != 1:
            raise ValueError(
                "BARKStrategy optimizes exactly one output with a MinimizeObjective or "
                f"MaximizeObjective; the domain has outputs {domain.outputs.get_keys()}")
        return domain

    @field_validator("domain")
    @classmethod
    def validate_expressions(cls, domain: Domain) -> Domain:
        """Nonlinear expressions must parse into functions of the inputs the optimizer can
        express: checked here with the optimizer's own parser."""
        from bofire_bark.optimize.expressions import parse_expression

        keys = domain.inputs.get_keys()
        for i, c in enumerate(domain.constraints.get()):
            if isinstance(c, (NonlinearEqualityConstraint, NonlinearInequalityConstraint)):
                try:
                    parse_expression(c, keys)
                except ValueError as err:
                    raise ValueError(f"constraint {i}: {err}") from err
        return domain
