"""Multi-objective BO study: BARK against BoFire's own multi-objective strategies.

The sibling of ``bo.py`` (single objective) on BoFire's multi-objective benchmarks
(``bofire.benchmarks.api``), constructed as follows; what BoFire 0.5 declares:

- ``DTLZ2``: ``DTLZ2(dim=6)`` (two objectives, BoFire's default), six continuous inputs in
  [0, 1], minimize ``f_0`` and ``f_1``.
- ``SnarBenchmark``: ``SnarBenchmark()``, four continuous inputs (residence time,
  equivalents, concentration, temperature), maximize ``sty``, minimize ``e_factor``.
- ``CrossCoupling``: ``CrossCoupling()``, two ``CategoricalDescriptorInput`` (catalyst, 3
  categories; base, 4 categories; two descriptors each) and three continuous inputs,
  maximize ``yield`` (a SingleTaskGP fitted to published data when the benchmark is built;
  the runner builds it under ``torch.manual_seed(0)`` so every process evaluates the same
  function), minimize ``cost``.
- ``Detergent``: ``Detergent()``, five continuous inputs and two linear inequality
  constraints (0.2 <= x1 + ... + x5 <= 0.4). BoFire 0.5 declares its five outputs
  ``y1`` ... ``y5`` with the default objective (five maxima); the study poses it as the
  issue does, maximize ``y1`` and ``y2`` with output limits ``y3 >= 1.1``, ``y4 >= 1.6``,
  ``y5 >= 0.4`` (``MaximizeSigmoidObjective``; each limit the output's median over 1,000
  random points, ``detergent_with_limits``). Its ``_f`` returns no ``valid_`` columns; the
  runner adds ``valid_yk = 1``.

Methods (each a BoFire strategy behind ask(1)/tell, as in ``bo.py``):

- ``BARK``: ``bofire_bark.data_models.BARKStrategy(domain=..., seed=seed)`` with its defaults
  except ``split_prior="uniform"`` and ``max_time=None`` (stop at ``time_limit``), the settings
  of the committed runs (the defaults became the sparse prior and a search going on up to 10 s
  after them); several outputs from b2245e1 on; a version that refuses a domain
  has the refusal recorded as below.
- ``BARK-NEHVI``: ``BARKStrategy(domain=..., seed=seed, acquisition_function=qLogNEHVI())``,
  the library's defaults otherwise: the expected hypervolume improvement over the posterior
  samples (``bofire_bark.optimize.hypervolume``), Mobo's rule.
- ``BARK-NEHVI-LN``: as ``BARK-NEHVI`` with ``surrogate_specs=BARKSettings(noise_prior=
  "lognormal")`` (BoFire's GP noise prior, the lever of ``results/noise_prior``).
- ``BARK-NEHVI-PoF``: as ``BARK-NEHVI`` with ``output_limits="probability"`` (each
  sample's improvement weighed by its probability of meeting the output limits; Detergent is
  the benchmark with limits).
- ``BARK-NEHVI-LN-PoF``: both levers at once, the log-normal noise prior and
  ``output_limits="probability"``.
- ``BARK-NEHVI-MoboRef``, ``BARK-NEHVI-LN-MoboRef``: as ``BARK-NEHVI`` and ``BARK-NEHVI-LN``
  with ``ref_point`` as Mobo infers it (``mobo_reference``: BoFire's ``ExplicitReferencePoint``
  with ``AbsoluteMovingReferenceValue(orient_at_best=False, offset=0)`` per objective, the
  worst value measured of each) instead of BoTorch's inference from the front. The committed
  runs were made at 306ca0c, where this was the library's inferred reference (the same
  values, computed in standardized units).
- ``BARK-NEHVI-LN-Far``: as ``BARK-NEHVI-LN`` with ``acquisition_optimizer=SearchSettings(
  tie_break="farthest")`` (the candidate moved within its grid cell to the point farthest
  from the data).
- ``BARK-NEHVI-LN-Smooth``: as ``BARK-NEHVI-LN`` with ``smooth_share=True`` (a smooth share of
  the kernel over the continuous inputs, ``bofire_bark.engine.smooth``).
- ``BARK-NEHVI-LN-Smooth-Tie``: as ``BARK-NEHVI-LN-Smooth`` with ``acquisition_optimizer=
  SearchSettings(tie_break="smooth")`` (the candidate moved within its grid cell to where the
  smooth part's continuous extension scores best).
- ``BARK-NEHVI-LN-SmoothCat``: as ``BARK-NEHVI-LN-Smooth`` with ``smooth_categories=True``
  (the categorical inputs in the smooth part too: on CrossCoupling's yield that model fits as
  Sobo's GP does, and with qLogNEI beats Sobo there; ``docs/results/chemistry.md``).
- ``BARK-NEHVI-LN-SmoothCat-J``: the same settings as ``BARK-NEHVI-LN-SmoothCat``, run at
  9afe771, where qNEHVI gave each sample its own front and took the front's measured points as
  known, as BoTorch's joint qNEHVI (reverted: not better, ``docs/results/multi-objective.md``);
  today this arm runs the library's qNEHVI, as ``BARK-NEHVI-LN-SmoothCat``.
- ``BARK-NEHVI-LN-SmoothCat-Tie``: as ``BARK-NEHVI-LN-SmoothCat`` with ``tie_break="smooth"``:
  on CrossCoupling that arm's picks sit inside the cells next to the bounds of ``t_res`` and
  ``base_eq`` (a box's centre), where Mobo's sit on the bounds.
- ``BARK-Chebyshev``: ``BARKStrategy(domain=..., seed=seed)``, the library's defaults (qUCB
  with random Chebyshev weights), the same settings as ``BARK-NEHVI`` but the rule.
- ``Mobo``: ``MoboStrategy(domain=..., seed=seed)``, BoFire's defaults (qLogNEHVI, reference
  point inferred from the data).
- ``Qparego``: ``QparegoStrategy(domain=..., seed=seed)``, BoFire's defaults.
- ``Entmoot``: ``EntingStrategy`` solved with SCIP through ``bo.py``'s Pyomo adapter,
  ``--entmoot-time-limit`` (10 s) per solve, otherwise defaults, and SCIP given the Ipopt
  option file of BARK's own SCIP runs (without it the process aborted, SIGABRT in native
  code, on every Detergent ask tried; with it, none did). Needs ``entmoot`` and ``lightgbm``
  (see ``results/README.md``).
- ``Random``: ``RandomStrategy(domain=..., seed=seed)``.

A run is one (benchmark, method, seed): the ``min(2D, 30)`` random initial points of
``bo.initial_design`` (the same for every method of a seed), then ``--iterations`` (30)
ask(1)/tell steps. ``runs/<benchmark>/<method>/seed<k>.csv`` holds one row per evaluated
point: ``iteration`` (0 for the initial design), the inputs, every output and its ``valid_``
column, ``hypervolume`` (of all points up to and including the row), ``fit_time`` (the
``tell``), ``acq_time`` (the ``ask``), ``resumes`` and ``bound_clip`` (as in ``bo.py``). The
file is rewritten after every iteration, so an interrupted run resumes from its saved points
(the model is refitted on all of them). A crash leaves ``seed<k>.error.txt`` beside the
partial CSV (the next invocation resumes the run and removes it once it completes). Each run
runs in a process of its own (``--in-process`` to run them in the caller), so a native abort
in a solver ends that run, recorded as an error, and not the study.

A method that refuses a benchmark's domain (a pydantic validation error when its data model
is built) leaves ``runs/<benchmark>/<method>/UNSUPPORTED.txt`` with the reason and the commit
that refused. Later invocations skip that pair; ``--retry-unsupported`` deletes the marker and
tries again (for BARK once its multi-objective support lands).

Hypervolume. The primary objectives are the outputs with a ``MaximizeObjective`` or
``MinimizeObjective``; the hypervolume is BoTorch's exact ``Hypervolume`` of the
non-dominated feasible points (``is_non_dominated``), oriented by BoFire's
``get_ref_point_mask`` (maximize +1, minimize -1), in the outputs' own units, against one fixed
reference point per benchmark. A point counts (is feasible) when every output's ``valid_``
flag is 1, its primary outputs are finite, and it meets every output limit: ``y >= tp`` for
a ``MaximizeSigmoidObjective`` and ``y <= tp`` for a ``MinimizeSigmoidObjective`` (none of
the four benchmarks declares one; the rule is there for domains that do). Points no better
than the reference point in every objective add nothing. (BoFire's own
``compute_hypervolume`` builds the reference point in float32 and ``get_pareto_front`` fails
on some column orders, hence BoTorch directly.) Reference points:

- DTLZ2, SnarBenchmark, CrossCoupling: the benchmark's own ``ref_point``
  (``f_0 = f_1 = 1.1``; ``sty = 2957``, ``e_factor = 10.7``; ``yield = 0``, ``cost = 1``).
  DTLZ2's best possible hypervolume is 1.1^2 - pi/4 = 0.4246 (BoFire's
  ``best_possible_hypervolume`` property raises a KeyError in 0.5). Snar's point is
  demanding: few random points reach e_factor < 10.7, so many curves start at 0.
- Detergent (BoFire gives none): each objective's minimum over 1,000 points of
  ``RandomStrategy(seed=0)``, rounded down to 0.1 (``derive_reference``; a second seed gives
  the same point): y1 0.5, y2 0 (the two maximized outputs).

Runs are independent joblib jobs (``--n-jobs``, default 1; ``--backend dask|ray`` spreads
them over a cluster), seed-major (seed 0 of every
benchmark and method first), each on one thread (``--threads``; torch's default of one
thread per core made a Mobo iteration on CrossCoupling take 205 s instead of 16 s here while
another process held the second core). ``--method-seeds Mobo=3`` (or
``Mobo@Detergent=3``) runs fewer seeds for a method that would take too long, after all
other runs; ``runs/plan.json`` records the seeds and iterations planned per benchmark and
method, and the summary names every lowered plan. The peers' study in ``results/mo`` needed
none: at 25 points, with one thread, a Mobo iteration took 2-6 s here, Qparego 1-6 s and
Entmoot about its 10 s limit (on Detergent as BoFire declares it, five maxima, one qLogNEHVI
ask took 400 s: BoFire's exact box decomposition, ``alpha = 0``).

    python -m benchmarks mo [--benchmarks ...] [--methods ...] [--seeds 5]
        [--iterations 30] [--n-jobs 1] [--method-seeds M[@B]=K ...] [--retry-unsupported]
        [--backend loky|dask|ray] [--scheduler ADDRESS]
        [--entmoot-time-limit 10] [--threads 1] [--in-process] [--out-dir results/mo]
    python -m benchmarks mo-plots [--out-dir results/mo] [--no-readme]

``mo-plots`` writes ``hypervolume.csv`` (hypervolume after each iteration per benchmark,
method and seed), ``hypervolume.png`` (median and interquartile range over the finished
seeds, one panel per benchmark), ``summary.md``/``summary.csv`` (final hypervolume per
method, BARK's paired seed counts and sign test against each method, seeds x iterations
finished) and copies ``summary.md`` into the README between ``<!-- mo-study -->`` markers.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import REPO, add_backend_arguments, study_backend
from benchmarks.bo import (
    ENTMOOT_SOLVER,
    Unsupported,
    _check_entmoot_discrete,
    _register_entmoot_scip,
    _save,
    initial_design,
    read_run,
    resume_count,
    tell_ask,
)
from benchmarks.plots import _fmt, embed, finished_only, sign_test_p

DEFAULT_OUT = REPO / "results" / "mo"
METHODS = ("BARK", "BARK-NEHVI", "BARK-NEHVI-LN", "BARK-NEHVI-PoF", "BARK-NEHVI-LN-PoF",
           "BARK-NEHVI-MoboRef", "BARK-NEHVI-LN-MoboRef", "BARK-NEHVI-LN-Far",
           "BARK-NEHVI-LN-Smooth", "BARK-NEHVI-LN-Smooth-Tie", "BARK-NEHVI-LN-SmoothCat",
           "BARK-NEHVI-LN-SmoothCat-J", "BARK-NEHVI-LN-SmoothCat-Tie", "BARK-Chebyshev", "Mobo",
           "Qparego", "Entmoot", "Random")
MO_BENCHMARKS = ("DTLZ2", "SnarBenchmark", "CrossCoupling", "Detergent")
COLORS = {"BARK": "tab:green", "BARK-NEHVI": "tab:red", "BARK-NEHVI-LN": "tab:brown",
          "BARK-NEHVI-PoF": "tab:pink", "BARK-NEHVI-LN-PoF": "tab:cyan",
          "BARK-NEHVI-MoboRef": "salmon", "BARK-NEHVI-LN-MoboRef": "peru",
          "BARK-NEHVI-LN-Far": "goldenrod", "BARK-NEHVI-LN-Smooth": "olive",
          "BARK-NEHVI-LN-Smooth-Tie": "darkkhaki", "BARK-NEHVI-LN-SmoothCat": "yellowgreen",
          "BARK-NEHVI-LN-SmoothCat-J": "darkgreen", "BARK-NEHVI-LN-SmoothCat-Tie": "lime",
          "BARK-Chebyshev": "tab:olive",
          "Mobo": "tab:blue", "Qparego": "tab:purple",
          "Entmoot": "tab:orange", "Random": "tab:gray"}
# derive_reference("Detergent") with its defaults; fixed here so a library change cannot move it
DETERGENT_REFERENCE = {"y1": 0.5, "y2": 0.0}
DTLZ2_MAX_HV = 1.1**2 - np.pi / 4
# two final hypervolumes closer than this (relative) count as a tie in the paired counts
TIE = 1e-9

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# Benchmarks, reference points, hypervolume
# --------------------------------------------------------------------------------------------


def make_benchmark(name: str):
    import torch
    from bofire.benchmarks import api

    if name == "DTLZ2":
        return api.DTLZ2(dim=6)
    if name == "SnarBenchmark":
        return api.SnarBenchmark()
    if name == "CrossCoupling":
        # its yield is a GP fitted when built: one seed, so every process evaluates one function
        with torch.random.fork_rng():
            torch.manual_seed(0)
            return api.CrossCoupling()
    if name == "Detergent":
        return detergent_with_limits(api.Detergent())
    raise ValueError(f"unknown benchmark {name!r}; choose from {MO_BENCHMARKS}")


# Detergent's limits: each the median of the output over 1,000 points of
# RandomStrategy(seed=0), to two digits (20 % of those points meet all three)
DETERGENT_LIMITS = {"y3": 1.1, "y4": 1.6, "y5": 0.4}


def detergent_with_limits(bench):
    """BoFire's Detergent as the issue poses it: maximize y1 and y2, and y3, y4, y5 at least
    ``DETERGENT_LIMITS`` (``MaximizeSigmoidObjective``, steepness 100: a sharp limit over
    outputs that vary by about 0.1). Same inputs, constraints and function."""
    from bofire.data_models.domain.api import Domain, Outputs
    from bofire.data_models.features.api import ContinuousOutput
    from bofire.data_models.objectives.api import MaximizeObjective, MaximizeSigmoidObjective

    old = bench.domain
    outputs = [ContinuousOutput(key=f.key, objective=(
        MaximizeSigmoidObjective(tp=DETERGENT_LIMITS[f.key], steepness=100.0)
        if f.key in DETERGENT_LIMITS else MaximizeObjective()))
        for f in old.outputs.get()]
    bench._domain = Domain(inputs=old.inputs, outputs=Outputs(features=outputs),
                           constraints=old.constraints)
    return bench


def primary_keys(domain) -> list[str]:
    """The outputs whose objectives span the hypervolume, in the domain's order."""
    from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective

    return [f.key for f in domain.outputs.get()
            if type(getattr(f, "objective", None)) in (MaximizeObjective, MinimizeObjective)]


def derive_reference(bench, n: int = 1000, seed: int = 0) -> dict[str, float]:
    """The rule for a benchmark without a reference point: each primary objective's worst
    value over ``n`` random feasible points, rounded outwards to 0.1."""
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy
    from bofire.utils.multiobjective import get_ref_point_mask

    keys = primary_keys(bench.domain)
    sign = get_ref_point_mask(bench.domain, keys)
    X = strategies.map(RandomStrategy(domain=bench.domain, seed=seed)).ask(n)
    worst = (bench.f(X)[keys].to_numpy(dtype=float) * sign).min(axis=0)
    return {k: float(np.floor(w * 10) / 10 * s) for k, w, s in zip(keys, worst, sign,
                                                                    strict=True)}


def mobo_reference(domain):
    """MoboStrategy's default reference point of ``domain``: the worst value measured so far of
    each Maximize / Minimize objective."""
    from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective
    from bofire.data_models.strategies.api import (
        AbsoluteMovingReferenceValue,
        ExplicitReferencePoint,
    )

    keys = domain.outputs.get_keys_by_objective([MaximizeObjective, MinimizeObjective])
    return ExplicitReferencePoint(values={
        k: AbsoluteMovingReferenceValue(orient_at_best=False, offset=0.0) for k in keys})


def reference_point(name: str, bench=None) -> dict[str, float]:
    bench = bench if bench is not None else make_benchmark(name)
    ref = getattr(bench, "ref_point", None)
    if ref:
        return {k: float(v) for k, v in ref.items()}
    if name == "Detergent":
        return dict(DETERGENT_REFERENCE)
    raise ValueError(f"no reference point for {name!r}")


def feasible(domain, df: pd.DataFrame) -> np.ndarray:
    """Rows that count toward the hypervolume: valid, finite and within every output limit."""
    from bofire.data_models.objectives.api import (
        MaximizeSigmoidObjective,
        MinimizeSigmoidObjective,
    )

    ok = np.ones(len(df), dtype=bool)
    primary = set(primary_keys(domain))
    for feat in domain.outputs.get():
        valid = f"valid_{feat.key}"
        if valid in df:
            ok &= df[valid].to_numpy(dtype=float) == 1
        obj = getattr(feat, "objective", None)
        y = (df[feat.key].to_numpy(dtype=float) if feat.key in df
             else np.full(len(df), np.nan))
        if feat.key in primary:
            ok &= np.isfinite(y)
        elif isinstance(obj, MaximizeSigmoidObjective):
            ok &= np.nan_to_num(y, nan=-np.inf) >= obj.tp
        elif isinstance(obj, MinimizeSigmoidObjective):
            ok &= np.nan_to_num(y, nan=np.inf) <= obj.tp
    return ok


def hypervolume(domain, df: pd.DataFrame, ref: dict[str, float]) -> float:
    """Hypervolume of the feasible rows of ``df`` against ``ref`` (see the module's rule)."""
    import torch
    from bofire.utils.multiobjective import get_ref_point_mask
    from botorch.utils.multi_objective import is_non_dominated
    from botorch.utils.multi_objective.hypervolume import Hypervolume

    keys = primary_keys(domain)
    sign = get_ref_point_mask(domain, keys)
    Y = df.loc[feasible(domain, df), keys].to_numpy(dtype=float) * sign
    if not len(Y):
        return 0.0
    Y = torch.from_numpy(Y)
    front = Y[is_non_dominated(Y)]
    r = torch.tensor([ref[k] for k in keys], dtype=torch.float64) * torch.from_numpy(sign)
    return float(Hypervolume(ref_point=r).compute(front))


def evaluate(bench, X: pd.DataFrame) -> pd.DataFrame:
    """Every output and its ``valid_`` flag for the candidates ``X`` (index 0..n-1)."""
    X = X.reset_index(drop=True)
    Y = bench.f(X).reset_index(drop=True)
    keys = bench.domain.outputs.get_keys()
    for key in keys:
        if f"valid_{key}" not in Y:  # Detergent returns none: every evaluation is valid
            Y[f"valid_{key}"] = 1
    return Y[keys + [f"valid_{k}" for k in keys]]


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


@dataclass
class MOConfig:
    """Settings of one study; ``runs`` names the output folder's runs subfolder."""

    n_iterations: int = 30
    entmoot_time_limit: float = 10.0
    out_dir: Path = field(default_factory=lambda: DEFAULT_OUT)
    runs: str = "runs"
    # torch threads per run (None: torch's default, one per core)
    threads: int | None = 1

    def run_dir(self, bench: str, method: str) -> Path:
        return Path(self.out_dir) / self.runs / bench / method


ENTMOOT_SOLVER_MO = ENTMOOT_SOLVER + "_ipopt"


def _register_entmoot_scip_ipopt() -> None:
    """``bo.py``'s SCIP adapter for Entmoot, plus the Ipopt option file BARK's own SCIP runs
    use (``mumps_pivot_order 0``): without it every Detergent ask tried aborted the process
    (SIGABRT in native code); with it none did."""
    import pyomo.environ as pyo
    from pyomo.opt import SolverFactory

    from bofire_bark.optimize.mip.solvers import ipopt_optfile

    if ENTMOOT_SOLVER_MO in SolverFactory._cls:
        return
    _register_entmoot_scip()

    class _WithIpoptOptions(SolverFactory._cls[ENTMOOT_SOLVER]):
        def solve(self, model, tee=False, **kwargs):
            opts = dict(self.options)
            limit = opts.pop("time_limit", None)
            return pyo.SolverFactory("scip_direct").solve(
                model, tee=tee, timelimit=limit, load_solutions=True,
                options={"nlpi/ipopt/optfile": ipopt_optfile()})

    SolverFactory.register(ENTMOOT_SOLVER_MO, doc="scip_direct for Entmoot, Ipopt option file")(
        _WithIpoptOptions)


def strategy_spec(method: str, domain, seed: int, cfg: MOConfig):
    """The BoFire data model of ``method``; raises ``Unsupported`` when it refuses the domain."""
    from bofire.data_models.acquisition_functions.api import qLogNEHVI
    from bofire.data_models.strategies.api import (
        EntingStrategy,
        MoboStrategy,
        QparegoStrategy,
        RandomStrategy,
    )
    from pydantic import ValidationError

    import bofire_bark  # noqa: F401  (registers BARK with BoFire)
    from bofire_bark.data_models import BARKSettings, BARKStrategy
    from bofire_bark.settings import SearchSettings

    try:
        if method == "BARK":
            return BARKStrategy(domain=domain, seed=seed, max_time=None,
                                surrogate_specs=BARKSettings(split_prior="uniform"))
        if method == "BARK-NEHVI":
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI())
        if method == "BARK-NEHVI-LN":
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI(),
                                surrogate_specs=BARKSettings(noise_prior="lognormal"))
        if method == "BARK-NEHVI-PoF":
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI(),
                                output_limits="probability")
        if method == "BARK-NEHVI-LN-PoF":
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI(),
                                surrogate_specs=BARKSettings(noise_prior="lognormal"),
                                output_limits="probability")
        if method in ("BARK-NEHVI-MoboRef", "BARK-NEHVI-LN-MoboRef"):
            specs = BARKSettings(noise_prior="lognormal" if "-LN-" in method
                                 else "inverse_gamma")
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI(),
                                surrogate_specs=specs, ref_point=mobo_reference(domain))
        if method == "BARK-NEHVI-LN-Far":
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI(),
                                surrogate_specs=BARKSettings(noise_prior="lognormal"),
                                acquisition_optimizer=SearchSettings(tie_break="farthest"))
        if method in ("BARK-NEHVI-LN-Smooth", "BARK-NEHVI-LN-Smooth-Tie"):
            tie = "smooth" if method.endswith("-Tie") else "none"
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI(),
                                surrogate_specs=BARKSettings(noise_prior="lognormal",
                                                             smooth_share=True),
                                acquisition_optimizer=SearchSettings(tie_break=tie))
        if method in ("BARK-NEHVI-LN-SmoothCat", "BARK-NEHVI-LN-SmoothCat-J",
                      "BARK-NEHVI-LN-SmoothCat-Tie"):
            tie = "smooth" if method.endswith("-Tie") else "none"
            return BARKStrategy(domain=domain, seed=seed, acquisition_function=qLogNEHVI(),
                                surrogate_specs=BARKSettings(noise_prior="lognormal",
                                                             smooth_share=True,
                                                             smooth_categories=True),
                                acquisition_optimizer=SearchSettings(tie_break=tie))
        if method == "BARK-Chebyshev":
            return BARKStrategy(domain=domain, seed=seed)
        if method == "Mobo":
            return MoboStrategy(domain=domain, seed=seed)
        if method == "Qparego":
            return QparegoStrategy(domain=domain, seed=seed)
        if method == "Random":
            return RandomStrategy(domain=domain, seed=seed)
        if method == "Entmoot":
            _register_entmoot_scip_ipopt()
            return EntingStrategy(domain=domain, seed=seed, solver_name=ENTMOOT_SOLVER_MO,
                                  solver_verbose=False,
                                  solver_params={"solver_options": {
                                      "time_limit": cfg.entmoot_time_limit}})
    except ValidationError as err:
        raise Unsupported("; ".join(e["msg"] for e in err.errors())) from err
    raise ValueError(f"unknown method {method!r}; choose from {METHODS}")


def make_strategy(method: str, domain, seed: int, cfg: MOConfig):
    import bofire.strategies.api as strategies

    spec = strategy_spec(method, domain, seed, cfg)
    if method == "Entmoot":
        _check_entmoot_discrete(domain)
    return strategies.map(spec)


def _commit() -> str:
    """The checked-out commit (and whether files differ from it), to date a refusal."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO, text=True, capture_output=True).stdout.strip()
        return head + (" with uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# --------------------------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------------------------


def run_path(cfg: MOConfig, bench: str, method: str, seed: int) -> Path:
    return cfg.run_dir(bench, method) / f"seed{seed}.csv"


def run_one(bench_name: str, method: str, seed: int, cfg: MOConfig,
            retry_unsupported: bool = False) -> str:
    """Run (or resume) one run; returns ``"done"``, ``"unsupported"`` or ``"error"``."""
    warnings.filterwarnings("ignore")
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    out = cfg.run_dir(bench_name, method)
    out.mkdir(parents=True, exist_ok=True)
    path = run_path(cfg, bench_name, method, seed)
    rows: list[dict] = read_run(path).to_dict("records") if path.exists() else []
    if rows and max(r["iteration"] for r in rows) >= cfg.n_iterations:
        return "done"
    marker = out / "UNSUPPORTED.txt"
    if marker.exists():
        if not retry_unsupported:
            return "unsupported"
        marker.unlink(missing_ok=True)  # a newer code version may accept the domain
    bench = make_benchmark(bench_name)
    domain = bench.domain
    keys = domain.inputs.get_keys()
    outputs = domain.outputs.get_keys()
    told = keys + outputs + [f"valid_{k}" for k in outputs]
    ref = reference_point(bench_name, bench)
    try:
        strategy = make_strategy(method, domain, seed, cfg)
    except Unsupported as err:
        marker.write_text(f"{method} cannot take {bench_name}: {err}\n"
                          f"(refused at commit {_commit()})\n")
        return "unsupported"
    try:
        import torch

        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(seed)
        if not rows:
            X0 = initial_design(bench, seed)
            Y0 = evaluate(bench, X0)
            design = pd.concat([X0, Y0], axis=1)
            for i in range(len(design)):
                rows.append({"iteration": 0, **design.iloc[i].to_dict(),
                             "hypervolume": hypervolume(domain, design.iloc[:i + 1], ref),
                             "fit_time": np.nan, "acq_time": np.nan})
            _save(rows, path)
        new = pd.DataFrame(rows)[told]
        start_it = max(r["iteration"] for r in rows) + 1
        resumes = resume_count(rows, start_it)
        for it in range(start_it, cfg.n_iterations + 1):
            step = tell_ask(strategy, new, keys, domain)
            point = pd.concat([step.X, evaluate(bench, step.X)], axis=1)
            hv = hypervolume(domain, pd.concat([pd.DataFrame(rows), point], ignore_index=True),
                             ref)
            rows.append({"iteration": it, **point.iloc[0].to_dict(), "hypervolume": hv,
                         "fit_time": step.fit_time, "acq_time": step.acq_time,
                         "resumes": resumes, "bound_clip": step.clip})
            _save(rows, path)
            new = point[told]
        (out / f"seed{seed}.error.txt").unlink(missing_ok=True)  # an earlier failure, resumed
        return "done"
    except Exception:  # keep the study going; the partial CSV stays and resumes later
        (out / f"seed{seed}.error.txt").write_text(traceback.format_exc())
        logger.exception("run %s/%s/seed%d failed", bench_name, method, seed)
        return "error"


def _child(queue, *args) -> None:
    queue.put(run_one(*args))


def run_isolated(bench_name: str, method: str, seed: int, cfg: MOConfig,
                 retry_unsupported: bool = False) -> str:
    """``run_one`` in a fresh process: a native abort in a solver (Entmoot's SCIP did abort
    on Detergent before the Ipopt option) ends that run as an error, not the whole study."""
    import multiprocessing as mp

    path = run_path(cfg, bench_name, method, seed)
    if path.exists() and read_run(path)["iteration"].max() >= cfg.n_iterations:
        return "done"  # no process (seconds of imports) to find that out
    ctx = mp.get_context("spawn")  # a fork would inherit torch's and numba's thread pools
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, bench_name, method, seed, cfg,
                                            retry_unsupported))
    proc.start()
    proc.join()
    if not queue.empty():
        return queue.get()
    out = cfg.run_dir(bench_name, method)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"seed{seed}.error.txt").write_text(
        f"the run's process died with exit code {proc.exitcode} (a negative code is the "
        "signal, e.g. -6 an abort in native code); the saved rows resume next time\n")
    return "error"


# --------------------------------------------------------------------------------------------
# The study
# --------------------------------------------------------------------------------------------


def parse_method_seeds(items: list[str] | None) -> dict[tuple[str, str | None], int]:
    """``["Mobo=3", "Entmoot@Detergent=2"]`` -> {("Mobo", None): 3, ("Entmoot", "Detergent"): 2}"""
    out = {}
    for item in items or []:
        name, _, k = item.partition("=")
        method, _, bench = name.partition("@")
        if method not in METHODS or not k.isdigit() or (bench and bench not in MO_BENCHMARKS):
            raise SystemExit(f"--method-seeds {item!r}: expected METHOD[@BENCHMARK]=K with "
                             f"METHOD in {METHODS} and BENCHMARK in {MO_BENCHMARKS}")
        out[(method, bench or None)] = int(k)
    return out


def n_seeds(method: str, bench: str, seeds: int, overrides: dict) -> int:
    return overrides.get((method, bench), overrides.get((method, None), seeds))


def record_plan(cfg: MOConfig, plan: dict[tuple[str, str], tuple[int, int, int]]) -> None:
    """Merge (benchmark, method) -> (first seed, seeds, iterations) into ``plan.json``: the
    summary reads what each pair was meant to reach."""
    path = Path(cfg.out_dir) / cfg.runs / "plan.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    for (bench, method), (first, k, its) in plan.items():
        saved.setdefault(bench, {})[method] = {"first_seed": first, "seeds": k,
                                               "iterations": its}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n")


def check_settings(cfg: MOConfig, benches) -> dict:
    """Record settings (and the reference points) in ``<runs>/settings.json`` and refuse to
    mix runs made with others into that folder."""
    path = Path(cfg.out_dir) / cfg.runs / "settings.json"
    saved = json.loads(path.read_text()) if path.exists() else {}
    settings = {"entmoot_time_limit": cfg.entmoot_time_limit,
                "initial_points": "bo.initial_design: min(2D, 30), RandomStrategy(seed)",
                "reference_points": dict(saved.get("reference_points", {}))}
    for b in benches:
        settings["reference_points"][b] = reference_point(b)
    if saved:
        differ = [k for k in settings if k in saved and k != "reference_points"
                  and saved[k] != settings[k]]
        differ += [f"reference point of {b}" for b in benches
                   if b in saved.get("reference_points", {})
                   and saved["reference_points"][b] != settings["reference_points"][b]]
        if differ:
            raise SystemExit(f"{path} was written with other settings ({', '.join(differ)}); "
                             "use another --out-dir to keep studies apart")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=1) + "\n")
    return settings


def run_study(benchmarks, methods, seeds: int, cfg: MOConfig, n_jobs: int = 1,
              first_seed: int = 0, method_seeds: dict | None = None,
              retry_unsupported: bool = False, verbose: bool = True, isolate: bool = True):
    """All runs, seed-major (every benchmark and method of a seed before the next seed), the
    pairs given fewer seeds by ``method_seeds`` after all others; each in its own process
    unless ``isolate`` is False."""
    from joblib import Parallel, delayed

    method_seeds = method_seeds or {}
    counts = {(b, m): n_seeds(m, b, seeds, method_seeds) for b in benchmarks for m in methods}
    record_plan(cfg, {key: (first_seed, k, cfg.n_iterations) for key, k in counts.items()})
    jobs = [(b, m, s) for s in range(first_seed, first_seed + max(counts.values(), default=0))
            for b in benchmarks for m in methods if s < first_seed + counts[(b, m)]]
    # pairs with fewer seeds are the slow ones (lowered for time): last, so that they cannot
    # hold up every other pair's seeds
    jobs.sort(key=lambda j: counts[(j[0], j[1])] < seeds)

    def one(b, m, s):
        t = time.perf_counter()
        status = (run_isolated if isolate else run_one)(b, m, s, cfg, retry_unsupported)
        if verbose:
            print(f"{b:14s} {m:8s} seed {s}: {status} ({time.perf_counter() - t:.0f} s)",
                  flush=True)
        return (b, m, s, status)

    return Parallel(n_jobs=n_jobs)(delayed(one)(b, m, s) for b, m, s in jobs)


# --------------------------------------------------------------------------------------------
# Summary: hypervolume curves, plot, table
# --------------------------------------------------------------------------------------------


def load_runs(run_root: Path) -> tuple[pd.DataFrame, dict[tuple[str, str], str]]:
    """All rows (benchmark, method, seed, iteration, hypervolume, times) and the refusals."""
    frames, refused = [], {}
    cols = ["iteration", "hypervolume", "fit_time", "acq_time"]
    for bench_dir in sorted(p for p in Path(run_root).glob("*") if p.is_dir()):
        for method_dir in sorted(p for p in bench_dir.glob("*") if p.is_dir()):
            marker = method_dir / "UNSUPPORTED.txt"
            if marker.exists():
                first = marker.read_text().strip().splitlines()[0]
                refused[(bench_dir.name, method_dir.name)] = first.split(": ", 1)[-1]
            for csv in sorted(method_dir.glob("seed*.csv")):
                run = read_run(csv)
                df = run[cols].assign(benchmark=bench_dir.name, method=method_dir.name,
                                      seed=int(csv.stem.removeprefix("seed")),
                                      meets=_meets_limits(bench_dir.name, run))
                frames.append(df)
    if not frames:
        return pd.DataFrame(columns=cols + ["benchmark", "method", "seed"]), refused
    return pd.concat(frames, ignore_index=True), refused


def _meets_limits(bench: str, run: pd.DataFrame) -> np.ndarray:
    """Per row: valid and within every output limit (``feasible``); NaN on a benchmark
    without output limits (only Detergent has them)."""
    if bench != "Detergent":
        return np.full(len(run), np.nan)
    return feasible(detergent_with_limits(make_benchmark("Detergent")).domain, run)


def hv_curves(runs: pd.DataFrame) -> pd.DataFrame:
    """Hypervolume after each iteration (0 = the initial design) per benchmark, method, seed."""
    if runs.empty:
        return pd.DataFrame(columns=["benchmark", "method", "seed", "iteration",
                                     "hypervolume"])
    # the last row of an iteration holds the hypervolume of everything evaluated so far
    return (runs.groupby(["benchmark", "method", "seed", "iteration"], as_index=False)
            ["hypervolume"].last())


def _order(benches) -> list[str]:
    return [b for b in MO_BENCHMARKS if b in benches] + sorted(set(benches) - set(MO_BENCHMARKS))


def _methods(present) -> list[str]:
    return [m for m in METHODS if m in present] + sorted(set(present) - set(METHODS))


def _finished(curves: pd.DataFrame, plan: dict) -> pd.DataFrame:
    """Runs that reached their planned iterations (else the benchmark's furthest iteration)."""
    if curves.empty:
        return curves
    reach = curves.groupby(["benchmark", "method", "seed"])["iteration"].transform("max")
    target = pd.Series([plan.get(b, {}).get(m, {}).get("iterations", np.nan)
                        for b, m in zip(curves["benchmark"], curves["method"], strict=True)],
                       index=curves.index, dtype=float)
    fallback = finished_only(curves)
    unplanned = fallback[target.loc[fallback.index].isna()]
    return pd.concat([curves[target.notna() & (reach >= target)], unplanned]).sort_index()


def plot_hypervolume(curves: pd.DataFrame, refused: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    benches = _order(set(curves["benchmark"]) | {b for b, _ in refused})
    ncol = min(4, max(1, len(benches)))
    fig, axes = plt.subplots(1, ncol, figsize=(4.2 * ncol, 3.6), squeeze=False)
    for ax, bench in zip(axes.flat, benches, strict=False):
        sub = curves[curves["benchmark"] == bench]
        for method in _methods(set(sub["method"])):
            # only the iterations every plotted seed reached
            wide = sub[sub["method"] == method].pivot(index="iteration", columns="seed",
                                                      values="hypervolume").dropna()
            if wide.empty:
                continue
            vals = wide.to_numpy(dtype=float)
            color = COLORS.get(method)
            ax.plot(wide.index, np.median(vals, axis=1), color=color,
                    label=f"{method} ({wide.shape[1]})")
            ax.fill_between(wide.index, np.percentile(vals, 25, axis=1),
                            np.percentile(vals, 75, axis=1), color=color, alpha=0.2,
                            linewidth=0)
        if bench == "DTLZ2":
            ax.axhline(DTLZ2_MAX_HV, color="0.5", linestyle=":", linewidth=1)
        ax.set_title(bench, fontsize=10)
        ax.set_xlabel("iteration")
        ax.set_ylabel("hypervolume")
        notes = [f"{m}: refuses" for (b, m) in refused if b == bench]
        if notes:
            ax.text(0.98, 0.02, "\n".join(notes), transform=ax.transAxes, ha="right",
                    va="bottom", fontsize=7, color="0.4")
        ax.legend(fontsize=7, loc="best")
    fig.suptitle("Hypervolume of the feasible points: median and interquartile range over "
                 "finished seeds (legend: seeds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary_table(runs: pd.DataFrame, curves: pd.DataFrame, refused: dict, plan: dict,
                  reference: str = "BARK") -> pd.DataFrame:
    rows = []
    done = _finished(curves, plan)
    for bench in _order(set(curves["benchmark"]) | {b for b, _ in refused} | set(plan)):
        methods = _methods(set(curves.loc[curves["benchmark"] == bench, "method"])
                           | {m for b, m in refused if b == bench} | set(plan.get(bench, {})))
        planned = {m: plan.get(bench, {}).get(m, {}) for m in methods}
        most = max((p.get("seeds", 0) for p in planned.values()), default=0)
        sub = done[done["benchmark"] == bench]
        final = (sub.sort_values("iteration").groupby(["method", "seed"])["hypervolume"].last()
                 .unstack("method") if len(sub) else pd.DataFrame())
        for method in methods:
            p = planned[method]
            r = runs[(runs["benchmark"] == bench) & (runs["method"] == method)]
            reach = r.groupby("seed")["iteration"].max()
            its = p.get("iterations", int(reach.max()) if len(reach) else 0)
            hv = final[method].dropna() if method in final else pd.Series(dtype=float)
            notes = []
            if (bench, method) in refused and hv.empty:
                notes.append("refuses: " + refused[(bench, method)])
            partial = reach[reach < its]
            if len(partial):
                notes.append(f"{len(partial)} in progress (at iteration "
                             f"{', '.join(str(int(i)) for i in partial)})")
            if p and p.get("seeds", most) < most:
                notes.append(f"{p['seeds']} seeds planned ({most} for another method)")
            row = {"benchmark": bench, "method": method, "seeds": len(hv), "iterations": its,
                   "planned_seeds": p.get("seeds", np.nan), "hv_median": hv.median(),
                   "hv_q25": hv.quantile(0.25), "hv_q75": hv.quantile(0.75),
                   "fit_s": r.loc[r["iteration"] > 0, "fit_time"].median(),
                   "acq_s": r.loc[r["iteration"] > 0, "acq_time"].median(),
                   "limits_met": (r.loc[r["iteration"] > 0, "meets"].mean() if "meets" in r
                                  else np.nan),
                   "vs_reference": "", "p": np.nan, "note": "; ".join(notes)}
            if method != reference and method in final and reference in final:
                pair = final[[reference, method]].dropna()
                diff = pair[reference] - pair[method]
                tol = TIE * np.maximum(1.0, pair.abs().max(axis=1))
                higher, lower = int((diff > tol).sum()), int((diff < -tol).sum())
                row["vs_reference"] = f"{higher}/{len(diff) - higher - lower}/{lower}"
                row["p"] = sign_test_p(higher, lower)
            rows.append(row)
    return pd.DataFrame(rows)


def summary_markdown(table: pd.DataFrame, refs: dict, reference: str = "BARK") -> str:
    lines = [f"| benchmark | method | finished (seeds x iterations) | final hypervolume, median "
             f"(IQR) | {reference} higher/tied/lower (sign test p) | fit s | acq s | "
             "BO points meeting the output limits | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in table.to_dict("records"):
        hv = ("-" if not np.isfinite(r["hv_median"]) else
              f"{_fmt(r['hv_median'])} ({_fmt(r['hv_q25'])}-{_fmt(r['hv_q75'])})")
        vs = r["vs_reference"] or "-"
        if r["vs_reference"] and np.isfinite(r["p"]):
            vs += f" (p {r['p']:.2g})"
        met = "-" if not np.isfinite(r["limits_met"]) else f"{r['limits_met']:.0%}"
        lines.append(f"| {r['benchmark']} | {r['method']} | {r['seeds']} x {r['iterations']} | "
                     f"{hv} | {vs} | {_fmt(r['fit_s'])} | {_fmt(r['acq_s'])} | {met} | "
                     f"{r['note']} |")
    lines.append("")
    lines.append("Reference points (hypervolume in the outputs' units; only points that are "
                 "valid and meet every output limit count): "
                 + "; ".join(f"{b}: " + ", ".join(f"{k} {v:g}" for k, v in ref.items())
                             for b, ref in refs.items())
                 + f". DTLZ2's largest possible hypervolume is {DTLZ2_MAX_HV:.4f}.")
    return "\n".join(lines) + "\n"


def make_summary(out_dir: Path = DEFAULT_OUT, runs_name: str = "runs",
                 readme: Path | None = None, reference: str = "BARK") -> str:
    out_dir = Path(out_dir)
    root = out_dir / runs_name
    runs, refused = load_runs(root)
    if runs.empty and not refused:
        raise SystemExit(f"no runs under {root}")
    plan = json.loads((root / "plan.json").read_text()) if (root / "plan.json").exists() else {}
    settings = (json.loads((root / "settings.json").read_text())
                if (root / "settings.json").exists() else {})
    curves = hv_curves(runs)
    curves.to_csv(out_dir / "hypervolume.csv", index=False)
    plot_hypervolume(_finished(curves, plan), refused, out_dir / "hypervolume.png")
    table = summary_table(runs, curves, refused, plan, reference)
    table.to_csv(out_dir / "summary.csv", index=False)
    benches = _order(set(table["benchmark"]))
    refs = {b: settings.get("reference_points", {}).get(b) or reference_point(b)
            for b in benches}
    text = summary_markdown(table, refs, reference)
    (out_dir / "summary.md").write_text(text)
    if readme is not None:
        embed(readme, "mo-study", text)
    return text


def compare_runs(base: Path, runs: Path, method: str, iteration: int = 30) -> str:
    """One method's final hypervolume in two run trees (``base``: an earlier version's runs
    kept aside, ``runs``: the current ones), paired by benchmark and seed: medians, the count
    of seeds where ``runs`` is higher / tied / lower and the sign test."""
    lines = [f"| benchmark | seeds | {method} before, median | now, median | now higher/tied/"
             "lower (sign test p) |", "|---|---|---|---|---|"]
    finals = {}
    for name, root in (("before", base), ("now", runs)):
        curves = hv_curves(load_runs(root)[0])
        curves = curves[(curves["method"] == method) & (curves["iteration"] == iteration)]
        finals[name] = curves.set_index(["benchmark", "seed"])["hypervolume"]
    both = pd.concat(finals, axis=1).dropna()
    for bench in _order(set(both.index.get_level_values(0))):
        b = both.loc[bench]
        hi, lo = int((b["now"] > b["before"]).sum()), int((b["now"] < b["before"]).sum())
        lines.append(f"| {bench} | {len(b)} | {_fmt(b['before'].median())} | "
                     f"{_fmt(b['now'].median())} | {hi}/{len(b) - hi - lo}/{lo} "
                     f"(p {_fmt(sign_test_p(hi, lo))}) |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--benchmarks", nargs="+", choices=MO_BENCHMARKS, default=None)
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--seeds", type=int, default=5, help="seeds first..first+k-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--method-seeds", nargs="+", default=None, metavar="M[@B]=K",
                        help="fewer seeds for a method (on one benchmark), e.g. Mobo=3")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--entmoot-time-limit", type=float, default=10.0,
                        help="seconds per Entmoot SCIP solve")
    parser.add_argument("--retry-unsupported", action="store_true",
                        help="delete UNSUPPORTED.txt markers and try those methods again")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per run (torch, OpenMP, BLAS); 0 leaves the libraries' "
                        "defaults")
    parser.add_argument("--in-process", action="store_true",
                        help="run each run in the calling process (by default each gets its "
                        "own, so a native crash ends only that run)")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    add_backend_arguments(parser)


def add_plot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-readme", action="store_true",
                        help="do not copy the table into README.md")
    parser.add_argument("--reference", default="BARK", choices=METHODS,
                        help="the method every other is paired with by seed")


def run_from_args(args) -> None:
    cfg = MOConfig(n_iterations=args.iterations, entmoot_time_limit=args.entmoot_time_limit,
                   out_dir=args.out_dir, threads=args.threads or None)
    if cfg.threads:
        # read when a run's process loads its libraries (LightGBM's OpenMP, BLAS)
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(cfg.threads)
    benches = list(args.benchmarks or MO_BENCHMARKS)
    overrides = parse_method_seeds(args.method_seeds)
    settings = check_settings(cfg, benches)
    print("MO study:", benches, args.methods, "seeds", args.seeds, "from", args.first_seed,
          "iterations", cfg.n_iterations, "overrides", args.method_seeds or "-", settings,
          flush=True)
    with study_backend(args) as n_jobs:
        run_study(benches, args.methods, args.seeds, cfg, n_jobs=n_jobs,
                  first_seed=args.first_seed, method_seeds=overrides,
                  retry_unsupported=args.retry_unsupported, isolate=not args.in_process)


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base", type=Path, required=True,
                        help="the earlier runs (a tree like results/mo/runs)")
    parser.add_argument("--runs", type=Path, default=DEFAULT_OUT / "runs")
    parser.add_argument("--method", default="BARK-NEHVI", choices=METHODS)
    parser.add_argument("--iteration", type=int, default=30)


def compare_from_args(args) -> None:
    print(compare_runs(args.base, args.runs, args.method, args.iteration))


def plots_from_args(args) -> None:
    print(make_summary(args.out_dir, readme=None if args.no_readme else REPO / "README.md",
                       reference=args.reference))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks mo")
    add_arguments(parser)
    run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    main()
