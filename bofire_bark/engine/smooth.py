"""A smooth share of BARK's kernel (issue 35): a forest where the data say so, a smooth GP where
they say that instead.

Kernel on standardized outputs, per posterior sample with share ``s`` in (0, 1):

    k(x, x') = (1 - s) k_forest(x, x') + s k_rbf(u(x), u(x')),
    K = (1 - s) A / m + s E + sigma^2 I,

with ``A`` the shared-leaf counts of the ``m`` trees, ``E[n, n'] = k_rbf(u_n, u_n')``, and
``k_rbf(u, u') = exp(-sum_j (u_j - u'_j)^2 / (2 l_j^2))`` over the *smooth coordinates* ``u``:
the continuous inputs scaled to [0, 1] and rounded to the centre of one of ``n_bins`` equal
bins. Both parts have prior variance 1, so k(x, x) = 1 as in BARK. The share is sampled with
the trees and the noise (``likelihood``/``proposals``: a random-walk step on logit s under a
Beta prior); the lengths ``l_j`` are fixed for a fit (the surrogate chooses them).

Why bins: every tree is constant on the cells of the grid of split thresholds, which is what
makes the grid search exact on a cell (``optimize.grid``). Rounding the smooth coordinates to
bins whose edges join the grid's thresholds keeps the whole kernel constant on each cell, so
a decided box is still scored exactly; with 32 bins a bin is 1/32 of the range, well below
the lengths a smooth response needs (the mixture's shortest fitted length was 0.17).

A bin is the number of its edges strictly below x (``np.searchsorted(edges, x, "left")``): a
point on an edge belongs to the bin on its left, as a point on a threshold goes left in a
tree (``x <= t``).

Categorical inputs may join the smooth part (``cat_cols``): coordinate j then holds the
category's code and contributes a table, k_rbf(u, u') = exp(-sum_j (u_j - u'_j)^2 / (2 l_j^2)
- sum_c D_c[a_c, a'_c]), with ``D_c[a, b]`` half the squared distance of categories a and b in
the length-scaled encoding the surrogate chose (one-hot or descriptors, as BoFire's GP encodes
them). A product kernel: an untried pair of categories is only as correlated with the tried
pairs as each category is with the others, which a forest, adding up the trees of each input,
is not.

Prediction at x (``SmoothSystem``): with k_n(x) = (1 - s) c_n(x) / m + s k_rbf(u(x), u_n),
c_n(x) the number of trees where x shares X_n's leaf, mean = k^T K^-1 y and latent variance
1 - k^T K^-1 k. Pending points join the data with the sample's own mean as their value
(kriging believer, as ``predict.leaf_system_pending``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bofire_bark.engine.forest import Forest, route_all
from bofire_bark.engine.predict import KNOWN_NOISE, bordered_inverse

DEFAULT_BINS = 32
MAX_BINS = 1024


def bin_edges(lower: float, upper: float, n_bins: int) -> np.ndarray:
    """The n_bins - 1 interior edges of equal bins over [lower, upper]."""
    b = int(n_bins)
    return lower + (upper - lower) * np.arange(1, b) / b


def bins_of(X: np.ndarray, cols: np.ndarray, lower: np.ndarray, upper: np.ndarray,
            n_bins: int) -> np.ndarray:
    """(n, len(cols)) int64 bin of columns ``cols`` of the encoded rows ``X``, each over its
    [lower, upper] in ``n_bins`` bins; a value on an edge goes to the left bin, as
    ``x <= t`` does in a tree."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    out = np.empty((len(X), len(cols)), dtype=np.int64)
    for j, col in enumerate(cols):
        out[:, j] = np.searchsorted(bin_edges(lower[j], upper[j], n_bins), X[:, col],
                                    side="left")
    return out


@dataclass(frozen=True)
class SmoothKernel:
    """The smooth part's fixed settings for one fit.

    Attributes:
        cols: (Ds,) int64 encoded columns of the binned coordinates (continuous inputs).
        lower, upper: (Ds,) their bounds (the range scaled to [0, 1]).
        lengths: (Ds,) RBF length of each, in units of the scaled range.
        n_bins: bins per coordinate.
        cat_cols: (Dc,) int64 encoded columns of the categorical coordinates (none by default).
        cat_d2: (Dc, C, C) per categorical coordinate, half the squared scaled distance of
            codes a and b (symmetric, zero diagonal; C at least each input's number of codes).
    At least one coordinate of either kind.
    """

    cols: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    lengths: np.ndarray
    n_bins: int = DEFAULT_BINS
    cat_cols: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cat_d2: np.ndarray = field(default_factory=lambda: np.zeros((0, 1, 1)))

    def __post_init__(self) -> None:
        for name in ("cols", "lower", "upper", "lengths", "cat_cols", "cat_d2"):
            dtype = np.int64 if name.endswith("cols") else np.float64
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype))
        d = len(self.cols)
        if any(len(getattr(self, k)) != d for k in ("lower", "upper", "lengths")):
            raise ValueError("SmoothKernel: cols, lower, upper and lengths need one entry per "
                             "binned coordinate")
        if not d + len(self.cat_cols):
            raise ValueError("SmoothKernel: needs at least one coordinate (cols or cat_cols)")
        if not np.all(self.upper > self.lower):
            raise ValueError("SmoothKernel: each smooth coordinate needs upper > lower")
        if not np.all(np.isfinite(self.lengths) & (self.lengths > 0)):
            raise ValueError(f"SmoothKernel: lengths must be finite and > 0, got "
                             f"{self.lengths.tolist()}")
        if not 2 <= int(self.n_bins) <= MAX_BINS:
            raise ValueError(f"SmoothKernel: n_bins must be in 2 .. {MAX_BINS}, got "
                             f"{self.n_bins}")
        t = self.cat_d2
        if (t.ndim != 3 or t.shape[0] != len(self.cat_cols) or t.shape[1] != t.shape[2]
                or len(np.intersect1d(self.cols, self.cat_cols))):
            raise ValueError("SmoothKernel: cat_d2 needs one (C, C) table per entry of "
                             "cat_cols, and a column is binned or categorical, not both")
        if not (np.all(np.isfinite(t)) and np.all(t >= 0) and np.allclose(t, t.transpose(0, 2, 1))
                and not np.any(np.diagonal(t, axis1=1, axis2=2))):
            raise ValueError("SmoothKernel: each cat_d2 table must be finite, >= 0, symmetric "
                             "and zero on its diagonal")

    @property
    def n_coords(self) -> int:
        """Binned plus categorical coordinates (the columns of ``coords``)."""
        return len(self.cols) + len(self.cat_cols)

    def edges(self, j: int) -> np.ndarray:
        """The n_bins - 1 interior bin edges of binned coordinate ``j``, in the input's units
        (what the grid search adds to the feature's thresholds)."""
        return bin_edges(self.lower[j], self.upper[j], self.n_bins)

    def bins(self, X: np.ndarray) -> np.ndarray:
        """(n, Ds) int64 bin of each binned coordinate of the encoded rows ``X`` (n, D)."""
        return bins_of(X, self.cols, self.lower, self.upper, self.n_bins)

    def codes(self, X: np.ndarray) -> np.ndarray:
        """(n, Dc) int64 code of each categorical coordinate of the encoded rows ``X``."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        codes = X[:, self.cat_cols].astype(np.int64)
        if codes.size and (codes.min() < 0 or codes.max() >= self.cat_d2.shape[1]):
            raise ValueError("SmoothKernel: a categorical code outside its cat_d2 table")
        return codes

    def coords(self, X: np.ndarray, binned: bool = True) -> np.ndarray:
        """(n, Ds + Dc) the smooth coordinates u of ``X``: bin centres on [0, 1], then the
        categorical codes (as floats). ``binned=False``: the scaled values themselves, the
        kernel's continuous extension between bin centres (what ``tie_break="smooth"`` ranks
        the points of one cell by; the model and its search stay binned)."""
        if binned:
            u = (self.bins(X) + 0.5) / int(self.n_bins)
        else:
            X = np.atleast_2d(np.asarray(X, dtype=np.float64))
            u = np.clip((X[:, self.cols] - self.lower) / (self.upper - self.lower), 0.0, 1.0)
        return np.concatenate((u, self.codes(X).astype(np.float64)), axis=1)

    def gram(self, U1: np.ndarray, U2: np.ndarray) -> np.ndarray:
        """k_rbf between smooth coordinates (n1, Ds + Dc) and (n2, Ds + Dc): (n1, n2)."""
        ds = len(self.cols)
        d2 = (((U1[:, None, :ds] - U2[None, :, :ds]) / self.lengths) ** 2).sum(axis=-1) * 0.5
        for j in range(len(self.cat_cols)):
            d2 += self.cat_d2[j][np.ix_(U1[:, ds + j].astype(np.int64),
                                        U2[:, ds + j].astype(np.int64))]
        return np.exp(-d2)


# cat_d2 between two categories a smooth part keeps apart (a plain categorical input's): the
# factor exp(-40) ~ 4e-18 is 0 for the posterior yet keeps every bound's arithmetic finite
SEPARATE = 40.0


def category_d2(encoding: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(C, C) half the squared distance of the rows of ``encoding`` (C, p), each column
    divided by its length: a categorical coordinate's ``cat_d2`` table."""
    Z = np.asarray(encoding, np.float64) / np.asarray(lengths, np.float64)
    d2 = 0.5 * ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1)
    np.fill_diagonal(d2, 0.0)
    return d2


def shared_counts(leaf_a: np.ndarray, leaf_b: np.ndarray) -> np.ndarray:
    """(na, nb): in how many trees row a's leaf (``leaf_a`` (m, na)) is row b's (``leaf_b``)."""
    return (leaf_a[:, :, None] == leaf_b[:, None, :]).sum(axis=0).astype(np.float64)


def kernel_matrix(share: float, counts: np.ndarray, E: np.ndarray, m: int) -> np.ndarray:
    """(1 - s) A / m + s E (no noise)."""
    return (1.0 - share) * counts / m + share * E


@dataclass(frozen=True)
class SmoothSystem:
    """N-space GP of one sample with a smooth share, over its N training (then pending)
    points: ``leaf_of`` (m, N) their leaves, ``U`` (N, Ds + Dc) their smooth coordinates,
    ``Kinv`` (N, N), ``alpha`` = K^-1 y (N,), ``share``, ``sigma2``."""

    leaf_of: np.ndarray
    U: np.ndarray
    Kinv: np.ndarray
    alpha: np.ndarray
    share: float
    sigma2: float

    def cross(self, forest: Forest, kinds: np.ndarray, kernel: SmoothKernel,
              Xnew: np.ndarray, binned: bool = True) -> np.ndarray:
        """k(x, X_n) for the rows of ``Xnew``: (n, N) (``binned``: ``SmoothKernel.coords``)."""
        m = forest.feat.shape[0]
        leaf_new = np.empty((m, len(Xnew)), dtype=np.int64)
        route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, Xnew,
                  leaf_new)
        return self._cross_routed(leaf_new, kernel.coords(Xnew, binned), kernel)

    def _cross_routed(self, leaf_new: np.ndarray, U_new: np.ndarray,
                      kernel: SmoothKernel) -> np.ndarray:
        """``cross`` from the new points' leaves (m, n) and smooth coordinates (n, Ds + Dc)."""
        return kernel_matrix(self.share, shared_counts(leaf_new, self.leaf_of),
                             kernel.gram(U_new, self.U), leaf_new.shape[0])

    def predict(self, forest: Forest, kinds: np.ndarray, kernel: SmoothKernel,
                Xnew: np.ndarray, binned: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(mean, latent variance) at ``Xnew`` (n, D), standardized units (``binned``:
        ``SmoothKernel.coords``)."""
        k = self.cross(forest, kinds, kernel, Xnew, binned)
        var = 1.0 - np.einsum("ij,jk,ik->i", k, self.Kinv, k)
        return k @ self.alpha, np.clip(var, 0.0, 1.0)

    def known(self, forest: Forest, kinds: np.ndarray, kernel: SmoothKernel,
              Xk: np.ndarray) -> SmoothSystem:
        """This system also conditioned on the latent values at ``Xk`` (n_k, D) taken as known,
        each at the sample's own mean there (``predict.leaf_system_known``'s counterpart):
        per point, the bordered inverse of K with the point's row and k(x, x) plus
        ``KNOWN_NOISE`` sigma^2 on the diagonal; alpha gains a zero, as the point's value is
        its mean."""
        system = self
        m = forest.feat.shape[0]
        for i in range(len(Xk)):
            x = np.ascontiguousarray(Xk[i:i + 1], dtype=np.float64)
            leaf_x = np.empty((m, 1), dtype=np.int64)
            route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, x,
                      leaf_x)
            u_x = kernel.coords(x)
            Kinv = bordered_inverse(system.Kinv, system._cross_routed(leaf_x, u_x, kernel)[0],
                                    1.0 + KNOWN_NOISE * system.sigma2)
            system = SmoothSystem(np.concatenate((system.leaf_of, leaf_x), axis=1),
                                  np.concatenate((system.U, u_x)), Kinv,
                                  np.append(system.alpha, 0.0), system.share, system.sigma2)
        return system


def smooth_system(forest: Forest, kinds: np.ndarray, kernel: SmoothKernel, X: np.ndarray,
                  y: np.ndarray, sigma2: float, share: float,
                  X_pending: np.ndarray | None = None) -> SmoothSystem:
    """The ``SmoothSystem`` of one sample, conditioned on ``X_pending`` (kriging believer)."""
    m = forest.feat.shape[0]
    leaf_of = np.empty((m, len(X)), dtype=np.int64)
    route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds, X,
              leaf_of)
    U = kernel.coords(X)
    system = _solve(leaf_of, U, y, kernel, m, sigma2, share)
    if X_pending is None or len(X_pending) == 0:
        return system
    yp, _ = system.predict(forest, kinds, kernel, X_pending)
    leaf_p = np.empty((m, len(X_pending)), dtype=np.int64)
    route_all(forest.feat, forest.thr, forest.mask, forest.left, forest.right, kinds,
              X_pending, leaf_p)
    return _solve(np.concatenate((leaf_of, leaf_p), axis=1),
                  np.concatenate((U, kernel.coords(X_pending))), np.concatenate((y, yp)),
                  kernel, m, sigma2, share)


def _solve(leaf_of, U, y, kernel, m, sigma2, share) -> SmoothSystem:
    K = kernel_matrix(share, shared_counts(leaf_of, leaf_of), kernel.gram(U, U), m)
    K[np.diag_indices_from(K)] += sigma2
    L = np.linalg.cholesky(K)
    Linv = np.linalg.solve(L, np.eye(len(K)))
    Kinv = Linv.T @ Linv
    Kinv = 0.5 * (Kinv + Kinv.T)
    return SmoothSystem(leaf_of, U, Kinv, Kinv @ y, float(share), float(sigma2))


__all__ = ["DEFAULT_BINS", "MAX_BINS", "SmoothKernel", "SmoothSystem", "category_d2",
           "kernel_matrix", "shared_counts", "smooth_system"]
