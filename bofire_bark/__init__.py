"""BARK, a fully Bayesian tree kernel, as a BoFire strategy plugin.

Importing the package registers ``BARKSurrogate`` and ``BARKStrategy`` with BoFire, so
``bofire.strategies.api.map(spec)`` and BoFire's JSON unions accept them; the functional
classes (numba, the engine) load when BoFire first maps a spec. The SCIP worker
process sets ``BOFIRE_BARK_NO_REGISTRATION`` in its environment: it needs only the optimizer's
modules, not BoFire's strategies (torch, seconds to import).

Specs from outside go through ``load_spec``: BoFire runs some strings of a spec as code.
"""

import os

from bofire_bark.loading import SpecError, load_spec

__version__ = "0.1.0"
__all__ = ["SpecError", "load_spec"]

if not os.environ.get("BOFIRE_BARK_NO_REGISTRATION"):
    from bofire_bark._register import register

    register()
