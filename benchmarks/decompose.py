"""A lever of the acquisition search, measured: one search per posterior sample, coupled by
multipliers (a Lagrangian decomposition of the x the samples share).

The integrated UCB is a weighted mean over samples, f(x) = sum_s w_s f_s(x). Give every sample
its own copy of x and price the copies' disagreement on the categorical features with
multipliers lam_s[j, c] (feature j, code c) that sum to zero over samples (sum_s w_s lam_s = 0).
At a point where all copies agree the prices cancel, so for every such lam

    max_x f(x) <= sum_s w_s max_x [f_s(x) + sum_j lam_s[j, x_j]],

and each term is a search over one sample's trees alone (``bnb.search`` on that sample), whose
proven bound keeps the sum an upper bound. With lam = 0 it is the mean of the samples' own
maxima; projected subgradient steps (towards the copies' agreement) lower it. The optimizer does
not use it: ``acquisition_proof --decompose`` measures it against the joint search on the
posteriors where that proves the widest gaps.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np

from bofire_bark.optimize import grid as bnb
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.settings import AcquisitionSettings


@dataclass
class SampleSearch:
    """One sample's grid, its domain constraints, where its multipliers go and the loop the
    search plan runs."""

    grid: bnb.Grid
    cons: bnb.Constraints
    copies: dict[int, int]
    n_codes: int
    numba_loop: bool


def one_sample(posterior, s: int):
    """The posterior restricted to its sample ``s`` (the data and settings shared)."""
    out = copy.copy(posterior)
    out.samples = {k: a[s:s + 1] for k, a in posterior.samples.items()}
    return out


def sample_searches(case) -> list[SampleSearch]:
    """Per sample of ``case.posterior``, the grid search of its UCB alone."""
    from bofire_bark.optimize import prepare_search

    out = []
    for s in range(case.posterior.n_samples):
        search = prepare_search(one_sample(case.posterior, s), case.domain, case.space,
                                sign=case.sign)
        grid, cons = search.grid()
        out.append(SampleSearch(grid, cons, first_copies(grid.gm), grid.gm.n_codes,
                                search.plan.numba_loop))
    return out


def first_copies(gm, sample: int = 0) -> dict[int, int]:
    """Per categorical feature some tree of ``sample`` splits on, the offset in ``gm.lam`` of
    the first of its trees' copies (``n_codes`` values, one per code). Values put there add a
    term of that feature's code to the objective (at a point: the sum of its copies' values at
    its code) without breaking the relaxation."""
    bm = gm.bm
    out = {}
    for t in range(bm.s_tree_u.shape[1]):
        u = bm.s_tree_u[sample, t]
        for f in range(bm.tf_ptr[u + 1] - bm.tf_ptr[u]):
            out.setdefault(int(bm.tf_j[bm.tf_ptr[u] + f]),
                           int(bm.lam_ptr[sample, t] + f * bm.n_codes))
    return out


def _codes(box) -> dict[int, np.ndarray]:
    """The allowed codes of every categorical feature (the priced ones)."""
    return {j: np.asarray(sorted(box.allowed[j])) for j in range(box.n_features)
            if box.kinds[j] == CATEGORICAL}


def no_prices(searches: list[SampleSearch], box) -> np.ndarray:
    """Prices lam[s, j, c], all zero."""
    return np.zeros((len(searches), box.n_features, max(ss.n_codes for ss in searches)))


def dual_bound(searches: list[SampleSearch], lam: np.ndarray, box, x0: np.ndarray,
               seconds: float, gap: float = 0.01):
    """Per sample s, the proven bound of max_x f_s(x) + lam_s . e(x) (their mean is the
    decomposition's bound), each search started at ``x0`` and stopped at ``seconds`` or the
    relative ``gap``. Returns (S bounds, the S searches' best values, their points (S, D))."""
    S = len(searches)
    codes = _codes(box)
    bounds, values, xs = np.zeros(S), np.zeros(S), []
    for s, ss in enumerate(searches):
        gm = ss.grid.gm
        gm.lam[:] = 0.0
        for j, off in ss.copies.items():
            gm.lam[off:off + ss.n_codes] = lam[s, j, :ss.n_codes]
        # the prices count at decided boxes too (they do not cancel there); no multipliers of
        # the sample's own trees: on a decided box that still allows several codes they would
        # not cancel either, and nothing would cut the box to make them
        ss.grid.use_lam = 3
        res = bnb.search(ss.grid, ss.cons, x0, ss.grid.value(x0), AcquisitionSettings(
            time_limit=seconds, mip_gap=gap, abs_gap=0.0, grid=bnb.GridSettings(n_lagrange=0)),
            ss.numba_loop)
        x = np.array(res.x, dtype=np.float64)
        value = res.value
        # a decided box's value is its best code's: the point takes that code
        for j in ss.copies:
            for c in codes[j]:
                y = x.copy()
                y[j] = c
                v = ss.grid.value(y)
                if v > value and ss.cons.satisfied(y):
                    x, value = y, v
        free = 0.0  # features no tree of the sample splits on: their best price
        for j, allowed in codes.items():
            if j not in ss.copies:
                k = int(np.argmax(lam[s, j, allowed]))
                free += lam[s, j, allowed[k]]
                x[j] = allowed[k]
        bounds[s], values[s] = res.bound + free, value + free
        xs.append(x)
    return bounds, values, np.array(xs)


def subgradient(searches, box, x0, target: float, steps: int, seconds: float,
                theta: float = 0.3, decay: float = 0.9):
    """Multipliers after ``steps`` projected subgradient steps (Polyak steps towards
    ``target`` on the searches' best values, each search ``seconds``). Returns (lam, the
    approximate dual after each step)."""
    S = len(searches)
    cats = list(_codes(box))
    lam = no_prices(searches, box)
    trace = []
    for _ in range(steps):
        _, values, xs = dual_bound(searches, lam, box, x0, seconds)
        approx = values.mean()
        trace.append(approx)
        onehot = np.zeros_like(lam)
        for s in range(S):
            for j in cats:
                onehot[s, j, int(round(xs[s, j]))] = 1.0
        step = onehot - onehot.mean(axis=0)  # keeps sum_s lam_s = 0
        norm = float(np.sum(step**2)) / S
        if norm == 0.0 or approx <= target:
            break
        lam -= theta * (approx - target) / norm * step
        theta *= decay
    return lam, trace


def decompose_rows(case, steps: int = 15, step_seconds: float = 0.1,
                   sample_seconds: float = 1.0) -> list[dict]:
    """The joint search at the default time limit, the samples' own bounds (lam = 0) and the
    bound after ``steps`` subgradient steps, each search of the last two ``sample_seconds``."""
    from benchmarks.acq_cases import case_start

    search, start = case_start(case)
    box = search.problem.box
    t0 = time.perf_counter()
    joint = search.solve(start)
    rows = [{"case": case.name, "bound_by": "joint search", "seconds":
             time.perf_counter() - t0, "value": joint.ucb, "bound": joint.bound}]
    t0 = time.perf_counter()
    searches = sample_searches(case)
    bounds, values, _ = dual_bound(searches, no_prices(searches, box), box, joint.x,
                                   sample_seconds)
    rows.append({"case": case.name, "bound_by": "samples, lam = 0",
                 "seconds": time.perf_counter() - t0, "value": joint.ucb,
                 "bound": bounds.mean(), "samples_value": values.mean()})
    t0 = time.perf_counter()
    lam, trace = subgradient(searches, box, joint.x, joint.ucb, steps, step_seconds)
    bounds, values, _ = dual_bound(searches, lam, box, joint.x, sample_seconds)
    rows.append({"case": case.name, "bound_by": "samples, after subgradient steps",
                 "seconds": time.perf_counter() - t0, "value": joint.ucb,
                 "bound": bounds.mean(), "samples_value": values.mean(), "steps": len(trace)})
    for r in rows:
        r["gap"] = bnb.relative_gap(r["value"], r["bound"])
    return rows
