"""Priors of the BARK model (paper section 4 and appendix F).

Tree prior: a node at depth d is internal with probability ``alpha * (1 + d) ** -beta`` if any
feature can still split the part of the domain that reaches it, and is a leaf otherwise.
Split rule of an internal node: a feature uniformly among those that can split there, then
a value uniformly from the node's own subspace (continuous: the interval reaching it;
discrete: a cut between the values reaching it; categorical: a non-empty proper subset of
the categories reaching it, sent left).

Noise prior on standardized outputs: ``sigma_y^2 ~ InvGamma(shape=nu/2, scale=nu*lam/2)``,
with ``lam`` chosen so that ``P(sigma_y^2 < 1) = q`` (BART's calibration with the data
variance, which is 1 after standardization). Paper defaults: nu=3, q=0.9.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import optimize, stats

from bofire_bark.engine.forest import (
    CATEGORICAL,
    DISCRETE,
    LEAF,
    Forest,
    Space,
    can_split,
    new_subspace,
    node_subspace,
    split_leaf,
)
from bofire_bark.engine.rng import randint, uniform


class TreePrior(NamedTuple):
    """The tree prior's depth parameters: a splittable node at depth d is internal with
    probability ``alpha (1 + d)^-beta`` (floats)."""

    alpha: float
    beta: float


class NoisePrior(NamedTuple):
    """InvGamma(shape, scale) prior of the noise variance (floats, standardized units)."""

    shape: float
    scale: float


@njit(cache=True, nogil=True)
def split_prob(prior, depth):
    """Prior probability that a splittable node at ``depth`` is internal."""
    return prior.alpha * (1.0 + depth) ** (-prior.beta)


@njit(cache=True, nogil=True)
def draw_rule(state, kinds, sub, rule_mask):
    """Draw a split rule from the node's subspace ``sub``; returns (feature, threshold).

    For a categorical feature the subset sent left is written to ``rule_mask`` (W,).
    Returns feature -1 when no feature can split.
    """
    lo, hi, cats = sub
    d = kinds.shape[0]
    n_ok = 0
    for j in range(d):
        if can_split(kinds[j], lo[j], hi[j], cats[j]):
            n_ok += 1
    if n_ok == 0:
        return -1, 0.0
    pick = randint(state, n_ok)
    j = -1
    for jj in range(d):
        if can_split(kinds[jj], lo[jj], hi[jj], cats[jj]):
            if pick == 0:
                j = jj
                break
            pick -= 1
    if kinds[j] == CATEGORICAL:
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
    if kinds[j] == DISCRETE:
        # cut after index i in [lo, hi - 1]: left gets [lo, i], right [i + 1, hi]
        n_cuts = np.int64(hi[j] - lo[j])
        return j, lo[j] + randint(state, n_cuts)
    return j, lo[j] + (hi[j] - lo[j]) * uniform(state)


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
            j, th = draw_rule(state, kinds, sub, rule_mask)
            if j >= 0 and uniform(state) < split_prob(prior, depth[t, k]):
                if n_used + 2 > cap:
                    return -1
                a = n_used
                b = n_used + 1
                n_used += 2
                split_leaf(forest, kinds, t, k, j, th, rule_mask, a, b)
            k += 1
    return 0


def noise_prior_scale(nu: float, q: float) -> float:
    """InvGamma scale ``nu * lam / 2`` such that P(sigma_y^2 < 1) = q on standardized y."""
    shape = nu / 2.0

    def miss(log_scale: float) -> float:
        return stats.invgamma.cdf(1.0, shape, scale=math.exp(log_scale)) - q

    return math.exp(optimize.brentq(miss, -30.0, 30.0, xtol=1e-14))


@njit(cache=True, nogil=True)
def log_noise_prior(sigma2, prior):
    """Log density of the InvGamma ``prior`` (a ``NoisePrior``) at sigma2, up to a constant."""
    return -(prior.shape + 1.0) * math.log(sigma2) - prior.scale / sigma2


def draw_prior_forest(state: np.ndarray, kinds: np.ndarray, lower: np.ndarray,
                      upper: np.ndarray, n_values: np.ndarray, m: int, alpha: float,
                      beta: float, capacity: int = 32) -> dict[str, np.ndarray]:
    """One forest of ``m`` trees from the tree prior, advancing the chain state ``state``.

    Node capacity starts at ``capacity`` and doubles until the draw fits; a draw that ran out
    of room is redone from the same state, so the forest does not depend on the capacity
    (its arrays' width does).
    """
    from bofire_bark.engine.forest import empty_forest, n_words

    w = n_words(n_values)
    space = Space(kinds, lower, upper, n_values)
    prior = TreePrior(float(alpha), float(beta))
    while True:
        forest = empty_forest(m, capacity, w)
        saved = state.copy()
        status = sample_prior_forest(state, Forest.of(forest), space, prior)
        if status == 0:
            return forest
        state[:] = saved
        capacity *= 2

