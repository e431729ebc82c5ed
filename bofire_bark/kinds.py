"""Feature kind codes shared by every layer (space encoding, engine kernels, optimizer, tests).

A module with no imports, so that the SCIP worker process, which loads the optimizer without
the package's registration, can read it too.
"""

CONTINUOUS = 0
DISCRETE = 1
CATEGORICAL = 2
