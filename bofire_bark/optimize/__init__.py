"""Acquisition optimization for BARK: the integrated UCB over all posterior forests.

Pyomo-free core both searches share: ``settings`` (``AcquisitionSettings``), ``specs`` (domain
constraints as plain data), ``constraints`` (BoFire domain -> box and specs, feasibility),
``ensemble`` (reduced trees), ``sample_gp`` (each sample's GP over its leaves), ``problem``
(``AcquisitionProblem``), ``incumbent`` (starting point), ``outputs`` (several outputs'
acquisition), ``result``; ``entry`` (the entry points); ``library`` (finite domains enumerated
and scored exactly). The searches: ``grid`` (the branch-and-bound, numba) and ``mip`` (Pyomo
formulation and solvers, imported only when a MIP solver runs).

Names are imported lazily, so that the SCIP worker process does not pull in BoFire or the
engine.
"""

from __future__ import annotations

import importlib

from bofire_bark.jit import drop_stale_caches

drop_stale_caches()  # kernels load from the cache at their first call, after this

_EXPORTS = {
    "optimize_acquisition": "entry",
    "optimize_outputs": "entry",
    "solve_acquisition": "entry",
    "prepare_search": "entry",
    "AcquisitionSettings": "bofire_bark.settings",
    "SearchSettings": "bofire_bark.settings",
    "GridSettings": "bofire_bark.settings",
    "plan_search": "bofire_bark.space.finite",
    "AcquisitionResult": "result",
    "InfeasibleDomainError": "result",
    "InfeasibleOutputLimitError": "result",
    "LibraryExhaustedError": "result",
    "optimize_library": "library",
    "build_library": "library",
    "DEFAULT_KAPPA": "bofire_bark.defaults",
    "DEFAULT_TIME_LIMIT": "bofire_bark.defaults",
    "DEFAULT_MIP_GAP": "bofire_bark.defaults",
    "DEFAULT_ABS_GAP": "bofire_bark.defaults",
    "SOLVERS": "bofire_bark.defaults",
    "build_problem": "problem",
    "SUPPORTED_CONSTRAINTS": "bofire_bark.supported",
    "TRANSLATABLE_FUNCTIONS": "bofire_bark.supported",
    "check_domain_supported": "constraints",
    "build_model": "mip.model",
    "resolve_solver": "mip.solvers",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        where = _EXPORTS[name]
        module = where if where.startswith("bofire_bark.") else f"{__name__}.{where}"
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
