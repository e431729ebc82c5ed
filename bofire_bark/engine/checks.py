"""Checks at the engine's entry points: nothing reaches a numba kernel unchecked.

Kernels index arrays without bounds checks, so a short ``y``, a category code out of range or
a NaN would read out of bounds or fit nonsense silently. Every public entry point
(``fit_posterior``, ``sample_prior``, ``Posterior.predict`` / ``predict_each``) passes its
arrays through these functions, which raise ``ValueError`` naming the argument and what was
expected, and return C-contiguous copies of the right dtype.
"""

from __future__ import annotations

import numpy as np

from bofire_bark.engine.forest import (
    CATEGORICAL,
    CONTINUOUS,
    DISCRETE,
    Space,
    category_classes,
    n_words,
    split_variables,
    transposed_bits,
    two_value_bits,
)


def check_space(space) -> Space:
    """The split ``Space`` as the kernels expect it, from a ``Space`` or the four arrays
    ``(kinds, lower, upper, n_values)`` (every feature then splits by its own rules)."""
    try:
        kinds, lower, upper, n_values = space[:4]
    except (TypeError, ValueError) as err:
        raise ValueError("space must be the 4 arrays (kinds, lower, upper, n_values) of "
                         "SplitSpace.engine_arrays() or a Space") from err
    arrays = []
    for name, a, dtype in (("kinds", kinds, np.int64), ("lower", lower, np.float64),
                           ("upper", upper, np.float64), ("n_values", n_values, np.int64)):
        a = np.asarray(a)
        if a.ndim != 1 or len(a) == 0:
            raise ValueError(f"space {name} must be a non-empty 1-D array, got shape {a.shape}")
        arrays.append(np.ascontiguousarray(a, dtype=dtype))
    kinds, lower, upper, n_values = arrays
    d = len(kinds)
    if any(len(a) != d for a in arrays):
        raise ValueError("space arrays kinds, lower, upper, n_values must have one length, got "
                         f"{[len(a) for a in arrays]}")
    if not np.isin(kinds, (CONTINUOUS, DISCRETE, CATEGORICAL)).all():
        raise ValueError(f"space kinds must be 0 (continuous), 1 (discrete) or 2 (categorical), "
                         f"got {sorted(set(kinds.tolist()))}")
    cont = kinds == CONTINUOUS
    if not (np.isfinite(lower[cont]).all() and np.isfinite(upper[cont]).all()
            and (lower[cont] <= upper[cont]).all()):
        raise ValueError("space lower and upper must be finite with lower <= upper for "
                         "continuous features")
    if (n_values[~cont] < 1).any():
        raise ValueError("space n_values must be >= 1 for discrete and categorical features")
    if not isinstance(space, Space):
        return split_variables(kinds, lower, upper, n_values)
    _check_variables(space, d)
    return Space(kinds, lower, upper, n_values, *(np.ascontiguousarray(a) for a in space[4:]))


def _check_variables(space: Space, d: int) -> None:
    """The split variables index within the space (kernels do not check)."""
    var_col, var_desc, rank, order, var_start, high, cat_class, two_bits, tbits = space[4:]
    n_vars = len(var_col)
    ok = (var_col.dtype == var_desc.dtype == rank.dtype == order.dtype == var_start.dtype
          == np.int64 and var_col.shape == var_desc.shape == (n_vars,) and n_vars >= d
          and var_start.shape == (d + 1,) and rank.ndim == order.ndim == 2
          and rank.shape == order.shape and rank.shape[0] == n_vars
          and high.dtype == np.uint64 and high.ndim == 2 and high.shape[0] == n_vars
          and cat_class.dtype == np.int64 and cat_class.ndim == 2 and cat_class.shape[0] == d
          and cat_class.shape[1] >= max(1, int(np.max(space.n_values, initial=0)))
          and two_bits.dtype == tbits.dtype == np.uint64
          and two_bits.shape == (max(1, (n_vars + 63) // 64),) and tbits.ndim == 2
          and tbits.shape == (cat_class.shape[1], two_bits.shape[0]))
    if ok:
        ok = (var_start[0] == 0 and var_start[-1] == n_vars and (np.diff(var_start) >= 1).all()
              and (var_col == np.repeat(np.arange(d), np.diff(var_start))).all())
    for j in range(d) if ok else ():
        desc = var_desc[var_start[j]:var_start[j + 1]]
        first = int(desc[0])
        ok = (first in (-1, 0) and (desc == np.arange(first, first + len(desc))).all()
              and (space.kinds[j] == CATEGORICAL or len(desc) == 1 and first == -1))
        if not ok:
            break
    if ok:
        width = rank.shape[1]
        for v in np.flatnonzero(var_desc >= 0):
            k = int(space.n_values[var_col[v]])
            if space.kinds[var_col[v]] != CATEGORICAL or k > width:
                ok = False
                break
            row = rank[v, :k]
            if (row < 0).any() or not np.array_equal(np.sort(order[v, :k]), np.arange(k)) \
                    or (np.diff(row[order[v, :k]]) < 0).any():
                ok = False
                break
    if ok:
        expected = two_value_bits(rank, var_desc >= 0, n_words(space.n_values))
        ok = high.shape == expected.shape and np.array_equal(high, expected)
    if ok:  # the derived tables are rebuilt and compared, as ``high`` is
        two, tb = transposed_bits(high, space.n_values)
        classes = category_classes(space.kinds, space.n_values, var_start, var_desc, rank)
        ok = (np.array_equal(cat_class, classes) and np.array_equal(two_bits, two)
              and np.array_equal(tbits, tb))
    if not ok:
        raise ValueError("space split variables are inconsistent (build them with "
                         "engine.forest.split_variables)")


def check_X(X, space, name: str = "X", allow_empty: bool = False) -> np.ndarray:
    """Encoded inputs (N, D), finite, discrete indices and category codes whole numbers in
    0 .. n_values - 1; N >= 1 unless ``allow_empty`` (prediction at no points is no error)."""
    kinds, n_values = space[0], space[3]
    try:
        X = np.array(X, dtype=np.float64, order="C")
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a numeric array of shape (N, {len(kinds)})") from err
    if X.ndim != 2 or X.shape[1] != len(kinds):
        raise ValueError(f"{name} must have shape (N, {len(kinds)}) (one column per feature of "
                         f"the space), got {X.shape}")
    if X.shape[0] == 0 and not allow_empty:
        raise ValueError(f"{name} has no rows")
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} has a NaN or infinite value (row {i}, column {j})")
    coded = kinds != CONTINUOUS
    if coded.any():
        Z = X[:, coded]
        top = n_values[coded][None, :]
        wrong = (Z != np.round(Z)) | (Z < 0) | (Z >= top)
        if wrong.any():
            i, c = np.argwhere(wrong)[0]
            j = int(np.flatnonzero(coded)[c])
            what = "category code" if kinds[j] == CATEGORICAL else "discrete value index"
            raise ValueError(f"{name}[{i}, {j}] = {float(X[i, j])!r} is not a valid {what}: "
                             f"expected a whole number in 0 .. {int(n_values[j]) - 1}")
    return X


def check_y(y, n: int) -> np.ndarray:
    """Outputs (N,) matching the N rows of X, finite (a constant y is fine)."""
    try:
        y = np.array(y, dtype=np.float64, order="C")
    except (TypeError, ValueError) as err:
        raise ValueError(f"y must be a numeric array of shape ({n},)") from err
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0].copy()
    if y.ndim != 1 or len(y) != n:
        raise ValueError(f"y must have shape ({n},) (one value per row of X), got {y.shape}")
    if not np.isfinite(y).all():
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(f"y has a NaN or infinite value (row {row})")
    return y
