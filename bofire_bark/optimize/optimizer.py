"""Entry point: the next candidate maximizing BARK's integrated UCB over a BoFire domain.

``kappa`` defaults to 1.96 (``DEFAULT_KAPPA``): the paper does not fix it; 1.96 is the 97.5 %
normal quantile, so mu + kappa sigma is the upper end of a 95 % interval of each sample's GP.
It sits at the exploratory end of common choices (BoTorch's UCB ``beta=0.2`` is kappa = 0.45)
because BARK's sigma is bounded by the prior variance 1 in standardized units and a mixture of
16 samples already averages out extreme sigma. Time limit 100 s and relative gap 10 % are the
paper's settings (``DEFAULT_TIME_LIMIT``, ``DEFAULT_MIP_GAP``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pandas as pd

from bofire_bark.optimize.acquisition import sample_gps
from bofire_bark.optimize.constraints import (
    active_delta,
    check_domain_supported,
    constraint_specs,
    feasible,
    input_box,
)
from bofire_bark.optimize.domain_constraints import NonlinearSpec
from bofire_bark.optimize.ensemble import build_ensemble
from bofire_bark.optimize.incumbent import find_incumbent
from bofire_bark.optimize.model import AcquisitionProblem, with_tangent_cuts
from bofire_bark.optimize.solvers import resolve_solver, scip_worker, solve

logger = logging.getLogger(__name__)

DEFAULT_KAPPA = 1.96
DEFAULT_TIME_LIMIT = 100.0
DEFAULT_MIP_GAP = 0.1
# Tolerance for a decoded candidate to count as fulfilling the domain (BoFire's ask uses 1e-5).
FEASIBILITY_TOL = 1e-5


class InfeasibleDomainError(ValueError):
    """The domain's constraints admit no candidate."""


@dataclass
class AcquisitionResult:
    """One optimized candidate.

    Attributes:
        candidate: one row, the domain's input keys (discrete values exact, categories as str).
        x: (D,) the candidate encoded for the engine.
        objective: the MIP's objective at its solution (NaN when the incumbent was returned).
        ucb: the engine's integrated UCB at ``candidate`` (standardized units).
        status: "optimal", "gap" (proven within ``mip_gap``), "time_limit" (stopped with the
            given gap) or "incumbent" (the starting sample's point).
        gap: relative gap reported by the solver (NaN if none).
        bound: the solver's upper bound on the acquisition (NaN if none).
        solver: name of the solver used.
        incumbent_ucb: integrated UCB of the starting point.
        build_time, solve_time, incumbent_time: seconds.
        trace: (seconds, primal, dual, gap) recorded during the solve (SCIP).
    """

    candidate: pd.DataFrame
    x: np.ndarray
    objective: float
    ucb: float
    status: str
    gap: float
    bound: float
    solver: str
    incumbent_ucb: float
    build_time: float
    solve_time: float
    incumbent_time: float
    trace: list = field(default_factory=list, repr=False)

    def summary(self) -> str:
        """One line for logs: status, objective, engine UCB, gap and times."""
        return (f"{self.solver} {self.status}: UCB {self.ucb:.6g} (MIP {self.objective:.6g}, "
                f"start {self.incumbent_ucb:.6g}), gap {self.gap:.3g}, build "
                f"{self.build_time:.2f}s, solve {self.solve_time:.2f}s, start "
                f"{self.incumbent_time:.2f}s")


def _validate(kappa, sign, time_limit, mip_gap):
    if not np.isfinite(kappa) or kappa < 0:
        raise ValueError(f"kappa must be a finite number >= 0, got {kappa}.")
    if sign not in (1, -1, 1.0, -1.0):
        raise ValueError(f"sign must be +1 (maximize) or -1 (minimize), got {sign}.")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be positive, got {time_limit}.")
    if not mip_gap >= 0:
        raise ValueError(f"mip_gap must be >= 0, got {mip_gap}.")


def build_problem(posterior, domain, space, kappa: float = DEFAULT_KAPPA, sign: float = 1.0,
                  pending: np.ndarray | None = None, form: str = "auto"):
    """The plain MIP data and the engine's leaf systems: (problem, systems)."""
    from bofire_bark.engine.forest import route_all

    check_domain_supported(domain)
    specs = constraint_specs(domain, space)
    box = input_box(domain, space)
    if pending is not None:
        pending = np.ascontiguousarray(pending, dtype=np.float64).reshape(-1, space.n_features)
        if len(pending) == 0:
            pending = None
    systems = posterior.systems(pending)
    samples = posterior.samples
    ens = build_ensemble(samples, box)
    Xa = posterior.X if pending is None else np.concatenate((posterior.X, pending))
    Xa = np.ascontiguousarray(Xa, dtype=np.float64)
    S, m = samples["feat"].shape[:2]
    leaf_of = np.empty((S, m, len(Xa)), dtype=np.int64)
    for s in range(S):
        route_all(samples["feat"][s], samples["thr"][s], samples["mask"][s], samples["left"][s],
                  samples["right"][s], posterior.kinds, Xa, leaf_of[s])
    gps = sample_gps(ens, samples, systems.systems, Xa, leaf_of, form)
    problem = AcquisitionProblem(box, ens, gps, float(kappa), float(sign), specs,
                                 active_delta(box))
    return problem, systems


def optimize_acquisition(
    posterior,
    domain,
    space,
    kappa: float = DEFAULT_KAPPA,
    sign: float = 1.0,
    pending: np.ndarray | None = None,
    solver: str = "auto",
    time_limit: float = DEFAULT_TIME_LIMIT,
    mip_gap: float = DEFAULT_MIP_GAP,
    n_random: int = 2000,
    n_starts: int = 4,
    n_sweeps: int = 3,
    seed: int | None = 0,
    isolate: bool = True,
    n_cuts: int = 8,
) -> AcquisitionResult:
    """Maximize the integrated UCB (1/S) sum_s [sign mu_s(x) + kappa sigma_s(x)] over the domain.

    Args:
        posterior: ``bofire_bark.engine.Posterior`` fitted on ``space``-encoded data.
        domain: BoFire domain (its constraints are enforced; unsupported ones raise).
        space: ``SplitSpace`` of ``domain``.
        kappa: exploration weight (default 1.96, see module docs).
        sign: +1 for a MaximizeObjective, -1 for a MinimizeObjective.
        pending: (n_p, D) encoded candidates already chosen in this batch; each sample's GP is
            conditioned on them (kriging believer: sigma shrinks, mean unchanged).
        solver: "auto", "scip", "gurobi" or "highs" (linear models only).
        time_limit: seconds for the solver (default 100, as in the paper).
        mip_gap: relative gap at which the solver stops (default 0.1, as in the paper).
        n_random, n_starts, n_sweeps: the starting sample (random points, ascent starts, sweeps).
        seed: seeds the starting sample and the solver's randomization.
        isolate: run SCIP in the worker process (a native crash then falls back to the
            incumbent); False solves in this process, which a native abort would end.
        n_cuts: tangent planes of every sample's sigma cone added at this many good points of
            the starting sample (valid for all points; see ``acquisition.tangent_cuts``).
            Default 8: at paper scale they halved the time to a 10 % gap (benchmark).

    Raises:
        ValueError: unsupported constraint, unknown or unavailable solver, HiGHS with a cone.
        InfeasibleDomainError: the constraints admit no candidate (or none was found in time).
    """
    _validate(kappa, sign, time_limit, mip_gap)
    specs = constraint_specs(domain, space)  # refuses unsupported constraints first
    shape = SimpleNamespace(kappa=float(kappa), linear=float(kappa) == 0.0 and not any(
        isinstance(c, NonlinearSpec) for c in specs))
    name = resolve_solver(solver, shape)
    if name == "scip" and isolate:
        scip_worker()  # a new worker imports its modules while the problem is prepared
    problem, systems = build_problem(posterior, domain, space, kappa, sign, pending)
    box = problem.box

    def score(X):
        return systems.integrated_ucb(X, kappa, sign)

    def is_feasible(X):
        return feasible(domain, space, box, X, tol=1e-6)

    t0 = time.perf_counter()
    start = find_incumbent(box, problem.constraints, problem.ensemble.thresholds,
                           problem.delta, score, is_feasible, n_random, n_starts,
                           n_sweeps, seed)
    x0, v0, n_ok = start.x, start.value, start.n_feasible
    if n_cuts > 0 and len(start.pool):
        problem = with_tangent_cuts(problem, start.pool[:n_cuts])
    incumbent_time = time.perf_counter() - t0
    logger.info("starting point: integrated UCB %.6g from %d feasible draws (%.2fs)", v0,
                n_ok, incumbent_time)
    out = solve(problem, name, x0, time_limit, mip_gap, seed=seed or 0, isolate=isolate)
    if out.status == "failed":
        logger.warning("solver %s failed (%s); returning the starting point", name, out.message)
    chosen, ucb, status = x0, v0, "incumbent"
    if out.x is not None:
        x = out.x
        ok = bool(feasible(domain, space, box, x[None, :], tol=FEASIBILITY_TOL)[0])
        value = float(score(x[None, :])[0])
        if not ok:
            logger.warning("the solver's point violates the domain's constraints; ignored")
        elif x0 is None or value >= v0 - 1e-9 * max(1.0, abs(v0)):
            chosen, ucb, status = x, value, out.status
        else:
            logger.warning("the solver's point scores %.6g < the starting point's %.6g; "
                           "returning the starting point", value, v0)
    if chosen is None:
        if out.status == "infeasible":
            raise InfeasibleDomainError(
                "The domain's constraints admit no candidate (the solver proved the "
                "acquisition problem infeasible and no random point satisfied them).")
        raise InfeasibleDomainError(
            f"No candidate satisfying the domain's constraints was found: none of {n_random} "
            f"random points did, and the solver ({name}) ended with '{out.status}' "
            f"({out.message}) within the time limit of {time_limit}s.")
    _log_outcome(out, status, mip_gap)
    return AcquisitionResult(
        candidate=space.decode(chosen[None, :]), x=chosen, objective=out.objective, ucb=ucb,
        status=status, gap=out.gap, bound=out.bound, solver=name, incumbent_ucb=v0,
        build_time=out.build_time, solve_time=out.solve_time, incumbent_time=incumbent_time,
        trace=out.trace)


def _log_outcome(out, status: str, mip_gap: float) -> None:
    if status == "optimal":
        logger.info("%s: proven optimal (objective %.6g, %.1fs)", out.solver, out.objective,
                    out.solve_time)
    elif status == "gap":
        logger.info("%s: proven within the gap %.3g <= %.3g (objective %.6g, %.1fs)",
                    out.solver, out.gap, mip_gap, out.objective, out.solve_time)
    elif status == "time_limit":
        logger.info("%s: stopped at the time limit with gap %.3g (objective %.6g, %.1fs)",
                    out.solver, out.gap, out.objective, out.solve_time)
    else:
        logger.info("%s: returning the starting sample's point (solver status %s)", out.solver,
                    out.status)
