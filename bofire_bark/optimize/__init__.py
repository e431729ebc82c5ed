"""Acquisition optimization for BARK: the integrated UCB over all posterior forests as one MIP.

Modules, one per job: ``ensemble`` (reduced trees, no Pyomo), ``trees`` (tree constraints),
``acquisition`` (mu, sigma cones, objective), ``domain_constraints`` / ``constraints`` (BoFire
constraints), ``model`` (assembly), ``solvers``, ``incumbent`` (starting point), ``decode``,
``optimizer`` (entry point); ``finite`` and ``library`` (finite domains enumerated and scored
exactly, no Pyomo), ``result`` (the result type and errors every path returns).

Names are imported lazily, so that a solver child process importing ``model`` does not pull in
BoFire or the engine.
"""

from __future__ import annotations

import importlib

from bofire_bark.jit import drop_stale_caches

drop_stale_caches()  # kernels load from the cache at their first call, after this

_EXPORTS = {
    "optimize_acquisition": "optimizer",
    "AcquisitionResult": "optimizer",
    "InfeasibleDomainError": "optimizer",
    "LibraryExhaustedError": "result",
    "optimize_library": "library",
    "build_library": "library",
    "DEFAULT_KAPPA": "bofire_bark.defaults",
    "DEFAULT_TIME_LIMIT": "bofire_bark.defaults",
    "DEFAULT_MIP_GAP": "bofire_bark.defaults",
    "DEFAULT_ABS_GAP": "bofire_bark.defaults",
    "SOLVERS": "bofire_bark.defaults",
    "build_problem": "optimizer",
    "SUPPORTED_CONSTRAINTS": "bofire_bark.supported",
    "TRANSLATABLE_FUNCTIONS": "bofire_bark.supported",
    "check_domain_supported": "constraints",
    "build_model": "model",
    "resolve_solver": "solvers",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        where = _EXPORTS[name]
        module = where if where.startswith("bofire_bark.") else f"{__name__}.{where}"
        return getattr(importlib.import_module(module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
