"""The acquisition MIP as one Pyomo model, built from a plain ``problem.AcquisitionProblem``."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from bofire_bark.optimize.mip.constraints import add_domain_constraints, domain_start
from bofire_bark.optimize.mip.objective import acquisition_start, add_acquisition
from bofire_bark.optimize.mip.trees import add_tree_constraints, tree_start
from bofire_bark.optimize.problem import AcquisitionProblem


def build_model(problem: AcquisitionProblem) -> pyo.ConcreteModel:
    """The Pyomo model: tree constraints, integrated UCB objective, domain constraints."""
    m = pyo.ConcreteModel(name="bark_acquisition")
    add_tree_constraints(m, problem.box, problem.ensemble)
    add_acquisition(m, problem.gps, problem.kappa, problem.sign, problem.cuts)
    add_domain_constraints(m, problem.constraints, problem.box.upper, problem.delta)
    return m


def set_start(m: pyo.ConcreteModel, problem: AcquisitionProblem, x: np.ndarray) -> None:
    """Give every variable its value at the encoded point ``x`` (D,): a complete start."""
    box, ens = problem.box, problem.ensemble
    tree_start(m, box, ens, x)
    zval = {}
    for u, tree in enumerate(ens.trees):
        if not tree.constant:
            zval[(u, tree.leaf_of(x, box.kinds))] = 1.0
    acquisition_start(m, problem.gps, zval, problem.kappa)
    domain_start(m, problem.constraints, x)
