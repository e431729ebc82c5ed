"""Acquisition rules for one output: how a posterior sample's mean and sd become a value.

Every rule is an average over the posterior samples,

    a(x) = (1/S) sum_s g(sign mu_s(x), sigma_s(x); f_s),

in standardized units of the output (``sign`` +1 maximizes it, -1 minimizes it), with g
nondecreasing in the mean. ``f_s`` is the sample's incumbent (unused by UCB).

- ``"ucb"`` (BoFire's ``qUCB(beta)``, kappa = sqrt(beta)): g = m + kappa s.
- ``"ei"`` (``qEI``, ``qLogEI``): the expected improvement over the best measured value f
  (the same for every sample), g = s h((m - f) / s) with h(z) = z Phi(z) + phi(z), and
  max(m - f, 0) at s = 0. Nondecreasing in m and in s. The log of the average has the same
  maximizers, so ``qLogEI`` is answered by the same search (BoTorch takes the log for its
  gradients; the grid search needs none).
- ``"nei"`` (``qNEI``, ``qLogNEI``): the same g, the incumbent taken under noise per sample:
  f_s = the best posterior mean of sample s at the measured points and at the pending ones
  (the batch so far: each member then aims above the members before it). The improvement is
  over the incumbent's latent value, which is as uncertain as the point x is like it: every
  sample is first conditioned on its latent value at x* (the measured point of the best mean
  over the samples) taken as known at its mean (``prepare``). Re-measuring x* then gains
  nothing, as under BoTorch's joint qNEI, where a marginal EI would credit a point beside x*
  with the noise sd times 0.4; far from x* the sd is unchanged.
- ``"pi"`` (``qPI``): the probability of improvement over the best measured value,
  g = Phi((m - f) / s) (at s = 0: 1 above f, 0 below). Nondecreasing in m; increasing in s
  below f, decreasing above.

The bound over a box (``region_max``, used by ``grid.bound``): the kernel bounds each sample's
mean, m <= A, its sd, L <= s <= B (L = B = the exact sd on a decided box, else 0 and 1, the
prior's sd), and the two together, m + k s <= C (the UCB bound with weight k, ``COUPLING``).
For a g nondecreasing in m the largest value in that region lies on the path
m = min(A, C - k s), L <= s <= B. Along that path g is monotone in s on each of its two pieces
for PI (z is monotone in s there) and for EI (nondecreasing in s where m = A, convex on the
line m + k s = C), so the largest value is at one of the three sds L, (C - A) / k (clipped to
[L, B]) and B. On a decided box L = B and the bound is the exact value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.special import ndtr

from bofire_bark.defaults import DEFAULT_KAPPA

# Rule codes the numba kernels read.
UCB, EI, PI = 0, 1, 2
# Several objectives: the expected hypervolume improvement (``optimize.hypervolume``; the
# grid's channels bound with the UCB at the coupling weight).
HYPERVOLUME_RULES = ("ehvi", "nehvi")
SINGLE_OUTPUT_RULES = ("ucb", "ei", "nei", "pi")
# Rules whose value can only fall, at every point, when one more pending point is added (the
# next candidate of a batch): the believer keeps every sample's mean and shrinks its sd, UCB
# and EI are nondecreasing in both, and NEI's incumbent can only rise. PI grows as the sd
# shrinks above its incumbent. A batch's searches reuse each other's bounds under these.
BATCH_RULES = ("ucb", "ei", "nei")
RULES = (*SINGLE_OUTPUT_RULES, *HYPERVOLUME_RULES)
CODES = {"ucb": UCB, "ei": EI, "nei": EI, "pi": PI, "ehvi": UCB, "nehvi": UCB}
# The weight k of the coupled bound m + k s <= C for EI and PI (any k > 0 is valid; it sets
# how tight the bound is: 1.96, UCB's default, where the kernels are tuned).
COUPLING = DEFAULT_KAPPA

_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class Rule:
    """An acquisition rule: ``name`` (one of ``RULES``) and, for "ucb", its weight ``kappa``."""

    name: str = "ucb"
    kappa: float = DEFAULT_KAPPA

    @property
    def code(self) -> int:
        return CODES[self.name]

    @property
    def coupling(self) -> float:
        """The weight of the coupled bound the kernels compute (the UCB's own kappa)."""
        return float(self.kappa) if self.name == "ucb" else COUPLING

    def validate(self) -> None:
        if self.name not in RULES:
            raise ValueError(f"acquisition rule must be one of {RULES}, got {self.name!r}.")
        if not np.isfinite(self.kappa) or self.kappa < 0:
            raise ValueError(f"kappa must be a finite number >= 0, got {self.kappa}.")

    def incumbents(self, posterior, systems, sign: float,
                   pending: np.ndarray | None = None) -> np.ndarray:
        """f_s per posterior sample (S,), standardized units (zeros for UCB)."""
        S = len(posterior.samples["sigma2"])
        if self.name == "ucb":
            return np.zeros(S)
        if self.name in ("ei", "pi"):
            return np.full(S, float(np.max(sign * np.asarray(posterior.y))))
        return self._means(posterior, systems, sign, pending).max(axis=1)

    def prepare(self, posterior, systems, sign: float,
                pending: np.ndarray | None = None) -> np.ndarray:
        """The incumbents (``incumbents``), after conditioning ``systems``
        (``engine.predict.SampleSystems``, in place) for NEI on the latent value at the
        incumbent point x* taken as known (module docstring). x* is the same for every member
        of a batch (pending points leave the means as they are), so each later search's sds
        can only shrink."""
        if self.name != "nei":
            return self.incumbents(posterior, systems, sign, pending)
        means = self._means(posterior, systems, sign, pending)
        # the known value is each sample's own mean: every mean stays as it is
        star = int(np.argmax(means[:, :len(posterior.X)].mean(axis=0)))
        systems.condition_known(posterior.X[[star]])
        return means.max(axis=1)

    @staticmethod
    def _means(posterior, systems, sign: float, pending) -> np.ndarray:
        """sign * each sample's means at the measured points, then the pending ones (S, n)."""
        X = posterior.X if pending is None or len(pending) == 0 else np.concatenate(
            (posterior.X, np.asarray(pending, dtype=np.float64).reshape(-1, posterior.X.shape[1])))
        return sign * systems.predict_each(X)[0]

    def values(self, means: np.ndarray, variances: np.ndarray, sign: float,
               best: np.ndarray) -> np.ndarray:
        """g per sample and point, (S, n), from the engine's (S, n) means and variances."""
        m = sign * means
        sd = np.sqrt(np.maximum(variances, 0.0))
        if self.name == "ucb":
            return m + self.kappa * sd
        d = m - np.asarray(best, dtype=np.float64)[:, None]
        pos = sd > 0
        safe = np.where(pos, sd, 1.0)
        z = d / safe
        if self.code == EI:
            h = z * ndtr(z) + np.exp(-0.5 * z * z) * _INV_SQRT2PI
            return np.where(pos, safe * h, np.maximum(d, 0.0))
        return np.where(pos, ndtr(z), (d > 0).astype(np.float64))

    def score(self, systems, X: np.ndarray, sign: float, best: np.ndarray,
              binned: bool = True) -> np.ndarray:
        """a(x) at the encoded points ``X`` (n, D): the mean of ``values`` over samples
        (``binned``: ``SampleSystems.predict_each``)."""
        means, variances = systems.predict_each(X, binned)
        return self.values(means, variances, sign, best).mean(axis=0)


@njit(cache=True, nogil=True, inline="always")
def rule_value(code, m, sd, f):
    """g(m, sd; f) of rule ``code`` for EI and PI (UCB is composed by the kernels)."""
    d = m - f
    if sd <= 0.0:
        if code == EI:
            return max(d, 0.0)
        return 1.0 if d > 0.0 else 0.0
    z = d / sd
    cdf = 0.5 * math.erfc(-z / _SQRT2)
    if code == EI:
        return sd * (z * cdf + math.exp(-0.5 * z * z) * _INV_SQRT2PI)
    return cdf


@njit(cache=True, nogil=True, inline="always")
def region_max(code, k, A, L, B, C, f):
    """Upper bound of g over {m <= A, L <= s <= B, m + k s <= C} (module docstring)."""
    if L >= B:  # decided: the exact value
        return rule_value(code, A, B, f)
    s1 = (C - A) / k
    s1 = min(max(s1, L), B)
    best = -np.inf
    for i in range(3):
        s = L if i == 0 else (s1 if i == 1 else B)
        v = rule_value(code, min(A, C - k * s), s, f)
        if v > best:
            best = v
    return best
