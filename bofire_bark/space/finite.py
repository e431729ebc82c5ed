"""Which domains are finite, how many points they hold, and which search answers an ask
(``plan_search``: the enumeration of ``optimize.library``, the grid search or the MIP): numpy
and BoFire's data models only, so the data models can ask too."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from bofire.data_models.constraints.api import (
    NonlinearEqualityConstraint,
    ProductEqualityConstraint,
)
from bofire.data_models.features.api import ContinuousInput
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective

from bofire_bark.defaults import LIBRARY_LIMIT, MIP_SOLVERS
from bofire_bark.kinds import CATEGORICAL, CONTINUOUS

# constraints a box of the grid search cannot hold (the MIP can)
EQUALITIES_NEEDING_MIP = (NonlinearEqualityConstraint, ProductEqualityConstraint)


def library_axes(space) -> tuple[np.ndarray, ...] | None:
    """Per feature, the encoded values a candidate may take (sorted), or None when the domain
    is not finite (a continuous input with a range).

    Categorical: the allowed category codes; discrete: the value indices 0..K-1; a continuous
    input fixed to one value (lower == upper): that value.
    """
    axes = []
    for j in range(space.n_features):
        kind = int(space.kinds[j])
        if kind == CATEGORICAL:
            axes.append(np.flatnonzero(space.allowed[j]).astype(np.float64))
        elif kind == CONTINUOUS:
            if space.lower[j] != space.upper[j]:
                return None
            axes.append(np.array([float(space.lower[j])]))
        else:
            axes.append(np.arange(int(space.n_values[j]), dtype=np.float64))
    return tuple(axes)


def library_size(space) -> int | None:
    """Points of the finite domain before constraints (a Python int), None if not finite."""
    axes = library_axes(space)
    return None if axes is None else math.prod(len(a) for a in axes)


@dataclass(frozen=True)
class SearchPlan:
    """Which search answers an ask, decided once per domain and settings (``plan_search``).

    Attributes:
        search: "library" (the finite domain enumerated, ``optimize.library``), "grid" (the
            branch-and-bound, ``optimize.grid``) or "mip" (Pyomo, ``optimize.mip``).
        solver: the settings' solver (for "mip", the solver to run; "auto" picks SCIP or
            Gurobi, whichever is installed).
        numba_loop: grid search only: the box loop runs in numba (one objective, no domain
            constraints or semicontinuous inputs, ``GridSettings.numba_loop``), else in
            Python.
        several: the acquisition combines several outputs (several objectives, a
            CloseToTarget objective or output limits).
        size: the finite domain's points before constraints (None: not finite).
        note: why a finite domain is not enumerated (a sentence for the log), else None.
    """

    search: str
    solver: str
    numba_loop: bool
    several: bool
    size: int | None = None
    note: str | None = None


def plan_search(domain, settings, space=None, limit: int = LIBRARY_LIMIT,
                several: bool | None = None) -> SearchPlan:
    """The search for ``domain`` under ``settings`` (a ``bofire_bark.settings.SearchSettings``):
    the enumeration for a finite domain of at most ``limit`` points with solver "auto"; else
    the MIP for a named MIP solver, or for "auto" when a nonlinear (or product) equality
    constraint needs it; else the grid search. ``space`` (the domain's ``SplitSpace``) is built
    here when not given and the domain may be finite. ``several``: whether the acquisition
    combines outputs (default: from the domain's objectives, ``several_outputs``)."""
    solver = str(settings.solver).lower()
    several = several_outputs(domain) if several is None else several
    constraints = domain.constraints.get()
    size = None
    if space is not None:
        size = library_size(space)
    elif _may_be_finite(domain):
        from bofire_bark.space.split_space import SplitSpace

        size = library_size(SplitSpace.from_domain(domain))
    note = None
    if size is not None:
        if solver != "auto":
            note = (f"the domain is finite ({size} points) but solver '{solver}' was chosen: "
                    "the acquisition is searched by it, not enumerated, and measured points "
                    "may be proposed again (solver 'auto' enumerates)")
        elif size > limit:
            note = (f"the domain is finite but has {size} points, above the enumeration limit "
                    f"of {limit}: the grid search optimizes the acquisition (within its gap "
                    "and time limit) and measured points may be proposed again")
        else:
            return SearchPlan("library", solver, False, several, size)
    needs_mip = any(isinstance(c, EQUALITIES_NEEDING_MIP) for c in constraints)
    if solver in MIP_SOLVERS or (solver == "auto" and needs_mip):
        return SearchPlan("mip", solver, False, several, size, note)
    # an allow_zero input with a positive lower bound ({0} u [lb, ub]) is held by the Python
    # loop's point tests, as the constraints are
    semicontinuous = any(isinstance(f, ContinuousInput) and f.allow_zero and f.lower_bound > 0
                         for f in domain.inputs.get())
    numba_loop = (bool(settings.grid.numba_loop) and not several and not constraints
                  and not semicontinuous)
    return SearchPlan("grid", "bnb", numba_loop, several, size, note)


def several_outputs(domain) -> bool:
    """Whether the acquisition combines outputs: anything but one output with a Maximize or
    Minimize objective."""
    modelled = [f for f in domain.outputs.get() if f.objective is not None]
    return len(modelled) != 1 or type(modelled[0].objective) not in (MaximizeObjective,
                                                                      MinimizeObjective)


def _may_be_finite(domain) -> bool:
    """False when an input has a continuous range (no space needs building to know)."""
    return not any(isinstance(f, ContinuousInput) and f.lower_bound < f.upper_bound
                   for f in domain.inputs.get())
