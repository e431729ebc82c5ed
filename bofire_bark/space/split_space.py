"""Translate a BoFire domain's inputs into the split space used by the BARK tree engine.

The engine works on a dense float64 matrix ``X`` of shape ``(N, D)`` and routes a point to the
left child of a split iff ``x[d] <= threshold``. Every input feature is therefore encoded as a
single ordered number:

* ``ContinuousInput`` (and ``ContinuousDescriptorInput``): the value itself.
* ``DiscreteInput``: the index of the value in the sorted ``values`` (``0 .. K-1``).
* ``CategoricalInput`` (and ``CategoricalDescriptorInput``): the index of the category in the
  feature's ``categories`` (all categories, including the ones that are not ``allowed``).

How a categorical feature splits: by subsets of its categories (any subset may go left), or,
for a ``CategoricalDescriptorInput`` with the ``DESCRIPTOR`` encoding (the default, as in
BoFire's GP surrogates), by its descriptors: "permittivity <= 20 goes left" sends the
categories whose permittivity is at most 20 left, so a category never tried is predicted
from the categories with similar descriptors. ``engine_space`` hands the engine these
split variables (``bofire_bark.engine.forest.Space``).

Feature order: column ``d`` of ``X`` is the feature ``keys[d]``, and ``keys`` is exactly
``inputs.get_keys()``. BoFire sorts that list by feature type first and then by key compared
as a string, so ``x_10`` comes before ``x_2``. Code that builds ``X`` by hand must follow this
order (or use :meth:`SplitSpace.feature_index`).

Molecular and task inputs (and any input type not listed above) are refused with
:class:`UnsupportedFeatureError` when the space is built.
"""

from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.enum import CategoricalEncodingEnum
from bofire.data_models.features.api import (
    CategoricalDescriptorInput,
    CategoricalInput,
    CategoricalMolecularInput,
    ContinuousDescriptorInput,
    ContinuousInput,
    DiscreteInput,
)
from bofire.data_models.molfeatures.api import Fingerprints, MolFeatures

from bofire_bark.kinds import CATEGORICAL, CONTINUOUS, DISCRETE  # noqa: F401 (re-exported)
from bofire_bark.space.molecules import _molecular_table

__all__ = [
    "check_encodings",
    "descriptor_table",
    "CATEGORICAL",
    "CONTINUOUS",
    "DISCRETE",
    "SUPPORTED_INPUTS",
    "SplitSpace",
    "UnsupportedFeatureError",
]


_KIND_NAMES = {CONTINUOUS: "continuous", DISCRETE: "discrete", CATEGORICAL: "categorical"}

# Tolerances for matching data to the values of a DiscreteInput. Tighter than BoFire's own
# rtol (1e-7) so that a value is only accepted when it is the given value up to float noise.
_DISCRETE_RTOL = 1e-9
_DISCRETE_ATOL = 1e-12

# Exact input types BARK splits on (one list: the data models import it). Exact types, since
# task inputs and continuous molecular inputs subclass supported classes and are refused.
SUPPORTED_INPUTS: tuple[type, ...] = (
    ContinuousInput,
    ContinuousDescriptorInput,
    DiscreteInput,
    CategoricalInput,
    CategoricalDescriptorInput,
    CategoricalMolecularInput,
)

# How many offending entries an error message lists before it stops.
_MAX_SHOWN = 5


class UnsupportedFeatureError(ValueError):
    """An input feature whose type the BARK split space cannot represent."""

    def __init__(self, key: str, feature_type: str) -> None:
        self.key = key
        self.feature_type = feature_type
        super().__init__(
            f"Input feature {key!r} of type {feature_type} is not supported by BARK "
            "(supported: ContinuousInput, DiscreteInput, CategoricalInput, their "
            "descriptor variants and CategoricalMolecularInput; task inputs and "
            "ContinuousMolecularInput are not supported)."
        )


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array, copy=True, order="C")
    array.setflags(write=False)
    return array


def _show(items: Any) -> str:
    items = list(items)
    shown = ", ".join(repr(item) for item in items[:_MAX_SHOWN])
    if len(items) > _MAX_SHOWN:
        shown += f", ... ({len(items)} in total)"
    return shown




def check_encodings(inputs: Inputs, encodings: dict | None) -> dict:
    """Per categorical input key, its encoding: the given one, else BoFire's GP default:
    ``DESCRIPTOR`` for a ``CategoricalDescriptorInput``, ``Fingerprints()`` for a
    ``CategoricalMolecularInput`` and ``ONE_HOT`` (subsets of the categories) for others.
    A descriptor encoding's table is built here (``descriptor_table``), so that its errors
    come at spec validation.

    Raises:
        ValueError: naming the key that is no categorical input, an encoding the feature
            cannot take (``DESCRIPTOR`` without descriptors, a featurizer on a non-molecular
            input), a missing descriptor value, an unparsable SMILES, or a molecular
            featurizer without RDKit (the ``[chem]`` extra).
    """
    encodings = dict(encodings or {})
    categorical = {f.key: f for f in inputs.get(CategoricalInput, exact=False)}
    for key, value in encodings.items():
        if key not in categorical:
            match = difflib.get_close_matches(str(key), list(categorical), n=1)
            hint = f"; did you mean {match[0]!r}?" if match else ""
            raise ValueError(f"categorical_encodings names {key!r}, which is not a categorical "
                             f"input (categorical inputs: {sorted(categorical)}){hint}")
        feature = categorical[key]
        if isinstance(value, MolFeatures):
            if not isinstance(feature, CategoricalMolecularInput):
                raise ValueError(f"categorical_encodings[{key!r}] is a molecular featurizer "
                                 f"({type(value).__name__}), but input {key!r} is no "
                                 "CategoricalMolecularInput")
            continue
        try:
            value = CategoricalEncodingEnum(value)
        except ValueError:
            raise ValueError(f"categorical_encodings[{key!r}] = {value!r}: expected one of "
                             f"{[e.value for e in CategoricalEncodingEnum]} or a molecular "
                             "featurizer") from None
        if value == CategoricalEncodingEnum.DESCRIPTOR and type(feature) is not \
                CategoricalDescriptorInput:
            raise ValueError(f"categorical_encodings[{key!r}] = DESCRIPTOR, but input {key!r} "
                             "has no descriptors (a CategoricalDescriptorInput has; a "
                             "CategoricalMolecularInput takes a featurizer such as "
                             "Fingerprints())")
        encodings[key] = value
    for key, feature in categorical.items():
        if key not in encodings:
            if isinstance(feature, CategoricalMolecularInput):
                encodings[key] = Fingerprints()
            elif isinstance(feature, CategoricalDescriptorInput):
                encodings[key] = CategoricalEncodingEnum.DESCRIPTOR
            else:
                encodings[key] = CategoricalEncodingEnum.ONE_HOT
        if _splits_by_descriptors(encodings[key]):
            descriptor_table(feature, encodings[key])  # its errors belong to validation
    return encodings


def _splits_by_descriptors(encoding) -> bool:
    return isinstance(encoding, MolFeatures) or encoding == CategoricalEncodingEnum.DESCRIPTOR


# Featurized tables by (feature, SMILES, featurizer), least recently used first. Bounded: a
# long-lived process (a service answering many domains) would otherwise keep every table;
# locked: strategies in threads share it, and an eviction racing another would fail.
_TABLES: dict[tuple, tuple[np.ndarray, tuple[str, ...]]] = {}
_TABLES_SIZE = 32
_TABLES_LOCK = threading.Lock()


def _cached_molecular_table(feature, encoding) -> tuple[np.ndarray, tuple[str, ...]]:
    cache_key = (feature.key, tuple(feature.categories), encoding.model_dump_json())
    with _TABLES_LOCK:
        hit = _TABLES.pop(cache_key, None)
        if hit is not None:
            _TABLES[cache_key] = hit  # now the most recently used
            return hit
    # featurize outside the lock (seconds for large libraries); two threads may both do it
    hit = _molecular_table(feature, encoding)
    with _TABLES_LOCK:
        _TABLES[cache_key] = hit
        while len(_TABLES) > _TABLES_SIZE:
            del _TABLES[next(iter(_TABLES))]
    return hit


def descriptor_table(feature: CategoricalInput, encoding=CategoricalEncodingEnum.DESCRIPTOR
                     ) -> tuple[np.ndarray, tuple[str, ...]]:
    """The descriptors a feature splits on, (n_categories, n) with their names: those that
    take two values or more over its categories (all of them, allowed or not). For a
    ``CategoricalDescriptorInput`` its own table; for a ``CategoricalMolecularInput`` the
    table BoFire's featurizer ``encoding`` computes from the SMILES (fingerprint bits are
    0/1 descriptors: "has substructure k"), computed once per feature and featurizer (the
    last ``_TABLES_SIZE`` kept).

    Raises:
        ValueError: naming the feature (and descriptor and category) of a missing or
            infinite descriptor value, or of a SMILES RDKit cannot parse; a featurizer
            without RDKit installed (the ``[chem]`` extra).
    """
    if isinstance(encoding, MolFeatures):
        table, names = _cached_molecular_table(feature, encoding)
    else:
        table = np.asarray(feature.values, dtype=np.float64).reshape(len(feature.categories),
                                                                     -1)
        names = tuple(feature.descriptors)
        bad = np.argwhere(~np.isfinite(table))
        if len(bad):
            i, k = bad[0]
            raise ValueError(f"Input {feature.key!r}: descriptor {names[k]!r} of category "
                             f"{feature.categories[i]!r} is {table[i, k]} (descriptor values "
                             "must be finite numbers)")
    keep = [k for k in range(table.shape[1]) if len(np.unique(table[:, k])) > 1]
    if not keep:
        raise ValueError(f"Input {feature.key!r}: no descriptor takes two values over its "
                         "categories, so descriptors cannot tell them apart (use the "
                         "ONE_HOT encoding)")
    return table[:, keep], tuple(names[k] for k in keep)


@dataclass(frozen=True, eq=False)
class SplitSpace:
    """The engine's view of a BoFire input space: one ordered float column per input feature.

    All array fields are stored as read-only C-contiguous copies; use :meth:`engine_arrays` to
    get writable arrays for numba kernels.

    Attributes:
        keys: Feature keys in column order, exactly ``inputs.get_keys()`` (see module docs).
        kinds: ``(D,)`` int64, one of ``CONTINUOUS``, ``DISCRETE``, ``CATEGORICAL``.
        lower: ``(D,)`` float64. Continuous: lower bound; discrete and categorical: ``0.0``.
        upper: ``(D,)`` float64. Continuous: upper bound; discrete: ``K - 1``; categorical:
            ``n_categories - 1``.
        n_values: ``(D,)`` int64. Discrete: number of values ``K``; categorical: number of
            categories (all of them, not only the allowed ones); continuous: ``0``.
        values: Per feature, for discrete features the sorted float64 values ``(K,)``, else
            ``None``.
        categories: Per feature, for categorical features all categories in the feature's own
            order, else ``None``.
        allowed: Per feature, for categorical features a bool mask ``(n_categories,)`` of the
            categories the optimizer may propose, else ``None``.
        descriptors: Per feature, for a categorical feature split by its descriptors the
            table ``(n_categories, n_descriptors)`` float64 of the descriptors it splits on
            (those that take two values or more), else ``None``.
        descriptor_names: Per feature, the names of the ``descriptors`` columns, else None.
        subset_splits: Whether a feature with ``descriptors`` also splits by subsets of its
            categories (features without descriptors always do).
    """

    keys: tuple[str, ...]
    kinds: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n_values: np.ndarray
    values: tuple[np.ndarray | None, ...]
    categories: tuple[tuple[str, ...] | None, ...]
    allowed: tuple[np.ndarray | None, ...]
    descriptors: tuple[np.ndarray | None, ...] | None = None
    descriptor_names: tuple[tuple[str, ...] | None, ...] | None = None
    subset_splits: bool = False

    def __post_init__(self) -> None:
        keys = tuple(str(key) for key in self.keys)
        n = len(keys)
        if len(set(keys)) != n:
            raise ValueError(f"Duplicate feature keys in split space: {keys}.")
        fields = {
            "kinds": _readonly(np.asarray(self.kinds, dtype=np.int64)),
            "lower": _readonly(np.asarray(self.lower, dtype=np.float64)),
            "upper": _readonly(np.asarray(self.upper, dtype=np.float64)),
            "n_values": _readonly(np.asarray(self.n_values, dtype=np.int64)),
        }
        for name, array in fields.items():
            if array.shape != (n,):
                raise ValueError(f"{name} must have shape ({n},), got {array.shape}.")
        for name in ("values", "categories", "allowed"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} must have one entry per feature ({n}).")
        values = tuple(
            None if v is None else _readonly(np.asarray(v, dtype=np.float64)) for v in self.values
        )
        categories = tuple(None if c is None else tuple(str(x) for x in c) for c in self.categories)
        allowed = tuple(
            None if a is None else _readonly(np.asarray(a, dtype=bool)) for a in self.allowed
        )
        for d, key in enumerate(keys):
            kind = int(fields["kinds"][d])
            k = int(fields["n_values"][d])
            if kind == CONTINUOUS:
                ok = values[d] is None and categories[d] is None and k == 0
            elif kind == DISCRETE:
                ok = values[d] is not None and values[d].shape == (k,) and categories[d] is None
            elif kind == CATEGORICAL:
                ok = (
                    categories[d] is not None
                    and len(categories[d]) == k
                    and allowed[d] is not None
                    and allowed[d].shape == (k,)
                    and values[d] is None
                )
            else:
                raise ValueError(f"Feature {key!r} has unknown kind {kind}.")
            if not ok:
                raise ValueError(
                    f"Inconsistent split-space entries for {_KIND_NAMES[kind]} feature {key!r}."
                )
        object.__setattr__(self, "keys", keys)
        for name, array in fields.items():
            object.__setattr__(self, name, array)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "allowed", allowed)
        descriptors = self.descriptors or (None,) * n
        names = self.descriptor_names or (None,) * n
        if len(descriptors) != n or len(names) != n:
            raise ValueError("descriptors and descriptor_names need one entry per feature")
        descriptors = tuple(None if t is None else _readonly(np.asarray(t, dtype=np.float64))
                            for t in descriptors)
        for d, key in enumerate(keys):
            table = descriptors[d]
            if table is None:
                continue
            if (int(fields["kinds"][d]) != CATEGORICAL or table.ndim != 2
                    or table.shape[0] != int(fields["n_values"][d]) or names[d] is None
                    or len(names[d]) != table.shape[1]):
                raise ValueError(f"Inconsistent descriptor table for feature {key!r}.")
        object.__setattr__(self, "descriptors", descriptors)
        object.__setattr__(self, "descriptor_names", tuple(
            None if x is None else tuple(str(v) for v in x) for x in names))

    @classmethod
    def from_inputs(cls, inputs: Inputs, categorical_encodings: dict | None = None,
                    subset_splits: bool = False) -> SplitSpace:
        """Build the split space of a BoFire ``Inputs`` container.

        Args:
            inputs: The input features. Columns follow ``inputs.get_keys()``.
            categorical_encodings: Per categorical feature key, BoFire's
                ``CategoricalEncodingEnum`` or a molecular featurizer: ``DESCRIPTOR`` (the
                default for a ``CategoricalDescriptorInput``) and a featurizer (default
                ``Fingerprints()`` for a ``CategoricalMolecularInput``) split by
                descriptors, others by subsets of the categories (see
                ``check_encodings``). None: every categorical feature splits by subsets
                (enough for encoding and decoding points; the model passes its encodings).
            subset_splits: Features split by descriptors also split by subsets.

        Returns:
            The split space with ``D = len(inputs)`` features.

        Raises:
            UnsupportedFeatureError: If an input is molecular, a task input, or of any type
                other than continuous, discrete or categorical (incl. descriptor variants).
        """
        keys = tuple(inputs.get_keys())
        encodings = check_encodings(inputs, categorical_encodings) \
            if categorical_encodings is not None else {}
        tables: list[np.ndarray | None] = []
        names: list[tuple[str, ...] | None] = []
        kinds, lower, upper, n_values = [], [], [], []
        values: list[np.ndarray | None] = []
        categories: list[tuple[str, ...] | None] = []
        allowed: list[np.ndarray | None] = []
        for key in keys:
            feature = inputs.get_by_key(key)
            if type(feature) not in SUPPORTED_INPUTS:
                raise UnsupportedFeatureError(key, type(feature).__name__)
            table, table_names = None, None
            if categorical_encodings is not None and _splits_by_descriptors(
                    encodings.get(key)):
                table, table_names = descriptor_table(feature, encodings[key])
            tables.append(table)
            names.append(table_names)
            if isinstance(feature, ContinuousInput):
                kinds.append(CONTINUOUS)
                # allow_zero with a positive lower bound means {0} u [lb, ub]: the split
                # space starts at 0 so inactive (zero) experiments stay representable.
                lb = float(feature.lower_bound)
                lower.append(min(lb, 0.0) if getattr(feature, "allow_zero", False) else lb)
                upper.append(float(feature.upper_bound))
                n_values.append(0)
                values.append(None)
                categories.append(None)
                allowed.append(None)
            elif isinstance(feature, DiscreteInput):
                vals = np.sort(np.asarray(feature.values, dtype=np.float64))
                kinds.append(DISCRETE)
                lower.append(0.0)
                upper.append(float(len(vals) - 1))
                n_values.append(len(vals))
                values.append(vals)
                categories.append(None)
                allowed.append(None)
            elif isinstance(feature, CategoricalInput):
                cats = tuple(feature.categories)
                mask = (
                    np.ones(len(cats), dtype=bool)
                    if feature.allowed is None
                    else np.asarray(feature.allowed, dtype=bool)
                )
                kinds.append(CATEGORICAL)
                lower.append(0.0)
                upper.append(float(len(cats) - 1))
                n_values.append(len(cats))
                values.append(None)
                categories.append(cats)
                allowed.append(mask)
            else:
                raise UnsupportedFeatureError(key, type(feature).__name__)
        return cls(
            keys=keys,
            kinds=np.asarray(kinds, dtype=np.int64),
            lower=np.asarray(lower, dtype=np.float64),
            upper=np.asarray(upper, dtype=np.float64),
            n_values=np.asarray(n_values, dtype=np.int64),
            values=tuple(values),
            categories=tuple(categories),
            allowed=tuple(allowed),
            descriptors=tuple(tables),
            descriptor_names=tuple(names),
            subset_splits=subset_splits,
        )

    @classmethod
    def from_domain(cls, domain: Domain) -> SplitSpace:
        """Build the split space of ``domain.inputs`` (see :meth:`from_inputs`)."""
        return cls.from_inputs(domain.inputs)

    @property
    def n_features(self) -> int:
        """Number of features ``D``."""
        return len(self.keys)

    def feature_index(self, key: str) -> int:
        """Column of feature ``key`` in encoded arrays.

        Raises:
            KeyError: If ``key`` is not a feature of this space.
        """
        try:
            return self.keys.index(key)
        except ValueError:
            raise KeyError(f"Unknown feature key {key!r}; known keys: {list(self.keys)}") from None

    def engine_space(self):
        """The engine's ``Space``: ``engine_arrays`` and the split variables (a feature with
        ``descriptors`` splits by each of them, and by subsets if ``subset_splits``)."""
        # imported here: the data models import this module and must not load numba
        from bofire_bark.engine.forest import split_variables

        return split_variables(*self.engine_arrays(), [
            None if t is None else (np.array(t), self.subset_splits) for t in self.descriptors])

    def split_variable_names(self) -> list[str]:
        """One name per split variable of ``engine_space``: the feature's key, or for a
        descriptor ``key_descriptor`` (BoFire's name for its descriptor-encoded column)."""
        out = []
        for key, table_names in zip(self.keys, self.descriptor_names, strict=True):
            if table_names is None or self.subset_splits:
                out.append(key)
            if table_names is not None:
                out.extend(f"{key}_{name}" for name in table_names)
        return out

    def split_variable_inputs(self) -> list[str]:
        """The input key of each split variable of ``engine_space`` (same order as
        ``split_variable_names``): the descriptors of an input all name that input."""
        out = []
        for key, table_names in zip(self.keys, self.descriptor_names, strict=True):
            n = 0 if table_names is None else len(table_names)
            out.extend([key] * (n + (table_names is None or self.subset_splits)))
        return out

    def engine_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Fresh writable, C-contiguous copies of the per-feature arrays for numba kernels.

        Returns:
            ``(kinds, lower, upper, n_values)``, each of shape ``(D,)``; ``kinds`` and
            ``n_values`` are int64, ``lower`` and ``upper`` float64.
        """
        return (
            np.array(self.kinds, dtype=np.int64, order="C"),
            np.array(self.lower, dtype=np.float64, order="C"),
            np.array(self.upper, dtype=np.float64, order="C"),
            np.array(self.n_values, dtype=np.int64, order="C"),
        )

    def encode(self, experiments: pd.DataFrame) -> np.ndarray:
        """Encode the input columns of ``experiments`` for the engine.

        Extra columns (outputs, ``valid_*``, ...) are ignored; the row index is not used.
        Categories that exist but are not ``allowed`` are accepted.

        Args:
            experiments: Data with one column per key in ``keys``, ``N`` rows.

        Returns:
            ``(N, D)`` float64, C-contiguous; column ``d`` encodes ``keys[d]``.

        Raises:
            ValueError: If columns are missing, a column contains NaN, a discrete value is not
                one of the feature's values, or a category is unknown.
        """
        missing = [key for key in self.keys if key not in experiments.columns]
        if missing:
            raise ValueError(f"Experiments lack the input column(s) {missing}.")
        X = np.empty((len(experiments), self.n_features), dtype=np.float64, order="C")
        for d, key in enumerate(self.keys):
            column = experiments[key]
            if pd.isna(column).any():
                raise ValueError(f"Input column {key!r} contains NaN/missing values.")
            kind = int(self.kinds[d])
            if kind == CATEGORICAL:
                X[:, d] = self._encode_categorical(d, column)
            else:
                numbers = self._as_float(key, column)
                if not np.isfinite(numbers).all():
                    raise ValueError(f"Input column {key!r} contains non-finite values.")
                X[:, d] = numbers if kind == CONTINUOUS else self._encode_discrete(d, numbers)
        return X

    def outside_bounds(self, X: np.ndarray) -> dict[str, int]:
        """Rows of encoded ``X`` (N, D) outside each continuous feature's bounds, by key
        (features with none left out). Trees split inside the bounds, so such rows fall in
        the outermost leaves; the search never leaves the bounds."""
        cont = np.flatnonzero(self.kinds == CONTINUOUS)
        out = (X[:, cont] < self.lower[cont]) | (X[:, cont] > self.upper[cont])
        counts = out.sum(axis=0)
        return {self.keys[j]: int(n) for j, n in zip(cont, counts, strict=True) if n}

    def decode(self, X: np.ndarray) -> pd.DataFrame:
        """Map encoded points back to feature values.

        Discrete and categorical columns are rounded to the nearest index first.

        Args:
            X: ``(N, D)`` encoded points.

        Returns:
            DataFrame with columns ``keys`` and index ``0 .. N-1``: continuous and discrete
            columns float64 (discrete values exactly as given in the feature), categorical
            columns object dtype holding the category strings.

        Raises:
            ValueError: If ``X`` has the wrong shape or a discrete/categorical entry is not a
                valid index.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (N, {self.n_features}), got {X.shape}.")
        n = X.shape[0]
        columns: dict[str, pd.Series] = {}
        for d, key in enumerate(self.keys):
            kind = int(self.kinds[d])
            if kind == CONTINUOUS:
                data, dtype = X[:, d].copy(), np.float64
            elif kind == DISCRETE:
                data, dtype = self.values[d][self._decode_index(d, X[:, d])], np.float64
            else:
                labels = np.empty(len(self.categories[d]), dtype=object)
                labels[:] = self.categories[d]
                # explicit object dtype: pandas >= 3 would otherwise infer its string dtype
                data, dtype = labels[self._decode_index(d, X[:, d])], object
            columns[key] = pd.Series(data, dtype=dtype, index=pd.RangeIndex(n), copy=False)
        return pd.DataFrame(columns, columns=list(self.keys), index=pd.RangeIndex(n))

    @staticmethod
    def _as_float(key: str, column: pd.Series) -> np.ndarray:
        try:
            return column.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"Input column {key!r} is not numeric: {err}") from err

    def _encode_discrete(self, d: int, numbers: np.ndarray) -> np.ndarray:
        vals = self.values[d]
        nearest = np.abs(numbers[:, None] - vals[None, :]).argmin(axis=1)
        matched = np.isclose(numbers, vals[nearest], rtol=_DISCRETE_RTOL, atol=_DISCRETE_ATOL)
        if not matched.all():
            bad = pd.unique(numbers[~matched])
            raise ValueError(
                f"Discrete feature {self.keys[d]!r} got value(s) {_show(bad)} that are not "
                f"among its values {vals.tolist()}."
            )
        return nearest.astype(np.float64)

    def _encode_categorical(self, d: int, column: pd.Series) -> np.ndarray:
        cats = self.categories[d]
        codes = pd.Index(cats, dtype=object).get_indexer(column.to_numpy(dtype=object))
        unknown = codes < 0
        if unknown.any():
            bad = pd.unique(column.to_numpy(dtype=object)[unknown])
            raise ValueError(
                f"Categorical feature {self.keys[d]!r} got unknown category(ies) {_show(bad)}; "
                f"its categories are {list(cats)}."
            )
        return codes.astype(np.float64)

    def _decode_index(self, d: int, column: np.ndarray) -> np.ndarray:
        k = int(self.n_values[d])
        rounded = np.rint(column)
        valid = np.isfinite(rounded) & (rounded >= 0) & (rounded <= k - 1)
        if not valid.all():
            raise ValueError(
                f"{_KIND_NAMES[int(self.kinds[d])].capitalize()} feature {self.keys[d]!r} got "
                f"encoded value(s) {_show(pd.unique(column[~valid]))} outside 0..{k - 1}."
            )
        return rounded.astype(np.int64)
