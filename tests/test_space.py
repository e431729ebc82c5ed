"""Tests for the BoFire-inputs -> split-space mapping."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalDescriptorInput,
    CategoricalInput,
    CategoricalTaskInput,
    ContinuousDescriptorInput,
    ContinuousInput,
    ContinuousMolecularInput,
    ContinuousOutput,
    ContinuousTaskInput,
    DiscreteInput,
)

from bofire_bark.space import (
    CATEGORICAL,
    CONTINUOUS,
    DISCRETE,
    SplitSpace,
    UnsupportedFeatureError,
)

DISCRETE_VALUES = [7.25, 0.5, 2.0]


def mixed_inputs() -> Inputs:
    return Inputs(
        features=[
            ContinuousInput(key="x_2", bounds=(-1.5, 3.0)),
            ContinuousInput(key="x_10", bounds=(10.0, 20.0)),
            ContinuousInput(key="x_1", bounds=(0.25, 0.25)),
            ContinuousDescriptorInput(
                key="x_cd", bounds=(0.0, 1.0), descriptors=["w"], values=[3.0]
            ),
            DiscreteInput(key="d", values=DISCRETE_VALUES),
            CategoricalInput(
                key="c",
                categories=["red", "green", "blue", "black"],
                allowed=[True, False, True, False],
            ),
            CategoricalDescriptorInput(
                key="cd",
                categories=["lo", "mid", "hi"],
                descriptors=["t"],
                values=[[1.0], [2.0], [3.0]],
            ),
        ]
    )


def random_experiments(inputs: Inputs, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data: dict[str, object] = {}
    for feature in inputs.get():
        if isinstance(feature, ContinuousInput):
            lo, hi = feature.bounds
            data[feature.key] = rng.uniform(lo, hi, n)
        elif isinstance(feature, DiscreteInput):
            data[feature.key] = rng.choice(feature.values, n)
        else:
            # all categories, including the ones that are not allowed
            data[feature.key] = rng.choice(np.array(feature.categories, dtype=object), n)
    # a shuffled, non-default index and column order must not matter
    frame = pd.DataFrame(data, index=rng.permutation(n) + 100)
    return frame[list(reversed(frame.columns))]


def test_key_order_follows_bofire_and_fields_line_up() -> None:
    inputs = Inputs(
        features=[
            ContinuousInput(key="x_2", bounds=(2.0, 3.0)),
            CategoricalInput(key="x_3", categories=["a", "b", "c"], allowed=[True, False, True]),
            ContinuousInput(key="x_10", bounds=(10.0, 11.0)),
            DiscreteInput(key="x_4", values=[5.0, 1.0, 3.5, 9.0]),
            ContinuousInput(key="x_1", bounds=(1.0, 1.5)),
        ]
    )
    space = SplitSpace.from_inputs(inputs)

    assert list(space.keys) == inputs.get_keys()
    # by type (continuous, discrete, categorical), then by key as a string
    assert space.keys == ("x_1", "x_10", "x_2", "x_4", "x_3")
    assert space.n_features == 5

    expected = {
        "x_1": (CONTINUOUS, 1.0, 1.5, 0),
        "x_10": (CONTINUOUS, 10.0, 11.0, 0),
        "x_2": (CONTINUOUS, 2.0, 3.0, 0),
        "x_4": (DISCRETE, 0.0, 3.0, 4),
        "x_3": (CATEGORICAL, 0.0, 2.0, 3),
    }
    for key, (kind, lo, hi, n) in expected.items():
        d = space.feature_index(key)
        assert space.keys[d] == key
        assert space.kinds[d] == kind
        assert space.lower[d] == lo
        assert space.upper[d] == hi
        assert space.n_values[d] == n
    d = space.feature_index("x_4")
    np.testing.assert_array_equal(space.values[d], [1.0, 3.5, 5.0, 9.0])
    assert space.categories[d] is None and space.allowed[d] is None
    c = space.feature_index("x_3")
    assert space.categories[c] == ("a", "b", "c")
    np.testing.assert_array_equal(space.allowed[c], [True, False, True])
    assert space.values[c] is None

    assert space.kinds.dtype == np.int64 and space.n_values.dtype == np.int64
    assert space.lower.dtype == np.float64 and space.upper.dtype == np.float64
    with pytest.raises(KeyError, match="nope"):
        space.feature_index("nope")


def test_from_domain_uses_inputs() -> None:
    inputs = mixed_inputs()
    domain = Domain(inputs=inputs, outputs=Outputs(features=[ContinuousOutput(key="y")]))
    assert SplitSpace.from_domain(domain).keys == SplitSpace.from_inputs(inputs).keys


def test_engine_arrays_are_contiguous_copies() -> None:
    space = SplitSpace.from_inputs(mixed_inputs())
    arrays = space.engine_arrays()
    expected = (space.kinds, space.lower, space.upper, space.n_values)
    dtypes = (np.int64, np.float64, np.float64, np.int64)
    for array, reference, dtype in zip(arrays, expected, dtypes, strict=True):
        assert array.flags.c_contiguous and array.flags.writeable
        assert array.dtype == dtype
        np.testing.assert_array_equal(array, reference)
    arrays[1][0] = 123.0
    assert space.lower[0] != 123.0


def test_encoding_is_ordered_and_uses_indices() -> None:
    space = SplitSpace.from_inputs(mixed_inputs())
    df = pd.DataFrame(
        {
            "x_2": [2.5, -1.0, 0.125],
            "x_10": [10.0, 19.5, 15.0],
            "x_1": [0.25, 0.25, 0.25],
            "x_cd": [0.5, 0.0, 1.0],
            "d": [7.25, 0.5, 2.0],
            "c": ["black", "red", "green"],
            "cd": ["hi", "lo", "mid"],
            "y": [1.0, 2.0, 3.0],
        }
    )
    X = space.encode(df)
    assert X.shape == (3, space.n_features)
    assert X.dtype == np.float64 and X.flags.c_contiguous
    np.testing.assert_array_equal(X[:, space.feature_index("x_2")], [2.5, -1.0, 0.125])
    np.testing.assert_array_equal(X[:, space.feature_index("d")], [2.0, 0.0, 1.0])
    np.testing.assert_array_equal(X[:, space.feature_index("c")], [3.0, 0.0, 1.0])
    np.testing.assert_array_equal(X[:, space.feature_index("cd")], [2.0, 0.0, 1.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_round_trip_is_exact_on_mixed_domain(seed: int) -> None:
    inputs = mixed_inputs()
    space = SplitSpace.from_inputs(inputs)
    df = random_experiments(inputs, n=200, seed=seed)

    X = space.encode(df)
    back = space.decode(X)

    assert list(back.columns) == list(space.keys)
    pd.testing.assert_index_equal(back.index, pd.RangeIndex(200))
    original = df.reset_index(drop=True)
    for feature in inputs.get():
        key = feature.key
        if isinstance(feature, CategoricalInput):
            assert back[key].dtype == object
            assert all(type(v) is str for v in back[key])
            assert back[key].tolist() == original[key].tolist()
        else:
            # bitwise equality, not approximate
            got = back[key].to_numpy(dtype=np.float64)
            want = original[key].to_numpy(dtype=np.float64)
            np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    # every category, including non-allowed ones, was present and survived
    assert set(back["c"]) == {"red", "green", "blue", "black"}
    assert set(back["d"]) == set(DISCRETE_VALUES)


def test_decode_rounds_indices_and_rejects_out_of_range() -> None:
    inputs = Inputs(
        features=[
            DiscreteInput(key="d", values=[0.5, 2.0, 7.25]),
            CategoricalInput(key="c", categories=["a", "b"]),
        ]
    )
    space = SplitSpace.from_inputs(inputs)
    c, d = space.feature_index("c"), space.feature_index("d")
    X = np.zeros((2, 2))
    X[:, d] = [1.2, 1.7]
    X[:, c] = [0.4, 0.6]
    back = space.decode(X)
    assert back["d"].tolist() == [2.0, 7.25]
    assert back["c"].tolist() == ["a", "b"]

    X[0, d] = 3.0
    with pytest.raises(ValueError, match="'d'"):
        space.decode(X)
    with pytest.raises(ValueError, match="shape"):
        space.decode(np.zeros((2, 3)))


def test_seventy_categories_round_trip() -> None:
    categories = [f"cat_{i:02d}" for i in range(70)][::-1]
    allowed = [i % 3 != 0 for i in range(70)]
    inputs = Inputs(features=[CategoricalInput(key="c", categories=categories, allowed=allowed)])
    space = SplitSpace.from_inputs(inputs)
    assert space.n_values[0] == 70
    assert space.upper[0] == 69.0
    assert space.categories[0] == tuple(categories)

    rng = np.random.default_rng(7)
    data = list(categories) + list(rng.choice(np.array(categories, dtype=object), 130))
    df = pd.DataFrame({"c": data})
    X = space.encode(df)
    np.testing.assert_array_equal(X[:70, 0], np.arange(70, dtype=np.float64))
    assert space.decode(X)["c"].tolist() == data


def test_unsupported_task_input_is_refused() -> None:
    for task in (
        CategoricalTaskInput(key="task_a", categories=["t1", "t2"]),
        ContinuousTaskInput(key="task_b", bounds=(0.0, 1.0)),
    ):
        inputs = Inputs(features=[ContinuousInput(key="x", bounds=(0, 1)), task])
        with pytest.raises(UnsupportedFeatureError, match=task.key) as info:
            SplitSpace.from_inputs(inputs)
        assert type(task).__name__ in str(info.value)
        assert isinstance(info.value, ValueError)


def test_continuous_molecular_inputs_are_refused() -> None:
    """(Categorical molecular inputs are split by their fingerprints:
    tests/test_molecular_inputs.py.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            molecular = [
                ContinuousMolecularInput(key="mol_cont", bounds=(0.0, 1.0), molecule="CCO"),
            ]
        except Exception as err:  # pragma: no cover - depends on the cheminformatics stack
            pytest.skip(f"molecular inputs not constructible here: {err}")
    for feature in molecular:
        inputs = Inputs(features=[ContinuousInput(key="x", bounds=(0, 1)), feature])
        with pytest.raises(UnsupportedFeatureError, match=feature.key) as info:
            SplitSpace.from_inputs(inputs)
        assert type(feature).__name__ in str(info.value)


@pytest.fixture
def space() -> SplitSpace:
    return SplitSpace.from_inputs(mixed_inputs())


@pytest.fixture
def valid_df(space: SplitSpace) -> pd.DataFrame:
    return random_experiments(mixed_inputs(), n=5, seed=3)


def test_unknown_category_names_feature_and_value(
    space: SplitSpace, valid_df: pd.DataFrame
) -> None:
    valid_df.loc[valid_df.index[2], "cd"] = "purple"
    with pytest.raises(ValueError, match=r"'cd'.*'purple'"):
        space.encode(valid_df)


def test_discrete_value_not_in_values_names_feature_and_value(
    space: SplitSpace, valid_df: pd.DataFrame
) -> None:
    valid_df.loc[valid_df.index[1], "d"] = 2.0 + 1e-6
    with pytest.raises(ValueError, match=r"'d'.*2\.000001"):
        space.encode(valid_df)
    # float noise within rtol=1e-9 is accepted and snaps to the given value
    valid_df.loc[valid_df.index[1], "d"] = 2.0 * (1 + 1e-12)
    X = space.encode(valid_df)
    assert space.decode(X)["d"].iloc[1] == 2.0


@pytest.mark.parametrize("key", ["x_10", "d", "c"])
def test_nan_names_feature(space: SplitSpace, valid_df: pd.DataFrame, key: str) -> None:
    valid_df[key] = valid_df[key].astype(object)
    valid_df.loc[valid_df.index[0], key] = np.nan
    with pytest.raises(ValueError, match=f"'{key}'.*NaN"):
        space.encode(valid_df)


def test_missing_columns_are_named(space: SplitSpace, valid_df: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"'x_2'.*'cd'|'cd'.*'x_2'"):
        space.encode(valid_df.drop(columns=["x_2", "cd"]))


def test_allow_zero_feature_spans_zero():
    inputs = Inputs(features=[ContinuousInput(key="a", bounds=(0.2, 1.0), allow_zero=True)])
    space = SplitSpace.from_inputs(inputs)
    assert space.lower[0] == 0.0 and space.upper[0] == 1.0
    X = space.encode(pd.DataFrame({"a": [0.0, 0.5]}))
    assert X[:, 0].tolist() == [0.0, 0.5]
