"""Priors of the BARK model (paper section 4 and appendix F).

Tree prior: a node at depth d is internal with probability ``alpha * (1 + d) ** -beta`` if any
feature can still split the part of the domain that reaches it, and is a leaf otherwise.
Split rule of an internal node: a split variable among those that can split there, then a
rule uniformly from the node's own subspace (continuous: a value in the interval reaching it;
discrete: a cut between the values reaching it; categorical: a non-empty proper subset of
the categories reaching it, sent left). A categorical feature with descriptors has one split
variable per descriptor (and, if asked, its subset rules as one more): a descriptor rule is
a cut between two consecutive distinct values of the descriptor among the categories
reaching the node, drawn uniformly; the categories at or below it go left. A node stores the
subset sent left (its mask); the prior probability of a mask is the sum over the variables
and cuts that produce it. Every proposal below draws the rule from this prior, so the rule's
probability cancels in each Metropolis-Hastings ratio and the sum is never evaluated; only
whether a variable can split a node enters (a descriptor can split where it takes two values
among the node's categories).

The variable is drawn with probability proportional to a weight s_v, restricted to the
variables that can split the node and renormalized (a feature without descriptors is one
variable). The paper's prior has equal weights (uniform over
the splittable features). The sparse prior (DART, Linero 2018; not in the paper) puts
``s ~ Dirichlet(a/P, ..., a/P)`` on the P split variables that can split the whole domain, with
``a / (a + P) ~ Beta(0.5, 1)``; ``update_split_probs`` samples s and a given the forest.

Noise prior on standardized outputs, one of two: ``sigma_y^2 ~ InvGamma(shape=nu/2,
scale=nu*lam/2)``, with ``lam`` chosen so that ``P(sigma_y^2 < 1) = q`` (BART's calibration
with the data variance, which is 1 after standardization; paper defaults nu=3, q=0.9), or
``log sigma_y^2 ~ N(loc, scale^2)`` (a log-normal; loc=-4, scale=1 is BoFire's GP default,
Hvarfner et al. 2024, "Vanilla Bayesian Optimization Performs Great in High Dimensions").
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import optimize, stats

from bofire_bark.defaults import NOISE_PRIORS
from bofire_bark.engine.forest import (
    CATEGORICAL,
    DISCRETE,
    LEAF,
    Forest,
    Space,
    as_space,
    new_subspace,
    node_subspace,
    scan_splittable,
    split_leaf,
    splittable_flags,
    two_valued,
    var_can_split,
    var_of,
)
from bofire_bark.engine.rng import normal, randint, uniform


class TreePrior(NamedTuple):
    """The tree prior: depth parameters and split-feature weights.

    A splittable node at depth d is internal with probability ``alpha (1 + d)^-beta``
    (floats). ``dirichlet`` (bool) selects the sparse prior; then ``log_w`` (D,) float64 holds
    log s (-inf for features in no split: ``active`` (D,) bool false) and ``conc`` (1,)
    float64 the concentration a, both updated in place by ``update_split_probs``; ``w`` (D,)
    float64 holds s itself, exp(log_w) (the weights sum to 1, so none overflows; the rule draw
    reads it instead of taking an exp per variable and node), ``cum`` (D,) its running sums
    (the draw by rejection). Write the weights with ``set_split_weights``, which keeps the
    three together. With the uniform prior they are unused.
    """

    alpha: float
    beta: float
    dirichlet: bool
    log_w: np.ndarray
    active: np.ndarray
    conc: np.ndarray
    w: np.ndarray
    cum: np.ndarray


def tree_prior(alpha: float, beta: float, space: Space, dirichlet: bool = False) -> TreePrior:
    """A ``TreePrior`` for ``space``; the sparse prior starts at equal weights, a = P."""
    active = root_splittable(space)
    n_active = int(active.sum())
    log_w = np.where(active, -math.log(max(n_active, 1)), -np.inf)
    return TreePrior(float(alpha), float(beta), bool(dirichlet), log_w, active,
                     np.array([float(max(n_active, 1))]), np.exp(log_w),
                     np.cumsum(np.exp(log_w)))


@njit(cache=True, nogil=True)
def set_split_weights(prior, log_w):
    """The sparse prior's weights from their logs ``log_w`` (V,): ``log_w``, ``w``, ``cum``."""
    total = 0.0
    for v in range(log_w.shape[0]):
        prior.log_w[v] = log_w[v]
        prior.w[v] = math.exp(log_w[v])
        total += prior.w[v]
        prior.cum[v] = total


@njit(cache=True, nogil=True)
def _root_splittable(space, out):
    sub = new_subspace(space.kinds.shape[0], 1 + (np.max(space.n_values) + 63) // 64)
    lo, hi, cats = sub
    for j in range(space.kinds.shape[0]):
        lo[j] = space.lower[j]
        hi[j] = space.upper[j]
        cats[j, :] = 0
        if space.kinds[j] == CATEGORICAL:
            for c in range(space.n_values[j]):
                cats[j, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    scan_splittable(space, lo, hi, cats, 0, space.var_col.shape[0], out)


def root_splittable(space: Space) -> np.ndarray:
    """(V,) bool: the split variables that can split the whole domain."""
    out = np.zeros(len(space.var_col), dtype=np.bool_)
    _root_splittable(space, out)
    return out


# codes of NoisePrior.kind, in the order of defaults.NOISE_PRIORS
INVERSE_GAMMA = 0
LOGNORMAL = 1


class NoisePrior(NamedTuple):
    """Prior of the noise variance (standardized units), as numbers for the kernels.

    ``kind`` INVERSE_GAMMA: InvGamma(shape ``a``, scale ``b``); LOGNORMAL: log sigma^2 ~
    N(``a``, ``b``^2). ``a``, ``b`` floats.
    """

    kind: int
    a: float
    b: float


@njit(cache=True, nogil=True)
def split_prob(prior, depth):
    """Prior probability that a splittable node at ``depth`` is internal."""
    return prior.alpha * (1.0 + depth) ** (-prior.beta)


# Above this many split variables (fingerprint bits) the sparse prior's rule draw first tries
# by rejection: a variable from all the weights, kept if it can split the node, up to
# REJECTION_TRIES times, then the exact restricted draw over every variable's test. Either
# way the variable has probability w_v / (the splittable weight): if Z is that weight, a
# try keeps v with w_v, and P(v) = w_v sum_k (1 - Z)^k + (1 - Z)^K w_v / Z = w_v / Z. Below
# it the one pass over the variables is cheap and the chains stay as they were.
REJECTION_MIN_VARS = 64
REJECTION_TRIES = 8


@njit(cache=True, nogil=True)
def _draw_by_rejection(state, space, sub, prior):
    """A variable by rejection from the cumulative weights ``prior.cum``; -1 after
    ``REJECTION_TRIES`` tries that all drew a variable unable to split ``sub``."""
    n = prior.cum.shape[0]
    total = prior.cum[n - 1]
    for _ in range(REJECTION_TRIES):
        v = np.searchsorted(prior.cum, uniform(state) * total, side="right")
        if v >= n:
            v = n - 1
        if prior.w[v] > 0.0 and var_can_split(space, v, sub.lo, sub.hi, sub.cats):
            return v
    return -1


@njit(cache=True, nogil=True)
def _draw_splittable(state, space, sub, prior):
    """A variable from the prior's weights restricted to those that can split ``sub``, by
    testing every variable (uniform for the paper's prior); -1 if none can."""
    flags = np.empty(space.var_col.shape[0], dtype=np.bool_)
    n_ok = splittable_flags(space, sub, flags)
    if prior.dirichlet:
        return _draw_weighted(state, flags, prior.log_w, prior.w)
    if n_ok == 0:
        return -1
    pick = randint(state, n_ok)
    for v in range(space.var_col.shape[0]):
        if flags[v]:
            if pick == 0:
                return v
            pick -= 1
    return -1


@njit(cache=True, nogil=True)
def draw_rule(state, space, sub, rule_mask, prior):
    """Draw a split rule from the node's subspace ``sub``; returns (feature, threshold).

    The split variable comes from the ``prior``'s weights restricted to the variables that
    can split here (uniform for the paper's prior), then a rule uniformly from its own: a
    threshold in the interval, a cut between discrete values, a non-empty proper subset of
    the categories, or a cut between two consecutive distinct values of a descriptor among
    the categories (those at or below go left). A categorical rule's subset sent left is
    written to ``rule_mask`` (W,) and its threshold is ``1 + var_desc`` (0 for a subset).
    Returns feature -1 when no variable can split.
    """
    lo, hi, cats = sub
    v = -1
    if prior.dirichlet and space.var_col.shape[0] > REJECTION_MIN_VARS:
        v = _draw_by_rejection(state, space, sub, prior)
    if v < 0:
        v = _draw_splittable(state, space, sub, prior)
        if v < 0:
            return -1, 0.0
    j = space.var_col[v]
    if space.var_desc[v] >= 0:
        return j, _draw_descriptor_cut(state, space, v, cats[j], rule_mask)
    if space.kinds[j] == CATEGORICAL:
        # Uniform over non-empty proper subsets: fair coin per category, reject the two
        # trivial outcomes (acceptance >= 1/2 since at least two categories reach the node).
        w_count = cats.shape[1]
        while True:
            n_in = 0
            n_tot = 0
            for w in range(w_count):
                rule_mask[w] = 0
            for w in range(w_count):
                word = cats[j, w]
                for b in range(64):
                    bit = np.uint64(1) << np.uint64(b)
                    if word & bit:
                        n_tot += 1
                        if uniform(state) < 0.5:
                            rule_mask[w] |= bit
                            n_in += 1
            if 0 < n_in < n_tot:
                return j, 0.0
    if space.kinds[j] == DISCRETE:
        # cut after index i in [lo, hi - 1]: left gets [lo, i], right [i + 1, hi]
        n_cuts = np.int64(hi[j] - lo[j])
        return j, lo[j] + randint(state, n_cuts)
    return j, lo[j] + (hi[j] - lo[j]) * uniform(state)


@njit(cache=True, nogil=True)
def _distinct_ranks(space, v, cat_words, stop):
    """Walk the distinct values of descriptor variable ``v`` among the categories in
    ``cat_words``, in increasing order; returns (how many were seen, the rank of the last),
    stopping after ``stop`` of them (pass the number of categories to see all)."""
    seen = 0
    last = -1
    for i in range(space.n_values[space.var_col[v]]):
        c = space.order[v, i]
        if ((cat_words[c >> 6] >> np.uint64(c & 63)) & np.uint64(1) == np.uint64(1)
                and space.rank[v, c] != last):
            last = space.rank[v, c]
            seen += 1
            if seen == stop:
                break
    return seen, last


@njit(cache=True, nogil=True)
def _draw_descriptor_cut(state, space, v, cat_words, rule_mask):
    """A cut of descriptor variable ``v`` uniformly among the gaps between consecutive
    distinct values of the categories in ``cat_words``; the categories at or below it go to
    ``rule_mask``. Returns the rule's threshold ``1 + var_desc[v]``."""
    k = space.n_values[space.var_col[v]]
    if two_valued(space, v):  # both values among the categories (it can split): one cut
        randint(state, 1)  # the draw the walk below makes, so the stream stays the same
        for w in range(rule_mask.shape[0]):  # as wide as ``space.high`` (n_words)
            rule_mask[w] = cat_words[w] & ~space.high[v, w]
        return 1.0 + space.var_desc[v]
    n_distinct, _ = _distinct_ranks(space, v, cat_words, k)
    _, cut = _distinct_ranks(space, v, cat_words, 1 + randint(state, n_distinct - 1))
    for w in range(rule_mask.shape[0]):
        rule_mask[w] = 0
    for c in range(k):
        if ((cat_words[c >> 6] >> np.uint64(c & 63)) & np.uint64(1) == np.uint64(1)
                and space.rank[v, c] <= cut):
            rule_mask[c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    return 1.0 + space.var_desc[v]


# Below this a summed weight is taken in logs (``log_flagged_total``), where it keeps its
# precision however small the weights are.
TINY_TOTAL = 1e-200


@njit(cache=True, nogil=True)
def _fill_exp(log_w, out):
    for v in range(log_w.shape[0]):
        out[v] = math.exp(log_w[v])


@njit(cache=True, nogil=True)
def log_total_ratio(flags, log_a, log_b, a, b):
    """log(sum of a) - log(sum of b) over the flagged variables, given the weights ``a``, ``b``
    and their logs: summed directly, or in logs where a sum is below ``TINY_TOTAL``."""
    total_a = 0.0
    total_b = 0.0
    for v in range(flags.shape[0]):
        if flags[v]:
            total_a += a[v]
            total_b += b[v]
    if total_a > TINY_TOTAL and total_b > TINY_TOTAL:
        return math.log(total_a) - math.log(total_b)
    return log_flagged_total(flags, log_a) - log_flagged_total(flags, log_b)


@njit(cache=True, nogil=True)
def log_flagged_total(flags, log_w):
    """log of the summed weights exp(log_w) of the flagged variables (-inf if none)."""
    top = -np.inf
    for v in range(flags.shape[0]):
        if flags[v] and log_w[v] > top:
            top = log_w[v]
    if top == -np.inf:
        return top
    total = 0.0
    for v in range(flags.shape[0]):
        if flags[v] and log_w[v] > -np.inf:
            total += math.exp(log_w[v] - top)
    return top + math.log(total)


@njit(cache=True, nogil=True)
def _draw_weighted(state, flags, log_w, w):
    """A flagged variable with probability proportional to its weight ``w`` (= exp(log_w));
    -1 if none. Where the flagged weights sum below ``TINY_TOTAL`` the draw is made in logs."""
    total = 0.0
    for v in range(flags.shape[0]):
        if flags[v]:
            total += w[v]
    if total > TINY_TOTAL:
        u = uniform(state) * total
        last = -1
        acc = 0.0
        for v in range(flags.shape[0]):
            if flags[v] and w[v] > 0.0:
                acc += w[v]
                last = v
                if u < acc:
                    return v
        return last  # rounding left u above the last partial sum
    log_total = log_flagged_total(flags, log_w)
    if log_total == -np.inf:
        return -1
    u = uniform(state)
    last = -1
    acc = 0.0
    for v in range(flags.shape[0]):
        if flags[v] and log_w[v] > -np.inf:
            acc += math.exp(log_w[v] - log_total)
            last = v
            if u < acc:
                return v
    return last  # rounding left u above the last partial sum


@njit(cache=True, nogil=True)
def log_leaf_factor(prior, depth, splittable):
    """log P(node is a leaf): log(1 - p_split) if the node could split, else 0."""
    if not splittable:
        return 0.0
    return math.log1p(-split_prob(prior, depth))


@njit(cache=True, nogil=True)
def sample_prior_forest(state, forest, space, prior):
    """Overwrite every tree of ``forest`` with a draw from the tree prior.

    Returns 0, or -1 when a tree needs more node capacity than the arrays have (the caller
    grows the arrays and draws again with a fresh state copy).
    """
    feat, left, right, parent, depth = (forest.feat, forest.left, forest.right, forest.parent,
                                        forest.depth)
    kinds = space.kinds
    sub = new_subspace(kinds.shape[0], forest.mask.shape[2])
    rule_mask = np.zeros(forest.mask.shape[2], dtype=np.uint64)
    m, cap = feat.shape
    for t in range(m):
        for k in range(cap):
            feat[t, k] = -2
            left[t, k] = -1
            right[t, k] = -1
            parent[t, k] = -1
        feat[t, 0] = LEAF
        depth[t, 0] = 0
        n_used = 1
        # breadth-first: nodes are created in order, so scanning forward visits each once
        k = 0
        while k < n_used:
            node_subspace(forest, space, t, k, sub)
            j, th = draw_rule(state, space, sub, rule_mask, prior)
            if j >= 0 and uniform(state) < split_prob(prior, depth[t, k]):
                if n_used + 2 > cap:
                    return -1
                a = n_used
                b = n_used + 1
                n_used += 2
                split_leaf(forest, kinds, t, k, j, th, rule_mask, a, b)
            k += 1
    return 0


@njit(cache=True, nogil=True)
def log_gamma_variate(state, shape):
    """log of a Gamma(shape, 1) draw (Marsaglia and Tsang; shape < 1 via G(shape + 1) U^(1/shape)),
    kept in logs so that the tiny shapes of a sparse Dirichlet do not underflow."""
    boost = 0.0
    if shape < 1.0:
        boost = math.log(uniform(state)) / shape
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        if math.log(uniform(state)) < 0.5 * x * x + d - d * v + d * math.log(v):
            return math.log(d * v) + boost


@njit(cache=True, nogil=True)
def draw_log_dirichlet(state, shapes, active, out):
    """log of a Dirichlet(shapes) draw over the ``active`` entries into ``out`` (-inf elsewhere)."""
    top = -np.inf
    for j in range(shapes.shape[0]):
        out[j] = log_gamma_variate(state, shapes[j]) if active[j] else -np.inf
        top = max(top, out[j])
    total = 0.0
    for j in range(shapes.shape[0]):
        if active[j]:
            total += math.exp(out[j] - top)
    log_total = top + math.log(total)
    for j in range(shapes.shape[0]):
        if active[j]:
            out[j] -= log_total


@njit(cache=True, nogil=True)
def _log_conc_target(eta, n_active, sum_log_s):
    """log p(eta | s) + const for eta = logit(a / (a + P)): the Beta(0.5, 1) prior on rho, the
    Jacobian rho (1 - rho) of eta, and the Dirichlet(a/P) density of s as a function of a."""
    log_rho = -math.log1p(math.exp(-eta))
    log_1m = -math.log1p(math.exp(eta))
    a = n_active * math.exp(log_rho - log_1m)
    return (0.5 * log_rho + log_1m + math.lgamma(a) - n_active * math.lgamma(a / n_active)
            + (a / n_active) * sum_log_s)


@njit(cache=True, nogil=True)
def update_concentration(state, prior, n_steps, step):
    """Random-walk Metropolis steps on logit(a / (a + P)) given the weights (a's full
    conditional depends on the forest only through s)."""
    # int64 from the start: a literal 0 made type inference compile its callee twice
    n_active = np.int64(0)
    sum_log_s = 0.0
    for j in range(prior.log_w.shape[0]):
        if prior.active[j]:
            n_active += 1
            sum_log_s += prior.log_w[j]
    if n_active < 2:
        return
    a = prior.conc[0]
    eta = math.log(a / n_active)  # logit(rho) = log(a / P)
    cur = _log_conc_target(eta, n_active, sum_log_s)
    for _ in range(n_steps):
        prop = eta + step * normal(state)
        new = _log_conc_target(prop, n_active, sum_log_s)
        if math.log(uniform(state)) < new - cur:
            eta = prop
            cur = new
    prior.conc[0] = n_active * math.exp(eta)


@njit(cache=True, nogil=True)
def update_split_probs(state, forest, space, prior, sub, counts, shapes, log_new, w_old,
                       w_new):
    """One update of the split-feature weights s given the forest, then of a given s.

    Under the tree prior, s enters only through the rule probabilities of the internal nodes,
    ``prod_nodes s_j(node) / Z_node(s)`` with Z_node(s) the summed weight of the features that
    can split that node. We propose s* from Dirichlet(a/P + c), c the split counts per
    feature, which is s's full conditional when every Z_node is 1, and accept with
    ``prod_nodes Z_node(s) / Z_node(s*)`` (an independence Metropolis-Hastings step: target
    Dir(s; a/P) prod s_j^c_j / prod Z_node(s) over proposal Dir(s; a/P + c)). Where every
    active feature can split every node the ratio is exactly 1 (a Gibbs draw).

    Scratch: ``sub`` a ``Subspace``; ``counts`` (V,) int64; ``shapes``, ``log_new``, ``w_old``,
    ``w_new`` (V,) float64.
    """
    feat, thr = forest.feat, forest.thr
    d = space.var_col.shape[0]
    n_active = 0
    for j in range(d):
        counts[j] = 0
        if prior.active[j]:
            n_active += 1
    if n_active < 2:
        return
    m, cap = feat.shape
    for t in range(m):
        for k in range(cap):
            if feat[t, k] >= 0:
                counts[var_of(space, feat[t, k], thr[t, k])] += 1
    a_p = prior.conc[0] / n_active
    for j in range(d):
        shapes[j] = a_p + counts[j]
    draw_log_dirichlet(state, shapes, prior.active, log_new)
    log_r = 0.0
    flags = np.empty(d, dtype=np.bool_)
    # The weights themselves (``w_old``, ``w_new`` scratch), once, at the first node some
    # variable cannot split (they sum to 1, so none overflows): each node's two sums then
    # need no exp; a sum that underflows is taken again in logs.
    filled = False
    # every tree's root sees the whole domain: its term once, not once per tree
    root_term = 0.0
    root_known = False
    for t in range(m):
        for k in range(cap):
            if feat[t, k] >= 0:
                if forest.parent[t, k] < 0 and root_known:
                    log_r += root_term
                    continue
                node_subspace(forest, space, t, k, sub)
                term = 0.0
                if splittable_flags(space, sub, flags) < n_active:
                    if not filled:
                        _fill_exp(prior.log_w, w_old)
                        _fill_exp(log_new, w_new)
                        filled = True
                    term = log_total_ratio(flags, prior.log_w, log_new, w_old, w_new)
                    log_r += term
                if forest.parent[t, k] < 0:
                    root_term = term
                    root_known = True
    if math.log(uniform(state)) < log_r:
        set_split_weights(prior, log_new)
    update_concentration(state, prior, 5, 1.0)


@njit(cache=True, nogil=True)
def draw_split_prior(state, prior, shapes):
    """Overwrite the prior's a and s with a draw from their prior (the sparse prior only):
    rho = a / (a + P) ~ Beta(0.5, 1), i.e. rho = U^2; s ~ Dirichlet(a/P)."""
    n_active = 0
    for j in range(prior.active.shape[0]):
        if prior.active[j]:
            n_active += 1
    if n_active < 1:
        return
    u = uniform(state)
    rho = u * u
    a = n_active * rho / (1.0 - rho)
    prior.conc[0] = a
    for j in range(shapes.shape[0]):
        shapes[j] = a / n_active
    draw_log_dirichlet(state, shapes, prior.active, prior.log_w)
    set_split_weights(prior, prior.log_w)


def noise_prior_scale(nu: float, q: float) -> float:
    """InvGamma scale ``nu * lam / 2`` such that P(sigma_y^2 < 1) = q on standardized y."""
    shape = nu / 2.0

    def miss(log_scale: float) -> float:
        return stats.invgamma.cdf(1.0, shape, scale=math.exp(log_scale)) - q

    return math.exp(optimize.brentq(miss, -30.0, 30.0, xtol=1e-14))


def noise_prior(kind: str, nu: float, q: float, loc: float, scale: float) -> NoisePrior:
    """The ``NoisePrior`` named ``kind`` (one of ``NOISE_PRIORS``): the inverse gamma of
    ``nu`` and ``q``, or the log-normal of ``loc`` and ``scale`` (the other two unused)."""
    if kind == "inverse_gamma":
        return NoisePrior(INVERSE_GAMMA, nu / 2.0, noise_prior_scale(nu, q))
    if kind == "lognormal":
        if not (math.isfinite(loc) and math.isfinite(scale) and scale > 0.0):
            raise ValueError(f"noise_loc must be finite and noise_scale finite and > 0, got "
                             f"{loc!r}, {scale!r}")
        return NoisePrior(LOGNORMAL, float(loc), float(scale))
    raise ValueError(f"noise_prior must be one of {NOISE_PRIORS}, got {kind!r}")


def draw_noise_prior(gen: np.random.Generator, prior: NoisePrior) -> float:
    """One noise variance from ``prior`` (numpy's generator ``gen``)."""
    if prior.kind == LOGNORMAL:
        return float(math.exp(prior.a + prior.b * gen.standard_normal()))
    return prior.b / gen.gamma(prior.a)


@njit(cache=True, nogil=True)
def log_noise_prior(sigma2, prior):
    """Log density of the ``prior`` (a ``NoisePrior``) at sigma2, up to a constant.

    The log-normal's density in sigma2 carries the 1 / sigma2 of the change from log sigma2
    (the noise step adds the softplus Jacobian on top).
    """
    if prior.kind == LOGNORMAL:
        z = (math.log(sigma2) - prior.a) / prior.b
        return -math.log(sigma2) - 0.5 * z * z
    return -(prior.a + 1.0) * math.log(sigma2) - prior.b / sigma2


def draw_prior_forest(state: np.ndarray, space, m: int, alpha: float, beta: float,
                      capacity: int = 32, prior: TreePrior | None = None
                      ) -> dict[str, np.ndarray]:
    """One forest of ``m`` trees from the tree prior over ``space`` (a ``Space`` or its four
    arrays), advancing the chain state ``state``.

    ``prior`` (a ``TreePrior`` of this space) replaces alpha and beta when given; its weights
    are used as they are (draw them first with ``draw_split_prior`` for the sparse prior).
    Node capacity starts at ``capacity`` and doubles until the draw fits; a draw that ran out
    of room is redone from the same state, so the forest does not depend on the capacity
    (its arrays' width does).
    """
    from bofire_bark.engine.forest import empty_forest, n_words

    space = as_space(space)
    w = n_words(space.n_values)
    if prior is None:
        prior = tree_prior(alpha, beta, space)
    while True:
        forest = empty_forest(m, capacity, w)
        saved = state.copy()
        status = sample_prior_forest(state, Forest.of(forest), space, prior)
        if status == 0:
            return forest
        state[:] = saved
        capacity *= 2
