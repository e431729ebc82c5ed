"""The SCIP worker process: solves acquisition MIPs sent by ``solvers.ScipWorker``.

Run by path, not with ``-m``: the ``bofire_bark`` package's ``__init__`` registers the strategy
with BoFire (importing torch and BoTorch, seconds), which the child does not need. A bare
package module pointing at the same directory lets the optimizer's modules (numpy, scipy and
Pyomo only) import without it.
"""

import os
import sys
import types

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    if sys.path and os.path.abspath(sys.path[0]) == here:
        sys.path.pop(0)  # the script's folder holds modules named like generic ones
    sys.path.insert(0, os.path.dirname(root))
    if "bofire_bark" not in sys.modules:
        package = types.ModuleType("bofire_bark")
        package.__path__ = [root]
        sys.modules["bofire_bark"] = package
    from bofire_bark.optimize.solvers import child_main

    child_main(sys.argv[1:])
