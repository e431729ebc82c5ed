"""Settings of the grid search, one frozen object (``GridSettings``) passed down from the
strategy through ``AcquisitionSettings.grid``; the defaults are the measured choices below
(``python -m benchmarks.acquisition_proof --paired --pair ...``, results/acquisition).
"""

from __future__ import annotations

from dataclasses import dataclass


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

    n_dual: int = 3
    n_dual_python: int = 1
    dive_every: int = 25
    dive_backoff: bool = True
    dive_backoff_max: int = 64
    polish: float = 0.5
    polish_gap: float = 0.01
    threads: int = 2
    n_lagrange: int = 100
    lagrange_bins: bool = False
    n_bins: int = 16
    bisect: bool = True
    product_score: bool = True
    numba_loop: bool = True
    chunk_seconds: float = 0.01
    slots: int = 1024

    def relaxation(self, python_loop: bool) -> dict:
        """``grid_model``'s relaxation for the loop that will search the grid: the Python
        loop (domain constraints or several outputs) keeps ``n_dual_python`` linearizations
        and the sum score, the numba loop ``n_dual`` and ``product_score``."""
        if python_loop:
            return {"n_dual": self.n_dual_python, "product_score": False}
        return {"n_dual": self.n_dual, "product_score": self.product_score}
