"""A NaN output in a row marked valid is left out of the fit with a warning naming the rows
and the output (BoFire's filter drops it without a word)."""

from __future__ import annotations

import logging

import bofire.surrogates.api as surrogates
import numpy as np
import pandas as pd
from bofire.data_models.domain.api import Inputs, Outputs
from bofire.data_models.features.api import ContinuousInput, ContinuousOutput

import bofire_bark  # noqa: F401  (registration)
from bofire_bark.data_models import BARKSurrogate

INPUTS = Inputs(features=[ContinuousInput(key="x", bounds=(0.0, 1.0))])
OUTPUTS = Outputs(features=[ContinuousOutput(key="y")])


def fit(data: pd.DataFrame, caplog) -> tuple[object, list[str]]:
    surrogate = surrogates.map(BARKSurrogate(
        inputs=INPUTS, outputs=OUTPUTS, n_trees=5, n_chains=1, n_samples=2, thinning=2,
        burn_in=5, seed=0))
    with caplog.at_level(logging.WARNING, logger="bofire_bark"):
        surrogate.fit(data)
    return surrogate, [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_nan_output_marked_valid_is_named(caplog):
    x = np.linspace(0.0, 1.0, 8)
    data = pd.DataFrame({"x": x, "y": x ** 2, "valid_y": 1},
                        index=[f"run{i}" for i in range(8)])
    data.loc["run2", "y"] = np.nan           # valid, but no value: named
    data.loc["run5", "y"] = np.nan           # NaN of a failed run: expected, not named
    data.loc["run5", "valid_y"] = 0
    surrogate, warnings = fit(data, caplog)
    assert len(surrogate.posterior.y) == 6
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("BARK: output 'y' is NaN in 1 row(s) marked valid")
    assert "'run2'" in warnings[0]
    assert "run5" not in warnings[0]


def test_no_warning_without_nan(caplog):
    x = np.linspace(0.0, 1.0, 8)
    data = pd.DataFrame({"x": x, "y": x ** 2, "valid_y": 1})
    data.loc[3, "valid_y"] = 0
    _, warnings = fit(data, caplog)
    assert warnings == []
