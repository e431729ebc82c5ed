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
# Off by default (None: max_time = time_limit): with max_time 10 s and extend_gap 0.15 the
# median ask rose 2.7 -> 3.07 s (95th pct 3.0 -> 10.5 s) for a median gap of 15.0 instead of
# 15.4 % and a better candidate on 1 of 60 posteriors (acquisition_proof --paired)
DEFAULT_MAX_TIME = None
DEFAULT_EXTEND_GAP = 0.15
