"""Entry point: the next candidate maximizing BARK's integrated UCB over a BoFire domain.

``kappa`` defaults to 1.96 (``DEFAULT_KAPPA``): the paper does not fix it; 1.96 is the 97.5 %
normal quantile, so mu + kappa sigma is the upper end of a 95 % interval of each sample's GP.
It sits at the exploratory end of common choices (BoTorch's UCB ``beta=0.2`` is kappa = 0.45)
because BARK's sigma is bounded by the prior variance 1 in standardized units and a mixture of
16 samples already averages out extreme sigma.

Two ways to the global optimum, both started from the same feasible point (random draws plus
coordinate ascent, scored by the engine):

- ``"bnb"`` (the default): best-first branch-and-bound over the grid of split thresholds
  (``grid``: numba bounds in ``grid.bound``, the box loop in numba in ``grid.loop`` when
  the domain has no constraints); it stops as soon as the relative gap ``mip_gap``
  or the absolute gap ``abs_gap`` (standardized units: standard deviations of the output) is
  proven, or at ``time_limit``.
- ``"scip"`` / ``"gurobi"`` / ``"highs"``: the Pyomo MIP (``mip``), the tool for nonlinear
  equality constraints, which the grid search cannot satisfy inside a box; ``"auto"`` picks it
  only for those.

Defaults (``DEFAULT_TIME_LIMIT`` 2.5 s, ``DEFAULT_MIP_GAP`` 10 % as in the paper,
``DEFAULT_ABS_GAP`` 0.01 sd) come from ``python -m benchmarks.acquisition_proof``:
latency first (an ask's median wall time within 3 s on the posteriors a BO run meets); a
longer limit buys a tighter bound, rarely a better candidate (results/acquisition).

One pipeline serves one output (``optimize_acquisition``) and several (``optimize_outputs``):
validate the settings, build the problem, find the start, search, make the result (``_run``
over a ``OneOutputSearch`` or ``_Outputs`` job). Pyomo is imported only when a MIP solver runs.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import numpy as np

from bofire_bark.optimize.constraints import constraint_specs, feasible
from bofire_bark.optimize.incumbent import (
    Incumbent,
    distinct_point,
    farthest_in_cell,
    find_incumbent,
    random_points,
    smoothest_in_cell,
)
from bofire_bark.optimize.problem import SMOOTH_MIP, build_problem, with_tangent_cuts
from bofire_bark.optimize.result import (  # noqa: F401 (re-exported)
    WITH_BOUND,
    AcquisitionResult,
    InfeasibleDomainError,
    InfeasibleOutputLimitError,
    relative_gap,
)
from bofire_bark.optimize.rules import BATCH_RULES, HYPERVOLUME_RULES
from bofire_bark.optimize.specs import NChooseKSpec, NonlinearSpec
from bofire_bark.settings import AcquisitionSettings, settings_with
from bofire_bark.space.finite import plan_search

logger = logging.getLogger(__name__)

# Values per feature the start's coordinate ascent tries with several outputs.
MAX_MOVES = 128

# Tolerance for a decoded candidate to count as fulfilling the domain (BoFire's ask uses 1e-5).
FEASIBILITY_TOL = 1e-5


def optimize_acquisition(posterior, domain, space, settings: AcquisitionSettings | None = None,
                         sign: float = 1.0, pending: np.ndarray | None = None,
                         **overrides) -> AcquisitionResult:
    """Maximize the acquisition (1/S) sum_s g(sign mu_s(x), sigma_s(x)) over the domain: the
    integrated UCB g = sign mu_s + kappa sigma_s by default, or another rule of ``rules``
    (``settings.rule``).

    Args:
        posterior: ``bofire_bark.engine.Posterior`` fitted on ``space``-encoded data.
        domain: BoFire domain (its constraints are enforced; unsupported ones raise).
        space: ``SplitSpace`` of ``domain``.
        settings: ``AcquisitionSettings`` (rule, kappa, solver, time limit, gaps, start, grid
            search; default: the defaults).
        sign: +1 for a MaximizeObjective, -1 for a MinimizeObjective.
        pending: (n_p, D) encoded candidates already chosen in this batch; each sample's GP is
            conditioned on them (kriging believer: sigma shrinks, mean unchanged).
        **overrides: fields of ``settings`` to replace (e.g. ``time_limit=1.0``).

    Raises:
        ValueError: unsupported constraint, unknown or unavailable solver, HiGHS with a cone.
        InfeasibleDomainError: the constraints admit no candidate (or none was found in time).
    """
    settings = settings_with(settings, overrides)
    return _run(_one_output(posterior, domain, space, settings, sign, pending), settings)


def optimize_outputs(posteriors: dict, acq, domain, space,
                     settings: AcquisitionSettings | None = None,
                     pending: np.ndarray | None = None, **overrides) -> AcquisitionResult:
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
    settings = settings_with(settings, overrides)
    plan = plan_search(domain, settings, space, limit=0, several=True)
    return _run(_Outputs(posteriors, acq, domain, space, pending, plan), settings)


class Batch:
    """What the searches of one batch share: pass the same one to every
    ``solve_acquisition`` of an ``ask(n)`` (``size`` = n), the pending points growing from
    one to the next and nothing else changing. Holds the random points the starts score
    (drawn by the first candidate's start, with its seed) and the grid search's partition
    (``grid.Frontier``): for n > 1 under ``rules.BATCH_RULES`` with one output, every search
    of the batch runs the Python box loop, which keeps that partition, and the next candidate's
    search starts from it."""

    def __init__(self, size: int = 1):
        from bofire_bark.optimize.grid.driver import Frontier

        self.size = int(size)
        self.frontier = Frontier()
        self._draws: np.ndarray | None = None
        self.searches = 0  # grid searches run so far

    def shares_bounds(self, rule: str) -> bool:
        """Whether the searches of this batch pass on their partition (``frontier``)."""
        return self.size > 1 and rule in BATCH_RULES

    def search_settings(self, settings: AcquisitionSettings) -> AcquisitionSettings:
        """The settings of the next grid search: without the polish after the first search
        unless ``GridSettings.batch_polish``; counts the search."""
        self.searches += 1
        if self.searches == 1 or settings.grid.batch_polish:
            return settings
        return replace(settings, grid=replace(settings.grid, polish=0.0))

    def draws(self, box, specs: tuple, delta: np.ndarray, settings: AcquisitionSettings
              ) -> np.ndarray:
        """The start's ``incumbent.random_points`` (the first call's, every time after)."""
        if self._draws is None or len(self._draws) != settings.n_start_points:
            self._draws = random_points(box, specs, settings.n_start_points, delta,
                                        np.random.default_rng(settings.seed))
        return self._draws


def _draws(batch: Batch | None, box, specs, delta, settings) -> np.ndarray | None:
    return None if batch is None else batch.draws(box, specs, delta, settings)


def solve_acquisition(plan, posteriors: dict, acq, domain, space,
                      settings: AcquisitionSettings, pending: np.ndarray | None = None,
                      library=None, exclude: np.ndarray | None = None,
                      batch: Batch | None = None) -> AcquisitionResult:
    """One candidate by the search ``plan`` names (``space.finite.plan_search``): the
    enumeration of ``library`` (built here when None), the grid search or the MIP, for one
    objective or several (``acq``, ``outputs.output_acquisition``).

    Args:
        plan: the ``SearchPlan`` of ``domain`` and ``settings``.
        posteriors: output key -> ``engine.Posterior`` for every key of ``acq.keys``.
        settings: the solve's ``AcquisitionSettings`` (rule, kappa and seed included).
        pending: (n_p, D) encoded points every sample is conditioned on.
        library, exclude: the enumeration's points (``library.build_library``) and the
            encoded points it never proposes (None: any).
        batch: the ``Batch`` of the ask this candidate belongs to (None: none).
    """
    if plan.search == "library":
        from bofire_bark.optimize.library import build_library, optimize_library

        library = build_library(domain, space) if library is None else library
        return optimize_library(library, posteriors, acq, space, settings, pending=pending,
                                exclude=exclude)
    if plan.several:
        return _run(_Outputs(posteriors, acq, domain, space, pending, plan, batch), settings)
    plus = acq.channels[acq.goals[0].plus]
    job = OneOutputSearch(posteriors[acq.keys[plus.output]], domain, space, float(plus.sign),
                          pending, plan, batch)
    return _run(job, settings)


def prepare_search(posterior, domain, space, settings: AcquisitionSettings | None = None,
                   sign: float = 1.0, pending: np.ndarray | None = None, **overrides):
    """``optimize_acquisition`` in steps, the seam for studies and tests: the returned search
    is validated and built (``.problem``, ``.systems``); ``.start(settings)`` finds the
    starting point and ``.solve(start, settings)`` searches from it (``start`` None: from
    nothing) and returns the ``AcquisitionResult``. ``settings`` of a later step may differ
    in the search's fields (time limit, gaps, ``grid``), not in the solver or the rule."""
    settings = settings_with(settings, overrides)
    job = _one_output(posterior, domain, space, settings, sign, pending)
    job.prepare(settings)
    job.build(settings)
    return job


def _one_output(posterior, domain, space, settings, sign, pending) -> OneOutputSearch:
    # the search entry points search; they do not enumerate (``solve_acquisition`` does)
    plan = plan_search(domain, settings, space, limit=0, several=False)
    return OneOutputSearch(posterior, domain, space, float(sign), pending, plan)


@dataclass
class _Times:
    build: float = 0.0
    start: float = 0.0


def _run(job, settings: AcquisitionSettings) -> AcquisitionResult:
    """validate -> build -> start -> search -> result, for either job."""
    times = _Times()
    job.prepare(settings)
    t = time.perf_counter()
    job.build(settings)
    times.build = time.perf_counter() - t
    t = time.perf_counter()
    start = job.start(settings)
    times.start = time.perf_counter() - t
    out = job.search(start, settings, times)
    result = job.result(start, out, settings, times)
    logger.info("%s", result.summary())
    return result


def _final_status(status: str, value: float, out_bound: float) -> tuple[str, float, float]:
    """(status, bound, gap) of a result: no bound for the start alone; a gap closed to
    round-off is "optimal"."""
    bound = max(float(out_bound), value) if status != "incumbent" else float("nan")
    gap = relative_gap(value, bound) if status != "incumbent" else float("nan")
    if status in WITH_BOUND and bound - value <= 1e-9 * max(1.0, abs(value)):
        status = "optimal"
    return status, bound, gap


class OneOutputSearch:
    """One output's acquisition: the grid search, or a MIP solver for what it cannot hold
    (``prepare_search`` returns it prepared and built, for studies and tests)."""

    def __init__(self, posterior, domain, space, sign, pending, plan, batch=None):
        self.posterior, self.domain, self.space = posterior, domain, space
        self.sign, self.pending, self.plan = sign, pending, plan
        self.batch = batch

    def prepare(self, settings: AcquisitionSettings) -> None:
        self.settings = settings
        settings.validate(self.sign)
        specs = constraint_specs(self.domain, self.space)  # refuses unsupported ones first
        if self.plan.search == "mip" and getattr(self.posterior, "smooth", None) is not None:
            raise ValueError(SMOOTH_MIP)  # before the solver is looked up: it may be missing
        self.name = _mip_solver(self.plan, settings.kappa, specs) if (
            self.plan.search == "mip") else "bnb"
        if settings.rule in HYPERVOLUME_RULES:
            raise ValueError(f"acquisition rule '{settings.rule}' needs two or more objectives")
        if self.name != "bnb" and settings.rule != "ucb":
            raise ValueError(
                f"acquisition rule '{settings.rule}': the MIP solver '{self.name}' maximizes "
                "the UCB only" + (" (a nonlinear equality constraint needs the MIP)"
                                  if settings.solver == "auto" else "")
                + "; use the UCB rule, or solver 'bnb' without nonlinear equalities")
        if self.name == "scip" and settings.isolate:
            from bofire_bark.optimize.mip.solvers import scip_worker

            scip_worker()  # a new worker imports its modules while the problem is prepared

    def build(self, settings: AcquisitionSettings) -> None:
        self.problem, self.systems = build_problem(
            self.posterior, self.domain, self.space, settings.kappa, self.sign, self.pending,
            gps=self.name != "bnb", rule=settings.rule)
        self.rule = settings.acquisition_rule

    def score(self, X, binned: bool = True):
        return self.rule.score(self.systems, X, self.sign, self.problem.incumbents, binned)

    def is_feasible(self, X):
        return feasible(self.domain, self.space, self.problem.box, X, tol=1e-6,
                        specs=self.problem.constraints)

    def fulfils(self, X):
        return feasible(self.domain, self.space, self.problem.box, X, tol=1e-6)

    def start(self, settings: AcquisitionSettings | None = None):
        settings = self.settings if settings is None else settings
        problem = self.problem
        draws = _draws(self.batch, problem.box, problem.constraints, problem.delta, settings)
        start = _checked_start(lambda check: find_incumbent(
            problem.box, problem.constraints, problem.ensemble.thresholds, problem.delta,
            self.score, check, settings, draws=draws), self.is_feasible, self.fulfils)
        if self.name != "bnb" and settings.n_cuts > 0 and len(start.pool):
            self.problem = with_tangent_cuts(problem, start.pool[:settings.n_cuts])
        return start

    def solve(self, start=None, settings: AcquisitionSettings | None = None
              ) -> AcquisitionResult:
        """Search from ``start`` (``start()``'s point; None: from nothing) with ``settings``
        (default: the prepared ones) and make the result (``prepare_search``)."""
        settings = self.settings if settings is None else settings
        if start is None:
            start = Incumbent(None, -np.inf, 0, np.zeros((0, self.problem.box.n_features)))
        times = _Times()
        return self.result(start, self.search(start, settings, times), settings, times)

    def search(self, start, settings: AcquisitionSettings, times: _Times):
        logger.info("starting point: acquisition %.6g from %d feasible draws (%.2fs)",
                    start.value, start.n_feasible, times.start)
        if self.name == "bnb":
            out = self._grid_search(start, settings)
        else:
            from bofire_bark.optimize.mip.solvers import solve

            out = solve(self.problem, self.name, start.x, settings.time_limit,
                        settings.mip_gap, seed=settings.seed or 0, isolate=settings.isolate)
        times.build += out.build_time
        if out.status == "failed":
            logger.warning("solver %s failed (%s); returning the starting point", self.name,
                           out.message)
        return out

    def grid(self, settings: AcquisitionSettings | None = None,
             numba_loop: bool | None = None):
        """(``grid.Grid``, ``grid.Constraints``) the grid search of these settings runs on
        (relaxed for the loop: by default the plan's)."""
        from bofire_bark.optimize.grid import build_grid

        return build_grid(self.problem, self.systems, self.posterior,
                          self.settings if settings is None else settings, self.pending,
                          self.plan.numba_loop if numba_loop is None else numba_loop)

    def _grid_search(self, start, settings: AcquisitionSettings) -> _SearchOutcome:
        from bofire_bark.optimize.grid import search

        numba_loop, frontier = self.plan.numba_loop, None
        if self.batch is not None:
            settings = self.batch.search_settings(settings)
            if self.batch.shares_bounds(settings.rule):
                numba_loop, frontier = False, self.batch.frontier
        t0 = time.perf_counter()
        grid, cons = self.grid(settings, numba_loop)
        build = time.perf_counter() - t0
        res = search(grid, cons, start.x, start.value, settings, numba_loop, frontier)
        x = None if res.x is None else np.asarray(res.x, dtype=np.float64)
        return _SearchOutcome(res.status, x, res.value, res.bound, build, res.seconds,
                              res.nodes, f"{res.unresolved} boxes without a feasible point "
                              "found")

    def result(self, start, out, settings: AcquisitionSettings, times: _Times):
        x0, v0 = start.x, start.value
        chosen, ucb, status, source = x0, v0, "incumbent", "start"
        if out.x is not None:
            x = out.x
            ok = bool(feasible(self.domain, self.space, self.problem.box, x[None, :],
                               tol=FEASIBILITY_TOL)[0])
            value = float(self.score(x[None, :])[0])
            if not ok:
                logger.warning("the solver's point violates the domain's constraints; ignored")
            elif x0 is None or value >= v0 - 1e-9 * max(1.0, abs(v0)):
                # ties go to the solver's point (exact zeros where the start has round-off)
                chosen, ucb = x, value
                source = "start" if x0 is not None and np.array_equal(x, x0) else "search"
            else:
                logger.warning("the solver's point scores %.6g < the starting point's %.6g; "
                               "returning the starting point", value, v0)
        if chosen is not None and out.status in WITH_BOUND and (
                np.isfinite(out.bound)):
            status = out.status
        if chosen is None:
            if out.status == "infeasible":
                raise InfeasibleDomainError(
                    "The domain's constraints admit no candidate (the solver proved the "
                    "acquisition problem infeasible and no random point satisfied them).")
            raise InfeasibleDomainError(
                f"No candidate satisfying the domain's constraints was found: none of "
                f"{settings.n_start_points} random points did, and the solver ({self.name}) ended "
                f"with '{out.status}' ({out.message}) within the time limit of "
                f"{settings.time_limit}s.")
        chosen, ucb = _tie_break(chosen, ucb, settings, self.problem.box,
                                 self.problem.ensemble.thresholds, self.score, self.fulfils,
                                 self.problem.constraints, self.posterior.X, self.pending)
        chosen, ucb = _snap_zeros(chosen, ucb, self.problem, self.score, self.fulfils)
        chosen, ucb, status = _not_pending(chosen, ucb, status, self.pending,
                                           self.problem.box, self.problem.ensemble.thresholds,
                                           self.score, self.fulfils)
        status, bound, gap = _final_status(status, ucb, out.bound)
        return AcquisitionResult(
            candidate=self.space.decode(chosen[None, :]), x=chosen, objective=out.objective,
            ucb=ucb, status=status, gap=gap, bound=bound, solver=self.name,
            incumbent_ucb=v0, build_time=times.build, solve_time=out.solve_time,
            incumbent_time=times.start, source=source, nodes=getattr(out, "nodes", 0),
            trace=out.trace)


class _Outputs:
    """Several outputs' channels combined by an ``outputs.OutputAcquisition``, on one grid."""

    def __init__(self, posteriors, acq, domain, space, pending, plan, batch=None):
        self.posteriors, self.acq, self.domain, self.space = posteriors, acq, domain, space
        self.pending, self.plan, self.batch = pending, plan, batch

    def prepare(self, settings: AcquisitionSettings) -> None:
        settings.validate()
        if settings.rule not in ("ucb", *HYPERVOLUME_RULES):
            raise ValueError(f"acquisition rule '{settings.rule}': several objectives, "
                             "CloseToTarget objectives and output limits take the UCB rule "
                             "or the expected hypervolume improvement")
        self.rule = settings.rule
        constraint_specs(self.domain, self.space)  # refuses unsupported ones
        if self.plan.search != "grid":
            raise ValueError("several objectives or output limits are optimized by the grid "
                             "search (solver 'auto' or 'bnb'), and it cannot hold a "
                             "nonlinear equality constraint")

    def build(self, settings: AcquisitionSettings) -> None:
        self.problems, self.systems = [], []
        for key in self.acq.keys:
            problem, sys_k = build_problem(self.posteriors[key], self.domain, self.space,
                                           settings.kappa, 1.0, self.pending, gps=False)
            self.problems.append(problem)
            self.systems.append(sys_k)
        self.box = self.problems[0].box
        self.thresholds = tuple(
            np.unique(np.concatenate([p.ensemble.thresholds[j] for p in self.problems]))
            for j in range(self.box.n_features))
        self.kappa = settings.kappa
        self.hv = None
        if self.rule in HYPERVOLUME_RULES:
            from bofire_bark.optimize.hypervolume import build_hypervolume

            self.hv = build_hypervolume(self.acq, self.posteriors, self.systems, self.pending,
                                        noisy=self.rule == "nehvi",
                                        output_limits=settings.output_limits)

    def channels(self, X, moments: list | None = None, binned: bool = True):
        """Channel values (n, C); ``moments``: every output's ``predict_each`` at X, if
        already at hand."""
        parts = []
        for k, sys_k in enumerate(self.systems):
            means, variances = sys_k.predict_each(X, binned) if moments is None else moments[k]
            sd = self.kappa * np.sqrt(variances)
            parts.append({1.0: (means + sd).mean(axis=0), -1.0: (sd - means).mean(axis=0)})
        return np.stack([parts[c.output][c.sign] for c in self.acq.channels], axis=-1)

    def score(self, X, binned: bool = True):  # -inf past a pruning output limit: never the start
        if self.hv is None:
            return self.acq.value(self.channels(X, binned=binned))
        moments = [sys_k.predict_each(X, binned) for sys_k in self.systems]
        if not self.hv.prunes:
            return self.hv.values(moments)
        ok = self.acq.slack(self.channels(X, moments)) >= 0.0
        return np.where(ok, self.hv.values(moments), -np.inf)

    def is_feasible(self, X):
        return feasible(self.domain, self.space, self.box, X, tol=1e-6,
                        specs=self.problems[0].constraints)

    def fulfils(self, X):
        return feasible(self.domain, self.space, self.box, X, tol=1e-6)

    def start(self, settings: AcquisitionSettings):
        # the shared grid holds every output's thresholds: the ascent tries a subset of each
        # feature's cells (the search then covers all of them)
        first = self.problems[0]
        draws = _draws(self.batch, self.box, first.constraints, first.delta, settings)
        start = _checked_start(lambda check: find_incumbent(
            self.box, first.constraints, self.thresholds, first.delta, self.score, check,
            settings, max_moves=MAX_MOVES, draws=draws), self.is_feasible, self.fulfils)
        if not np.isfinite(start.value):
            start = replace(start, x=None)
        return start

    def search(self, start, settings: AcquisitionSettings, times: _Times):
        from bofire_bark.optimize import grid as gr

        t = time.perf_counter()
        grids = []
        for c in self.acq.channels:
            problem = self.problems[c.output]
            gm = gr.grid_model(replace(problem, sign=float(c.sign)), self.systems[c.output],
                               self.posteriors[self.acq.keys[c.output]], self.pending,
                               settings.grid, thresholds=self.thresholds)
            grids.append(gr.Grid(gm, self.box))
        if self.hv is None:
            targets = None if start.x is None else self.channels(start.x[None, :])[0]
            self.grid = gr.MultiGrid(grids, self.acq, targets)
        else:
            from bofire_bark.optimize.ensemble import distinct_groups

            groups = [distinct_groups(self.posteriors[self.acq.keys[c.output]].samples)[1]
                      for c in self.acq.channels]
            self.grid = gr.HypervolumeGrid(grids, self.acq, self.hv, groups)
        first = self.problems[0]
        cons = gr.Constraints(first.constraints, self.box, first.delta)
        times.build += time.perf_counter() - t
        if self.batch is not None:
            settings = self.batch.search_settings(settings)
        return gr.search(self.grid, cons, start.x, start.value, settings)

    def result(self, start, res, settings: AcquisitionSettings, times: _Times):
        x0, v0 = start.x, start.value
        status = res.status if res.status in WITH_BOUND else "incumbent"
        if res.x is None:
            _explain_infeasible(self.grid, self.acq, self.posteriors,
                                res.status == "infeasible")
            first = self.problems[0]
            x = _nearest_to_limits(self.box, first.constraints, first.delta, self.channels,
                                   self.acq, self.is_feasible, settings.n_start_points,
                                   settings.seed)
            if x is None:
                raise InfeasibleDomainError(
                    f"No candidate satisfying the domain's constraints was found: none of "
                    f"{settings.n_start_points} random points did, and the search ended with "
                    f"'{res.status}' within {settings.time_limit}s.")
            logger.warning("no candidate found meeting the output limits (%s) within %.3gs; "
                           "returning the random point closest to meeting them",
                           "; ".join(lim.text for lim in self.acq.limits),
                           settings.time_limit)
            status = "incumbent"
        else:
            x = np.asarray(res.x, dtype=np.float64)
        value = float(self.score(x[None, :])[0])
        x, value = _tie_break(x, value, settings, self.box, self.thresholds, self.score,
                              self.fulfils, self.problems[0].constraints,
                              np.vstack([p.X for p in self.posteriors.values()]),
                              self.pending)
        x, value, status = _not_pending(x, value, status, self.pending, self.box,
                                        self.thresholds, self.score, self.fulfils)
        source = "start" if x0 is not None and np.array_equal(x, x0) else "search"
        status, bound, gap = _final_status(status, value, res.bound)
        return AcquisitionResult(
            candidate=self.space.decode(x[None, :]), x=x, objective=float(res.value),
            ucb=value, status=status, gap=gap, bound=bound, solver="bnb", incumbent_ucb=v0,
            build_time=times.build, solve_time=res.seconds, incumbent_time=times.start,
            source=source, nodes=res.nodes,
            units="ehvi" if self.hv is not None else "sd" if self.acq.single else "scalarized")


def _checked_start(find, is_feasible, fulfils):
    """``find(check)``'s incumbent, found with the array check of the constraints and
    confirmed by BoFire's ``is_fulfilled``; should they ever disagree, found again with
    BoFire's check alone."""
    start = find(is_feasible)
    if start.x is not None and not bool(fulfils(start.x[None, :])[0]):
        logger.warning("BoFire finds the starting point %s outside the domain's constraints, "
                       "which the array check accepted: the start is drawn again with "
                       "BoFire's check", start.x)
        start = find(fulfils)
    return start


def _not_pending(x, value, status, pending, box, thresholds, score, fulfils):
    """(x, value, status), or when ``x`` repeats a pending point (a candidate of this batch or
    BoFire's), the best single-feature move that does not (``incumbent.distinct_point``):
    another point of the same cell when it has one; else a point below the proven best, no
    longer "optimal" (its gap is taken from its value). The repeat stays only when no move is
    feasible, and the strategy says so."""
    if pending is None or not len(pending) or not (pending == x[None, :]).all(axis=1).any():
        return x, value, status
    moved = distinct_point(x, box, thresholds, score, fulfils, pending)
    if moved is None:
        return x, value, status
    y, v = moved
    if v >= value - 1e-9 * max(1.0, abs(value)):
        logger.info("the best cell holds a pending candidate: another point of it is taken")
    else:
        logger.info("the best cell is the pending candidate %s alone: the best move out of "
                    "it is taken (acquisition %.6g against %.6g)", x, v, value)
        status = "gap" if status == "optimal" else status
    return y, v, status


def _tie_break(x, value, settings, box, thresholds, score, fulfils, specs, X, pending):
    """(x, value) moved within its grid cell as ``settings.tie_break`` says."""
    rng = np.random.default_rng(settings.seed)
    if settings.tie_break == "smooth":
        return smoothest_in_cell(x, value, box, thresholds, score,
                                 lambda P: score(P, binned=False), fulfils, specs, rng)
    if settings.tie_break != "farthest":
        return x, value
    data = X if pending is None or not len(pending) else np.vstack([X, pending])
    return farthest_in_cell(x, value, box, thresholds, score, fulfils, specs, data, rng)


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


def _mip_solver(plan, kappa: float, specs: tuple) -> str:
    """The MIP solver the plan's solver names ("auto": SCIP or Gurobi, as installed)."""
    shape = SimpleNamespace(kappa=float(kappa), linear=float(kappa) == 0.0 and not any(
        isinstance(c, NonlinearSpec) for c in specs))
    from bofire_bark.optimize.mip.solvers import resolve_solver

    return resolve_solver(plan.solver, shape)


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
        # a TargetObjective is two limits with one text; the root's bound was too loose to
        # single one out, so nothing says that each is reachable alone
        missed = list(dict.fromkeys(lim.text for lim in acq.limits))
        missed[-1] += " (the search proved that no feasible point meets them all)"
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
