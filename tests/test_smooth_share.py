"""The smooth share from the data models down: refused where it cannot work, naming the
setting; fitted, dumped and loaded with its kernel and shares."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MaximizeObjective

import bofire_bark  # noqa: F401 (registers BARK with BoFire)
from bofire_bark.data_models.strategy import BARKStrategy
from bofire_bark.data_models.surrogate import BARKSurrogate
from bofire_bark.engine.smooth import SEPARATE

INPUTS = Inputs(features=[ContinuousInput(key="a", bounds=(0.0, 1.0)),
                          ContinuousInput(key="b", bounds=(0.0, 10.0)),
                          CategoricalInput(key="c", categories=["x", "y"])])
OUTPUTS = Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())])
FAST = {"n_chains": 2, "n_samples": 2, "burn_in": 60, "thinning": 5, "seed": 0,
        "max_sampling_sweeps": 0}


def experiments(n: int = 14) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.random(n), "b": 10 * rng.random(n),
                       "c": rng.choice(["x", "y"], n)})
    df["y"] = np.sin(5 * df.a) + 0.1 * df.b + (df.c == "y")
    return df


def test_refused_without_a_continuous_input_or_with_the_leaf_likelihood():
    only_discrete = Inputs(features=[DiscreteInput(key="d", values=[1.0, 2.0, 3.0]),
                                     ContinuousInput(key="fixed", bounds=(2.0, 2.0))])
    with pytest.raises(ValueError, match="smooth_share: .*no ContinuousInput"):
        BARKSurrogate(inputs=only_discrete, outputs=OUTPUTS, smooth_share=True)
    with pytest.raises(ValueError, match="smooth_share: .*likelihood"):
        BARKSurrogate(inputs=INPUTS, outputs=OUTPUTS, smooth_share=True, likelihood="leaf")
    with pytest.raises(ValueError, match="smooth_share: .*prior_only"):
        BARKSurrogate(inputs=INPUTS, outputs=OUTPUTS, smooth_share=True, prior_only=True)


def test_the_strategy_refuses_a_mip_solver_with_a_smooth_share():
    domain = Domain(inputs=INPUTS, outputs=OUTPUTS)
    with pytest.raises(ValueError, match="smooth_share: solver 'scip'"):
        BARKStrategy(domain=domain, surrogate_specs={"smooth_share": True},
                     acquisition_optimizer={"solver": "scip"})
    BARKStrategy(domain=domain, surrogate_specs={"smooth_share": True})  # the default search


def test_fit_dump_and_load_keep_the_kernel_and_shares():
    import bofire.surrogates.api as surrogates

    dm = BARKSurrogate(inputs=INPUTS, outputs=OUTPUTS, smooth_share=True, smooth_bins=16,
                       **FAST)
    model = surrogates.map(dm)
    df = experiments()
    model.fit(df)
    post = model.posterior
    assert post.smooth is not None and post.smooth.n_bins == 16
    np.testing.assert_array_equal(post.smooth.cols, [0, 1])  # the two continuous inputs
    assert np.all(post.smooth.lengths > 0)
    shares = post.samples["smooth_share"]
    assert shares.shape == (4,) and np.all((shares > 0) & (shares < 1))
    loaded = surrogates.map(dm)
    loaded.loads(model.dumps())
    pd.testing.assert_frame_equal(loaded.predict(df), model.predict(df))
    np.testing.assert_array_equal(loaded.posterior.smooth.lengths, post.smooth.lengths)
    np.testing.assert_array_equal([c.smooth_hyp[1] for c in loaded.chains],
                                  [c.smooth_hyp[1] for c in model.chains])
    # a dump without a share is refused by a surrogate that has one, and the reverse
    plain = surrogates.map(BARKSurrogate(inputs=INPUTS, outputs=OUTPUTS, **FAST))
    with pytest.raises(ValueError, match="unexpected arrays.*smooth_share False"):
        plain.loads(model.dumps())
    plain.fit(df)
    with pytest.raises(ValueError, match="smooth_share.*missing|missing.*smooth_share True"):
        loaded.loads(plain.dumps())


def test_a_damaged_share_in_a_dump_is_named():
    import bofire.surrogates.api as surrogates

    dm = BARKSurrogate(inputs=INPUTS, outputs=OUTPUTS, smooth_share=True, **FAST)
    model = surrogates.map(dm)
    model.fit(experiments())
    assert_damage_named(dm, model.dumps(), {"sample_smooth_share": 1.5,
                                            "smooth_lengths": -1.0, "smooth_cols": 2})


def assert_damage_named(dm, dump: str, damages: dict) -> None:
    """Each array of ``damages`` set to its value in ``dump`` makes loading it into a
    surrogate of ``dm`` a ValueError naming that array."""
    import base64
    import io

    import bofire.surrogates.api as surrogates

    from bofire_bark.engine.store import read_arrays

    for key, value in damages.items():
        arrays = read_arrays(dump)
        arrays[key] = np.full_like(arrays[key], value)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        with pytest.raises(ValueError, match=f"dump array {key}"):
            surrogates.map(dm).loads(base64.b64encode(buffer.getvalue()).decode())


def test_smooth_categories_needs_the_share_and_may_stand_without_a_continuous_input():
    with pytest.raises(ValueError, match="^1 validation error.*\n.*smooth_categories: .*"
                                         "smooth_share=True"):
        BARKSurrogate(inputs=INPUTS, outputs=OUTPUTS, smooth_categories=True)
    with pytest.raises(ValueError, match="smooth_categories: .*smooth_share=True"):
        BARKStrategy(domain=Domain(inputs=INPUTS, outputs=OUTPUTS),
                     surrogate_specs={"smooth_categories": True})
    only_categorical = Inputs(features=[CategoricalInput(key="c", categories=["x", "y"]),
                                        DiscreteInput(key="d", values=[1.0, 2.0])])
    with pytest.raises(ValueError, match="smooth_share: .*smooth_categories=True would"):
        BARKSurrogate(inputs=only_categorical, outputs=OUTPUTS, smooth_share=True)
    BARKSurrogate(inputs=only_categorical, outputs=OUTPUTS, smooth_share=True,
                  smooth_categories=True)


def test_categorical_coordinates_fit_dump_and_load():
    """A plain categorical input joins the smooth part as "same category or not" (every pair
    of distinct codes at ``SEPARATE``), survives a dump, and a damaged table is named."""
    import bofire.surrogates.api as surrogates

    dm = BARKSurrogate(inputs=INPUTS, outputs=OUTPUTS, smooth_share=True,
                       smooth_categories=True, **FAST)
    model = surrogates.map(dm)
    df = experiments()
    model.fit(df)
    kernel = model.posterior.smooth
    np.testing.assert_array_equal(kernel.cols, [0, 1])
    np.testing.assert_array_equal(kernel.cat_cols, [2])
    d2 = kernel.cat_d2[0]
    assert d2.shape == (2, 2) and d2[0, 1] == d2[1, 0] == SEPARATE and d2[0, 0] == d2[1, 1] == 0
    U = kernel.coords(model.space.encode(df))
    gram = kernel.gram(U, U)
    x, y = df.c.to_numpy() == "x", df.c.to_numpy() == "y"
    rbf = np.exp(-0.5 * (((U[:, None, :2] - U[None, :, :2]) / kernel.lengths) ** 2).sum(-1))
    np.testing.assert_allclose(gram[np.ix_(x, y)], rbf[np.ix_(x, y)] * np.exp(-d2[0, 1]))
    np.testing.assert_allclose(gram[np.ix_(x, x)], rbf[np.ix_(x, x)])
    loaded = surrogates.map(dm)
    loaded.loads(model.dumps())
    pd.testing.assert_frame_equal(loaded.predict(df), model.predict(df))
    np.testing.assert_array_equal(loaded.posterior.smooth.cat_d2, kernel.cat_d2)
    assert_damage_named(dm, model.dumps(), {"smooth_cat_d2": -1.0, "smooth_cat_cols": 0})


def test_plain_categories_alone_fit_without_rbf_lengths():
    """A domain of plain categorical inputs only: no RBF column (no lengths fitted), each
    input's table at ``SEPARATE`` off the diagonal, and a point of a tried combination keeps a
    smaller sd than an untried combination."""
    import warnings

    import bofire.surrogates.api as surrogates

    inputs = Inputs(features=[CategoricalInput(key="s", categories=["p", "q", "r"]),
                              CategoricalInput(key="c", categories=["u", "v"])])
    dm = BARKSurrogate(inputs=inputs, outputs=OUTPUTS, smooth_share=True,
                       smooth_categories=True, **FAST)
    tried = pd.DataFrame({"s": ["p", "p", "q", "q", "r", "p", "q"],
                          "c": ["u", "u", "v", "v", "u", "u", "v"]})
    model = surrogates.map(dm)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # e.g. a log of 0 RBF columns
        model.fit(tried.assign(y=[1.0, 1.1, 0.2, 0.3, 0.6, 0.9, 0.25]))
    kernel = model.posterior.smooth
    assert len(kernel.cols) == 0 and len(kernel.lengths) == 0
    assert sorted(int(model.space.n_values[c]) for c in kernel.cat_cols) == [2, 3]
    for j, col in enumerate(kernel.cat_cols):
        n = int(model.space.n_values[col])
        np.testing.assert_array_equal(kernel.cat_d2[j, :n, :n], SEPARATE * (1 - np.eye(n)))
    sd = model.predict(pd.DataFrame({"s": ["p", "p"], "c": ["u", "v"]}))["y_sd"].to_numpy()
    assert sd[0] < sd[1]  # (p, u) measured three times, (p, v) never


@pytest.mark.parametrize("categories", [False, True])
def test_a_categorys_effect_leaves_the_continuous_lengths_long(categories):
    """The smooth part's lengths are fitted with the categorical inputs in the GP (one-hot
    here, as BoFire's GP has them), with or without ``smooth_categories``: a response smooth in
    ``a`` and ``b`` plus a large effect of the category keeps their lengths long. Fitted on
    ``a`` and ``b`` alone, the category's jumps read as a fast wiggle (0.26 and 0.027)."""
    from bofire_bark.space import SplitSpace
    from bofire_bark.surrogate import smooth_kernel

    inputs = Inputs(features=[ContinuousInput(key="a", bounds=(0.0, 1.0)),
                              ContinuousInput(key="b", bounds=(0.0, 1.0)),
                              CategoricalInput(key="c", categories=["p", "q", "r", "s"])])
    space = SplitSpace.from_inputs(inputs, {})
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.random(20), "b": rng.random(20),
                       "c": rng.choice(["p", "q", "r", "s"], 20)})
    y = (np.sin(3.0 * df.a) + df.b + 3.0 * df.c.map({"p": 0, "q": 1, "r": 2, "s": 0})).to_numpy()
    kernel = smooth_kernel(space, space.encode(df), y, 32, categories)
    assert np.all(kernel.lengths > 0.5)
