"""The integrated UCB in the MIP: mu_s, sigma_s and the objective (paper eq. acq_func) as Pyomo
components, from the per-sample data of ``sample_gp`` (whose docstring derives the mean, the
factored variance cone and the objective; identical samples merged with weight w_s).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from bofire_bark.optimize.sample_gp import SampleGP, Terms, acquisition_values


def _linear(m: pyo.ConcreteModel, terms: Terms, row: int, const: float):
    rows, us, ps, coefs = terms
    sel = np.flatnonzero(rows == row)
    return const + sum(float(coefs[i]) * m.z[int(us[i]), int(ps[i])] for i in sel)


def _add_mean(m: pyo.ConcreteModel, gps: tuple[SampleGP, ...]) -> None:
    """mu[s] = mean of sample s (``mean_def``)."""
    m.mu = pyo.Var(range(len(gps)))
    m.mean_def = pyo.Constraint(range(len(gps)), rule=lambda m, s: m.mu[s] == _linear(
        m, gps[s].mean_terms, 0, gps[s].mean_const))


def _add_sigma(m: pyo.ConcreteModel, gps: tuple[SampleGP, ...]) -> None:
    """sigma[s], y[s, i], ``factor`` rows and the ``cone`` sigma^2 + ||y||^2 <= 1."""
    S = range(len(gps))
    m.sigma = pyo.Var(S, bounds=(0.0, 1.0))
    m.y = pyo.Var([(s, i) for s in S for i in range(gps[s].rank)])
    by_row = []
    for gp in gps:
        rows = gp.factor_terms[0]
        order = np.argsort(rows, kind="stable")
        by_row.append((order, np.searchsorted(rows[order], np.arange(gp.rank + 1))))

    def factor(m, s, i):
        gp = gps[s]
        order, bounds = by_row[s]
        sel = order[bounds[i]:bounds[i + 1]]
        _, us, ps, coefs = gp.factor_terms
        rhs = float(gp.factor_const[i]) + sum(
            float(coefs[e]) * m.z[int(us[e]), int(ps[e])] for e in sel)
        if gp.form == "N":
            lhs = sum(float(gp.chol[i, c]) * m.y[s, c] for c in range(i + 1)
                      if gp.chol[i, c] != 0.0)
        else:
            lhs = m.y[s, i]
        return lhs == rhs

    m.factor = pyo.Constraint(list(m.y.index_set()), rule=factor)
    m.cone = pyo.Constraint(S, rule=lambda m, s: m.sigma[s] ** 2 + sum(
        m.y[s, i] ** 2 for i in range(gps[s].rank)) <= 1.0)


def _add_tangent_cuts(m: pyo.ConcreteModel, cuts: tuple) -> None:
    def rule(m, i):
        s, normal = cuts[i]
        return float(normal[0]) * m.sigma[s] + sum(
            float(c) * m.y[s, k] for k, c in enumerate(normal[1:]) if c != 0.0) <= 1.0

    m.tangent = pyo.Constraint(range(len(cuts)), rule=rule)


def add_acquisition(m: pyo.ConcreteModel, gps: tuple[SampleGP, ...], kappa: float,
                    sign: float, cuts: tuple = ()) -> None:
    """mu, sigma (when kappa > 0), the tangent ``cuts`` and the objective ``acq``."""
    _add_mean(m, gps)
    total = sum(gp.weight for gp in gps)
    expr = sum(gp.weight * sign * m.mu[s] for s, gp in enumerate(gps))
    if kappa > 0.0:
        _add_sigma(m, gps)
        _add_tangent_cuts(m, cuts)
        expr = expr + sum(gp.weight * kappa * m.sigma[s] for s, gp in enumerate(gps))
    m.acq = pyo.Objective(expr=expr / total, sense=pyo.maximize)


def acquisition_start(m: pyo.ConcreteModel, gps: tuple[SampleGP, ...],
                      zval: dict[tuple[int, int], float], kappa: float) -> None:
    """Set mu, sigma and y to their values at the leaves ``zval``."""
    mus, sigmas, ys = acquisition_values(gps, zval, kappa)
    for s in range(len(gps)):
        m.mu[s].set_value(float(mus[s]))
        if kappa > 0.0:
            # a hair inside the cone so that the start is feasible after rounding
            scale = 1.0 - 1e-12
            m.sigma[s].set_value(float(sigmas[s]) * scale)
            for i, v in enumerate(ys[s]):
                m.y[s, i].set_value(float(v))
