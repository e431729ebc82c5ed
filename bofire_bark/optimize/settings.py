"""The acquisition's settings as one frozen object, built by the strategy from its data model
and passed down to the search (``AcquisitionSettings``; the grid search's own in ``grid``).
The defaults live at the bottom of the package (``bofire_bark.defaults``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bofire_bark.defaults import (
    DEFAULT_ABS_GAP,
    DEFAULT_EXTEND_GAP,
    DEFAULT_KAPPA,
    DEFAULT_MAX_TIME,
    DEFAULT_MIP_GAP,
    DEFAULT_TIME_LIMIT,
)
from bofire_bark.optimize.grid.settings import GridSettings
from bofire_bark.optimize.rules import Rule


@dataclass(frozen=True)
class AcquisitionSettings:
    """How one acquisition is optimized.

    Attributes:
        rule: the acquisition rule, one of ``rules.RULES`` ("ucb", "ei", "nei", "pi"; the
            MIP solvers and several outputs take "ucb" only).
        kappa: the UCB's exploration weight (default 1.96, see ``optimize.entry``).
        solver: "auto" (the grid branch-and-bound, or the MIP with SCIP/Gurobi when the domain
            has a nonlinear equality constraint), "bnb", "scip", "gurobi" or "highs" (linear
            models only).
        time_limit: seconds for the search after the start (default 2.5).
        mip_gap: relative gap at which the search stops (default 0.1, as in the paper).
        abs_gap: the search also stops once bound - value <= abs_gap (standardized units,
            i.e. standard deviations of the output; meaningful when the UCB is near zero).
        max_time, extend_gap: grid search only: while the relative gap proven at
            ``time_limit`` is above ``extend_gap`` (default 0.10, the gap target), the search
            goes on, up to ``max_time`` seconds (default None: stop at ``time_limit``).
        n_random, n_starts, n_sweeps: the starting sample (random points, ascent starts,
            sweeps).
        seed: seeds the starting sample and the solver's randomization.
        isolate: run SCIP in the worker process (a native crash then falls back to the
            incumbent); False solves in this process, which a native abort would end.
        n_cuts: MIP only: tangent planes of every sample's sigma cone at this many good points
            of the starting sample (valid for all points; see ``sample_gp.tangent_cuts``).
        grid: the grid search's settings (``grid.GridSettings``).
    """

    rule: str = "ucb"
    kappa: float = DEFAULT_KAPPA
    solver: str = "auto"
    time_limit: float = DEFAULT_TIME_LIMIT
    mip_gap: float = DEFAULT_MIP_GAP
    abs_gap: float = DEFAULT_ABS_GAP
    max_time: float | None = DEFAULT_MAX_TIME
    extend_gap: float = DEFAULT_EXTEND_GAP
    n_random: int = 2000
    n_starts: int = 4
    n_sweeps: int = 3
    seed: int | None = 0
    isolate: bool = True
    n_cuts: int = 8
    grid: GridSettings = field(default_factory=GridSettings)

    @property
    def acquisition_rule(self) -> Rule:
        return Rule(self.rule, self.kappa)

    def validate(self, sign: float = 1.0) -> None:
        """Raise ValueError naming the first setting out of range (and a bad ``sign``)."""
        self.acquisition_rule.validate()
        if sign not in (1, -1, 1.0, -1.0):
            raise ValueError(f"sign must be +1 (maximize) or -1 (minimize), got {sign}.")
        if not self.time_limit > 0:
            raise ValueError(f"time_limit must be positive, got {self.time_limit}.")
        if not self.mip_gap >= 0:
            raise ValueError(f"mip_gap must be >= 0, got {self.mip_gap}.")
        if not self.abs_gap >= 0:
            raise ValueError(f"abs_gap must be >= 0, got {self.abs_gap}.")
        if self.max_time is not None and not self.max_time > 0:
            raise ValueError(f"max_time must be positive, got {self.max_time}.")
        if not self.extend_gap >= 0:
            raise ValueError(f"extend_gap must be >= 0, got {self.extend_gap}.")


def settings_with(settings: AcquisitionSettings | None, overrides: dict) -> AcquisitionSettings:
    """``settings`` (default: the defaults) with some fields replaced by keyword; an unknown
    name raises TypeError, as a misspelt keyword argument would."""
    settings = AcquisitionSettings() if settings is None else settings
    return replace(settings, **overrides) if overrides else settings
