"""The acquisition MIP as one Pyomo model, built from a plain :class:`AcquisitionProblem`.

The problem holds only arrays and small dataclasses (no BoFire objects, no numba), so a solver
child process can build the model without importing BoFire or the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from bofire_bark.optimize.acquisition import SampleGP, acquisition_start, add_acquisition
from bofire_bark.optimize.domain_constraints import add_domain_constraints, domain_start
from bofire_bark.optimize.ensemble import InputBox, TreeEnsemble
from bofire_bark.optimize.trees import add_tree_constraints, tree_start


@dataclass(frozen=True)
class AcquisitionProblem:
    """Everything the MIP is built from.

    Attributes:
        box: the encoded candidate space.
        ensemble: reduced trees of all posterior samples.
        gps: per (distinct) sample, mean and cone data.
        kappa: UCB exploration weight (>= 0); sign: +1 maximize the output, -1 minimize it.
        constraints: domain constraint specs (``domain_constraints``).
        delta: (D,) smallest value of a feature counted as active by an NChooseK constraint.
        cuts: tangent planes of the sigma cones, (sample, (r + 1,) unit normal) each.
    """

    box: InputBox
    ensemble: TreeEnsemble
    gps: tuple[SampleGP, ...]
    kappa: float
    sign: float
    constraints: tuple
    delta: np.ndarray
    cuts: tuple = ()

    @property
    def linear(self) -> bool:
        """Whether the model is a MILP (no cone, no nonlinear constraint)."""
        from bofire_bark.optimize.domain_constraints import NonlinearSpec

        return self.kappa == 0.0 and not any(isinstance(c, NonlinearSpec)
                                             for c in self.constraints)


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


def model_objective(problem: AcquisitionProblem, x: np.ndarray) -> float:
    """The MIP objective at the encoded point ``x`` (D,), evaluated in numpy."""
    from bofire_bark.optimize.acquisition import acquisition_values

    ens, box = problem.ensemble, problem.box
    zval = {(u, tree.leaf_of(x, box.kinds)): 1.0 for u, tree in enumerate(ens.trees)
            if not tree.constant}
    mus, sigmas, _ = acquisition_values(problem.gps, zval, problem.kappa)
    w = np.array([gp.weight for gp in problem.gps])
    val = problem.sign * mus + (problem.kappa * sigmas if problem.kappa > 0 else 0.0)
    return float(w @ val / w.sum())


def with_tangent_cuts(problem: AcquisitionProblem, points: np.ndarray) -> AcquisitionProblem:
    """The problem plus each sample's cone tangent plane at every encoded point (k, D)."""
    import dataclasses

    from bofire_bark.optimize.acquisition import tangent_cuts

    if problem.kappa <= 0.0:
        return problem
    ens, box = problem.ensemble, problem.box
    zvals = [{(u, tree.leaf_of(x, box.kinds)): 1.0 for u, tree in enumerate(ens.trees)
              if not tree.constant} for x in points]
    cuts = problem.cuts + tangent_cuts(problem.gps, zvals)
    return dataclasses.replace(problem, cuts=cuts)
