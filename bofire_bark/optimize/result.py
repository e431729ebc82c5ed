"""What an acquisition solve returns, and its errors: importable without Pyomo (the
enumeration of finite domains, ``library``, returns the same result as the grid search)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


class InfeasibleDomainError(ValueError):
    """The domain's constraints admit no candidate."""


class InfeasibleOutputLimitError(InfeasibleDomainError):
    """No candidate of the domain can meet an output limit, even by its upper confidence
    bound."""


# statuses of a search that returned a point with a proven bound
WITH_BOUND = ("optimal", "gap", "time_limit", "unresolved")


@dataclass
class AcquisitionResult:
    """One optimized candidate.

    Attributes:
        candidate: one row, the domain's input keys (discrete values exact, categories as str).
        x: (D,) the candidate encoded for the engine.
        objective: the solver's objective at its point (NaN when it returned none).
        ucb: the engine's integrated UCB at ``candidate`` (standardized units).
        status: "optimal" (proven), "gap" (proven within ``mip_gap`` or ``abs_gap``),
            "time_limit" (stopped with the gap ``gap``), "unresolved" (the grid search went
            through every box; the gap ``gap`` is held open by boxes in which no feasible
            point was found and none was proven absent) or "incumbent" (the starting point,
            nothing proven).
        gap: relative gap (bound - ucb) / |ucb| proven for the candidate (NaN if none).
        bound: upper bound of the integrated UCB over the feasible set (NaN if none).
        solver: "bnb" (grid branch-and-bound), the MIP solver's name, or "enumeration"
            (every feasible point of a finite domain scored, ``library``).
        incumbent_ucb: integrated UCB of the starting point.
        build_time, solve_time, incumbent_time: seconds (model build, search, start).
        source: "start" when the candidate is the starting point, "search" otherwise.
        nodes: boxes the branch-and-bound expanded (0 for a MIP solver); points scored by
            the enumeration.
        trace: (seconds, primal, dual, gap) recorded during the solve (SCIP).
        units: of ``ucb``, ``bound`` and ``abs_gap``: "sd" (standard deviations of the
            output) or "scalarized" (several objectives: shares of the observed ranges).
    """

    candidate: pd.DataFrame
    x: np.ndarray
    objective: float
    ucb: float
    status: str
    gap: float
    bound: float
    solver: str
    incumbent_ucb: float
    build_time: float
    solve_time: float
    incumbent_time: float
    source: str = "start"
    nodes: int = 0
    trace: list = field(default_factory=list, repr=False)
    units: str = "sd"

    @property
    def abs_gap(self) -> float:
        """bound - ucb in standardized units (standard deviations of the output)."""
        return max(0.0, self.bound - self.ucb) if np.isfinite(self.bound) else float("nan")

    def verdict(self) -> str:
        """What was proven, in words."""
        if self.status == "optimal":
            return "proven optimal"
        if self.status == "gap":
            return f"proven within {self.gap:.3g} (absolute {self.abs_gap:.3g} {self.units})"
        if self.status == "time_limit":
            return (f"stopped at the limit with gap {self.gap:.3g} (absolute "
                    f"{self.abs_gap:.3g} {self.units})")
        if self.status == "unresolved":
            return (f"every box searched, gap {self.gap:.3g} (absolute {self.abs_gap:.3g} "
                    f"{self.units}) from boxes where no feasible point was found")
        return "starting point only (nothing proven)"

    def summary(self) -> str:
        """One line for logs: what was proven, the values and how long each part took."""
        if self.solver == "enumeration":
            return (f"enumeration: {self.verdict()} over {self.nodes} points; UCB "
                    f"{self.ucb:.6g}; build {self.build_time:.2f}s, scoring "
                    f"{self.solve_time:.2f}s")
        return (f"{self.solver}: {self.verdict()}; UCB {self.ucb:.6g} from the {self.source} "
                f"(start {self.incumbent_ucb:.6g}, bound {self.bound:.6g}); build "
                f"{self.build_time:.2f}s, start {self.incumbent_time:.2f}s, search "
                f"{self.solve_time:.2f}s ({self.nodes} boxes)")


class LibraryExhaustedError(InfeasibleDomainError):
    """Every feasible point of a finite domain is already measured or pending (and repeats
    are not allowed)."""


def relative_gap(value: float, bound: float) -> float:
    """(bound - value) / |value|, the solver convention; inf when value is 0 and they differ."""
    if not np.isfinite(value):
        return math.inf
    diff = max(0.0, bound - value)
    if diff == 0.0:
        return 0.0
    return diff / abs(value) if value != 0.0 else math.inf
