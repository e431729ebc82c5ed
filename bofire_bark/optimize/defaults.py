"""Solver names and acquisition defaults, defined once and importable with nothing else (the
data models, the optimizer and the SCIP worker process all read them). Reasons for the values:
``optimizer``'s module docstring.
"""

# Solver names a user may pass: the grid branch-and-bound and the MIP solvers ("auto" picks).
MIP_SOLVERS = ("scip", "gurobi", "highs")
SOLVERS = ("auto", "bnb", *MIP_SOLVERS)

DEFAULT_KAPPA = 1.96
DEFAULT_TIME_LIMIT = 2.5
DEFAULT_MIP_GAP = 0.1
DEFAULT_ABS_GAP = 0.01
# the grid search goes on past time_limit, up to DEFAULT_MAX_TIME, while the proven gap is
# above DEFAULT_EXTEND_GAP
DEFAULT_MAX_TIME = 10.0
DEFAULT_EXTEND_GAP = 0.15
