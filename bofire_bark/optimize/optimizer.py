"""Entry point: the next candidate maximizing BARK's integrated UCB over a BoFire domain.

``kappa`` defaults to 1.96 (``DEFAULT_KAPPA``): the paper does not fix it; 1.96 is the 97.5 %
normal quantile, so mu + kappa sigma is the upper end of a 95 % interval of each sample's GP.
It sits at the exploratory end of common choices (BoTorch's UCB ``beta=0.2`` is kappa = 0.45)
because BARK's sigma is bounded by the prior variance 1 in standardized units and a mixture of
16 samples already averages out extreme sigma.

Two ways to the global optimum, both started from the same feasible point (random draws plus
coordinate ascent, scored by the engine):

- ``"bnb"`` (the default): best-first branch-and-bound over the grid of split thresholds
  (``bnb``, numba bounds in ``grid_bound``, the box loop in numba in ``grid_search`` when
  the domain has no constraints); it stops as soon as the relative gap ``mip_gap``
  or the absolute gap ``abs_gap`` (standardized units: standard deviations of the output) is
  proven, or at ``time_limit``.
- ``"scip"`` / ``"gurobi"`` / ``"highs"``: the Pyomo MIP (``model``), the tool for nonlinear
  equality constraints, which the grid search cannot satisfy inside a box; ``"auto"`` picks it
  only for those.

Defaults (``DEFAULT_TIME_LIMIT`` 2.5 s, ``DEFAULT_MIP_GAP`` 10 % as in the paper,
``DEFAULT_ABS_GAP`` 0.01 sd) come from ``python -m bofire_bark.benchmarks.acquisition_proof``:
latency first (an ask's median wall time within 3 s on the posteriors a BO run meets); a
longer limit buys a tighter bound, rarely a better candidate (results/acquisition).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from bofire_bark.defaults import (
    DEFAULT_ABS_GAP,
    DEFAULT_EXTEND_GAP,
    DEFAULT_KAPPA,
    DEFAULT_MAX_TIME,
    DEFAULT_MIP_GAP,
    DEFAULT_TIME_LIMIT,
)
from bofire_bark.kinds import CATEGORICAL
from bofire_bark.optimize.acquisition import sample_gps
from bofire_bark.optimize.bnb import relative_gap
from bofire_bark.optimize.constraints import (
    active_delta,
    check_domain_supported,
    constraint_specs,
    feasible,
    input_box,
)
from bofire_bark.optimize.domain_constraints import NChooseKSpec, NonlinearSpec
from bofire_bark.optimize.ensemble import build_ensemble
from bofire_bark.optimize.incumbent import find_incumbent
from bofire_bark.optimize.model import AcquisitionProblem, with_tangent_cuts
from bofire_bark.optimize.result import (  # noqa: F401 (re-exported)
    AcquisitionResult,
    InfeasibleDomainError,
    InfeasibleOutputLimitError,
)
from bofire_bark.optimize.solvers import resolve_solver, scip_worker, solve

logger = logging.getLogger(__name__)

# Values per feature the start's coordinate ascent tries with several outputs.
MAX_MOVES = 128

# Tolerance for a decoded candidate to count as fulfilling the domain (BoFire's ask uses 1e-5).
FEASIBILITY_TOL = 1e-5


def _validate(kappa, sign, time_limit, mip_gap, abs_gap=0.0, max_time=None, extend_gap=0.0):
    if not np.isfinite(kappa) or kappa < 0:
        raise ValueError(f"kappa must be a finite number >= 0, got {kappa}.")
    if sign not in (1, -1, 1.0, -1.0):
        raise ValueError(f"sign must be +1 (maximize) or -1 (minimize), got {sign}.")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be positive, got {time_limit}.")
    if not mip_gap >= 0:
        raise ValueError(f"mip_gap must be >= 0, got {mip_gap}.")
    if not abs_gap >= 0:
        raise ValueError(f"abs_gap must be >= 0, got {abs_gap}.")
    if max_time is not None and not max_time > 0:
        raise ValueError(f"max_time must be positive, got {max_time}.")
    if not extend_gap >= 0:
        raise ValueError(f"extend_gap must be >= 0, got {extend_gap}.")


def build_problem(posterior, domain, space, kappa: float = DEFAULT_KAPPA, sign: float = 1.0,
                  pending: np.ndarray | None = None, form: str = "auto", gps: bool = True):
    """The plain MIP data and the engine's leaf systems: (problem, systems).

    ``gps=False`` skips the per-sample cone data, which only the MIP needs."""
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
    gp_data = _sample_gps(posterior, ens, systems, pending, form) if gps else ()
    problem = AcquisitionProblem(box, ens, gp_data, float(kappa), float(sign), specs,
                                 active_delta(box))
    return problem, systems


def _sample_gps(posterior, ens, systems, pending, form):
    """The MIP's per-sample cone data (routes the training and pending points; the grid
    search routes its own)."""
    from bofire_bark.engine.forest import route_all

    samples = posterior.samples
    Xa = posterior.X if pending is None else np.concatenate((posterior.X, pending))
    Xa = np.ascontiguousarray(Xa, dtype=np.float64)
    S, m = samples["feat"].shape[:2]
    leaf_of = np.empty((S, m, len(Xa)), dtype=np.int64)
    for s in range(S):
        route_all(samples["feat"][s], samples["thr"][s], samples["mask"][s], samples["left"][s],
                  samples["right"][s], posterior.kinds, Xa, leaf_of[s])
    return sample_gps(ens, samples, systems.systems, Xa, leaf_of, form)


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
    abs_gap: float = DEFAULT_ABS_GAP,
    max_time: float | None = DEFAULT_MAX_TIME,
    extend_gap: float = DEFAULT_EXTEND_GAP,
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
        solver: "auto" (the grid branch-and-bound, or the MIP with SCIP/Gurobi when the domain
            has a nonlinear equality constraint), "bnb", "scip", "gurobi" or "highs" (linear
            models only).
        time_limit: seconds for the search after the start (default 2.5).
        mip_gap: relative gap at which the search stops (default 0.1, as in the paper).
        n_random, n_starts, n_sweeps: the starting sample (random points, ascent starts, sweeps).
        seed: seeds the starting sample and the solver's randomization.
        isolate: run SCIP in the worker process (a native crash then falls back to the
            incumbent); False solves in this process, which a native abort would end.
        n_cuts: MIP only: tangent planes of every sample's sigma cone at this many good points
            of the starting sample (valid for all points; see ``acquisition.tangent_cuts``).
        abs_gap: the search also stops once bound - value <= abs_gap (standardized units,
            i.e. standard deviations of the output; meaningful when the UCB is near zero).
        max_time, extend_gap: grid search only: while the relative gap proven at
            ``time_limit`` is above ``extend_gap`` (default 0.10, the gap target), the search
            goes on, up to ``max_time`` seconds (default None: stop at ``time_limit``).

    Raises:
        ValueError: unsupported constraint, unknown or unavailable solver, HiGHS with a cone.
        InfeasibleDomainError: the constraints admit no candidate (or none was found in time).
    """
    _validate(kappa, sign, time_limit, mip_gap, abs_gap, max_time, extend_gap)
    specs = constraint_specs(domain, space)  # refuses unsupported constraints first
    name = _choose_solver(solver, kappa, specs)
    if name == "scip" and isolate:
        scip_worker()  # a new worker imports its modules while the problem is prepared
    t_build = time.perf_counter()
    problem, systems = build_problem(posterior, domain, space, kappa, sign, pending,
                                     gps=name != "bnb")
    box = problem.box
    build_time = time.perf_counter() - t_build

    def score(X):
        return systems.integrated_ucb(X, kappa, sign)

    def is_feasible(X):
        return feasible(domain, space, box, X, tol=1e-6)

    t0 = time.perf_counter()
    start = find_incumbent(box, problem.constraints, problem.ensemble.thresholds,
                           problem.delta, score, is_feasible, n_random, n_starts,
                           n_sweeps, seed)
    x0, v0, n_ok = start.x, start.value, start.n_feasible
    if name != "bnb" and n_cuts > 0 and len(start.pool):
        problem = with_tangent_cuts(problem, start.pool[:n_cuts])
    incumbent_time = time.perf_counter() - t0
    logger.info("starting point: integrated UCB %.6g from %d feasible draws (%.2fs)", v0,
                n_ok, incumbent_time)
    if name == "bnb":
        out = _search(problem, systems, posterior, pending, x0, v0, time_limit, mip_gap,
                      abs_gap, seed, max_time, extend_gap)
        build_time += out.build_time
    else:
        out = solve(problem, name, x0, time_limit, mip_gap, seed=seed or 0, isolate=isolate)
        build_time += out.build_time
    if out.status == "failed":
        logger.warning("solver %s failed (%s); returning the starting point", name, out.message)
    chosen, ucb, status, source = x0, v0, "incumbent", "start"
    if out.x is not None:
        x = out.x
        ok = bool(feasible(domain, space, box, x[None, :], tol=FEASIBILITY_TOL)[0])
        value = float(score(x[None, :])[0])
        if not ok:
            logger.warning("the solver's point violates the domain's constraints; ignored")
        elif x0 is None or value >= v0 - 1e-9 * max(1.0, abs(v0)):
            # ties go to the solver's point (exact zeros where the start has round-off)
            chosen, ucb = x, value
            source = "start" if x0 is not None and np.array_equal(x, x0) else "search"
        else:
            logger.warning("the solver's point scores %.6g < the starting point's %.6g; "
                           "returning the starting point", value, v0)
    if chosen is not None and out.status in ("optimal", "gap", "time_limit") and np.isfinite(
            out.bound):
        status = out.status
    if chosen is None:
        if out.status == "infeasible":
            raise InfeasibleDomainError(
                "The domain's constraints admit no candidate (the solver proved the "
                "acquisition problem infeasible and no random point satisfied them).")
        raise InfeasibleDomainError(
            f"No candidate satisfying the domain's constraints was found: none of {n_random} "
            f"random points did, and the solver ({name}) ended with '{out.status}' "
            f"({out.message}) within the time limit of {time_limit}s.")
    chosen, ucb = _snap_zeros(chosen, ucb, problem, score, is_feasible)
    bound = max(float(out.bound), ucb) if status != "incumbent" else float("nan")
    gap = relative_gap(ucb, bound) if status != "incumbent" else float("nan")
    if status in ("gap", "time_limit") and bound - ucb <= 1e-9 * max(1.0, abs(ucb)):
        status = "optimal"
    result = AcquisitionResult(
        candidate=space.decode(chosen[None, :]), x=chosen, objective=out.objective, ucb=ucb,
        status=status, gap=gap, bound=bound, solver=name, incumbent_ucb=v0,
        build_time=build_time, solve_time=out.solve_time, incumbent_time=incumbent_time,
        source=source, nodes=getattr(out, "nodes", 0), trace=out.trace)
    logger.info("%s", result.summary())
    return result


def _snap_zeros(x, value, problem, score, is_feasible):
    """Set NChooseK and allow-zero features within BoFire's zero tolerance (1e-6) to exactly
    zero when the point stays feasible and scores no lower (random starts leave round-off)."""
    feats = {j for c in problem.constraints if isinstance(c, NChooseKSpec) for j in c.features}
    feats |= set(np.flatnonzero(problem.box.semicontinuous).tolist())
    snap = [j for j in feats if 0.0 < abs(x[j]) <= 1e-6 and problem.box.lower[j] <= 0.0]
    if not snap:
        return x, value
    y = x.copy()
    y[snap] = 0.0
    if bool(is_feasible(y[None, :])[0]):
        v = float(score(y[None, :])[0])
        if v >= value - 1e-12 * max(1.0, abs(value)):
            return y, v
    return x, value


def _choose_solver(solver: str, kappa: float, specs: tuple) -> str:
    """"bnb" for "auto" unless a nonlinear equality needs the MIP; else the MIP solver."""
    if str(solver).lower() == "bnb":
        return "bnb"
    nonlinear_eq = any(isinstance(c, NonlinearSpec) and c.equality for c in specs)
    if str(solver).lower() == "auto" and not nonlinear_eq:
        return "bnb"
    shape = SimpleNamespace(kappa=float(kappa), linear=float(kappa) == 0.0 and not any(
        isinstance(c, NonlinearSpec) for c in specs))
    return resolve_solver(solver, shape)


@dataclass
class _SearchOutcome:
    """The branch-and-bound's answer in the shape of a MIP solver's."""

    status: str
    x: np.ndarray | None
    objective: float
    bound: float
    build_time: float
    solve_time: float
    nodes: int
    message: str = ""
    trace: list = field(default_factory=list)


def _search(problem, systems, posterior, pending, x0, v0, time_limit, mip_gap, abs_gap, seed,
            max_time, extend_gap):
    from bofire_bark.optimize import bnb

    t0 = time.perf_counter()
    settings = bnb.relaxation(python_loop=bool(problem.constraints))
    gm = bnb.grid_model(problem, systems, posterior, pending, **settings)
    grid = bnb.Grid(gm, problem.box)
    cons = bnb.Constraints(problem.constraints, problem.box, problem.delta)
    partner = None
    if bnb.PORTFOLIO and not problem.constraints and any(
            k != CATEGORICAL for k in problem.box.kinds):
        partner = bnb.Grid(bnb.grid_model(problem, systems, posterior, pending,
                                          lagrange_bins=True, **settings), problem.box)
    build = time.perf_counter() - t0
    res = bnb.search(grid, cons, x0, v0, time_limit, mip_gap, abs_gap, seed,
                     max_time=max_time, extend_gap=extend_gap, partner=partner)
    x = None if res.x is None else np.asarray(res.x, dtype=np.float64)
    return _SearchOutcome(res.status, x, res.value, res.bound, build, res.seconds, res.nodes,
                          f"{res.unresolved} boxes without a feasible point found")


def optimize_outputs(
    posteriors: dict,
    acq,
    domain,
    space,
    kappa: float = DEFAULT_KAPPA,
    pending: np.ndarray | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    mip_gap: float = DEFAULT_MIP_GAP,
    n_random: int = 2000,
    n_starts: int = 4,
    n_sweeps: int = 3,
    seed: int | None = 0,
    abs_gap: float = DEFAULT_ABS_GAP,
    max_time: float | None = DEFAULT_MAX_TIME,
    extend_gap: float = DEFAULT_EXTEND_GAP,
) -> AcquisitionResult:
    """Maximize an acquisition over several outputs (``outputs.OutputAcquisition``) with the
    grid branch-and-bound: the same start and proof as ``optimize_acquisition``, every channel
    bounded by its own posterior's trees on one shared grid.

    Args:
        posteriors: output key -> ``engine.Posterior`` for every key of ``acq.keys``.
        acq: objectives, output limits and this solve's weights (``outputs``).
        pending: (n_p, D) encoded points every output's samples are conditioned on.
        Others: as ``optimize_acquisition``; ``ucb``, ``bound`` and the gaps of the result are
        in the acquisition's units (standard deviations of the output for one objective,
        shares of the observed ranges for several).

    Raises:
        ValueError: a nonlinear equality constraint (the grid search cannot hold one).
        InfeasibleOutputLimitError: an output limit no candidate can meet, even optimistically.
        InfeasibleDomainError: the domain's constraints admit no candidate.
    """
    from bofire_bark.optimize import bnb

    _validate(kappa, 1.0, time_limit, mip_gap, abs_gap, max_time, extend_gap)
    specs = constraint_specs(domain, space)
    if any(isinstance(c, NonlinearSpec) and c.equality for c in specs):
        raise ValueError("several objectives or output limits are optimized by the grid "
                         "search, which cannot hold a nonlinear equality constraint")
    t_build = time.perf_counter()
    problems, systems = [], []
    for key in acq.keys:
        problem, sys_k = build_problem(posteriors[key], domain, space, kappa, 1.0, pending,
                                       gps=False)
        problems.append(problem)
        systems.append(sys_k)
    box = problems[0].box
    d = box.n_features
    thresholds = tuple(np.unique(np.concatenate([p.ensemble.thresholds[j] for p in problems]))
                       for j in range(d))
    build_time = time.perf_counter() - t_build

    def channels(X):
        parts = []
        for sys_k in systems:
            means, variances = sys_k.predict_each(X)
            sd = kappa * np.sqrt(variances)
            parts.append({1.0: (means + sd).mean(axis=0), -1.0: (sd - means).mean(axis=0)})
        return np.stack([parts[c.output][c.sign] for c in acq.channels], axis=-1)

    def score(X):  # -inf past an output limit: such a point never becomes the start
        return acq.value(channels(X))

    def is_feasible(X):
        return feasible(domain, space, box, X, tol=1e-6)

    t0 = time.perf_counter()
    # the shared grid holds every output's thresholds: the ascent tries a subset of each
    # feature's cells (the search then covers all of them)
    start = find_incumbent(box, problems[0].constraints, thresholds, problems[0].delta, score,
                           is_feasible, n_random, n_starts, n_sweeps, seed,
                           max_moves=MAX_MOVES)
    x0, v0 = start.x, start.value
    if not np.isfinite(v0):
        x0 = None
    incumbent_time = time.perf_counter() - t0
    t1 = time.perf_counter()
    grids = []
    for c in acq.channels:
        problem = problems[c.output]
        gm = bnb.grid_model(_with_sign(problem, c.sign), systems[c.output],
                            posteriors[acq.keys[c.output]], pending, thresholds=thresholds,
                            **bnb.relaxation(python_loop=True))
        grids.append(bnb.Grid(gm, box))
    targets = None if x0 is None else channels(x0[None, :])[0]
    grid = bnb.MultiGrid(grids, acq, targets)
    cons = bnb.Constraints(problems[0].constraints, box, problems[0].delta)
    build_time += time.perf_counter() - t1
    res = bnb.search(grid, cons, x0, v0, time_limit, mip_gap, abs_gap, seed,
                     max_time=max_time, extend_gap=extend_gap)
    status = res.status if res.status in ("optimal", "gap", "time_limit") else "incumbent"
    if res.x is None:
        _explain_infeasible(grid, acq, posteriors, res.status == "infeasible")
        x = _nearest_to_limits(box, problems[0].constraints, problems[0].delta, channels, acq,
                               lambda X: feasible(domain, space, box, X, tol=1e-6), n_random,
                               seed)
        if x is None:
            raise InfeasibleDomainError(
                f"No candidate satisfying the domain's constraints was found: none of "
                f"{n_random} random points did, and the search ended with '{res.status}' "
                f"within {time_limit}s.")
        logger.warning("no candidate found meeting the output limits (%s) within %.3gs; "
                       "returning the random point closest to meeting them",
                       "; ".join(lim.text for lim in acq.limits), time_limit)
        status = "incumbent"
    else:
        x = np.asarray(res.x, dtype=np.float64)
    value = float(score(x[None, :])[0])
    source = "start" if x0 is not None and np.array_equal(x, x0) else "search"
    bound = max(float(res.bound), value) if status != "incumbent" else float("nan")
    gap = relative_gap(value, bound) if status != "incumbent" else float("nan")
    if status in ("gap", "time_limit") and bound - value <= 1e-9 * max(1.0, abs(value)):
        status = "optimal"
    result = AcquisitionResult(
        candidate=space.decode(x[None, :]), x=x, objective=float(res.value), ucb=value,
        status=status, gap=gap, bound=bound, solver="bnb",
        incumbent_ucb=v0, build_time=build_time, solve_time=res.seconds,
        incumbent_time=incumbent_time, source=source, nodes=res.nodes,
        units="sd" if acq.single else "scalarized")
    logger.info("%s", result.summary())
    return result


def _with_sign(problem, sign: float):
    from dataclasses import replace

    return replace(problem, sign=float(sign))


def _explain_infeasible(grid, acq, posteriors, proven: bool) -> None:
    """Raise ``InfeasibleOutputLimitError`` naming every limit that the root box's bound
    proves unreachable, or all limits when the search proved them jointly unreachable."""
    if not acq.limits:
        return
    parts = grid.channel_bounds(*grid.root())
    missed = []
    for lim in acq.limits:
        ub = parts[lim.channel][0]
        if ub < lim.required - 1e-9:
            post = posteriors[lim.key]
            sign = acq.channels[lim.channel].sign
            best = post.y_mean + sign * post.y_std * ub
            missed.append(f"{lim.text}: even the upper confidence bound reaches at best "
                          f"{best:.4g}")
    if not missed and proven:
        missed = [lim.text for lim in acq.limits]
        missed[-1] += " (each reachable alone, not together with the domain's constraints)"
    if missed:
        raise InfeasibleOutputLimitError(
            "No candidate can meet the output limit(s) under the model: " + "; ".join(missed)
            + ". Relax the limit, or tell the strategy experiments nearer to it.")


def _nearest_to_limits(box, specs, delta, channels, acq, is_feasible, n: int, seed):
    """The domain-feasible random point of largest limit slack, or None."""
    from bofire_bark.optimize.incumbent import random_points

    X = random_points(box, specs, n, delta, np.random.default_rng(seed))
    X = X[is_feasible(X)]
    if len(X) == 0:
        return None
    return X[int(np.argmax(acq.slack(channels(X))))].copy()
