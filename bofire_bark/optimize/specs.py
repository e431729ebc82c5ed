"""Domain constraints as plain specs, what both searches read (the MIP in ``mip.constraints``,
the grid search in ``grid.pruning``): no BoFire, Pyomo or numba objects, so the SCIP worker can
unpickle them with the problem. ``constraints`` translates a BoFire domain into them.

- ``LinearSpec``: sum_i a_i value[j_i] == rhs (or <= rhs), over the features' values.
- ``NChooseKSpec``: between ``min_count`` and ``max_count`` of the features nonzero (or none,
  when ``none_also_valid``).
- ``NonlinearSpec``: an expression tree (``bofire_bark.expressions``), expr == 0 (or <= 0).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LinearSpec:
    name: str
    features: tuple[int, ...]
    coefficients: tuple[float, ...]
    rhs: float
    equality: bool


@dataclass(frozen=True)
class NChooseKSpec:
    name: str
    features: tuple[int, ...]
    min_count: int
    max_count: int
    none_also_valid: bool


@dataclass(frozen=True)
class NonlinearSpec:
    """``expr`` is a tree of tuples: ("const", v), ("var", j), ("add", *args), ("mul", *args),
    ("pow", base, exponent) or ("func", name, arg)."""

    name: str
    expr: tuple
    equality: bool


def specs_nck(specs: tuple) -> list[NChooseKSpec]:
    return [s for s in specs if isinstance(s, NChooseKSpec)]
