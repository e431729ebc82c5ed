"""MCMC over BARK's posterior: chains of sweeps (one proposal per tree, then a noise step).

The numba kernel ``run_sweeps`` advances one chain; the Python ``Chain`` owns its arrays,
grows them when a tree or the leaf count outgrows the storage, and can be continued with new
data (warm start). ``run_chains`` runs several chains in threads (the kernels release the
GIL) and collects thinned samples.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from numba import njit

from bofire_bark.defaults import DEFAULT_NOISE_PRIOR, DEFAULT_SPLIT_PRIOR, SPLIT_PRIORS
from bofire_bark.engine.blas import single_threaded_blas
from bofire_bark.engine.forest import (
    FOREST_KEYS,
    Forest,
    as_space,
    assign_columns,
    empty_forest,
    grow_capacity,
    n_free,
    n_words,
    route_all,
    var_of,
)
from bofire_bark.engine.likelihood import (
    FLAT,
    LEAFSPACE,
    NSPACE,
    SMOOTH_SHARE,
    SMOOTH_TAKEN,
    SMOOTH_TRIED,
    LeafSpaceState,
    Likelihood,
    NSpaceState,
    leaf_quad_logdet,
    no_smooth,
)
from bofire_bark.engine.priors import (
    noise_prior,
    root_splittable,
    set_split_weights,
    tree_prior,
    update_split_probs,
)
from bofire_bark.engine.proposals import (
    Data,
    current_loglik,
    has_share,
    new_scratch,
    noise_step,
    refresh,
    share_step,
    tree_step,
)
from bofire_bark.engine.relabel import interchangeable_pairs, swap_columns, uses_either
from bofire_bark.engine.rng import randint, uniform

MODES = {"flat": FLAT, "n": NSPACE, "leaf": LEAFSPACE}


@dataclass(frozen=True)
class MCMCSettings:
    """Sampler settings; defaults are the paper's (m=50, alpha=0.95, beta=2, nu=3, q=0.9),
    except the split prior: the library's (``bofire_bark.defaults.DEFAULT_SPLIT_PRIOR``).
    ``noise_prior`` "inverse_gamma" reads ``noise_nu`` and ``noise_q``, "lognormal"
    ``noise_loc`` and ``noise_scale`` (priors.py)."""

    n_trees: int = 50
    alpha: float = 0.95
    beta: float = 2.0
    noise_nu: float = 3.0
    noise_q: float = 0.9
    noise_prior: str = DEFAULT_NOISE_PRIOR
    noise_loc: float = -4.0
    noise_scale: float = 1.0
    noise_step: float = 0.5
    refresh_every: int = 200
    likelihood: str = "auto"
    split_prior: str = DEFAULT_SPLIT_PRIOR  # "dirichlet" (sparse, DART-style, priors.py) or
    # "uniform" (the paper's)
    # a label swap (relabel.py) after every this many sweeps (0: none); results/mixing/levers/
    # label_swaps: sparse-prior study fits that warn 17 -> 14 of 216, at 1.05x the fit time
    label_swap_every: int = 10
    # a smooth share of the kernel (engine.smooth; used when a fit passes a SmoothKernel):
    # Beta(share_a, share_b) prior on the share, random-walk step on its logit, first value
    share_a: float = 1.0
    share_b: float = 1.0
    share_step: float = 0.5
    share_start: float = 0.5


# Columns of a chain's trace (one row per recorded sweep): these, then V split probabilities
# (NaN under the uniform prior, whose weights are fixed), then V shares of the forest's splits
# on each split variable (NaN while the forest has no split); V = D without descriptors.
TRACE_SCALARS = ("log_likelihood", "sigma2", "leaves_per_tree", "split_concentration")


def trace_width(n_vars: int) -> int:
    return len(TRACE_SCALARS) + 2 * n_vars


@njit(cache=True, nogil=True)
def leaf_of_all(forest, kinds, X):
    out = np.empty((forest.feat.shape[0], X.shape[0]), dtype=np.int64)
    return route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, X,
                     out)


@njit(cache=True, nogil=True)
def shared_leaf_counts(leaf_of):
    """A[i, k] = number of trees in which points i and k share a leaf (N, N)."""
    m, n = leaf_of.shape
    A = np.zeros((n, n))
    for t in range(m):
        row = leaf_of[t]
        for i in range(n):
            li = row[i]
            A[i, i] += 1.0
            for k in range(i):
                if row[k] == li:
                    A[i, k] += 1.0
                    A[k, i] += 1.0
    return A


@njit(cache=True, nogil=True)
def leaf_counts(leaf_of, lcol, y, P, C, b):
    """C[:P, :P] = Phi^T Phi (co-occurrence counts) and b[:P] = Phi^T y."""
    m, n = leaf_of.shape
    C[:P, :P] = 0.0
    b[:P] = 0.0
    cols = np.empty(m, dtype=np.int64)
    for i in range(n):
        for t in range(m):
            cols[t] = lcol[t, leaf_of[t, i]]
        for t in range(m):
            ci = cols[t]
            b[ci] += y[i]
            for s in range(m):
                C[ci, cols[s]] += 1.0


@njit(cache=True, nogil=True)
def _record(trace, row, lik, n_pts, forest, space, sigma2, prior):
    """Write one trace row (``TRACE_SCALARS``, split probabilities, split shares)."""
    m, cap = forest.feat.shape
    d = prior.log_w.shape[0]
    share = trace[row, 4 + d:]
    share[:] = 0.0
    leaves = 0
    for t in range(m):
        for k in range(cap):
            f = forest.feat[t, k]
            if f == -1:
                leaves += 1
            elif f >= 0:
                share[var_of(space, f, forest.thr[t, k])] += 1.0
    trace[row, 0] = current_loglik(lik, n_pts, m)
    trace[row, 1] = sigma2[0]
    trace[row, 2] = leaves / m
    trace[row, 3] = prior.conc[0] if prior.dirichlet else np.nan
    for j in range(d):
        trace[row, 4 + j] = math.exp(prior.log_w[j]) if prior.dirichlet else np.nan
    n_splits = leaves - m  # a binary tree has one split fewer than leaves
    for j in range(d):
        share[j] = share[j] / n_splits if n_splits > 0 else np.nan


@njit(cache=True, nogil=True)
def run_sweeps(n_sweeps, state, forest, space, data, lik, sigma2, tree_prior, noise_prior,
               step, refresh_every, counters, stats, trace):
    """Run up to ``n_sweeps`` sweeps; returns how many ran (fewer if storage must grow).

    ``forest``, ``data``, ``lik`` (``Likelihood``), ``sigma2`` ((1,) float64), the sparse
    prior's weights in ``tree_prior``, the generator ``state``, ``counters`` ((1,) int64: tree
    moves accepted since the last factorization) and ``stats`` follow the chain; a noise
    ``step`` of 0 holds the noise fixed. Sweep i writes row i of ``trace`` (R, 4 + 2 D)
    float64 while i < R (pass R = 0 to record nothing; V split variables).
    """
    m = forest.feat.shape[0]
    y = data.y
    n_vars = space.var_col.shape[0]
    pcap = lik.leaf.Ginv.shape[0]
    sc = new_scratch(y.shape[0], space.kinds.shape[0], forest.mask.shape[2], pcap, lik.mode)
    counts = np.zeros(n_vars, dtype=np.int64)
    shapes = np.empty(n_vars)
    log_new = np.empty(n_vars)
    w_old = np.empty(n_vars)
    w_new = np.empty(n_vars)
    for sweep in range(n_sweeps):
        # each tree grows at most once per sweep: stop early if storage might not suffice
        for t in range(m):
            if n_free(forest.feat, t) < 2:
                return sweep
        if lik.mode == LEAFSPACE and lik.leaf.P[0] + m > pcap:
            return sweep
        for t in range(m):
            counters[0] += tree_step(state, t, forest, space, data, lik, tree_prior, sc, stats)
        # a step of 0 holds the noise fixed (used to test the tree moves alone)
        accepted = step > 0.0 and noise_step(state, y, m, lik, sigma2, noise_prior, step,
                                              sc.work, stats)
        took = 0
        if has_share(lik):
            took = share_step(state, y, m, lik, sigma2[0], sc.work)
        if accepted or took:
            counters[0] = 0  # an accepted noise or share step refactors from the exact counts
        elif counters[0] >= refresh_every:
            refresh(lik, y, m, sigma2[0], sc.work)
            counters[0] = 0
        if tree_prior.dirichlet:
            update_split_probs(state, forest, space, tree_prior, sc.node, counts, shapes,
                               log_new, w_old, w_new)
        if sweep < trace.shape[0]:
            _record(trace, sweep, lik, y.shape[0], forest, space, sigma2, tree_prior)
    return n_sweeps


def choose_mode(likelihood: str, n_points: int, n_trees: int) -> int:
    """N-space below about the expected number of leaves (~3 per tree), leaf space above."""
    if likelihood == "auto":
        return NSPACE if n_points <= 3 * n_trees else LEAFSPACE
    return MODES[likelihood]


class Chain:
    """One MCMC chain: a forest, its noise variance, its generator state and likelihood state.

    ``forest`` is a dict of arrays (``FOREST_KEYS``), ``sigma2`` a (1,) array, ``lik`` the
    ``Likelihood`` of the attached data (after ``set_data``); ``run`` hands them to the numba
    kernel as named tuples.

    Args:
        space: the split ``Space`` (or its four arrays kinds, lower, upper, n_values).
        settings: sampler settings.
        rng_state: uint64[4] generator state (copied).
        capacity: initial node capacity per tree (grown on demand).
    """

    def __init__(self, space, settings: MCMCSettings, rng_state: np.ndarray, capacity: int = 32,
                 smooth=None):
        self.space = as_space(space)
        self.kinds, self.lower, self.upper, self.n_values = self.space[:4]
        self.settings = settings
        if settings.split_prior not in SPLIT_PRIORS:
            raise ValueError(f"split_prior must be 'uniform' or 'dirichlet', got "
                             f"{settings.split_prior!r}")
        self.tree_prior = tree_prior(settings.alpha, settings.beta, self.space,
                                     settings.split_prior == "dirichlet")
        self.noise_prior = noise_prior(settings.noise_prior, settings.noise_nu,
                                       settings.noise_q, settings.noise_loc,
                                       settings.noise_scale)
        self.state = np.array(rng_state, dtype=np.uint64, copy=True)
        self.forest = empty_forest(settings.n_trees, capacity, n_words(self.n_values))
        self.sigma2 = np.array([1.0])
        self.stats = np.zeros((4, 2), dtype=np.int64)
        self.pairs = interchangeable_pairs(self.space, root_splittable(self.space))
        self.swap_stats = np.zeros(2, dtype=np.int64)  # label swaps that moved trees: tried, taken
        self.since_swap = 0  # sweeps since the last label swap
        self.trace = None  # (sweeps, trace_width(V)) of the last run_chains sampling phase
        self.weights_started = False  # the sparse prior's weights have moved (run_chains)
        self.X = None
        self.smooth = None
        self.smooth_hyp = no_smooth()[1]
        if smooth is not None:
            self.set_smooth(smooth)

    def set_smooth(self, smooth) -> None:
        """Sample a smooth share of the kernel with the ``engine.smooth.SmoothKernel``
        ``smooth`` (its lengths may change between fits; the share continues); takes effect
        at the next ``set_data``."""
        s = self.settings
        if self.smooth is None:
            if not (0.0 < s.share_start < 1.0 and s.share_a > 0 and s.share_b > 0
                    and s.share_step > 0):
                raise ValueError("MCMCSettings: share_start must be in (0, 1) and share_a, "
                                 "share_b, share_step > 0")
            self.smooth_hyp = np.array([1.0, s.share_start, s.share_a, s.share_b,
                                        s.share_step, 0.0, 0.0])
        self.smooth = smooth

    # ------------------------------------------------------------------ data and state
    def set_data(self, X: np.ndarray, y: np.ndarray, mode: int | None = None) -> None:
        """Attach (standardized) data and rebuild the likelihood state for the current forest."""
        with single_threaded_blas():
            self._set_data(X, y, mode)

    def _set_data(self, X: np.ndarray, y: np.ndarray, mode: int | None) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        m = self.settings.n_trees
        if mode is None:
            mode = choose_mode(self.settings.likelihood, len(self.y), m)
            if self.smooth is not None and mode == LEAFSPACE:
                mode = NSPACE  # the leaf form cannot hold the smooth part's Gram matrix
        if self.smooth is not None and mode == LEAFSPACE:
            raise ValueError("a smooth share needs the N-space likelihood (likelihood 'n' or "
                             "'auto'), not 'leaf'")
        self._rebuild(mode)

    @property
    def mode(self) -> int:
        """The likelihood form in use (FLAT, NSPACE or LEAFSPACE)."""
        return self.lik.mode

    def _rebuild(self, mode: int) -> None:
        f = self.forest
        m, cap = f["feat"].shape
        n = len(self.y)
        self.leaf_of = leaf_of_all(Forest.of(f), self.kinds, self.X)
        self.counters = np.zeros(1, dtype=np.int64)
        E = np.zeros((1, 1))
        if mode == NSPACE and self.smooth is not None:
            U = self.smooth.coords(self.X)
            E = self.smooth.gram(U, U)
        if mode == NSPACE:
            ns = NSpaceState(shared_leaf_counts(self.leaf_of), np.empty((n, n)), np.empty(n),
                             np.zeros(2), E, self.smooth_hyp)
        else:
            ns = NSpaceState(np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1), np.zeros(2), E,
                             self.smooth_hyp)
        lcol = np.full((m, cap), -1, dtype=np.int64)
        P = np.zeros(1, dtype=np.int64)
        scal = np.zeros(4)
        if mode == LEAFSPACE:
            owner = np.zeros((m * cap, 2), dtype=np.int64)  # room for every node a leaf
            n_leaves = assign_columns(f["feat"], lcol, owner)
            pcap = max(64, 4 * m, 2 * n_leaves + m)
            owner = np.zeros((pcap, 2), dtype=np.int64)
            P[0] = assign_columns(f["feat"], lcol, owner)
            C = np.zeros((pcap, pcap))
            b = np.zeros(pcap)
            leaf_counts(self.leaf_of, lcol, self.y, P[0], C, b)
            # each point's leaf column per tree, point-major so a mover's m columns are adjacent
            pcol = np.ascontiguousarray(np.take_along_axis(lcol, self.leaf_of, axis=1).T)
            scal[3] = float(self.y @ self.y)
            ls = LeafSpaceState(C, np.zeros((pcap, pcap)), b, np.zeros(pcap), scal, P, lcol,
                                owner, pcol)
        else:
            ls = LeafSpaceState(np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1), np.zeros(1),
                                scal, P, lcol, np.zeros((1, 2), dtype=np.int64),
                                np.zeros((1, 1), dtype=np.int64))
        self.lik = Likelihood(mode, ns, ls)
        self.refresh()

    def refresh(self) -> None:
        """Recompute the likelihood state from the exact counts at the current noise."""
        work = np.empty(max(len(self.y), self.lik.leaf.Ginv.shape[0], 1))
        # m an int, as in run_sweeps: one compiled refresh (a float m compiled a second)
        refresh(self.lik, self.y, int(self.settings.n_trees), self.sigma2[0], work)

    def _grow_storage(self) -> None:
        f = self.forest
        m, cap = f["feat"].shape
        ls = self.lik.leaf
        if any(n_free(f["feat"], t) < 2 for t in range(m)):
            self.forest = grow_capacity(f, 2 * cap)
            lcol = np.full((m, 2 * cap), -1, dtype=np.int64)
            lcol[:, :cap] = ls.lcol
            ls = ls._replace(lcol=lcol)
        if self.mode == LEAFSPACE:
            pcap = ls.Ginv.shape[0]
            if ls.P[0] + self.settings.n_trees > pcap:
                new = 2 * pcap
                grown = {}
                for name in ("C", "Ginv"):
                    grown[name] = np.zeros((new, new))
                    grown[name][:pcap, :pcap] = getattr(ls, name)
                for name in ("b", "beta"):
                    grown[name] = np.zeros(new)
                    grown[name][:pcap] = getattr(ls, name)
                grown["owner"] = np.zeros((new, 2), dtype=np.int64)
                grown["owner"][:pcap] = ls.owner
                ls = ls._replace(**grown)
        self.lik = self.lik._replace(leaf=ls)

    # ------------------------------------------------------------------------ sampling
    def run(self, n_sweeps: int) -> None:
        """Advance the chain by ``n_sweeps`` sweeps (growing storage as needed)."""
        with single_threaded_blas():
            self._run(n_sweeps)

    def _run(self, n_sweeps: int, trace: np.ndarray | None = None,
             hold_weights: bool = False) -> None:
        """``trace`` ((n_sweeps, trace_width(V)) float64), if given, gets one row per sweep;
        ``hold_weights`` keeps the sparse prior's weights as they are (they must be equal:
        rules are then drawn uniformly)."""
        if self.X is None:
            raise RuntimeError("Chain.run needs data: call set_data first")
        s = self.settings
        if trace is None:
            trace = np.empty((0, trace_width(len(self.space.var_col))))
        prior = self.tree_prior._replace(dirichlet=False) if hold_weights else self.tree_prior
        every = s.label_swap_every if len(self.pairs) else 0
        done = 0
        while done < n_sweeps:
            ask = n_sweeps - done if every <= 0 else min(every - self.since_swap, n_sweeps - done)
            k = run_sweeps(ask, self.state, Forest.of(self.forest), self.space,
                           Data(self.X, self.y, self.leaf_of), self.lik, self.sigma2, prior,
                           self.noise_prior, float(s.noise_step), s.refresh_every,
                           self.counters, self.stats, trace[done:])
            done += k
            self.since_swap += k
            if k < ask:
                self._grow_storage()
            elif every > 0 and self.since_swap >= every:
                self._swap_labels()
                self.since_swap = 0

    def _swap_labels(self) -> None:
        """One label swap (relabel.py): accepted with the likelihood ratio, computed from a
        likelihood state rebuilt for the swapped forest."""
        a, va, b, vb = (int(x) for x in self.pairs[randint(self.state, len(self.pairs))])
        f = self.forest
        if uses_either(f["feat"], a, b):
            self.swap_stats[0] += 1
            kept = (f["feat"].copy(), f["thr"].copy(), self.lik, self.leaf_of, self.counters)
            q, logdet = self.loglik()
            swap_columns(f["feat"], f["thr"], self.kinds, self.lower, self.upper, a, b)
            self._rebuild(self.lik.mode)
            q_new, logdet_new = self.loglik()
            if math.log(uniform(self.state)) >= 0.5 * (q + logdet - q_new - logdet_new):
                f["feat"][...], f["thr"][...] = kept[0], kept[1]
                self.lik, self.leaf_of, self.counters = kept[2:]
                return
            self.swap_stats[1] += 1
        w = self.tree_prior.log_w.copy()  # equal while weights are held: no change then
        w[va], w[vb] = w[vb], w[va]
        set_split_weights(self.tree_prior, w)

    def loglik(self) -> tuple[float, float]:
        """Current (y^T K^-1 y, log|K|) as the low-rank state holds it."""
        lik = self.lik
        if lik.mode == NSPACE:
            return float(lik.n.scal[0]), float(lik.n.scal[1])
        if lik.mode == LEAFSPACE:
            q, ld = leaf_quad_logdet(lik.leaf.scal, len(self.y), int(lik.leaf.P[0]),
                                     int(self.settings.n_trees))
            return float(q), float(ld)
        return 0.0, 0.0

    @property
    def share_acceptance(self) -> float:
        """Accepted share of the smooth share's steps so far (nan: none tried)."""
        tried = self.smooth_hyp[SMOOTH_TRIED] if len(self.smooth_hyp) else 0.0
        return float(self.smooth_hyp[SMOOTH_TAKEN] / tried) if tried else float("nan")

    def snapshot(self) -> tuple[dict[str, np.ndarray], float, dict[str, np.ndarray]]:
        """A copy of the current forest, noise variance and, under the sparse prior, split
        probabilities ``split_prob`` (V,) and concentration ``split_concentration``; with a
        smooth share, ``smooth_share`` (one posterior sample)."""
        extra = {}
        if self.tree_prior.dirichlet:
            extra = {"split_prob": np.exp(self.tree_prior.log_w),
                     "split_concentration": float(self.tree_prior.conc[0])}
        if self.smooth is not None:
            extra["smooth_share"] = float(self.smooth_hyp[SMOOTH_SHARE])
        return {k: v.copy() for k, v in self.forest.items()}, float(self.sigma2[0]), extra

    @property
    def split_state(self) -> dict[str, np.ndarray]:
        """The sparse prior's state (log weights, concentration) to save and restore."""
        return {"split_log_w": self.tree_prior.log_w, "split_conc": self.tree_prior.conc}

    def restore_split_state(self, log_w: np.ndarray, conc: np.ndarray) -> None:
        set_split_weights(self.tree_prior, np.ascontiguousarray(log_w, dtype=np.float64))
        self.tree_prior.conc[:] = conc
        self.weights_started = True


def stack_samples(samples: list[tuple[dict[str, np.ndarray], float, dict]]
                  ) -> dict[str, np.ndarray]:
    """Stack forests of possibly different node capacities into arrays with a sample axis,
    with ``sigma2`` and any per-sample extras (``Chain.snapshot``)."""
    cap = max(f["feat"].shape[1] for f, *_ in samples)
    forests = [grow_capacity(f, cap) if f["feat"].shape[1] < cap else f for f, *_ in samples]
    out = {k: np.stack([f[k] for f in forests]) for k in FOREST_KEYS}
    out["sigma2"] = np.array([s[1] for s in samples])
    extras = samples[0][2] if len(samples[0]) > 2 else {}
    for key in extras:
        out[key] = np.stack([np.asarray(s[2][key]) for s in samples])
    return out


def run_chains(chains: list[Chain], burn_in: int, n_samples: int, thinning: int,
               n_jobs: int | None = None, progress=None) -> dict[str, np.ndarray]:
    """Burn in each chain, then keep ``n_samples`` samples ``thinning`` sweeps apart.

    Chains run in threads; each is deterministic given its own generator state, so the result
    does not depend on scheduling. Samples are ordered chain by chain. ``progress``, if given,
    is called with 1 after each chain's burn-in and after each kept sample.
    """

    def tick():
        if progress is not None:
            progress(1)

    def one(chain: Chain):
        if chain.tree_prior.dirichlet and not chain.weights_started:
            # Trees grow under equal weights for the first half of a new chain's burn-in (as
            # BART's DART does), so that a chain does not lock onto the first features it
            # happened to split on; this halved R-hat's excess on small data sets.
            chain._run(burn_in // 2, hold_weights=True)
            chain._run(burn_in - burn_in // 2)
        else:
            chain._run(burn_in)
        chain.weights_started = True
        tick()
        kept = []
        # every sweep after burn-in is traced for diagnostics (R-hat, ESS, trace plots)
        chain.trace = np.empty((n_samples * thinning,
                                trace_width(len(chain.space.var_col))))
        for i in range(n_samples):
            chain._run(thinning, chain.trace[i * thinning:(i + 1) * thinning])
            kept.append(chain.snapshot())
            tick()
        return kept

    workers = n_jobs or min(len(chains), max(1, _cpu_count()))
    with single_threaded_blas():
        if workers == 1:
            per_chain = [one(c) for c in chains]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                per_chain = list(pool.map(one, chains))
    return stack_samples([s for kept in per_chain for s in kept])


def _cpu_count() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


__all__ = ["TRACE_SCALARS", "trace_width", "Chain", "MCMCSettings", "run_chains", "stack_samples"]
