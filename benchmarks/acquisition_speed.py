"""Acquisition MIP speed at the paper's scale: 16 posterior samples x 50 trees, N = 40.

Cases: (a) 10 continuous features; (b) (a) plus 5 categorical features of 5 categories;
(c) (a) plus a nonlinear inequality. For each: time to fit (not part of the MIP), time to build
the problem and the Pyomo model, the starting incumbent (integrated UCB and time), and the
incumbent's objective and relative gap at 5, 20 and 100 s, read from one SCIP run (event
handler trace; the run is never stopped and resumed), plus the time at which the gap first
reached 10 %.

    python -m benchmarks.acquisition_speed [--quick] [--cases a,b,c]
        [--time-limit 100] [--no-start] [--setting key=value ...] [--cache DIR]

``--quick`` uses a shorter MCMC and a 20 s limit.

Measured 2026-11 on 2 shared cores (SCIP 10.0.2 via PySCIPOpt 6.3, defaults: start from 2,000
draws + coordinate ascent, 8 tangent cuts per cone, settings in ``optimize.mip.solvers``):

- MCMC posterior (766 distinct trees, ~2,000 leaf and 860-1,210 split variables): 10 % gap
  after ~1 s in (a), (b), (c); proven optimal in 45 s, 98 s and 55 s; the start was optimal.
- Stress instance, forests from the prior with beta = 0.5 (``--prior-beta 0.5``; ~8,000 leaf
  and 4,600-7,200 split variables): 10 % gap at 10.1 s / 7.4 s / 7.4 s; at 20 s 0.7 % / 5.4 %
  / 0.8 %; at 100 s 0.3 % / 5.1 % / 0.5 %. Without the tangent cuts: 19.4 s / 12.8 s / 17.4 s
  to 10 %; without the start (case a): 13.8 s, and SCIP's own best after 25 s was 1.6 % below
  the start.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import time

import numpy as np
from bofire.data_models.constraints.api import NonlinearInequalityConstraint
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.features.api import CategoricalInput, ContinuousInput

from bofire_bark.engine import MCMCSettings, fit_posterior, sample_prior
from bofire_bark.optimize import prepare_search
from bofire_bark.optimize.mip import solvers
from bofire_bark.optimize.mip.model import build_model
from bofire_bark.optimize.problem import with_tangent_cuts
from bofire_bark.space import SplitSpace

CHECKPOINTS = (5.0, 20.0, 100.0)


def make_domain(case: str) -> Domain:
    features = [ContinuousInput(key=f"x{i:02d}", bounds=(0, 1)) for i in range(10)]
    constraints = []
    if case == "b":
        features += [CategoricalInput(key=f"c{i}", categories=[f"k{k}" for k in range(5)])
                     for i in range(5)]
    if case == "c":
        constraints.append(NonlinearInequalityConstraint(
            expression="(x00 - 0.5)**2 + (x01 - 0.5)**2 + x02 * x03 - 0.2",
            features=["x00", "x01", "x02", "x03"]))
    return Domain(inputs=Inputs(features=features), constraints=constraints)


def objective(X: np.ndarray, space: SplitSpace, rough: bool = False) -> np.ndarray:
    """A smooth test function, or a rough one (many local modes: larger posterior trees)."""
    cont = [j for j, k in enumerate(space.keys) if k.startswith("x")]
    cats = [j for j, k in enumerate(space.keys) if k.startswith("c")]
    Z = X[:, cont]
    if rough:
        y = np.sin(9 * Z + np.arange(Z.shape[1])).sum(axis=1) + 3 * np.cos(7 * Z[:, 0] * Z[:, 1])
    else:
        y = np.sin(3 * Z[:, 0]) * Z[:, 1] + (Z[:, 2] - 0.3) ** 2 + np.cos(5 * Z[:, 3] * Z[:, 4])
        y += 0.5 * Z[:, 5:].sum(axis=1)
    for i, j in enumerate(cats):
        y += 0.3 * np.cos(X[:, j] + i)
    return y


def at(trace, t):
    """(primal, gap) of the last trace point at or before t seconds."""
    best = (float("nan"), float("nan"))
    for point in trace:
        if point[0] <= t:
            best = (point[1], point[3])
    return best


def run_case(case: str, args) -> None:
    domain = make_domain(case)
    space = SplitSpace.from_domain(domain)
    X = space.encode(domain.inputs.sample(40, seed=1))
    y = objective(X, space, args.rough)
    t0 = time.perf_counter()
    path = None
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
        name = (f"posterior_{case}_{args.thinning}_{args.burn_in}_{args.rough}_"
                f"{args.prior_beta}.pkl")
        path = os.path.join(args.cache, name)
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            post = pickle.load(f)  # trusted: this study's cache
    elif args.prior_beta is not None:  # forests from the prior (the paper's BARKPrior)
        post = sample_prior(X, y, space.engine_arrays(),
                            MCMCSettings(n_trees=50, beta=args.prior_beta,
                                         split_prior="uniform"), n_samples=16, seed=0)
    else:
        post = fit_posterior(X, y, space.engine_arrays(),
                             MCMCSettings(n_trees=50, split_prior="uniform"), n_chains=4,
                             n_samples=4, thinning=args.thinning, burn_in=args.burn_in, seed=0)
        post = dataclasses.replace(post, chains=[])
    if path and not os.path.exists(path):
        with open(path, "wb") as f:
            pickle.dump(post, f)
    fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    # the MIP's problem and start as the optimizer builds them (its cuts are added below)
    search = prepare_search(post, domain, space, solver="scip", kappa=args.kappa,
                            n_start_points=args.n_random, n_starts=args.n_starts,
                            n_sweeps=args.sweeps, n_cuts=0)
    problem = search.problem
    prep_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_model(problem)
    build_time = time.perf_counter() - t0
    ens = problem.ensemble
    n_nu = sum(len(t) for t in ens.thresholds)
    n_z = sum(t.n_leaves for t in ens.trees if not t.constant)
    forms = {f: sum(gp.form == f for gp in problem.gps) for f in ("N", "leaf")}
    print(f"case {case}: fit {fit_time:.1f}s, {len(ens.trees)} distinct reduced trees, "
          f"{n_z} leaf vars, {n_nu} split vars, cones {forms}, problem {prep_time:.2f}s, "
          f"Pyomo build {build_time:.2f}s", flush=True)

    t0 = time.perf_counter()
    start = search.start()
    x0, v0 = start.x, start.value
    if args.cuts:
        problem = with_tangent_cuts(problem, start.pool[:args.cuts])
    inc_time = time.perf_counter() - t0
    print(f"  start: integrated UCB {v0:.4f} in {inc_time:.2f}s", flush=True)
    out = solvers.solve(problem, "scip", None if args.no_start else x0, args.time_limit,
                        args.gap, seed=0, isolate=True, options=dict(args.setting))
    reached = next((p[0] for p in out.trace if p[3] <= 0.1), float("nan"))
    cells = []
    for c in CHECKPOINTS:
        if c <= args.time_limit + 1e-9:
            primal, gap = at(out.trace, c)
            if np.isnan(primal):  # no log line yet: the root LP is still being solved
                given = "none" if args.no_start else f"{v0:.4f} (start)"
                cells.append(f"{c:.0f}s: obj {given} gap - (root LP running)")
            else:
                cells.append(f"{c:.0f}s: obj {primal:.4f} gap {100 * gap:.1f}%")
    print(f"  SCIP {out.status}: obj {out.objective:.4f}, bound {out.bound:.4f}, gap "
          f"{100 * out.gap:.1f}%, child build {out.build_time:.2f}s, solve "
          f"{out.solve_time:.1f}s ({out.message})", flush=True)
    print("  " + " | ".join(cells) + f" | 10% gap at {reached:.1f}s", flush=True)


def _setting(text: str):
    key, value = text.split("=", 1)
    for cast in (int, float):
        try:
            return key, cast(value)
        except ValueError:
            pass
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    return key, value


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cases", default="a,b,c")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--gap", type=float, default=0.0,
                        help="relative gap to stop at (default 0: run to the limit)")
    parser.add_argument("--kappa", type=float, default=1.96)
    parser.add_argument("--no-start", action="store_true")
    parser.add_argument("--n-random", type=int, default=2000)
    parser.add_argument("--n-starts", type=int, default=4)
    parser.add_argument("--sweeps", type=int, default=3)
    parser.add_argument("--setting", type=_setting, action="append", default=[],
                        help="extra SCIP parameter, e.g. lp/pricing=s, or emphasis=optimality"
                             " / heuristics=off")
    parser.add_argument("--rough", action="store_true", help="the rough test function")
    parser.add_argument("--cuts", type=int, default=8,
                        help="tangent cuts of the sigma cones at this many starting points")
    parser.add_argument("--prior-beta", type=float, default=None,
                        help="forests from the tree prior with this depth exponent beta "
                             "(smaller: larger trees) instead of MCMC")
    parser.add_argument("--cache", default=None, help="folder to keep fitted posteriors in")
    args = parser.parse_args(argv)
    args.thinning, args.burn_in = (10, 200) if args.quick else (100, 1000)
    if args.time_limit is None:
        args.time_limit = 20.0 if args.quick else 100.0
    for case in args.cases.split(","):
        run_case(case.strip(), args)


if __name__ == "__main__":
    main()
