"""Solver choice and solving the acquisition MIP.

- ``"auto"``: Gurobi when Pyomo reports a full licence (the pip licence is size-limited and
  cannot hold these models), else SCIP through Pyomo's ``scip_direct`` / PySCIPOpt.
- ``"scip"``: solved in a worker process (a native abort in SCIP's bundled Ipopt must not take
  down the caller; a dead worker is replaced and the caller keeps its incumbent). Settings
  (``SCIP_SETTINGS``): no probing in presolve and devex pricing (both measured necessary), no
  aggregation or multi-aggregation and no xor constraints (correctness workarounds, see below),
  and an Ipopt option file with ``mumps_pivot_order 0``. A best solution that fails SCIP's own
  check on the original problem makes the outcome "failed". The gap over time is read from
  SCIP's log and an event handler within the same run.
- ``"highs"``: linear models only (kappa = 0 and no nonlinear constraint); refused otherwise.
- ``"gurobi"``: in process, through ``pyomo.contrib.solver``.

Every solve gets the incumbent as a complete start (all variables set).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo

from bofire_bark.defaults import INSTALL, MIP_SOLVERS, unknown_solver
from bofire_bark.optimize.mip.model import build_model, set_start
from bofire_bark.optimize.problem import AcquisitionProblem

logger = logging.getLogger(__name__)

SOLVERS = ("auto", *MIP_SOLVERS)  # what resolve_solver takes ("bnb" never reaches it)
SCIP_SETTINGS = {
    # default probing in presolve stalled on ordered split binaries (measured at paper scale:
    # no solution in 100 s with the cone, 33 s instead of 3 s for the linear model)
    "propagating/probing/maxprerounds": 0,
    # devex pricing: shorter root LPs with the cones (time to a 10 % gap 37 s -> 23 s there)
    "lp/pricing": "d",
    # SCIP 10.0.2 returned "optimal" solutions with fractional one-hot binaries (checkSol
    # passed) on small instances when multi-aggregation was allowed in presolve; the
    # objective then exceeded the true acquisition at the decoded point.
    "presolving/donotmultaggr": True,
    # no aggregation: set when SCIP reported "optimal" at a point breaking an NChooseK minimum
    # count by one (tests/optimize/test_acq_nostart.py); that was the xor upgrade below (those
    # tests pass with aggregation on). Kept as caution: SCIP is now the tool for nonlinear
    # equalities only, where a wrong "optimal" costs more than a slower presolve
    "presolving/donotaggr": True,
    # no xor constraints: presolve turns an NChooseK's count == 2 any (min = max = 2,
    # none_also_valid) into one, which has no row in SCIP's NLP; the MPEC heuristic then
    # solves that NLP without it and its point is accepted unchecked against the xor (LP rows
    # are not checked), so SCIP reported "optimal" at a point with one active feature
    "constraints/linear/upgrade/xor": False,
}
IPOPT_OPTIONS = "mumps_pivot_order 0\n"



@dataclass
class SolveOutcome:
    """What a solver run returned.

    ``status``: "optimal" (proven, gap 0 up to tolerance), "gap" (proven within the relative
    gap), "time_limit" (stopped at the limit with a solution), "no_solution", "infeasible"
    or "failed" (the solver or its process died). ``trace``: (seconds, primal, dual, gap).
    """

    solver: str
    status: str
    x: np.ndarray | None = None
    objective: float = float("nan")
    bound: float = float("nan")
    gap: float = float("nan")
    build_time: float = 0.0
    solve_time: float = 0.0
    trace: list[tuple[float, float, float, float]] = field(default_factory=list)
    message: str = ""


@functools.lru_cache(maxsize=1)
def gurobi_full_licence() -> bool:
    """Whether Pyomo reports a full (not size-limited) Gurobi licence."""
    try:
        from pyomo.contrib.solver.common.base import Availability
        from pyomo.contrib.solver.solvers.gurobi.gurobi_direct import GurobiDirect

        return GurobiDirect().available() == Availability.FullLicense
    except Exception:  # no gurobipy, no licence, licence server errors...
        return False


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def resolve_solver(name: str, problem: AcquisitionProblem) -> str:
    """The solver to use for ``name``; errors say what to install or why a model is refused.

    ``problem`` needs only ``kappa`` and ``linear`` (any object with these attributes).
    """
    name = str(name).lower()
    if name not in SOLVERS:
        raise ValueError(unknown_solver(name))
    if name == "auto":
        if gurobi_full_licence():
            return "gurobi"
        if _importable("pyscipopt"):
            return "scip"
        if problem.linear and _importable("highspy"):
            return "highs"
        raise ValueError(f"No solver for the acquisition MIP is installed: {INSTALL['scip']}.")
    if name == "highs" and not problem.linear:
        raise ValueError(
            "HiGHS solves only linear models, but this acquisition model has "
            + ("a second-order cone for sigma (kappa > 0)" if problem.kappa > 0
               else "nonlinear domain constraints")
            + "; use solver='scip' (or 'auto'), or kappa=0 for the mean alone.")
    if name == "gurobi" and not gurobi_full_licence():
        raise ValueError(f"Gurobi with a full licence is not available: {INSTALL['gurobi']}.")
    if name == "scip" and not _importable("pyscipopt"):
        raise ValueError(f"SCIP is not available: {INSTALL['scip']}.")
    if name == "highs" and not _importable("highspy"):
        raise ValueError(f"HiGHS is not available: {INSTALL['highs']}.")
    return name


def check_linear(m: pyo.ConcreteModel) -> None:
    """Raise ``ValueError`` naming the first nonlinear component (before handing to HiGHS)."""
    for con in m.component_data_objects(pyo.Constraint, active=True):
        degree = con.body.polynomial_degree()
        if degree is None or degree > 1:
            raise ValueError(
                f"HiGHS solves only linear models, but constraint {con.name} is nonlinear; "
                "use solver='scip'.")
    for obj in m.component_data_objects(pyo.Objective, active=True):
        degree = obj.expr.polynomial_degree()
        if degree is None or degree > 1:
            raise ValueError("HiGHS solves only linear models, but the objective is not linear.")


def solve(problem: AcquisitionProblem, solver: str, x0: np.ndarray | None, time_limit: float,
          mip_gap: float, seed: int = 0, isolate: bool = True,
          options: dict | None = None) -> SolveOutcome:
    """Build and solve the MIP with a resolved ``solver``; never raises on solver failure.

    With ``isolate``, SCIP runs in the worker process (:func:`scip_worker`); ``options`` are
    SCIP parameters on top of ``SCIP_SETTINGS`` (plus "emphasis" and "heuristics"
    meta-settings), passed with the job.
    """
    job = (problem, x0, time_limit, mip_gap, seed, options)
    if solver == "scip" and isolate:
        return _solve_isolated(*job)
    return _solve_here(problem, solver, x0, time_limit, mip_gap, seed, options)


def _solve_here(problem, solver, x0, time_limit, mip_gap, seed, options=None) -> SolveOutcome:
    from bofire_bark.optimize.mip.decode import solution_x

    start = time.perf_counter()
    m = build_model(problem)
    if x0 is not None:
        set_start(m, problem, x0)
    build_time = time.perf_counter() - start
    if solver == "scip":
        out = _run_scip(m, time_limit, mip_gap, seed, x0 is not None, options)
    elif solver == "highs":
        check_linear(m)
        out = _run_contrib(m, "highs", time_limit, mip_gap)
    else:
        out = _run_contrib(m, "gurobi", time_limit, mip_gap)
    out.build_time = build_time
    if out.status in ("optimal", "gap", "time_limit"):
        out.x = solution_x(m, problem)
    return out


def _status(raw: str, has_solution: bool, gap: float, mip_gap: float) -> str:
    if raw in ("infeasible", "inforunbd"):
        return "infeasible"
    if not has_solution:
        return "no_solution"
    if raw == "optimal" or gap <= 1e-9:
        return "optimal"
    if raw == "gaplimit" or gap <= mip_gap:
        return "gap"
    return "time_limit"


def ipopt_optfile() -> str:
    """Path of an Ipopt option file with ``mumps_pivot_order 0`` (written once)."""
    path = os.path.join(tempfile.gettempdir(), "bofire_bark_ipopt.opt")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=tempfile.gettempdir())
        with os.fdopen(fd, "w") as f:
            f.write(IPOPT_OPTIONS)
        os.replace(tmp, path)
    return path


def _trace_handler(scip_model):
    """An event handler that records (time, primal, dual, gap) during one run."""
    from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

    EVENTS = (SCIP_EVENTTYPE.BESTSOLFOUND | SCIP_EVENTTYPE.NODESOLVED
              | SCIP_EVENTTYPE.LPSOLVED)

    class Trace(Eventhdlr):
        def __init__(self):
            self.points: list[tuple[float, float, float, float]] = []
            self.last = -1.0

        def eventinitsol(self):
            self.model.catchEvent(EVENTS, self)

        def eventexitsol(self):
            self.model.dropEvent(EVENTS, self)

        def eventexec(self, event):
            t = self.model.getSolvingTime()
            if t - self.last < 0.2 and event.getType() != SCIP_EVENTTYPE.BESTSOLFOUND:
                return
            self.last = t
            self.points.append((t, self.model.getPrimalbound(), self.model.getDualbound(),
                                self.model.getGap()))

    handler = Trace()
    scip_model.includeEventhdlr(handler, "bark_trace", "records the gap over time")
    return handler


def parse_scip_log(text: str) -> list[tuple[float, float, float, float]]:
    """(seconds, primal, dual, gap) of every progress line of a SCIP log.

    SCIP prints a line per separation round at the root, per new incumbent and every
    ``display/freq`` nodes: a finer trace than the events, which do not fire while the root
    node is still being processed.
    """
    points = []
    cols = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 5:
            continue
        if cells[0] == "time":
            cols = {name: i for i, name in enumerate(cells)}
            continue
        if cols is None or len(cells) != len(cols):
            continue
        try:
            t = float(cells[cols["time"]].split()[-1].rstrip("s"))
        except ValueError:
            continue
        values = []
        for name in ("primalbound", "dualbound", "gap"):
            cell = cells[cols[name]]
            try:
                values.append(float(cell.rstrip("%")) / (100.0 if name == "gap" else 1.0))
            except ValueError:  # "--", "Inf"
                values.append(float("inf") if name == "gap" else float("nan"))
        points.append((t, values[0], values[1], values[2]))
    return points


class _PyomoScipAdapter:
    """Pyomo's translation of a model to PySCIPOpt, without Pyomo's ``solve``.

    Why private attributes: Pyomo 6.10's ``ScipDirect`` / ``ScipPersistent`` give no public
    access to the PySCIPOpt model or the variable map, and their ``solve`` starts from integer
    values only and takes no event handler or log file; we need a complete start, the gap
    trace and the log. So this class is the only reader of ``ScipDirect`` internals, and
    ``tests/optimize/test_acq_solvers.py`` checks them, to fail by name when Pyomo changes.
    """

    def __init__(self):
        from pyomo.common.timing import HierarchicalTimer
        from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

        self._opt = ScipDirect()
        self._config = self._opt.config(value={}, preserve_implicit=True)
        self._config.timer = HierarchicalTimer()

    def _private(self, name: str):
        try:
            return getattr(self._opt, name)
        except AttributeError:
            import pyomo.version

            raise RuntimeError(
                f"Pyomo {pyomo.version.version}'s ScipDirect has no {name!r}: update "
                "_PyomoScipAdapter in bofire_bark/optimize/mip/solvers.py") from None

    def solver_model(self, m):
        """The PySCIPOpt model of Pyomo model ``m`` (objective and constraints translated)."""
        scip_model, _, _ = self._private("_create_solver_model")(m, self._config)
        return scip_model

    def variables(self):
        """(Pyomo variable, PySCIPOpt variable) pairs of the last translated model."""
        return self._private("_pyomo_var_to_solver_var_map").items()

    def objective_var(self):
        """The PySCIPOpt variable standing for the objective (SCIP's objective is linear)."""
        return self._private("_obj_var")


def _run_scip(m, time_limit, mip_gap, seed, has_start, options=None) -> SolveOutcome:
    adapter = _PyomoScipAdapter()
    t0 = time.perf_counter()
    scip_model = adapter.solver_model(m)
    translate = time.perf_counter() - t0
    scip_model.hideOutput(os.environ.get("BARK_SCIP_LOG") is None)
    scip_model.setParam("limits/time", max(1.0, float(time_limit) - translate))
    scip_model.setParam("limits/gap", float(mip_gap))
    scip_model.setParam("randomization/randomseedshift", int(seed) % (2**31))
    scip_model.setParam("nlpi/ipopt/optfile", ipopt_optfile())
    settings = {**SCIP_SETTINGS, **(options or {})}
    # meta-settings first: "emphasis" (a SCIP_PARAMEMPHASIS name, e.g. "optimality") and
    # "heuristics" (a SCIP_PARAMSETTING name, e.g. "off")
    emphasis, heuristics = settings.pop("emphasis", None), settings.pop("heuristics", None)
    if emphasis or heuristics:
        from pyscipopt import SCIP_PARAMEMPHASIS, SCIP_PARAMSETTING

        if emphasis:
            scip_model.setEmphasis(getattr(SCIP_PARAMEMPHASIS, str(emphasis).upper()))
        if heuristics:
            scip_model.setHeuristics(getattr(SCIP_PARAMSETTING, str(heuristics).upper()))
    for key, value in settings.items():
        scip_model.setParam(key, value)
    if has_start:
        sol = scip_model.createSol()
        for pvar, svar in adapter.variables():
            if pvar.value is not None:
                scip_model.setSolVal(sol, svar, float(pvar.value))
        scip_model.setSolVal(sol, adapter.objective_var(), float(pyo.value(m.acq)))
        scip_model.addSol(sol, free=True)
    handler = _trace_handler(scip_model)
    log = tempfile.NamedTemporaryFile(prefix="bark_scip_", suffix=".log", delete=False)
    log.close()
    scip_model.setLogfile(log.name)
    try:
        scip_model.optimize()
        scip_model.setLogfile(None)
        with open(log.name, errors="replace") as f:
            logged = parse_scip_log(f.read())
    finally:
        os.unlink(log.name)
    raw = scip_model.getStatus()
    has_solution = scip_model.getNSols() > 0
    out = SolveOutcome("scip", "no_solution", solve_time=scip_model.getSolvingTime() + translate,
                       trace=sorted(handler.points + logged))
    if has_solution:
        best = scip_model.getBestSol()
        if not scip_model.checkSol(best, printreason=False, original=True):
            # a heuristic's point that SCIP accepted without checking every constraint (see
            # "constraints/linear/upgrade/xor"): neither it nor a bound pruned by it holds
            out.status = "failed"
            out.message = (f"{raw}, but SCIP's best solution violates the model (its own "
                           "check on the original problem)")
            return out
        for pvar, svar in adapter.variables():
            pvar.set_value(scip_model.getSolVal(best, svar), skip_validation=True)
        out.objective = scip_model.getObjVal()
        out.bound = scip_model.getDualbound()
        out.gap = scip_model.getGap()
    out.status = _status(raw, has_solution, out.gap, mip_gap)
    out.message = raw
    return out


def _run_contrib(m, name, time_limit, mip_gap) -> SolveOutcome:
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    if name == "highs":
        from pyomo.contrib.solver.solvers.highs import Highs as Solver
    else:
        # Pyomo's plain GurobiDirect takes linear models only; the MINLP interface passes the
        # sigma cone and the domain's nonlinear constraints (Gurobi >= 12) as they are.
        from pyomo.contrib.solver.solvers.gurobi.gurobi_direct_minlp import (
            GurobiDirectMINLP as Solver,
        )
    kwargs = {"warmstart_discrete_vars": True} if name == "gurobi" else {}
    t0 = time.perf_counter()
    res = Solver().solve(m, time_limit=float(time_limit), rel_gap=float(mip_gap),
                         load_solutions=False, raise_exception_on_nonoptimal_result=False,
                         **kwargs)
    elapsed = time.perf_counter() - t0
    tc = res.termination_condition
    has_solution = res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    out = SolveOutcome(name, "no_solution", solve_time=elapsed, message=str(tc))
    if tc in (TerminationCondition.provenInfeasible,
              TerminationCondition.infeasibleOrUnbounded):
        out.status = "infeasible"
        return out
    if has_solution:
        res.solution_loader.load_vars()
        out.objective = float(res.incumbent_objective)
        out.bound = float(res.objective_bound) if res.objective_bound is not None else out.bound
        denom = max(abs(out.objective), 1e-10)
        out.gap = abs(out.bound - out.objective) / denom
    raw = "optimal" if tc == TerminationCondition.convergenceCriteriaSatisfied else str(tc)
    out.status = _status(raw if raw != "optimal" or out.gap <= 1e-9 else "gaplimit",
                         has_solution, out.gap, mip_gap)
    return out


# ---- the SCIP worker process ------------------------------------------------------------------
# A plain subprocess (``python -m bofire_bark.optimize.mip._scip_child``) rather than
# multiprocessing: spawn and forkserver re-import the caller's main module, which breaks
# scripts without a ``__main__`` guard. The worker stays up between solves (the strategy solves
# once per candidate) and is replaced when it dies; jobs arrive on its stdin as
# length-prefixed pickles and outcomes go to a file per job.

_HEADER = struct.Struct("<Q")


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when its parent dies (a killed BO process once left its
    worker solving at full CPU until the time limit). Only requested when the parent forked
    from its main thread, since the signal follows the forking thread."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the parent's close() still ends us
        return
    if os.getppid() != parent:  # the parent died before the request
        os._exit(1)


def child_main(args: list[str]) -> None:
    """Entry of the worker: solve jobs from stdin until it closes. ``args``: the parent's pid
    when the worker should die with it."""
    import pickle

    if args:
        _die_with_parent(int(args[0]))

    # imports every job needs, done while the parent prepares the first one
    import pyomo.contrib.solver.solvers.scip.scip_direct  # noqa: F401
    import pyscipopt  # noqa: F401

    from bofire_bark.optimize.mip import decode  # noqa: F401

    stdin = sys.stdin.buffer
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the parent closed the pipe or exited
        data = stdin.read(_HEADER.unpack(header)[0])
        result, job = pickle.loads(data)  # trusted: our parent process, over its pipe
        problem, x0, time_limit, mip_gap, seed, options = job
        try:
            out = _solve_here(problem, "scip", x0, time_limit, mip_gap, seed, options)
        except Exception as err:  # report, do not hang the parent
            out = SolveOutcome("scip", "failed", message=f"{type(err).__name__}: {err}")
        with open(result + ".tmp", "wb") as f:
            pickle.dump(out, f)
        os.replace(result + ".tmp", result)


def child_command() -> list[str]:
    """The command that starts a SCIP worker (tests swap in a crashing one)."""
    return [sys.executable, "-m", "bofire_bark.optimize.mip._scip_child"]


class ScipWorker:
    """A SCIP worker process; a native crash in it ends only the worker."""

    def __init__(self) -> None:
        import subprocess

        self._dir = tempfile.mkdtemp(prefix="bark_scip_")
        self._stderr = open(os.path.join(self._dir, "stderr.txt"), "wb")  # noqa: SIM115
        self._jobs = 0
        # the worker dies with this process when forked from the main thread (see child_main)
        args = [str(os.getpid())] if threading.current_thread() is threading.main_thread() \
            else []
        env = {**os.environ, "BOFIRE_BARK_NO_REGISTRATION": "1"}
        self.proc = subprocess.Popen([*child_command(), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=self._stderr, env=env)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        import shutil

        if self.alive():
            try:
                self.proc.stdin.close()  # the worker exits at end of input
                self.proc.wait(2.0)
            except Exception:  # a worker stuck in a solve
                self.proc.kill()
        if self.alive():
            self.proc.kill()
        self.proc.wait()
        self._stderr.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def _stderr_tail(self) -> str:
        try:
            with open(os.path.join(self._dir, "stderr.txt"), errors="replace") as f:
                return " | ".join(f.read().strip().splitlines()[-3:])
        except OSError:
            return ""

    def solve(self, problem, x0, time_limit, mip_gap, seed, options=None) -> SolveOutcome:
        """Send one job and wait; a dead or overrunning worker yields a "failed" outcome."""
        import pickle

        t0 = time.perf_counter()
        self._jobs += 1
        result = os.path.join(self._dir, f"out{self._jobs}.pkl")
        payload = pickle.dumps((result, (problem, x0, time_limit, mip_gap, seed, options)))
        try:
            self.proc.stdin.write(_HEADER.pack(len(payload)) + payload)
            self.proc.stdin.flush()
        except OSError:  # died before reading the job
            pass
        deadline = t0 + 1.5 * float(time_limit) + 120.0
        while not os.path.exists(result) and self.alive() and time.perf_counter() < deadline:
            time.sleep(0.02)
        if not os.path.exists(result):
            if self.alive():
                self.proc.kill()
                reason = "it overran its deadline and was stopped"
            else:
                reason = f"it ended with exit code {self.proc.wait()}"
            return SolveOutcome("scip", "failed", message=(
                f"the SCIP process gave no result: {reason}: {self._stderr_tail()}"))
        with open(result, "rb") as f:
            out = pickle.load(f)  # trusted: written by our own worker process
        os.unlink(result)
        overhead = time.perf_counter() - t0 - out.build_time - out.solve_time
        out.message += f"; process overhead {overhead:.2f}s"
        logger.debug("SCIP worker: build %.2fs, solve %.2fs, overhead %.2fs", out.build_time,
                     out.solve_time, overhead)
        return out


_worker: ScipWorker | None = None
_worker_lock = threading.RLock()


def scip_worker() -> ScipWorker:
    """The running SCIP worker, started (or replaced after a crash) when needed."""
    global _worker
    with _worker_lock:
        if _worker is None or not _worker.alive():
            if _worker is not None:
                _worker.close()
            _worker = ScipWorker()
        return _worker


@atexit.register
def shutdown_worker() -> None:
    """Stop the SCIP worker (it is started again on the next isolated solve)."""
    global _worker
    with _worker_lock:
        if _worker is not None:
            _worker.close()
            _worker = None


def _solve_isolated(problem, x0, time_limit, mip_gap, seed, options=None) -> SolveOutcome:
    with _worker_lock:
        return scip_worker().solve(problem, x0, time_limit, mip_gap, seed, options)
