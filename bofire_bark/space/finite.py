"""Which domains are finite, how many points they hold, and whether the acquisition
enumerates them (``optimize.library``): numpy only, so the data models can ask too."""

from __future__ import annotations

import math

import numpy as np

from bofire_bark.defaults import LIBRARY_LIMIT
from bofire_bark.kinds import CATEGORICAL, CONTINUOUS


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


def library_plan(space, solver: str = "auto",
                 limit: int = LIBRARY_LIMIT) -> tuple[bool, str | None]:
    """Whether the acquisition enumerates the domain, and why not (a sentence for the log;
    None when the domain is not finite, where there is nothing to say)."""
    size = library_size(space)
    if size is None:
        return False, None
    if str(solver).lower() != "auto":
        return False, (f"the domain is finite ({size} points) but solver '{solver}' was chosen: "
                       "the acquisition is searched by it, not enumerated, and measured points "
                       "may be proposed again (solver 'auto' enumerates)")
    if size > limit:
        return False, (f"the domain is finite but has {size} points, above the enumeration "
                       f"limit of {limit}: the grid search optimizes the acquisition (within "
                       "its gap and time limit) and measured points may be proposed again")
    return True, None
