"""How an acquisition is searched, as frozen objects defined once at the bottom of the package
(numpy-free: the data models use them as they are, and the optimizer reads them unchanged).

``SearchSettings`` is what a spec sets (the strategy data model's ``acquisition_optimizer``,
with ``grid``, a ``GridSettings``); ``AcquisitionSettings`` adds what the strategy decides per
solve (the rule and its weight from ``acquisition_function``, the seed). Variants are made with
``dataclasses.replace``. The grid settings' defaults are the measured choices below
(``python -m benchmarks.acquisition_proof --paired --pair ...``, results/acquisition).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Literal

from bofire_bark.defaults import (
    DEFAULT_ABS_GAP,
    DEFAULT_EXTEND_GAP,
    DEFAULT_KAPPA,
    DEFAULT_MAX_TIME,
    DEFAULT_MIP_GAP,
    DEFAULT_TIME_LIMIT,
    SOLVERS,
    unknown_solver,
)

# pydantic reads this when a spec's dict is validated into these dataclasses: a misspelt key
# is an error, never dropped
_STRICT = {"extra": "forbid"}

# Which point of the candidate's grid cell an ask returns (``SearchSettings.tie_break``).
TIE_BREAKS = ("none", "farthest", "smooth")


@dataclass(frozen=True)
class GridSettings:
    """How the grid branch-and-bound bounds, branches and searches.

    Attributes:
        n_dual: Frank-Wolfe linearizations of the N-space variance bound
            (``grid.bound._dual_bound``) in the numba loop (one output, no domain
            constraints). 3 instead of 1 gave a median gap of 11.0 % instead of 12.9 %, 95th
            percentile 35.7 % instead of 45.2 %, at 0.57x the boxes per second; 6 were worse
            than 3 (--pair dual, results/acquisition/dual).
        n_dual_python: the same for the Python loop (domain constraints or several outputs):
            there 3 steps cost the dives that find feasible points (the 20x reference beat the
            candidate by > 1 % on 5 of 60 posteriors instead of 2, all constrained).
        dive_every: a dive (depth-first to a decided box, for a better feasible point) every
            this many boxes (0: none).
        dive_backoff, dive_backoff_max: after a dive that finds no better point the next
            chances are skipped, the skip doubling per fruitless dive up to
            ``dive_backoff_max`` - 1 and resetting when a dive improves. Only without domain
            constraints and with one output: there the start is rarely beaten and the dives
            cost half of the bound calls; with constraints dives find the feasible points
            (numba_loop_backoff: the UCB fell on 5 constrained posteriors).
        polish, polish_gap: under constraints, the share of the remaining time the search goes
            on once the gap is proven, towards ``polish_gap`` (the first point within the gap
            is often not the best one there; --pair polish).
        batch_polish: whether the later candidates of an ``ask(n)`` polish too (default: the
            first only; the later ones answer the believer's approximation, and the polish
            was most of their search time: docs/guide/performance.md).
        threads: threads bounding the two children of a branching in the Python loop (the
            kernel releases the GIL). The numba loop uses one thread: two in rounds were
            slower on the loaded machine (numba_threads: boxes/s x0.92 per case).
        n_lagrange: subgradient steps on the categorical multipliers at the root (0: no
            Lagrangian relaxation).
        lagrange_bins, n_bins: relax ordered features too, as ``n_bins`` bins of consecutive
            cells (at most 64: one word of codes). Off: multipliers fitted at the root helped
            on categorical domains and hurt on ordered ones (--pair lam).
        bisect: cut ordered features in the middle of the box, not at the split of largest
            impact (--pair branch: median gap 0.112 -> 0.100, median ask 2.40 -> 1.66 s).
        product_score: score a feature for branching by the product of what its cuts take
            from the two children's bounds, not their sum (``grid.bound.feature_scores``),
            in the numba loop (--pair score: gap 95th pct 0.356 -> 0.335); the Python loop
            keeps the sum (with the product its dives met other boxes and returned lower UCBs).
        numba_loop: run the box loop of one output without domain constraints in numba
            (``grid.loop``); False runs the Python loop (slower per box).
        chunk_seconds: seconds of work per call of the numba loop (the clock is read between
            calls).
        slots: open boxes the numba loop makes room for at first (doubled when short).
    """

    __pydantic_config__ = _STRICT

    n_dual: int = 3
    n_dual_python: int = 1
    dive_every: int = 25
    dive_backoff: bool = True
    dive_backoff_max: int = 64
    polish: float = 0.5
    polish_gap: float = 0.01
    batch_polish: bool = False
    threads: int = 2
    n_lagrange: int = 100
    lagrange_bins: bool = False
    n_bins: int = 16
    bisect: bool = True
    product_score: bool = True
    numba_loop: bool = True
    chunk_seconds: float = 0.01
    slots: int = 1024

    def relaxation(self, numba_loop: bool) -> dict:
        """``grid_model``'s relaxation for the loop that will search the grid: the numba loop
        ``n_dual`` linearizations and ``product_score``, the Python loop (domain constraints
        or several outputs) ``n_dual_python`` and the sum score."""
        if numba_loop:
            return {"n_dual": self.n_dual, "product_score": self.product_score}
        return {"n_dual": self.n_dual_python, "product_score": False}


@dataclass(frozen=True)
class SearchSettings:
    """How the search answers an ask (every field is a spec's ``acquisition_optimizer``).

    Attributes:
        solver: "auto" (the finite domain enumerated when small enough, else the grid
            branch-and-bound, or the MIP with SCIP/Gurobi when the domain has a nonlinear
            equality constraint: ``space.finite.plan_search``), "bnb", "scip", "gurobi" or
            "highs" (linear models only).
        time_limit: seconds of search after the starting point (default 2.5).
        mip_gap: relative gap (bound - value) / |value| at which the search stops (default
            0.1, as in the paper).
        abs_gap: the search also stops once bound - value <= abs_gap (standardized units,
            i.e. standard deviations of the output; meaningful when the UCB is near zero).
        max_time, extend_gap: grid search only: while the relative gap proven at
            ``time_limit`` is above ``extend_gap`` (default 0.10, the gap target), the search
            goes on, up to ``max_time`` seconds (default None: stop at ``time_limit``).
        n_start_points, n_starts, n_sweeps: the starting sample (random feasible points
            scored, coordinate-ascent starts, sweeps).
        isolate: run SCIP in the worker process (a native crash then falls back to the
            starting point); False solves in this process, which a native abort would end.
        n_cuts: MIP only: tangent planes of every sample's sigma cone at this many good points
            of the starting sample (valid for all points; see ``sample_gp.tangent_cuts``).
        grid: the grid search's settings (``GridSettings``).
        tie_break: which point of the candidate's cell of the grid (where every tree, so the
            acquisition, is constant) is returned: "none" (the search's own, often a box's
            centre), "farthest" (the one farthest from the measured and pending points,
            ``incumbent.farthest_in_cell``) or "smooth" (with a smooth share: the one where
            the smooth part's continuous extension scores best, ``incumbent.smoothest_in_cell``).
            Finite libraries are enumerated and keep theirs.
    """

    __pydantic_config__ = _STRICT

    solver: Literal[SOLVERS] = "auto"
    time_limit: float = DEFAULT_TIME_LIMIT
    mip_gap: float = DEFAULT_MIP_GAP
    abs_gap: float = DEFAULT_ABS_GAP
    max_time: float | None = DEFAULT_MAX_TIME
    extend_gap: float = DEFAULT_EXTEND_GAP
    n_start_points: int = 2000
    n_starts: int = 4
    n_sweeps: int = 3
    isolate: bool = True
    n_cuts: int = 8
    grid: GridSettings = field(default_factory=GridSettings)
    tie_break: Literal[TIE_BREAKS] = "none"

    def __post_init__(self):
        """A value out of range is refused naming the setting (also when a spec is loaded)."""
        if str(self.solver).lower() not in SOLVERS:
            raise ValueError(unknown_solver(self.solver))
        if not self.time_limit > 0:
            raise ValueError(f"time_limit must be positive, got {self.time_limit}")
        if not self.mip_gap >= 0:
            raise ValueError(f"mip_gap must be >= 0, got {self.mip_gap}")
        if not self.abs_gap >= 0:
            raise ValueError(f"abs_gap must be >= 0, got {self.abs_gap}")
        if self.max_time is not None and not self.max_time > 0:
            raise ValueError(f"max_time must be positive or None, got {self.max_time}")
        if not self.extend_gap >= 0:
            raise ValueError(f"extend_gap must be >= 0, got {self.extend_gap}")
        for name in ("n_start_points", "n_starts", "n_sweeps"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.n_cuts >= 0:
            raise ValueError(f"n_cuts must be >= 0, got {self.n_cuts}")
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {list(TIE_BREAKS)}, got "
                             f"{self.tie_break!r}")


# How output limits enter the hypervolume rules (``AcquisitionSettings.output_limits``).
OUTPUT_LIMITS = ("optimistic", "probability")


@dataclass(frozen=True)
class AcquisitionSettings(SearchSettings):
    """``SearchSettings`` plus what the strategy sets per solve.

    Attributes:
        rule: the acquisition rule, one of ``optimize.rules.RULES`` ("ucb", "ei", "nei",
            "pi", "ehvi", "nehvi"; the MIP solvers take "ucb" only).
        kappa: the UCB's exploration weight (qUCB's sqrt(beta); default 1.96, see
            ``optimize.entry``).
        seed: seeds the starting sample and the solver's randomization.
        output_limits: how output limits enter the hypervolume rules: "optimistic" (a
            candidate's integrated UCB meets every limit) or "probability" (each sample's
            improvement weighed by its probability of meeting them; ``optimize.hypervolume``).
    """

    rule: str = "ucb"
    kappa: float = DEFAULT_KAPPA
    seed: int | None = 0
    output_limits: str = "optimistic"

    @classmethod
    def from_search(cls, search: SearchSettings, **more) -> AcquisitionSettings:
        """``search``'s every field unchanged, with ``more`` (rule, kappa, seed)."""
        return cls(**{f.name: getattr(search, f.name) for f in fields(SearchSettings)}, **more)

    @property
    def acquisition_rule(self):
        from bofire_bark.optimize.rules import Rule

        return Rule(self.rule, self.kappa)

    def validate(self, sign: float = 1.0) -> None:
        """Raise ValueError for an unknown rule, a bad kappa or ``sign`` (the ranges of the
        search's fields are checked when the object is made)."""
        self.acquisition_rule.validate()
        if self.output_limits not in OUTPUT_LIMITS:
            raise ValueError(f"output_limits must be one of {OUTPUT_LIMITS}, got "
                             f"{self.output_limits!r}")
        if sign not in (1, -1, 1.0, -1.0):
            raise ValueError(f"sign must be +1 (maximize) or -1 (minimize), got {sign}.")


def settings_with(settings: AcquisitionSettings | None, overrides: dict) -> AcquisitionSettings:
    """``settings`` (default: the defaults) with some fields replaced by keyword; an unknown
    name raises TypeError, as a misspelt keyword argument would."""
    settings = AcquisitionSettings() if settings is None else settings
    return replace(settings, **overrides) if overrides else settings
