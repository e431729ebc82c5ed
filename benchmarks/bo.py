"""Bayesian-optimization study: BARK against BoFire's own strategies on the paper's benchmarks.

Methods (each a BoFire strategy behind ``tell``/``ask``):

- ``BARK``: ``bofire_bark.data_models.BARKStrategy`` with the paper's model settings
  (50 trees, 4 chains x 4 samples, thinning 100, burn-in 1000 on the first fit, chains
  continued afterwards), UCB kappa 1.96, SCIP with a 10 s limit per solve (the paper gave
  Gurobi 100 s; 10 s keeps 5 seeds x 8 benchmarks within a day on 2 cores, and
  ``results/bo/time_limit.md`` compares it with 30 s on the same seeds).
- ``Sobo``: BoFire's ``SoboStrategy`` with its defaults (SingleTaskGP, qLogNEI), except
  that purely categorical domains are not enumerated exhaustively (BoFire's default would
  enumerate 5^25 PestControl combinations and run out of memory); BoFire then uses
  BoTorch's alternating mixed optimizer, as it does by itself on mixed domains with more
  than 10 combinations.
- ``Random``: BoFire's ``RandomStrategy``.
- ``Entmoot``: BoFire's ``EntingStrategy`` (LightGBM trees + distance-based uncertainty)
  solved with SCIP through Pyomo's ``scip_direct`` (no Gurobi licence needed), same time
  limit as BARK.

A run is one (benchmark, method, seed): the same ``min(2D, 30)`` uniformly random initial
points for every method of a seed (BoFire's ``RandomStrategy(seed=seed)``), then
``n_iterations`` ask(1)/tell steps. Each row of ``runs/<benchmark>/<method>/seed<k>.csv`` is
one evaluated point: ``iteration`` (0 for the initial design), the inputs, ``y``,
``best`` (running minimum), ``fit_time`` (the ``tell`` that fitted the model used for this
point), ``acq_time`` (the ``ask``) and, for BARK, the MIP's status, gap and times, and the
acquisition value of the candidate (``ucb``) and of the solver's starting point (``start_ucb``;
standardized units), ``resumes``, the number of restarts before the row, and ``bound_clip``,
how far (relative to the range) a candidate lay outside a continuous input's bounds before it
was clipped for evaluation (solver round-off; more than 1e-6 is an error). The file
is rewritten after every iteration, so an interrupted run resumes from its saved points
(the model is refitted on all of them; for BARK the chains restart with a full burn-in).
Runs that a method cannot take (a constraint or feature type it refuses) are recorded as
``runs/<benchmark>/<method>/UNSUPPORTED.txt`` with BoFire's reason; runs that crash leave
``seed<k>.error.txt`` next to their partial CSV (removed once the run completes).

Runs are independent jobs dispatched with ``joblib.Parallel(n_jobs=...)`` (default 1), on
this machine's processes or, with ``--backend dask`` or ``ray``, over a cluster's workers
(``--scheduler ADDRESS``, else a local cluster; see ``_common.joblib_backend``).

    python -m benchmarks bo [--small] [--benchmarks ...] [--methods ...]
        [--seeds 5] [--iterations 40] [--time-limit 10] [--n-jobs 1] [--runs runs]
        [--solver scip] [--backend loky|dask|ray] [--scheduler ADDRESS]

``results/bo/runs`` was made with these defaults (the SCIP MIP, 10 s) and
``results/bo/runs_tl30`` with ``--time-limit 30 --runs runs_tl30``.

The default benchmarks are ``STUDY_BENCHMARKS``. The paper's hyperparameter-tuning benchmarks
(``TUNING_BENCHMARKS``: ``SVRBench`` and ``XGBoostMNIST``, see ``benchmarks.functions``; the
latter needs the ``lab`` extra's xgboost) run only when named, with the same protocol, e.g.
``python -m benchmarks bo --benchmarks SVRBench XGBoostMNIST``; leaving them out of the default
keeps what a bare ``python -m benchmarks bo`` runs (and the published ``results/bo``) as it
was. ``--small`` writes to
``out/small/bo/runs_small`` (git-ignored) unless ``--out-dir`` says otherwise.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from benchmarks._common import REPO, add_backend_arguments, study_backend
from benchmarks.functions import BENCHMARKS, TUNING_BENCHMARKS, make_benchmark

DEFAULT_OUT = REPO / "results" / "bo"
# --small's default: outside the tracked results/ (/out/ is git-ignored), so a spot check
# never rewrites the published runs
SMALL_OUT = REPO / "out" / "small" / "bo"
METHODS = ("BARK", "Sobo", "Random", "Entmoot")
# The order the study runs them in (mixed spaces first, as in the paper's main figures).
STUDY_BENCHMARKS = ("TreeFunctionCat", "DiscreteAckley", "PestControl", "MixedConstrained",
                    "TreeFunction", "DiscreteRosenbrock", "Hartmann6", "StyblinskiTang10")
SMALL_BENCHMARKS = ("DiscreteAckley", "MixedConstrained")
# Opt-in by name (see the module docstring): the paper's SVRBench and XGBoostMNIST.
TUNING_STUDY_BENCHMARKS = tuple(TUNING_BENCHMARKS)

logger = logging.getLogger(__name__)


class Unsupported(Exception):
    """The method refuses the benchmark's domain (BoFire's validation says why)."""


@dataclass
class BOConfig:
    """Settings of one study; ``runs`` names the output folder's runs subfolder."""

    n_iterations: int = 40
    time_limit: float = 10.0
    n_trees: int = 50
    n_chains: int = 4
    n_samples: int = 4
    thinning: int = 100
    burn_in: int = 1000
    n_start_points: int = 2000
    # BARK's acquisition search: the committed study (results/bo/runs) ran the SCIP MIP, so
    # that is the study's default; bo_rerun runs the grid branch-and-bound ("auto")
    solver: str = "scip"
    # BARK's split-feature prior ("uniform": the paper's; "dirichlet": see split_prior.py)
    split_prior: str = "uniform"
    # Grid search: go on past time_limit up to max_time while the gap is above extend_gap
    # (None: stop at time_limit, the committed studies' setting and BARKStrategy's default)
    max_time: float | None = None
    extend_gap: float = 0.15
    # which point of the candidate's grid cell (SearchSettings.tie_break)
    tie_break: str = "none"
    # BARK's noise prior (BARKSettings.noise_prior)
    noise_prior: str = "inverse_gamma"
    # BARK's smooth share (BARKSettings.smooth_share, smooth_categories) by a rule over the
    # domain (smooth_settings): "off", "continuous" or "all"
    smooth: str = "off"
    # BARK's acquisition function, by BoFire's type name ("qUCB": the library's default,
    # beta 3.8416; "qLogNEI": Sobo's rule)
    acquisition: str = "qUCB"
    out_dir: Path = field(default_factory=lambda: DEFAULT_OUT)
    runs: str = "runs"

    def run_dir(self, bench: str, method: str) -> Path:
        return Path(self.out_dir) / self.runs / bench / method


def smooth_settings(rule: str, domain) -> dict:
    """BARKSettings fields of a smooth-share rule on ``domain``: "off" none; "continuous" the
    share over the continuous inputs where there is one, over the categorical ones only where
    there is none (the rule the chemistry suite suggested, docs/results/chemistry.md); "all"
    the share over both wherever either exists."""
    from bofire.data_models.features.api import CategoricalInput, ContinuousInput

    if rule == "off":
        return {}
    continuous = any(isinstance(f, ContinuousInput) and f.bounds[1] > f.bounds[0]
                     for f in domain.inputs.get())
    categorical = any(isinstance(f, CategoricalInput) and len(f.categories) > 1
                      for f in domain.inputs.get())
    categories = categorical and (rule == "all" or not continuous)
    if not (continuous or categories):
        return {}
    return {"smooth_share": True, "smooth_categories": categories}


def n_initial(bench) -> int:
    return min(2 * len(bench.domain.inputs), 30)


def initial_design(bench, seed: int) -> pd.DataFrame:
    """``min(2D, 30)`` uniformly random feasible points, the same for every method."""
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy

    X = strategies.map(RandomStrategy(domain=bench.domain, seed=seed)).ask(n_initial(bench))
    return X[bench.domain.inputs.get_keys()].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Entmoot with SCIP: a Pyomo solver name that takes the legacy keywords Entmoot passes
# --------------------------------------------------------------------------------------------

ENTMOOT_SOLVER = "bark_bench_scip"


def _register_entmoot_scip() -> None:
    """Entmoot creates its solver as ``SolverFactory(name, solver_io=..., manage_env=...,
    options=...)``, which Pyomo's ``scip_direct`` (the open solver here) does not accept.
    This adapter accepts those keywords and solves with ``scip_direct``."""
    import pyomo.environ as pyo
    from pyomo.opt import SolverFactory

    if ENTMOOT_SOLVER in SolverFactory._cls:
        return

    class _ScipForEntmoot:
        def __init__(self, solver_io=None, manage_env=False, options=None, **kwargs):
            self.options = dict(options or {})

        def available(self, exception_flag=True):
            return True

        def solve(self, model, tee=False, **kwargs):
            inner = pyo.SolverFactory("scip_direct")
            opts = dict(self.options)
            limit = opts.pop("time_limit", None)
            return inner.solve(model, tee=tee, timelimit=limit, load_solutions=True)

    SolverFactory.register(ENTMOOT_SOLVER, doc="scip_direct for Entmoot")(_ScipForEntmoot)


# --------------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------------


def strategy_spec(method: str, domain, seed: int, cfg: BOConfig):
    """The BoFire data model of ``method``; raises ``Unsupported`` when it refuses the domain."""
    from bofire.data_models.strategies.api import (
        BotorchOptimizer,
        EntingStrategy,
        RandomStrategy,
        SoboStrategy,
    )
    from pydantic import ValidationError

    from bofire_bark.data_models import BARKSettings, BARKStrategy

    try:
        if method == "BARK":
            settings = BARKSettings(n_trees=cfg.n_trees, n_chains=cfg.n_chains,
                                    n_samples=cfg.n_samples, thinning=cfg.thinning,
                                    burn_in=cfg.burn_in, split_prior=cfg.split_prior,
                                    noise_prior=cfg.noise_prior,
                                    **smooth_settings(cfg.smooth, domain))
            rule = {} if cfg.acquisition == "qUCB" else {
                "acquisition_function": {"type": cfg.acquisition}}
            return BARKStrategy(domain=domain, seed=seed, surrogate_specs=settings, **rule,
                                time_limit=cfg.time_limit, n_start_points=cfg.n_start_points,
                                solver=cfg.solver, max_time=cfg.max_time,
                                extend_gap=cfg.extend_gap, tie_break=cfg.tie_break)
        if method == "Sobo":
            return SoboStrategy(domain=domain, seed=seed, acquisition_optimizer=BotorchOptimizer(
                prefer_exhaustive_search_for_purely_categorical_domains=False))
        if method == "Random":
            return RandomStrategy(domain=domain, seed=seed)
        if method == "Entmoot":
            _register_entmoot_scip()
            return EntingStrategy(domain=domain, seed=seed, solver_name=ENTMOOT_SOLVER,
                                  solver_verbose=False,
                                  solver_params={"solver_options": {
                                      "time_limit": cfg.time_limit}})
    except ValidationError as err:
        msgs = "; ".join(e["msg"] for e in err.errors())
        raise Unsupported(msgs) from err
    raise ValueError(f"unknown method {method!r}; choose from {METHODS}")


def _check_entmoot_discrete(domain) -> None:
    """Entmoot asserts at fit time that discrete values are consecutive integers."""
    from bofire.data_models.features.api import DiscreteInput

    for feat in domain.inputs.get(DiscreteInput):
        vals = np.sort(np.asarray(feat.values, dtype=float))
        if not (np.all(vals == np.round(vals)) and np.all(np.diff(vals) == 1)):
            raise Unsupported(
                f"Entmoot requires discrete values to be consecutive integers; "
                f"{feat.key} takes {[float(v) for v in vals]}")


def make_strategy(method: str, domain, seed: int, cfg: BOConfig):
    import bofire.strategies.api as strategies

    import bofire_bark  # noqa: F401  (registers BARK with BoFire)

    spec = strategy_spec(method, domain, seed, cfg)
    if method == "Entmoot":
        _check_entmoot_discrete(domain)
    return strategies.map(spec)


# --------------------------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------------------------


def run_path(cfg: BOConfig, bench: str, method: str, seed: int) -> Path:
    return cfg.run_dir(bench, method) / f"seed{seed}.csv"


def read_run(path: Path) -> pd.DataFrame:
    # keep category strings such as "none" as they are
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def beat_start(ucb, start_ucb):
    """Whether the MIP solver's candidate beat its starting point by more than round-off."""
    ucb, start_ucb = np.asarray(ucb, dtype=float), np.asarray(start_ucb, dtype=float)
    return (ucb - start_ucb) > 1e-9 * np.maximum(1.0, np.abs(start_ucb))


# a MIP solver's feasibility tolerance (Entmoot's SCIP returned 1 + 7e-8 on a [0, 1] input)
BOUND_TOLERANCE = 1e-6


def to_bounds(X: pd.DataFrame, domain) -> tuple[pd.DataFrame, float]:
    """Clip continuous inputs that a solver left outside their bounds by round-off only.

    Returns the clipped candidates and the largest clip relative to the input's range, which the
    runner records; a larger violation is the method's error and raises, naming the input.
    """
    from bofire.data_models.features.api import ContinuousInput

    X = X.copy()
    worst = 0.0
    for feat in domain.inputs.get(ContinuousInput):
        lo, hi = feat.bounds
        x = X[feat.key].to_numpy(dtype=float)
        excess = np.maximum(lo - x, x - hi).max() / max(hi - lo, 1e-12)
        if excess > BOUND_TOLERANCE:
            raise ValueError(f"candidate input {feat.key} = {x.tolist()} lies outside its bounds "
                             f"[{lo}, {hi}] by more than {BOUND_TOLERANCE:g} of the range")
        worst = max(worst, float(excess))
        X[feat.key] = np.clip(x, lo, hi)
    return X, worst


class Step(NamedTuple):
    """One ask(1)/tell iteration of a BO run (``tell_ask``)."""

    candidate: pd.DataFrame  # what ask returned (the predictions included)
    X: pd.DataFrame  # its inputs, within bounds
    clip: float  # to_bounds' largest clip
    fit_time: float  # the tell (the fit), s
    acq_time: float  # the ask, s


def tell_ask(strategy, new: pd.DataFrame, keys: list[str], domain) -> Step:
    """Tell ``strategy`` the ``new`` rows, ask one candidate and clip it into bounds, timing the
    tell and the ask apart (the runs' ``fit_time`` and ``acq_time``)."""
    t0 = time.perf_counter()
    strategy.tell(new)
    t1 = time.perf_counter()
    cand = strategy.ask(1)
    t2 = time.perf_counter()
    X, clip = to_bounds(cand[keys].reset_index(drop=True), domain)
    return Step(cand, X, clip, t1 - t0, t2 - t1)


def resume_count(rows: list[dict], start_it: int) -> int:
    """The restarts behind the rows to come: the saved count, plus one when this call resumes a
    run past its initial design (a resumed run refits from scratch, fresh burn-in, so its later
    points differ from an uninterrupted run's)."""
    return max((int(r["resumes"]) for r in rows if pd.notna(r.get("resumes"))),
               default=0) + (start_it > 1)


def _save(rows: list[dict], path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    pd.DataFrame(rows).to_csv(tmp, index=False)
    os.replace(tmp, path)


def run_one(bench_name: str, method: str, seed: int, cfg: BOConfig) -> str:
    """Run (or resume) one BO run; returns ``"done"``, ``"unsupported"`` or ``"error"``."""
    warnings.filterwarnings("ignore")
    logging.getLogger("pyomo").setLevel(logging.ERROR)
    bench = make_benchmark(bench_name)
    domain = bench.domain
    keys = domain.inputs.get_keys()
    out = cfg.run_dir(bench_name, method)
    out.mkdir(parents=True, exist_ok=True)
    path = run_path(cfg, bench_name, method, seed)
    n_init = n_initial(bench)
    rows: list[dict] = read_run(path).to_dict("records") if path.exists() else []
    if rows and max(r["iteration"] for r in rows) >= cfg.n_iterations:
        return "done"
    try:
        strategy = make_strategy(method, domain, seed, cfg)
    except Unsupported as err:
        (out / "UNSUPPORTED.txt").write_text(f"{method} cannot take {bench_name}: {err}\n")
        return "unsupported"
    try:
        import torch

        torch.manual_seed(seed)
        if not rows:
            X0 = initial_design(bench, seed)
            y0 = bench.f(X0)["y"].to_numpy()
            best = np.minimum.accumulate(y0)
            for i in range(n_init):
                rows.append({"iteration": 0, **X0.iloc[i].to_dict(), "y": y0[i],
                             "best": best[i], "fit_time": np.nan, "acq_time": np.nan})
            _save(rows, path)
        experiments = pd.DataFrame(rows)[keys + ["y"]]
        experiments["valid_y"] = 1
        new = experiments
        start_it = max(r["iteration"] for r in rows) + 1
        resumes = resume_count(rows, start_it)
        for it in range(start_it, cfg.n_iterations + 1):
            step = tell_ask(strategy, new, keys, domain)
            X = step.X
            y = float(bench.f(X)["y"].iloc[0])
            row = {"iteration": it, **X.iloc[0].to_dict(), "y": y, "resumes": resumes,
                   "bound_clip": step.clip, "best": min(rows[-1]["best"], y),
                   "fit_time": step.fit_time, "acq_time": step.acq_time}
            if method == "BARK" and getattr(strategy, "last_results", None):
                r = strategy.last_results[-1]
                # ucb vs start_ucb: whether the solver improved on its starting point
                row.update({"mip_status": str(r.status), "mip_gap": float(r.gap),
                            "mip_solve_time": float(r.solve_time),
                            "mip_build_time": float(r.build_time), "ucb": float(r.ucb),
                            "start_ucb": float(r.incumbent_ucb)})
            last_fit = getattr(getattr(strategy, "surrogate", None), "last_fit", None)
            if method == "BARK" and last_fit is not None:
                # the fit behind this point: sweeps per chain, worst R-hat, whether it warned
                row.update({"fit_sweeps": int(last_fit.sweeps),
                            "fit_rhat": max(last_fit.rhat.values(), default=float("nan")),
                            "fit_warned": bool(last_fit.warned)})
            rows.append(row)
            _save(rows, path)
            new = X.assign(y=y, valid_y=1)
        (out / f"seed{seed}.error.txt").unlink(missing_ok=True)  # an earlier failure, now resumed
        return "done"
    except Exception:  # keep the study going; the partial CSV stays and resumes later
        (out / f"seed{seed}.error.txt").write_text(traceback.format_exc())
        logger.exception("run %s/%s/seed%d failed", bench_name, method, seed)
        return "error"


def run_study(benchmarks, methods, seeds, cfg: BOConfig, n_jobs: int = 1,
              verbose: bool = True) -> list[tuple[str, str, int, str]]:
    """All runs, seed-major (every benchmark and method of seed 0 first), through joblib."""
    from joblib import Parallel, delayed

    jobs = [(b, m, s) for s in seeds for b in benchmarks for m in methods]

    def one(b, m, s):
        t = time.perf_counter()
        status = run_one(b, m, s, cfg)
        if verbose:
            print(f"{b:18s} {m:8s} seed {s}: {status} ({time.perf_counter() - t:.0f} s)",
                  flush=True)
        return (b, m, s, status)

    return Parallel(n_jobs=n_jobs)(delayed(one)(b, m, s) for b, m, s in jobs)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def small_config(out_dir: Path) -> BOConfig:
    return BOConfig(n_iterations=5, time_limit=10.0, n_chains=2, n_samples=2, thinning=20,
                    burn_in=100, n_start_points=200, out_dir=out_dir, runs="runs_small")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--small", action="store_true",
                        help="2 benchmarks, 2 seeds, 5 iterations, BARK with a reduced MCMC "
                        "budget and a 10 s MIP limit (written to out/small/bo/runs_small/)")
    parser.add_argument("--benchmarks", nargs="+", default=None,
                        choices=sorted(BENCHMARKS) + sorted(TUNING_STUDY_BENCHMARKS),
                        help=f"default {' '.join(STUDY_BENCHMARKS)}; the tuning benchmarks "
                        f"{' '.join(TUNING_STUDY_BENCHMARKS)} run only when named")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..k-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--time-limit", type=float, default=10.0,
                        help="seconds per MIP solve (BARK and Entmoot)")
    parser.add_argument("--out-dir", type=Path, default=None,
                        help="default results/bo; with --small out/small/bo")
    parser.add_argument("--runs", default="runs",
                        help="runs subfolder of --out-dir (runs_tl30 holds the 30 s study)")
    parser.add_argument("--solver", default="scip",
                        help="BARK's acquisition search (scip: as in results/bo/runs; auto: "
                        "the grid branch-and-bound, see bo_rerun)")
    add_backend_arguments(parser)


def out_dir_from_args(args) -> Path:
    """``--out-dir`` if given, else ``results/bo`` (``out/small/bo`` with ``--small``)."""
    if args.out_dir is not None:
        return Path(args.out_dir)
    return SMALL_OUT if args.small else DEFAULT_OUT


def config_from_args(args) -> tuple[BOConfig, list[str], list[int]]:
    out_dir = out_dir_from_args(args)
    if args.small:
        cfg = small_config(out_dir)
        benches = list(args.benchmarks or SMALL_BENCHMARKS)
        seeds = list(range(args.first_seed, args.first_seed + min(args.seeds, 2)))
        return cfg, benches, seeds
    cfg = BOConfig(n_iterations=args.iterations, time_limit=args.time_limit,
                   out_dir=out_dir, runs=args.runs, solver=args.solver)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    return cfg, list(args.benchmarks or STUDY_BENCHMARKS), seeds


def check_settings(cfg: BOConfig, ignore: tuple[str, ...] = ()) -> dict:
    """Record the study's settings in ``<runs>/settings.json`` on first use and refuse to add
    runs made with other settings to it (``n_iterations`` may grow: runs resume). ``ignore``:
    fields that vary between the folder's methods (they name their own run folders)."""
    import json

    settings = {k: v for k, v in asdict(cfg).items()
                if k not in ("out_dir", "n_iterations", *ignore)}
    path = Path(cfg.out_dir) / cfg.runs / "settings.json"
    if path.exists():
        saved = json.loads(path.read_text())
        saved.setdefault("solver", "scip")  # folders written before the field: the SCIP MIP
        if "split_prior" not in ignore:
            saved.setdefault("split_prior", "uniform")  # before the field: the paper's prior
        saved.setdefault("max_time", None)  # before the fields: stopped at time_limit
        saved.setdefault("extend_gap", 0.15)
        saved.setdefault("tie_break", "none")  # before the field: the search's point
        saved.setdefault("noise_prior", "inverse_gamma")  # before the field: BART's prior
        saved.setdefault("smooth", "off")  # before the field: no smooth share
        saved.setdefault("acquisition", "qUCB")  # before the field: the library's default
        if saved != settings:
            differ = sorted(k for k in settings if saved.get(k) != settings[k])
            raise SystemExit(
                f"{path} was written with other settings ({', '.join(differ)}: "
                f"{[saved.get(k) for k in differ]} here {[settings[k] for k in differ]}); "
                "use another --out-dir to keep studies apart")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings, indent=1) + "\n")
    return settings


def run_from_args(args) -> None:
    cfg, benches, seeds = config_from_args(args)
    settings = check_settings(cfg)
    print("BO study:", benches, args.methods, "seeds", seeds, "iterations", cfg.n_iterations,
          settings, flush=True)
    with study_backend(args) as n_jobs:
        run_study(benches, args.methods, seeds, cfg, n_jobs=n_jobs)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks bo")
    add_arguments(parser)
    run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    main()
