"""Defaults and names defined once, at the bottom of the package (no imports), as
``kinds`` is for kind codes: the data models, the engine, the optimizer and the SCIP worker
process all read them. Reasons for the acquisition values: ``optimize.entry``'s module
docstring.
"""

# Solver names a user may pass: the grid branch-and-bound and the MIP solvers ("auto" picks).
MIP_SOLVERS = ("scip", "gurobi", "highs")
SOLVERS = ("auto", "bnb", *MIP_SOLVERS)
# what each MIP solver needs installed
INSTALL = {
    "scip": "pip install pyscipopt",
    "gurobi": "pip install gurobipy, with a full Gurobi licence (the pip licence is "
              "size-limited and too small for this model)",
    "highs": "pip install highspy",
}


def unknown_solver(name) -> str:
    """The message for a solver name that is none of ``SOLVERS``."""
    return (f"Unknown solver {name!r}; choose one of {list(SOLVERS)} (scip: {INSTALL['scip']}; "
            f"gurobi: {INSTALL['gurobi']}; highs: {INSTALL['highs']}).")

DEFAULT_KAPPA = 1.96
# The same as BoFire's qUCB(beta) (kappa = sqrt(beta), BoTorch's convention): 1.96 ** 2 written
# out, so specs carry 3.8416 (sqrt(3.8416) is 1.96 exactly in floating point).
DEFAULT_BETA = 3.8416
DEFAULT_TIME_LIMIT = 2.5
DEFAULT_MIP_GAP = 0.1
DEFAULT_ABS_GAP = 0.01
# Off by default (None: stop at time_limit). Going on while the proven gap is above
# extend_gap (the 10 % target), up to max_time 10 s, brought the median gap on the 60 posteriors
# of acquisition_proof from 11.0 to 10.0 % (95th pct 35.6 -> 29.4 %) at a median ask of 2.7 s
# (--pair extend-now, results/acquisition/extend), but on the 48 from BO runs the median ask
# rose to 7.2 s (10 s on PestControl, TreeFunctionCat, StyblinskiTang10) and in the BO rerun
# with it (results/bo_max_time10) it changed almost no candidate: it buys a proof, not a better
# point, and latency comes first.
DEFAULT_MAX_TIME = None
DEFAULT_EXTEND_GAP = 0.10
# Finite domains of at most this many points (before constraints) are enumerated
# (``library``); larger ones go to the grid search. Measured (results/library_speed, 16 samples
# x 50 trees, 30 and 100 measured points): the enumeration's median ask is 0.7-0.8 s at 10^5
# points (about 7 us per point), well inside the grid search's 2.5 s time limit; about
# 3 x 10^5 points would reach it.
LIBRARY_LIMIT = 100_000

# Prior of the feature each split uses: the sparse Dirichlet prior (DART-style, see
# engine/priors.py and the data model's field for the measurements), or "uniform".
SPLIT_PRIORS = ("uniform", "dirichlet")
DEFAULT_SPLIT_PRIOR = "dirichlet"

# Prior of the noise variance of the standardized output: BART's inverse gamma (the paper's),
# or a log-normal (BoFire's GP default, Hvarfner et al. 2024); engine/priors.py.
NOISE_PRIORS = ("inverse_gamma", "lognormal")
DEFAULT_NOISE_PRIOR = "inverse_gamma"
