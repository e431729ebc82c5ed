"""The chemistry suite (issue 35): BARK and its levers against BoFire's Sobo and random picks on
five chemistry problems, paired by seed, from one resumable command.

Problems (each run by its own study module, through that module's public functions):

- ``max`` (``max_phases``): pick the MAX-phase compound of highest bulk modulus among 402, one
  descriptor input; 30 random compounds first, then one pick per iteration, 60 iterations. The
  seeds are the informative ones only: the k-th seed of the suite is the k-th seed (from
  ``--first-seed`` on) whose 30 starting compounds lack the best (16 of 0-19). Metric: the
  iteration at which the run first holds the best compound (lower is better; ``inf``: not
  by iteration 60).
- ``crosscoupling`` (``chem_bo``): BoFire's ``CrossCoupling`` emulator, its yield maximized;
  10 random points, 20 iterations. Metric: the best yield found (higher is better).
- ``photoswitch`` (``chem_bo``): the 391 photoswitch molecules BoFire ships, the E-isomer
  pi-pi* wavelength maximized over the library; 10 random molecules, 20 picks. BARK splits on
  ``FingerprintsFragments()``; Sobo is BoFire's ``TanimotoGPSurrogate`` on the same features
  (BoFire's tutorial). Metric: the best wavelength found, nm (higher is better).
- ``reaction_synergy`` (``interaction``): ``ReactionSynergy``, whose best (solvent, catalyst)
  pair shows only as an interaction; 8 random points drawn without that pair (``no_pair``),
  20 iterations, noisy yields (sd 1). Sobo refuses the nonlinear heat budget and runs without
  it (the budget is slack at the optimum, 100); BARK and random keep it. Metric: the best true
  (noiseless) yield among the points measured (higher is better).
- ``mixture`` (defined here, ``Mixture``; held out: no default was tuned on it): six
  ingredient fractions summing to one (``LinearEqualityConstraint``), one to three of them
  used (``NChooseKConstraint``), a cost to minimize (deterministic, see ``Mixture``); 12
  random feasible points (BoFire's ``RandomStrategy``), 20 iterations, run by
  ``chem_bo.run_one``. Metric: the lowest cost found (lower is better; the optimum is
  ``MIXTURE_OPTIMUM``).

Methods: ``bark`` (``BARKStrategy`` with the library's defaults, as each module sets it up),
the lever arms of ``BARK_ARMS`` (each is ``bark`` plus a few BARKStrategy keywords:
``bark_lognormal``, ``noise_prior="lognormal"``; ``bark_logei``, ``qLogNEI``; ``bark_qei``,
``qEI``; ``bark_ucb_beta9``, qUCB with beta 9, kappa 3; ``bark_far``, the candidate moved
within its grid cell to the point farthest from the data; ``bark_deep``, the depth prior's
exponent beta 1 instead of 2; ``bark_uniform``, the paper's uniform split prior), ``sobo``
(BoFire's ``SoboStrategy`` with its defaults: a GP and qLogNEI; Tanimoto on the
photoswitches) and ``random``. A new lever is
one line of ``BARK_ARMS``. ``--methods`` defaults to ``bark sobo random bark_lognormal
bark_logei``.

Protocol: a job is one (problem, method, seed), its rows under
``<out>/runs/<problem>/<method>/seed<k>/`` in its module's own format (appended as each point
is made; ``settings.json`` holds the arm's keywords, and a job whose arm has since changed is
refused). A finished job is skipped, a partial one resumes from its saved rows (BARK's
chains then restart with a full burn-in, as the modules do). Jobs go seed by seed, so
the first seeds of every problem and method finish first. Every method of a seed starts from
the same points. ``--backend dask|ray`` sends the jobs to a cluster (``_common``); a job that
fails writes ``error.txt`` in its folder and the others go on.

    python -m benchmarks.chem_suite run [--out results/chem_suite] [--problems ...]
        [--methods ...] [--seeds N] [--first-seed 0] [--iterations N] [--n-jobs 1]
        [--backend loky|dask|ray] [--scheduler ADDRESS]
    python -m benchmarks.chem_suite summary [--out results/chem_suite] [--iterations N]

``--seeds`` defaults to each problem's (16 on MAX, 8 elsewhere), ``--iterations`` likewise.
``summary`` writes ``summary.md``, ``summary.csv`` (per problem and method) and
``per_run.csv``: per problem and method the finished seeds, the metric's median and
quartiles, and paired by seed against ``bark`` and against ``sobo``: better / tied / worse
and the two-sided sign test on the untied seeds; then the issue's check (BARK's median at or
above Sobo's on at least 4 of the 5 problems, significantly below on none).
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import REPO, add_backend_arguments, publish, study_backend
from benchmarks.plots import sign_test_p

DEFAULT_OUT = REPO / "results" / "chem_suite"

# the smooth share with the categories in it and BoFire's log-normal noise prior, under qLogNEI
# (arm_changes copies an arm's dicts, so arms may share these)
_COMBO_LN = {"smooth_share": True, "smooth_categories": True, "noise_prior": "lognormal"}
_COMBO_LN_NEI = {"surrogate_specs": _COMBO_LN, "acquisition_function": {"type": "qLogNEI"}}
_COMBO_LN_B9 = {"surrogate_specs": _COMBO_LN, "acquisition_function": {"type": "qUCB", "beta": 9.0}}

# method -> BARKStrategy keywords on top of the module's "bark" (``surrogate_specs``: settings
# merged into its own). One line per lever.
BARK_ARMS: dict[str, dict] = {
    "bark": {},
    "bark_lognormal": {"surrogate_specs": {"noise_prior": "lognormal"}},
    "bark_logei": {"acquisition_function": {"type": "qLogNEI"}},
    "bark_qei": {"acquisition_function": {"type": "qEI"}},
    "bark_ucb_beta9": {"acquisition_function": {"type": "qUCB", "beta": 9.0}},
    "bark_far": {"acquisition_optimizer": {"tie_break": "farthest"}},
    # deeper trees (depth prior alpha (1 + d)^-1 instead of ^-2): a kernel whose correlation
    # falls faster away from the data, so untried regions keep more of their prior variance
    "bark_deep": {"surrogate_specs": {"beta": 1.0}},
    # deep trees with the smooth share and the log-normal noise prior: on CrossCoupling deep
    # trees split the conditions within a base (benchmarks/cc_fit.py), the share carries the
    # continuous trend across bases
    "bark_deep_share_ln": {"surrogate_specs": {"beta": 1.0, "smooth_share": True,
                                               "noise_prior": "lognormal"}},
    # the paper's split prior (every input equally likely) instead of the sparse Dirichlet
    "bark_uniform": {"surrogate_specs": {"split_prior": "uniform"}},
    # a smooth share of the kernel over the continuous inputs (engine.smooth), with BoFire's
    # log-normal noise prior as its GP part has, and without
    "bark_share_ln": {"surrogate_specs": {"smooth_share": True, "noise_prior": "lognormal"}},
    "bark_share": {"surrogate_specs": {"smooth_share": True}},
    # ... with the categorical inputs in the smooth part too (a product kernel over the
    # categories' one-hot or descriptor encodings, as BoFire's GP)
    "bark_share_cat_ln": {"surrogate_specs": {"smooth_share": True, "smooth_categories": True,
                                              "noise_prior": "lognormal"}},
    "bark_share_cat": {"surrogate_specs": {"smooth_share": True, "smooth_categories": True}},
    # bark_share_ln with finer bins (the smooth part's resolution: 1/128 of each range)
    "bark_share_ln_b128": {"surrogate_specs": {"smooth_share": True, "noise_prior": "lognormal",
                                               "smooth_bins": 128}},
    # bark_share_cat_ln's settings once plain categorical inputs stopped being one-hot in the
    # smooth part and became "same combination or not" (engine.smooth.SEPARATE): its own
    # name, as bark_share_cat_ln's ReactionSynergy rows (plain categories) are of the one-hot
    # version; on MAX, the photoswitches and CrossCoupling (descriptors) the two are one model
    "bark_share_combo_ln": {"surrogate_specs": _COMBO_LN},
    # bark_share_ln with the candidate moved within its grid cell to where the smooth part's
    # continuous extension scores best (tie_break="smooth"): sub-bin resolution, and the
    # bounds when the response keeps rising towards them
    "bark_share_ln_tie": {"surrogate_specs": {"smooth_share": True, "noise_prior": "lognormal"},
                          "acquisition_optimizer": {"tie_break": "smooth"}},
    # bark_share_combo_ln with qUCB(beta=9) (kappa 3): an untried (solvent, catalyst) pair's
    # larger sd (engine.smooth.SEPARATE) then outweighs the best tried pair's mean (also run
    # on CrossCoupling and the mixture, beside the qLogNEI arm below)
    "bark_share_combo_ln_b9": _COMBO_LN_B9,
    # ... and with Sobo's rule, qLogNEI: at tried pairs the improvement left is small, at an
    # untried one its sd makes it large; on CrossCoupling this model fits as Sobo's GP does
    # (benchmarks/cc_fit.py), so the arm there is Sobo's model and rule beside the forest
    "bark_share_combo_ln_nei": _COMBO_LN_NEI,
    # the same keywords while qLogNEI's incumbent was a joint draw of each sample's latent
    # function at the measured points (commits 3dac93a-dd09d50, then reverted: no effect on
    # four problems, later on MAX): its own name, as the rows above are of the best-mean
    # incumbent (their ``code`` column)
    "bark_share_combo_ln_neid": _COMBO_LN_NEI,
    # ... with the drawn incumbent and the smooth part's lengths fitted with the categorical
    # inputs in the GP (surrogate.smooth_kernel; on ReactionSynergy the plain solvent and
    # catalyst, one-hot), where before they were fitted on the continuous inputs alone
    "bark_share_combo_ln_nei_len": _COMBO_LN_NEI,
    # ... the lengths with the best-mean incumbent (the draw reverted): the library's
    # bark_share_combo_ln_nei since then, its own name for the rows of that version
    "bark_share_combo_ln_nei_lenm": _COMBO_LN_NEI,
    # bark_share_combo_ln_b9 since the smooth part's lengths are fitted beside the categories
    # (the rows above are of the lengths fitted on the continuous inputs alone)
    "bark_share_combo_ln_b9_len": _COMBO_LN_B9,
    # bark_share_combo_ln_nei once the start's coordinate ascent also moves pairs of features
    # within a linear equality (optimize.incumbent.pair_moves): before, under the mixture's
    # sum-to-one no single move was feasible and the start was the best random draw
    "bark_share_combo_ln_nei_pair": _COMBO_LN_NEI,
    # ... and the incumbent point taken as known: conditioned on 30 times as a pending point
    # (experiment: commit 375c192's environment switch BARK_NEI_EXACT=30, since removed)
    "bark_share_combo_ln_nei_pairx": _COMBO_LN_NEI,
    # ... the incumbent point taken as known in the library's qLogNEI (rules.Rule.prepare:
    # every sample conditioned on its latent value there, noise 1e-4 sigma^2), pair moves in
    "bark_share_combo_ln_nei_known": _COMBO_LN_NEI,
    # ... with 128 bins of the smooth part's continuous coordinates (default 32): on the
    # mixture the converged runs stopped 0.001 above the optimum, where Sobo's reach it
    "bark_share_combo_ln_nei_b128": {**_COMBO_LN_NEI, "surrogate_specs": {
        **_COMBO_LN, "smooth_bins": 128}},
    # bark_share_combo_ln_nei_known with the candidate moved within its grid cell to where the
    # smooth part's continuous extension scores best (tie_break="smooth"): the mixture's
    # converged runs and CrossCoupling's picks sit at a cell's centre, Sobo's at the optimum
    # or on a bound
    "bark_share_combo_ln_nei_known_tie": {**_COMBO_LN_NEI,
                                          "acquisition_optimizer": {"tie_break": "smooth"}},
    # the smooth share over the continuous inputs only (categories left to the trees) under
    # qLogNEI: one response over the conditions shared by every (solvent, catalyst) pair, as
    # the sum part of BoFire's mixed GP has it (docs/results/chemistry.md, synergy_fit --gp)
    "bark_share_ln_nei": {"surrogate_specs": {"smooth_share": True, "noise_prior": "lognormal"},
                          "acquisition_function": {"type": "qLogNEI"}},
    # today's defaults (and the smooth share under qUCB) with the start's pair moves: on the
    # mixture their starts were the best random draws (the rows of "bark", "bark_share_ln")
    "bark_pair": {},
    "bark_share_ln_pair": {"surrogate_specs": {"smooth_share": True, "noise_prior": "lognormal"}},
}
# (``runs/reaction_synergy/bark_share_combo_ln_nei_shared``: bark_share_combo_ln_nei_known
# with ``smooth_shared=0.7``, a smooth part over the conditions shared by every pair beside
# the per-pair product, run at commit dc653b5 and reverted; read here like any other arm.)
# (``runs/max/bark_smooth``: the arm of branch ``smooth-kernel``, whose engine fits a smooth
# share of the kernel; run from a checkout of that branch, read here like any other arm.)
BASELINES = ("sobo", "random")
METHODS = (*BARK_ARMS, *BASELINES)
DEFAULT_METHODS = ("bark", "sobo", "random", "bark_lognormal", "bark_logei")
# the check: BARK against Sobo
DONE_WHEN = {"problems": 4, "alpha": 0.05}


def arm_changes(method: str, extra: dict | None = None) -> dict | None:
    """The BARKStrategy keywords of ``method`` (None for a baseline), with ``extra`` on top
    (``surrogate_specs`` and ``acquisition_optimizer`` merged; tests use it for tiny
    settings)."""
    if method not in BARK_ARMS:
        if method not in BASELINES:
            raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
        return None
    changes = {**BARK_ARMS[method], **(extra or {})}
    specs = {**BARK_ARMS[method].get("surrogate_specs", {}),
             **(extra or {}).get("surrogate_specs", {})}
    if specs:
        changes["surrogate_specs"] = specs
    search = {**BARK_ARMS[method].get("acquisition_optimizer", {}),
              **(extra or {}).get("acquisition_optimizer", {})}
    if search:
        changes["acquisition_optimizer"] = search
    return changes


def split_changes(changes: dict | None) -> tuple[dict, dict]:
    """(surrogate settings, other BARKStrategy keywords) of an arm's changes."""
    rest = dict(changes or {})
    return dict(rest.pop("surrogate_specs", {})), rest


# --------------------------------------------------------------------------------------------
# The held-out mixture problem
# --------------------------------------------------------------------------------------------

INGREDIENTS = tuple(f"ingredient_{i}" for i in range(1, 7))
PRICE = np.array([1.0, 0.4, 2.5, 1.6, 0.8, 3.0])
STRENGTH = np.array([0.6, 0.2, 0.9, 0.5, 0.3, 1.0])
# Scheffe blending terms (0-based ingredient pairs): 2 and 5 reinforce each other, a little of
# 3 (dear) helps 5 further, 1 and 3 work against each other, 4 and 6 mildly together
BLEND = {(1, 4): 1.2, (2, 4): 0.8, (0, 2): -0.8, (3, 5): 0.6}
TARGET = 0.7
SHORTFALL = 20.0
MAX_USED = 3
# mixture_optimum(): ingredients 2, 3 and 5 at 0.420, 0.095, 0.486; the best pair (2 and 5)
# costs 1.0486, ingredient 1 alone 1.2
MIXTURE_OPTIMUM = 1.008571
MIXTURE_TOL = 1e-4  # sum to one within this; an ingredient above 1e-6 counts as used


def mixture_cost(X: np.ndarray) -> np.ndarray:
    """Cost of rows of fractions (columns in ``INGREDIENTS`` order): raw materials plus
    ``SHORTFALL`` times the squared shortfall of the strength below ``TARGET``."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    strength = X @ STRENGTH
    for (i, j), b in BLEND.items():
        strength = strength + b * X[:, i] * X[:, j]
    return X @ PRICE + SHORTFALL * np.maximum(0.0, TARGET - strength) ** 2


def mixture_optimum(n_starts: int = 20, seed: int = 0) -> tuple[np.ndarray, float]:
    """``MIXTURE_OPTIMUM`` and its fractions: the best of ``n_starts`` SLSQP solves on the
    simplex of every set of ``MAX_USED`` ingredients (smaller sets are its faces)."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    best = (None, np.inf)
    for used in itertools.combinations(range(len(INGREDIENTS)), MAX_USED):
        def cost(z, used=used):
            x = np.zeros(len(INGREDIENTS))
            x[list(used)] = z
            return float(mixture_cost(x)[0])

        for _ in range(n_starts):
            r = minimize(cost, rng.dirichlet(np.ones(MAX_USED)), method="SLSQP",
                         bounds=[(0.0, 1.0)] * MAX_USED,
                         constraints=[{"type": "eq", "fun": lambda z: z.sum() - 1.0}])
            if r.success and r.fun < best[1]:
                x = np.zeros(len(INGREDIENTS))
                x[list(used)] = r.x
                best = (x, float(r.fun))
    return best


class Mixture:
    """A six-ingredient formulation, ``chem_bo``'s problem interface (``run_one`` runs it).

    Fractions in [0, 1] summing to one, one to ``MAX_USED`` ingredients used; minimize
    ``cost = PRICE . x + 20 max(0, 0.7 - strength)^2`` with the Scheffe quadratic blend
    ``strength = STRENGTH . x + sum b_ij x_i x_j`` (``BLEND``). The cheap ingredients 2 and 5
    reach the strength only together, and a little of the dear 3 on top is cheaper still
    (the optimum, 1.0086); ingredient 1 alone meets it at 1.2, a local optimum a main-effects
    model would stop at. Deterministic: no noise.
    """

    minimize = True
    keys = list(INGREDIENTS)
    best_y = MIXTURE_OPTIMUM

    def domain(self, measured: set | None = None):
        from bofire.data_models.constraints.api import (
            LinearEqualityConstraint,
            NChooseKConstraint,
        )
        from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
        from bofire.data_models.features.api import ContinuousInput, ContinuousOutput
        from bofire.data_models.objectives.api import MinimizeObjective

        return Domain(
            inputs=Inputs(features=[ContinuousInput(key=k, bounds=(0.0, 1.0))
                                    for k in INGREDIENTS]),
            outputs=Outputs(features=[ContinuousOutput(key="cost",
                                                       objective=MinimizeObjective())]),
            constraints=Constraints(constraints=[
                LinearEqualityConstraint(features=list(INGREDIENTS),
                                         coefficients=[1.0] * len(INGREDIENTS), rhs=1.0),
                NChooseKConstraint(features=list(INGREDIENTS), min_count=1,
                                   max_count=MAX_USED, none_also_valid=False)]))

    def _random(self, seed: int, n: int) -> pd.DataFrame:
        import bofire.strategies.api as strategies
        from bofire.data_models.strategies.api import RandomStrategy

        X = strategies.map(RandomStrategy(domain=self.domain(), seed=seed)).ask(n)
        return X[self.keys].reset_index(drop=True)

    def initial(self, seed: int) -> pd.DataFrame:
        return self._random(seed, 2 * len(INGREDIENTS))  # min(2 D, 30), as the other studies

    def random(self, seed: int, it: int, measured: set) -> pd.DataFrame:
        return self._random(seed + 1000 * it, 1)

    def evaluate(self, X: pd.DataFrame) -> np.ndarray:
        """The cost; an infeasible mix is the method's error, not a point to score."""
        x = X[self.keys].to_numpy(dtype=float)
        bad = ((np.abs(x.sum(axis=1) - 1.0) > MIXTURE_TOL) | ((x > 1e-6).sum(axis=1) > MAX_USED)
               | (x < -MIXTURE_TOL).any(axis=1))
        if bad.any():
            raise ValueError(f"infeasible mixture proposed: {x[bad].round(6).tolist()}")
        return mixture_cost(np.clip(x, 0.0, 1.0))

    @staticmethod
    def point_key(row) -> str:
        return ""


# --------------------------------------------------------------------------------------------
# Problems: how each module runs a job, and how a job's rows become the metric
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    name: str
    seeds: int  # default number of seeds
    iterations: int
    metric: str  # what the summary reports
    lower_is_better: bool
    run: Callable  # (method, seed, iterations, folder, changes) -> None
    read: Callable  # (folder, iterations) -> dict | None


def _chem_rows(folder: Path, name: str) -> pd.DataFrame | None:
    path = folder / name / "runs.csv"
    return pd.read_csv(path) if path.exists() else None


def _final(rows: pd.DataFrame | None, iterations: int, column: str, lower: bool,
           seconds) -> dict | None:
    """The metric of a run whose rows carry a running best in ``column``: its value at
    ``iterations`` (a longer run is cut there), finished once the run got that far."""
    if rows is None or not len(rows):
        return None
    last = int(rows.iteration.max())
    rows = rows[rows.iteration <= iterations]
    best = rows[column].min() if lower else rows[column].max()
    picks = seconds(rows[rows.iteration > 0])
    return {"last": last, "finished": last >= iterations, "value": float(best),
            "s_per_iteration": float(picks.median()) if len(picks) else np.nan}


def _run_max(method, seed, iterations, folder, changes):
    from benchmarks import max_phases

    max_phases.run_one(max_phases.load(), method, seed, iterations, folder, changes)


def _read_max(folder: Path, iterations: int) -> dict | None:
    path = folder / "runs.csv"
    if not path.exists():
        return None
    rows = pd.read_csv(path)
    rows = rows[rows.iteration <= iterations]
    found = rows[rows.regret == 0].iteration
    last = int(rows.iteration.max())
    picks = rows[rows.iteration > 0].seconds
    return {"last": last, "finished": bool(len(found)) or last >= iterations,
            "value": float(found.min()) if len(found) else np.inf,
            "s_per_iteration": float(picks.median()) if len(picks) else np.nan}


def _chem_job(name: str) -> Callable:
    def run(method, seed, iterations, folder, changes):
        from benchmarks import chem_bo

        problem = Mixture() if name == "mixture" else chem_bo.make_problem(name)
        chem_bo.run_one(problem, name, method, seed, iterations, folder, changes)
    return run


def _chem_read(name: str, lower: bool) -> Callable:
    def read(folder, iterations):
        return _final(_chem_rows(folder, name), iterations, "best", lower,
                      lambda r: r.seconds)
    return read


def _run_synergy(method, seed, iterations, folder, changes):
    from benchmarks import interaction

    overrides, kwargs = split_changes(changes)
    kind = "bark" if method in BARK_ARMS else method
    # Sobo refuses the nonlinear heat budget (slack at the optimum); the others keep it
    interaction.run_bo(folder, seeds=[seed], n_initial=8, n_iterations=iterations,
                       overrides=overrides if kind == "bark" else None, name=method,
                       strategy_kwargs=kwargs or None, start="no_pair", verbose=False,
                       method=kind, heat_budget=kind != "sobo")


def _read_synergy(folder: Path, iterations: int) -> dict | None:
    from benchmarks import interaction

    paths = list((folder / "bo").glob(f"*/{interaction.BO_CSV}"))
    rows = interaction.read_bo(paths[0]) if paths else None
    return _final(rows, iterations, "best", False,
                  lambda r: r.fit_s.astype(float) + r.ask_s.astype(float))


PROBLEMS: dict[str, Problem] = {p.name: p for p in (
    Problem("max", 16, 60, "iteration the best compound is first held (inf: not found)", True,
            _run_max, _read_max),
    Problem("crosscoupling", 8, 20, "best yield found", False,
            _chem_job("crosscoupling"), _chem_read("crosscoupling", False)),
    Problem("photoswitch", 8, 20, "best wavelength found, nm", False,
            _chem_job("photoswitch"), _chem_read("photoswitch", False)),
    Problem("reaction_synergy", 8, 20, "best true yield measured", False,
            _run_synergy, _read_synergy),
    Problem("mixture", 8, 20, f"lowest cost found (optimum {MIXTURE_OPTIMUM:.4f})", True,
            _chem_job("mixture"), _chem_read("mixture", True)),
)}


def problem_domain(name: str, method: str = "bark"):
    """The domain a method's first strategy of ``name`` sees (nothing measured yet)."""
    if name == "max":
        from benchmarks import max_phases

        return max_phases.domain_of(max_phases.load(), set())
    if name == "reaction_synergy":
        from benchmarks.interaction import ReactionSynergy

        return ReactionSynergy(heat_budget=method != "sobo").domain
    if name == "mixture":
        return Mixture().domain()
    from benchmarks import chem_bo

    return chem_bo.make_problem(name).domain(set())


def seeds_of(name: str, count: int | None = None, first: int = 0) -> list[int]:
    """The seeds of ``name``: ``count`` (default the problem's) from ``first`` on; on MAX the
    informative ones only."""
    count = PROBLEMS[name].seeds if count is None else count
    if name == "max":
        from benchmarks import max_phases

        return max_phases.informative_seeds(max_phases.load(), count, first)
    return list(range(first, first + count))


# --------------------------------------------------------------------------------------------
# Jobs
# --------------------------------------------------------------------------------------------


def job_dir(out: Path, problem: str, method: str, seed: int) -> Path:
    return Path(out) / "runs" / problem / method / f"seed{seed}"


def read_job(out: Path, problem: str, method: str, seed: int,
             iterations: int | None = None) -> dict | None:
    """A job's metric from its rows (None before any row)."""
    p = PROBLEMS[problem]
    return p.read(job_dir(out, problem, method, seed),
                  p.iterations if iterations is None else iterations)


def check_settings(folder: Path, method: str, extra: dict | None = None) -> str:
    """The arm's record for ``settings.json``; raises if ``folder`` holds rows made under other
    keywords (a method's name is its arm: such rows must not be continued)."""
    mine = json.dumps({"method": method, "changes": arm_changes(method, extra)},
                      sort_keys=True)
    record = folder / "settings.json"
    if record.exists() and record.read_text().strip() != mine:
        raise RuntimeError(f"{folder} holds a run of {record.read_text().strip()}, not {mine}; "
                           "use another --out or a new method name")
    return mine


def run_job(out: Path, problem: str, method: str, seed: int, iterations: int | None = None,
            extra: dict | None = None) -> dict:
    """Run or resume one (problem, method, seed); returns its status and wall seconds."""
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("bofire_bark").setLevel(logging.ERROR)
    p = PROBLEMS[problem]
    iterations = p.iterations if iterations is None else iterations
    folder = job_dir(out, problem, method, seed)
    folder.mkdir(parents=True, exist_ok=True)
    changes = arm_changes(method, extra)
    # written before the first row, so a folder with rows always says its arm
    (folder / "settings.json").write_text(check_settings(folder, method, extra) + "\n")
    error = folder / "error.txt"
    began = time.perf_counter()
    try:
        p.run(method, seed, iterations, folder, changes)
    # one failed job must not stop the suite (interaction.run_bo refuses rows made under other
    # settings with SystemExit)
    except (Exception, SystemExit):  # noqa: BLE001
        error.write_text(traceback.format_exc())
        status = "error"
    else:
        error.unlink(missing_ok=True)
        status = "done"
    seconds = time.perf_counter() - began
    print(f"{problem} {method} seed {seed}: {status} ({seconds:.0f} s)", flush=True)
    return {"problem": problem, "method": method, "seed": seed, "status": status,
            "seconds": seconds}


def jobs(problems, methods, seeds: int | None, first: int, iterations: int | None,
         out: Path, extra: dict | None = None) -> list[tuple[str, str, int]]:
    """The unfinished (problem, method, seed) jobs, seed by seed (every job's folder checked
    against its arm before any starts)."""
    per = {name: seeds_of(name, seeds, first) for name in problems}
    todo = []
    for k in range(max(len(s) for s in per.values())):
        for name in problems:
            if k >= len(per[name]):
                continue
            for method in methods:
                check_settings(job_dir(out, name, method, per[name][k]), method, extra)
                got = read_job(out, name, method, per[name][k], iterations)
                if got is None or not got["finished"]:
                    todo.append((name, method, per[name][k]))
    return todo


def run(out: Path = DEFAULT_OUT, problems=tuple(PROBLEMS), methods=DEFAULT_METHODS,
        seeds: int | None = None, first: int = 0, iterations: int | None = None,
        n_jobs: int = 1, extra: dict | None = None) -> list[dict]:
    """Every unfinished job, ``n_jobs`` at a time on joblib's current backend."""
    from joblib import Parallel, delayed

    todo = jobs(problems, methods, seeds, first, iterations, out, extra)
    print(f"{len(todo)} jobs to run or resume", flush=True)
    return Parallel(n_jobs=n_jobs, batch_size=1)(
        delayed(run_job)(out, name, method, seed, iterations, extra)
        for name, method, seed in todo)


# --------------------------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------------------------


def per_run(out: Path, iterations: int | None = None) -> pd.DataFrame:
    """One row per job folder: problem, method, seed, last iteration, finished, value."""
    rows = []
    for folder in sorted(Path(out).glob("runs/*/*/seed*")):
        problem, method, seed = folder.parts[-3], folder.parts[-2], int(folder.name[4:])
        if problem not in PROBLEMS:
            continue
        got = read_job(out, problem, method, seed, iterations)
        error = (folder / "error.txt").exists()
        if got is None and error:  # failed before its first row: listed all the same
            got = {"last": -1, "finished": False, "value": np.nan, "s_per_iteration": np.nan}
        if got is not None:
            rows.append({"problem": problem, "method": method, "seed": seed, **got,
                         "error": error})
    return pd.DataFrame(rows, columns=["problem", "method", "seed", "last", "finished",
                                       "value", "s_per_iteration", "error"])


def paired(runs: pd.DataFrame, problem: str, method: str, reference: str) -> dict:
    """``method`` against ``reference`` on ``problem``'s finished runs, paired by seed:
    better / tied / worse (in the problem's sense; ties within 1e-9) and the two-sided sign
    test on the untied seeds."""
    lower = PROBLEMS[problem].lower_is_better if problem in PROBLEMS else False
    done = runs[(runs.problem == problem) & runs.finished.astype(bool)]
    a = done[done.method == method].set_index("seed").value
    b = done[done.method == reference].set_index("seed").value
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    diff = (both.b - both.a) if lower else (both.a - both.b)
    # inf against inf (neither found it) is a tie, not a NaN; round-off is a tie too
    scale = np.maximum(1.0, both.b.abs().where(np.isfinite(both.b), 0.0))
    tie = (both.a == both.b) | (diff.abs() <= 1e-9 * scale)
    better, worse = int(((diff > 0) & ~tie).sum()), int(((diff < 0) & ~tie).sum())
    return {"pairs": len(both), "better": better, "tied": len(both) - better - worse,
            "worse": worse, "p": sign_test_p(better, worse)}


# inf (MAX: not found) ranks after every finite value; quantiles between two infs would
# interpolate to NaN, so they are taken on this stand-in and mapped back
_NOT_FOUND = 1e300


def _quantile(values: pd.Series, q: float) -> float:
    if not len(values):
        return np.nan
    v = float(values.replace(np.inf, _NOT_FOUND).quantile(q))
    return np.inf if v >= _NOT_FOUND / 10 else v


def summary_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per problem and method: finished seeds, the metric's median and quartiles, paired
    against ``bark`` and ``sobo``, median seconds per iteration."""
    rows = []
    for problem in [p for p in PROBLEMS if p in set(runs.problem)]:
        sub = runs[runs.problem == problem]
        order = [m for m in METHODS if m in set(sub.method)]
        order += sorted(set(sub.method) - set(order))
        for method in order:
            done = sub[(sub.method == method) & sub.finished.astype(bool)]
            row = {"problem": problem, "metric": PROBLEMS[problem].metric,
                   "lower_is_better": PROBLEMS[problem].lower_is_better, "method": method,
                   "runs": int((sub.method == method).sum()), "finished": len(done),
                   "median": _quantile(done.value, 0.5), "q25": _quantile(done.value, 0.25),
                   "q75": _quantile(done.value, 0.75),
                   "s_per_iteration": sub[sub.method == method].s_per_iteration.median()}
            for ref in ("bark", "sobo"):
                r = (paired(runs, problem, method, ref) if method != ref
                     else dict.fromkeys(("pairs", "better", "tied", "worse", "p"), np.nan))
                row.update({f"vs_{ref}_{k}": v for k, v in r.items()})
            rows.append(row)
    return pd.DataFrame(rows)


def done_when(table: pd.DataFrame) -> dict:
    """The issue's check on the table: problems where BARK's median is at least Sobo's (in the
    problem's sense) and where BARK is significantly worse (sign test)."""
    at_least, below, missing = [], [], []
    for problem in PROBLEMS:
        t = table[table.problem == problem].set_index("method")
        if not {"bark", "sobo"} <= set(t.index) or not (t.loc[["bark", "sobo"], "finished"]
                                                         > 0).all():
            missing.append(problem)
            continue
        bark, sobo = t.loc["bark", "median"], t.loc["sobo", "median"]
        lower = PROBLEMS[problem].lower_is_better
        if (bark <= sobo) if lower else (bark >= sobo):
            at_least.append(problem)
        r = t.loc["bark"]
        if r.vs_sobo_worse > r.vs_sobo_better and r.vs_sobo_p < DONE_WHEN["alpha"]:
            below.append(problem)
    met = not missing and len(at_least) >= DONE_WHEN["problems"] and not below
    return {"at_least": at_least, "below": below, "missing": missing, "met": met}


def _num(v: float, problem: str) -> str:
    if pd.isna(v):
        return "-"
    if np.isinf(v):
        return "not found"
    if problem == "mixture":
        return f"{v:.4f}"
    return f"{v:.3f}" if problem == "crosscoupling" else f"{v:.1f}"


def _vs(r, ref: str) -> tuple[str, str]:
    if pd.isna(r[f"vs_{ref}_pairs"]) or not r[f"vs_{ref}_pairs"]:
        return "-", "-"
    p = r[f"vs_{ref}_p"]
    return (f"{int(r[f'vs_{ref}_better'])} / {int(r[f'vs_{ref}_tied'])} / "
            f"{int(r[f'vs_{ref}_worse'])}", "-" if pd.isna(p) else f"{p:.3g}")


def summary(out: Path = DEFAULT_OUT, iterations: int | None = None) -> str:
    """Write ``summary.csv``, ``per_run.csv`` and ``summary.md`` under ``out``; return the
    markdown."""
    out = Path(out)
    runs = per_run(out, iterations)
    runs.to_csv(out / "per_run.csv", index=False)
    table, text = summary_text(runs)
    table.to_csv(out / "summary.csv", index=False)
    return publish(out / "summary.md", text)


def summary_text(runs: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """``summary_table`` of ``per_run``'s frame and its markdown."""
    table = summary_table(runs)
    lines = [
        "# The chemistry suite",
        "",
        "Generated by `python -m benchmarks.chem_suite summary` from the job folders "
        "`runs/<problem>/<method>/seed<k>/` (protocol, problems and methods: "
        "`benchmarks/chem_suite.py`). Finished runs only; each problem's own metric, "
        "median [quartiles] over the finished seeds. Paired by seed against `bark` and "
        "against `sobo`: the method better / tied / worse, and the two-sided sign test on the "
        "untied seeds.",
        "",
        "| problem | metric | method | finished | median [quartiles] | vs bark b/t/w | p | "
        "vs sobo b/t/w | p | s per iteration |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.to_dict("records"):
        sense = "lower" if r["lower_is_better"] else "higher"
        (vb, pb), (vs, ps) = _vs(r, "bark"), _vs(r, "sobo")
        med = _num(r["median"], r["problem"])
        if r["finished"]:
            med += f" [{_num(r['q25'], r['problem'])}, {_num(r['q75'], r['problem'])}]"
        lines.append(
            f"| {r['problem']} | {r['metric']} ({sense} is better) | {r['method']} | "
            f"{r['finished']} of {r['runs']} | {med} | {vb} | {pb} | {vs} | {ps} | "
            + ("-" if pd.isna(r["s_per_iteration"]) else f"{r['s_per_iteration']:.1f}")
            + " |")
    check = done_when(table) if len(table) else {"at_least": [], "below": [],
                                                  "missing": list(PROBLEMS), "met": False}
    lines += [
        "",
        f"Done-when (issue 35): BARK's median at or above Sobo's on "
        f"{len(check['at_least'])} of {len(PROBLEMS) - len(check['missing'])} problems with "
        f"runs of both ({', '.join(check['at_least']) or 'none'}; needed: "
        f"{DONE_WHEN['problems']} of {len(PROBLEMS)}); significantly below (Sobo better on "
        f"more seeds, sign test p < {DONE_WHEN['alpha']}) on: "
        f"{', '.join(check['below']) or 'none'}"
        + (f"; no finished runs of both yet on: {', '.join(check['missing'])}"
           if check["missing"] else "")
        + f". Met: {'yes' if check['met'] else 'no'}.",
    ]
    errors = runs[runs.error.astype(bool)] if len(runs) else runs
    if len(errors):
        lines += ["", "Jobs that stopped with an error (see their `error.txt`): "
                  + ", ".join(f"{r.problem} {r.method} seed {r.seed}"
                              for r in errors.itertuples()) + "."]
    return table, "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chem_suite",
                                     description=__doc__.splitlines()[0])
    add_arguments(parser)
    run_from_args(parser.parse_args(argv))


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="run or resume every (problem, method, seed) job")
    r.add_argument("--out", type=Path, default=DEFAULT_OUT)
    r.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=list(PROBLEMS))
    r.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(DEFAULT_METHODS))
    r.add_argument("--seeds", type=int, default=None,
                   help="seeds per problem (default: 16 on MAX, its informative ones; 8 "
                   "elsewhere)")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--iterations", type=int, default=None,
                   help="BO iterations (default: 60 on MAX, 20 elsewhere)")
    add_backend_arguments(r)
    s = sub.add_parser("summary", help="summary.md, summary.csv and per_run.csv")
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    s.add_argument("--iterations", type=int, default=None,
                   help="the budget the runs are read at (default: each problem's)")


def run_from_args(args) -> None:
    if args.what == "summary":
        summary(args.out, args.iterations)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    with study_backend(args) as n_jobs:
        results = run(args.out, args.problems, args.methods, args.seeds, args.first_seed,
                      args.iterations, n_jobs)
    failed = [r for r in results if r["status"] != "done"]
    print(f"{len(results) - len(failed)} jobs done, {len(failed)} failed"
          + "".join(f"\n  {r['problem']} {r['method']} seed {r['seed']}" for r in failed))


if __name__ == "__main__":
    main()
