"""Solver choice, refusals with clear messages, crash isolation, and the direction of the
objective."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from acq_helpers import fit
from bofire.data_models.constraints.api import NonlinearEqualityConstraint
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.features.api import ContinuousInput

from bofire_bark.optimize import build_problem, optimize_acquisition, resolve_solver
from bofire_bark.optimize.mip import solvers as solvers_module


def test_auto_uses_scip_without_a_full_gurobi_licence(continuous3, monkeypatch):
    """The MIP solver behind "auto" (the grid search hands nonlinear equalities to it)."""
    domain, space, post = continuous3
    problem, _ = build_problem(post, domain, space)
    if not solvers_module.gurobi_full_licence():
        assert resolve_solver("auto", problem) == "scip"
    monkeypatch.setattr(solvers_module, "gurobi_full_licence", lambda: False)
    assert resolve_solver("auto", problem) == "scip"
    res = optimize_acquisition(post, domain, space, solver="auto", isolate=False)
    assert res.solver == "bnb"  # no nonlinear equality: the grid search
    equality = Domain(inputs=domain.inputs, constraints=[NonlinearEqualityConstraint(
        expression="x0 - x1**2", features=["x0", "x1"])])
    res = optimize_acquisition(post, equality, space, solver="auto", isolate=False,
                               time_limit=30.0)
    assert res.solver == "scip"


def test_gurobi_without_full_licence_says_what_to_install(continuous3, monkeypatch):
    domain, space, post = continuous3
    problem, _ = build_problem(post, domain, space)
    monkeypatch.setattr(solvers_module, "gurobi_full_licence", lambda: False)
    with pytest.raises(ValueError, match="pip install gurobipy"):
        resolve_solver("gurobi", problem)


def test_highs_refuses_a_model_with_a_cone(continuous3):
    domain, space, post = continuous3
    with pytest.raises(ValueError, match="HiGHS solves only linear models.*cone"):
        optimize_acquisition(post, domain, space, solver="highs", kappa=1.0)


def test_highs_solves_the_mean_only_model(continuous3):
    pytest.importorskip("highspy")
    domain, space, post = continuous3
    res = optimize_acquisition(post, domain, space, solver="highs", kappa=0.0, mip_gap=0.0)
    assert res.solver == "highs" and res.status == "optimal"
    assert res.objective == pytest.approx(res.ucb, rel=1e-6, abs=1e-9)


def test_unknown_solver_says_what_to_install(continuous3):
    domain, space, post = continuous3
    with pytest.raises(ValueError, match=r"Unknown solver 'cplex'.*pip install pyscipopt"):
        optimize_acquisition(post, domain, space, solver="cplex")


@pytest.mark.parametrize("when", ["at start", "after reading the job"])
def test_a_crashing_solver_process_falls_back_to_the_incumbent(continuous3, tmp_path,
                                                                monkeypatch, when):
    domain, space, post = continuous3
    script = tmp_path / "abort.py"
    read = ("import struct, sys\nn = struct.unpack('<Q', sys.stdin.buffer.read(8))[0]\n"
            "sys.stdin.buffer.read(n)\n") if when != "at start" else ""
    script.write_text(read + "import os\nos.abort()\n")
    solvers_module.shutdown_worker()
    monkeypatch.setattr(solvers_module, "child_command", lambda: [sys.executable, str(script)])
    try:
        res = optimize_acquisition(post, domain, space, solver="scip", isolate=True)
    finally:
        solvers_module.shutdown_worker()
    assert res.status == "incumbent"
    assert res.ucb == res.incumbent_ucb
    assert np.isnan(res.objective)
    monkeypatch.undo()
    # the next isolated solve starts a fresh worker
    res = optimize_acquisition(post, domain, space, solver="scip", isolate=True)
    assert res.status in ("optimal", "gap")


def test_the_worker_is_reused_and_survives_failed_jobs(continuous3):
    domain, space, post = continuous3
    problem, _ = build_problem(post, domain, space)
    first = solvers_module.scip_worker()
    out = solvers_module.solve(problem, "scip", None, 10.0, 0.1, isolate=True,
                               options={"no/such/parameter": 1})
    assert out.status == "failed"
    out = solvers_module.solve(problem, "scip", None, 10.0, 0.1, isolate=True)
    assert out.status in ("optimal", "gap")
    assert solvers_module.scip_worker() is first and first.alive()


@pytest.fixture(scope="module")
def line():
    """y = x on [0, 1]."""
    domain = Domain(inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0, 1))]))
    X = np.linspace(0, 1, 10)[:, None]
    space, post = fit(domain, lambda X: X[:, 0], X=X)
    return domain, space, post


def test_minimize_and_maximize_pick_opposite_ends(line):
    domain, space, post = line
    hi = optimize_acquisition(post, domain, space, kappa=0.0, sign=1.0, mip_gap=0.0,
                              isolate=False)
    lo = optimize_acquisition(post, domain, space, kappa=0.0, sign=-1.0, mip_gap=0.0,
                              isolate=False)
    assert hi.candidate["x"].iloc[0] > 0.8
    assert lo.candidate["x"].iloc[0] < 0.2


def test_scip_options_reach_the_child_process(continuous3):
    domain, space, post = continuous3
    problem, _ = build_problem(post, domain, space)
    out = solvers_module.solve(problem, "scip", None, 10.0, 0.1, isolate=True,
                               options={"no/such/parameter": 1})
    assert out.status == "failed" and "parameter" in out.message
    out = solvers_module.solve(problem, "scip", None, 10.0, 0.1, isolate=True,
                               options={"heuristics": "off", "lp/pricing": "s"})
    assert out.status in ("optimal", "gap")


def test_pyomo_scip_internals_are_still_where_the_adapter_reads_them():
    """Pyomo offers no public PySCIPOpt model or variable map; the adapter reads private
    attributes of ScipDirect, and this test names the one Pyomo renamed or removed."""
    import pyomo.environ as pyo
    from pyscipopt import Model, Variable

    m = pyo.ConcreteModel()
    m.b = pyo.Var(domain=pyo.Binary)
    m.x = pyo.Var(bounds=(0, 2))
    m.link = pyo.Constraint(expr=m.x <= 1.5 * m.b)
    m.acq = pyo.Objective(expr=m.x + m.b, sense=pyo.maximize)
    adapter = solvers_module._PyomoScipAdapter()
    scip_model = adapter.solver_model(m)
    assert isinstance(scip_model, Model), "ScipDirect._create_solver_model changed its return"
    pairs = list(adapter.variables())
    assert {id(p) for p, _ in pairs} == {id(m.b), id(m.x)}, \
        "ScipDirect._pyomo_var_to_solver_var_map no longer maps the model's variables"
    assert all(isinstance(s, Variable) for _, s in pairs), \
        "ScipDirect._pyomo_var_to_solver_var_map no longer holds PySCIPOpt variables"
    obj = adapter.objective_var()
    assert isinstance(obj, Variable), "ScipDirect._obj_var is no longer the objective variable"
    scip_model.hideOutput()
    scip_model.optimize()
    solved = {id(p): scip_model.getVal(s) for p, s in pairs}
    assert solved[id(m.b)] == pytest.approx(1.0) and solved[id(m.x)] == pytest.approx(1.5)
    assert scip_model.getVal(obj) == pytest.approx(2.5)


@pytest.mark.parametrize("name", ["solver_model", "variables", "objective_var"])
def test_the_adapter_names_a_missing_pyomo_internal(name):
    from types import SimpleNamespace

    adapter = solvers_module._PyomoScipAdapter()
    adapter._opt = SimpleNamespace()  # a ScipDirect without any of the internals
    args = (None,) if name == "solver_model" else ()
    with pytest.raises(RuntimeError, match=r"ScipDirect has no '_\w+': update _PyomoScipAdapter"):
        getattr(adapter, name)(*args)


def test_worker_dies_with_its_parent(tmp_path):
    """A killed parent (a BO process) must not leave its SCIP worker running."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "parent.py"
    # a holder keeps the worker's input open after the parent dies, as a worker busy in a solve
    # would not read it: only the death of the parent can end the worker then
    script.write_text(
        "import subprocess, time\n"
        "from bofire_bark.optimize.mip.solvers import scip_worker\n"
        "w = scip_worker()\n"
        "h = subprocess.Popen(['sleep', '60'], pass_fds=[w.proc.stdin.fileno()])\n"
        "print(w.proc.pid, h.pid, flush=True)\n"
        "time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    holder = None
    try:
        child, holder = map(int, parent.stdout.readline().split())
        os.kill(child, 0)  # the worker runs
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            # reap it if it became our zombie: it is gone either way
            time.sleep(0.1)
        else:
            os.kill(child, signal.SIGKILL)
            raise AssertionError("the SCIP worker outlived its parent by 10 s")
    finally:
        if parent.poll() is None:
            parent.kill()
        if holder is not None:
            try:
                os.kill(holder, signal.SIGKILL)
            except ProcessLookupError:
                pass
