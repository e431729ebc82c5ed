"""Descriptor inputs through the surrogate and the strategy: the descriptors decide what is
predicted for a category never tried, the encodings are checked at spec validation, and
relevance, dumps and asks know the descriptors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalDescriptorInput,
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
)
from bofire.data_models.objectives.api import MaximizeObjective

from bofire_bark.data_models.strategy import BARKStrategy as StrategyModel
from bofire_bark.data_models.surrogate import BARKSurrogate as SurrogateModel
from bofire_bark.surrogate import BARKSurrogate

CATS = [f"c{i}" for i in range(12)]
FAST = {"n_chains": 2, "n_samples": 4, "thinning": 50, "burn_in": 400, "seed": 1}


def solvent(allowed=None):
    # x orders the categories; "noise" is unrelated to the response
    return CategoricalDescriptorInput(
        key="s", categories=CATS, descriptors=["x", "noise"], allowed=allowed,
        values=[[float(i), float((i * 7) % 5)] for i in range(12)])


def inputs():
    return Inputs(features=[solvent(), ContinuousInput(key="t", bounds=(0, 1))])


def outputs():
    return Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())])


def step_data(held_out=(4, 8), reps=3, seed=0):
    """y = 10 where descriptor x >= 6, else 0: a response of the descriptor alone."""
    rng = np.random.default_rng(seed)
    seen = [c for i, c in enumerate(CATS) if i not in held_out]
    df = pd.DataFrame({"s": np.repeat(seen, reps), "t": rng.random(len(seen) * reps)})
    x = np.array([CATS.index(c) for c in df.s])
    df["y"] = np.where(x >= 6, 10.0, 0.0) + 0.1 * rng.standard_normal(len(df))
    return df


@pytest.mark.parametrize("encoding,follows", [("DESCRIPTOR", True), ("ONE_HOT", False)])
def test_an_untried_category_follows_its_descriptor_neighbours(encoding, follows):
    """Categories 4 and 8 are never tried: with descriptors their predictions follow their
    neighbours (0 below x = 6, 10 above); read as labels both sit near the mean. The ONE_HOT
    case shows the test fails when the descriptors are ignored."""
    model = BARKSurrogate(SurrogateModel(inputs=inputs(), outputs=outputs(),
                                         categorical_encodings={"s": encoding}, **FAST))
    model.fit(step_data())
    pred = model.predict(pd.DataFrame({"s": ["c4", "c8"], "t": [0.5, 0.5]}))["y_pred"]
    gap = pred.iloc[1] - pred.iloc[0]
    if follows:
        assert pred.iloc[0] < 2.5 and pred.iloc[1] > 7.5, pred.tolist()
    else:
        assert abs(gap) < 3.0, pred.tolist()


def test_relevance_names_the_descriptor_that_matters():
    model = BARKSurrogate(SurrogateModel(inputs=inputs(), outputs=outputs(), **FAST))
    model.fit(step_data())
    rel = model.feature_relevance(detail=True)
    assert set(rel.index) == {"s_x", "s_noise", "t"}
    assert rel.index[0] == "s_x", rel
    assert rel.loc["s_noise", "input"] == "s"
    # by default one row per BoFire input: s counts both its descriptors, draw by draw
    per_input = model.feature_relevance()
    assert list(per_input.index) == ["s", "t"] and per_input.loc["s", "variables"] == 2
    for col in ("split_prob", "split_share"):
        assert per_input.loc["s", col] == pytest.approx(rel.loc[["s_x", "s_noise"], col].sum())
    # the interval is that of the sum, not a sum of intervals
    assert per_input.loc["s", "split_prob_q05"] >= rel.loc[["s_x", "s_noise"],
                                                           "split_prob_q05"].sum() - 1e-12


def test_dump_of_a_descriptor_model_loads_and_a_forged_rule_is_refused():
    data_model = SurrogateModel(inputs=inputs(), outputs=outputs(), **FAST)
    model = BARKSurrogate(data_model)
    model.fit(step_data())
    text = model.dumps()
    again = BARKSurrogate(data_model)
    again.loads(text)
    X = pd.DataFrame({"s": CATS, "t": 0.5})
    np.testing.assert_allclose(again.predict(X)["y_pred"], model.predict(X)["y_pred"])

    from bofire_bark.engine import store

    post = model.posterior
    j = model.space.feature_index("s")
    samples = {k: v.copy() for k, v in post.samples.items()}
    # a root split on descriptor x (every category reaches the root) given a mask that is
    # no cut of x: {c0, c2} left, the rest right
    roots = np.argwhere((samples["feat"] == j) & (samples["thr"] == 1.0)
                        & (samples["parent"] == -1))
    assert len(roots), "no root split on descriptor x to forge"
    s, t, k = map(int, roots[0])
    samples["mask"][s, t, k, 0] = np.uint64(0b101)
    with pytest.raises(ValueError, match="descriptor rule"):
        store.check_forest({key: samples[key] for key in
                            ("feat", "thr", "mask", "left", "right", "parent", "depth")},
                           model.space.engine_space(), data_model.n_trees, "sample_",
                           len(samples["sigma2"]))
    samples = {k: v.copy() for k, v in post.samples.items()}
    s, t, k = map(int, np.argwhere(samples["feat"] == j)[0])
    samples["thr"][s, t, k] = 7.0  # names no split variable of "s"
    with pytest.raises(ValueError, match="split variable"):
        store.check_forest({key: samples[key] for key in
                            ("feat", "thr", "mask", "left", "right", "parent", "depth")},
                           model.space.engine_space(), data_model.n_trees, "sample_",
                           len(samples["sigma2"]))


def test_encodings_are_checked_at_spec_validation():
    plain = Inputs(features=[CategoricalInput(key="c", categories=["a", "b"]),
                             solvent()])
    with pytest.raises(ValueError, match="'c'.*no descriptors"):
        SurrogateModel(inputs=plain, outputs=outputs(), categorical_encodings={"c": "DESCRIPTOR"})
    with pytest.raises(ValueError, match="'z'.*not a categorical input"):
        SurrogateModel(inputs=plain, outputs=outputs(), categorical_encodings={"z": "ONE_HOT"})
    model = SurrogateModel(inputs=plain, outputs=outputs())
    assert model.categorical_encodings == {"c": "ONE_HOT", "s": "DESCRIPTOR"}
    domain = Domain(inputs=plain, outputs=outputs())
    with pytest.raises(ValueError, match="'c'.*no descriptors"):
        StrategyModel(domain=domain, surrogate_specs={"categorical_encodings": {"c": "DESCRIPTOR"}})


def test_a_missing_descriptor_value_is_refused_at_spec_validation():
    bad = CategoricalDescriptorInput(key="s", categories=["a", "b", "c"], descriptors=["x"],
                                     values=[[1.0], [float("nan")], [2.0]])
    with pytest.raises(ValueError, match="'s'.*descriptor 'x' of category 'b' is nan"):
        SurrogateModel(inputs=Inputs(features=[bad]), outputs=outputs())


def test_ask_proposes_allowed_categories_and_learns_from_the_others():
    """Data on categories that are not allowed counts; candidates are allowed ones only."""
    from bofire.strategies.api import map as map_strategy

    import bofire_bark  # noqa: F401 (registers the strategy)

    allowed = [i not in (9, 10, 11) for i in range(12)]
    domain = Domain(inputs=Inputs(features=[solvent(allowed),
                                            ContinuousInput(key="t", bounds=(0, 1))]),
                    outputs=outputs())
    strategy = map_strategy(StrategyModel(domain=domain, surrogate_specs=FAST, time_limit=2.0))
    strategy.tell(step_data(held_out=(6, 7, 8)))
    candidate = strategy.ask(1)
    assert candidate.s.iloc[0] in [c for c, a in zip(CATS, allowed, strict=True) if a]
    # the best allowed categories by the data (x >= 6) were never tried: the descriptors
    # send the search there
    assert candidate.s.iloc[0] in ("c6", "c7", "c8"), candidate


def test_one_settings_object_serves_two_domains():
    """Filling in the encodings' defaults must not write into the caller's settings."""
    from bofire_bark.data_models import BARKSettings

    settings = BARKSettings()
    first = Domain(inputs=Inputs(features=[CategoricalInput(key="a", categories=["x", "y"])]),
                   outputs=outputs())
    second = Domain(inputs=inputs(), outputs=outputs())
    StrategyModel(domain=first, surrogate_specs=settings)
    spec = StrategyModel(domain=second, surrogate_specs=settings)
    assert settings.categorical_encodings == {}
    assert spec.surrogate_specs.categorical_encodings == {"s": "DESCRIPTOR"}
