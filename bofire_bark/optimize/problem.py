"""The acquisition problem both searches start from (no Pyomo, no numba): the encoded box,
the reduced ensemble, the per-sample GP data, kappa, sign and the constraint specs.

The problem holds only arrays and small dataclasses (no BoFire objects), so the SCIP worker
process can build its model without importing BoFire or the engine.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from bofire_bark.defaults import DEFAULT_KAPPA
from bofire_bark.optimize.ensemble import (
    InputBox,
    TreeEnsemble,
    build_ensemble,
    with_bin_edges,
)
from bofire_bark.optimize.rules import Rule
from bofire_bark.optimize.sample_gp import SampleGP, acquisition_values, sample_gps, tangent_cuts
from bofire_bark.optimize.specs import NonlinearSpec

# The MIP holds leaf systems only: a smooth share's kernel has no leaf form (engine.smooth).
SMOOTH_MIP = ("a smooth share (smooth_share) is searched by the grid branch-and-bound or a "
              "library enumeration, not the MIP: use solver 'bnb' (or 'auto' without "
              "nonlinear equality constraints), or a posterior without a smooth share")


@dataclass(frozen=True)
class AcquisitionProblem:
    """Everything the MIP is built from.

    Attributes:
        box: the encoded candidate space.
        ensemble: reduced trees of all posterior samples.
        gps: per (distinct) sample, mean and cone data.
        kappa: UCB exploration weight (>= 0); sign: +1 maximize the output, -1 minimize it.
        rule: the acquisition rule's name (``rules.RULES``; the MIP holds "ucb" only).
        incumbents: (S,) each posterior sample's incumbent f_s (``rules.Rule.incumbents``).
        constraints: domain constraint specs (``specs``).
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
    rule: str = "ucb"
    incumbents: np.ndarray | None = None

    @property
    def acquisition_rule(self) -> Rule:
        return Rule(self.rule, self.kappa)

    @property
    def linear(self) -> bool:
        """Whether the model is a MILP (no cone, no nonlinear constraint)."""
        return self.kappa == 0.0 and not any(isinstance(c, NonlinearSpec)
                                             for c in self.constraints)


def build_problem(posterior, domain, space, kappa: float = DEFAULT_KAPPA, sign: float = 1.0,
                  pending: np.ndarray | None = None, form: str = "auto", gps: bool = True,
                  rule: str = "ucb"):
    """The plain MIP data and the engine's leaf systems: (problem, systems).

    ``gps=False`` skips the per-sample cone data, which only the MIP needs; ``rule`` names
    the acquisition rule (``rules``), whose incumbents are computed here."""
    # BoFire's side, imported here: the SCIP worker unpickles problems without BoFire
    from bofire_bark.optimize.constraints import (
        active_delta,
        check_domain_supported,
        constraint_specs,
        input_box,
    )

    check_domain_supported(domain)
    if gps and getattr(posterior, "smooth", None) is not None:
        raise ValueError(SMOOTH_MIP)
    specs = constraint_specs(domain, space)
    box = input_box(domain, space)
    if pending is not None:
        pending = np.ascontiguousarray(pending, dtype=np.float64).reshape(-1, space.n_features)
        if len(pending) == 0:
            pending = None
    systems = posterior.systems(pending)
    samples = posterior.samples
    ens = with_bin_edges(build_ensemble(samples, box), box,
                         getattr(posterior, "smooth", None))
    gp_data = _sample_gps(posterior, ens, systems, pending, form) if gps else ()
    acquisition_rule = Rule(rule, float(kappa))
    incumbents = acquisition_rule.prepare(posterior, systems, float(sign), pending)
    problem = AcquisitionProblem(box, ens, gp_data, float(kappa), float(sign), specs,
                                 active_delta(box), rule=rule, incumbents=incumbents)
    return problem, systems


def _sample_gps(posterior, ens, systems, pending, form):
    """The MIP's per-sample cone data, from the leaves the systems routed the training and
    pending points to."""
    Xa = posterior.X if pending is None else np.concatenate((posterior.X, pending))
    Xa = np.ascontiguousarray(Xa, dtype=np.float64)
    leaf_of = np.stack([system.leaf_of for system in systems.systems])
    return sample_gps(ens, posterior.samples, systems.systems, Xa, leaf_of, form)


def model_objective(problem: AcquisitionProblem, x: np.ndarray) -> float:
    """The MIP objective at the encoded point ``x`` (D,), evaluated in numpy."""
    ens, box = problem.ensemble, problem.box
    zval = {(u, tree.leaf_of(x, box.kinds)): 1.0 for u, tree in enumerate(ens.trees)
            if not tree.constant}
    mus, sigmas, _ = acquisition_values(problem.gps, zval, problem.kappa)
    w = np.array([gp.weight for gp in problem.gps])
    val = problem.sign * mus + (problem.kappa * sigmas if problem.kappa > 0 else 0.0)
    return float(w @ val / w.sum())


def with_tangent_cuts(problem: AcquisitionProblem, points: np.ndarray) -> AcquisitionProblem:
    """The problem plus each sample's cone tangent plane at every encoded point (k, D)."""
    if problem.kappa <= 0.0:
        return problem
    ens, box = problem.ensemble, problem.box
    zvals = [{(u, tree.leaf_of(x, box.kinds)): 1.0 for u, tree in enumerate(ens.trees)
              if not tree.constant} for x in points]
    cuts = problem.cuts + tangent_cuts(problem.gps, zvals)
    return dataclasses.replace(problem, cuts=cuts)
