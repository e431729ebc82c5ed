"""The Gurobi path (used by ``solver="auto"`` when a full licence is present) on models small
enough for the size-limited licence that ships with ``pip install gurobipy``: the same optimum
as SCIP, the engine's UCB at the candidate, and the domain's nonlinear constraints held."""

from __future__ import annotations

import pytest
from test_acq_constraints import LINEAR, NONLINEAR, TOL, solve, with_constraints

from bofire_bark.optimize.mip import solvers as solvers_module


def _gurobi_usable() -> bool:
    try:
        from pyomo.contrib.solver.solvers.gurobi.gurobi_direct_minlp import GurobiDirectMINLP

        return bool(GurobiDirectMINLP().available())
    except Exception:  # gurobipy missing or no licence of any kind
        return False


pytestmark = pytest.mark.skipif(not _gurobi_usable(), reason="gurobipy not installed")


@pytest.fixture
def any_licence(monkeypatch):
    # the models here fit the size-limited licence; the check guards against big models only
    monkeypatch.setattr(solvers_module, "gurobi_full_licence", lambda: True)


@pytest.mark.parametrize("fixture", ["continuous3", "mixed"])
def test_gurobi_finds_scips_optimum_and_the_engine_ucb(request, any_licence, fixture):
    domain, space, post = request.getfixturevalue(fixture)
    scip = solve(domain, space, post, solver="scip")
    grb = solve(domain, space, post, solver="gurobi")
    assert grb.solver == "gurobi" and grb.status == "optimal"
    assert grb.objective == pytest.approx(grb.ucb, rel=1e-6)
    assert grb.ucb == pytest.approx(scip.ucb, rel=1e-6)


@pytest.mark.parametrize("constraint", LINEAR + NONLINEAR, ids=lambda c: type(c).__name__)
def test_gurobi_holds_each_constraint(continuous3, any_licence, constraint):
    domain, space, post = continuous3
    domain = with_constraints(domain, [constraint])
    grb = solve(domain, space, post, solver="gurobi")
    assert constraint.is_fulfilled(grb.candidate, tol=TOL).all(), (constraint, grb.candidate)
    scip = solve(domain, space, post, solver="scip")
    assert grb.ucb == pytest.approx(scip.ucb, rel=1e-5)
