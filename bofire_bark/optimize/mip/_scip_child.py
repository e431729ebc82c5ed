"""The SCIP worker process: solves acquisition MIPs sent by ``solvers.ScipWorker``.

Started as ``python -m bofire_bark.optimize.mip._scip_child`` with ``BOFIRE_BARK_NO_REGISTRATION``
set, so importing the package skips the BoFire registration (torch and BoTorch) and the child
loads only the optimizer's modules (numpy, scipy, Pyomo).
"""

import sys

from bofire_bark.optimize.mip.solvers import child_main

if __name__ == "__main__":
    child_main(sys.argv[1:])
