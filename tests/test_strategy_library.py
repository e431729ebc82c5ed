"""The strategy on finite domains: enumeration, no repeats of measured or pending points
unless ``allow_repeats``, categorical exclusions, the fallback above the limit."""

from __future__ import annotations

import logging
import subprocess
import sys

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.constraints.api import (
    CategoricalExcludeConstraint,
    SelectionCondition,
)
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MaximizeObjective
from pydantic import ValidationError

import bofire_bark  # noqa: F401  (registration)
from bofire_bark.data_models import BARKSettings, BARKStrategy
from bofire_bark.optimize.result import LibraryExhaustedError

FAST = BARKSettings(n_trees=10, n_chains=2, n_samples=2, thinning=10, burn_in=100)


def library_domain(constraints=(), n_cats: int = 4, n_values: int = 3) -> Domain:
    return Domain(
        inputs=Inputs(features=[
            CategoricalInput(key="c", categories=[f"k{i}" for i in range(n_cats)]),
            DiscreteInput(key="d", values=[float(v) for v in range(n_values)]),
        ]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())]),
        constraints=list(constraints))


def experiments(domain: Domain, rows: list[tuple[str, float]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["c", "d"])
    y = df["d"].to_numpy() + (df["c"] == "k1").to_numpy() * 2.0
    return df.assign(y=y, valid_y=1)


def strategy(domain: Domain, **kwargs):
    return strategies.map(BARKStrategy(domain=domain, seed=0, surrogate_specs=FAST, **kwargs))


def keys(df: pd.DataFrame) -> set:
    return set(zip(df["c"], df["d"].astype(float), strict=True))


MEASURED = [("k0", 0.0), ("k1", 2.0), ("k2", 1.0), ("k3", 0.0), ("k1", 1.0)]


def test_enumerated_batch_skips_measured_and_pending_points():
    domain = library_domain()
    st = strategy(domain)
    st.tell(experiments(domain, MEASURED))
    st.add_candidates(pd.DataFrame({"c": ["k1"], "d": [0.0]}))
    cands = st.ask(3)
    assert len(keys(cands)) == 3
    known = keys(pd.DataFrame(MEASURED, columns=["c", "d"])) | {("k1", 0.0)}
    assert not keys(cands) & known
    for r in st.last_results:
        assert (r.solver, r.status, r.gap) == ("enumeration", "optimal", 0.0)
    assert [r.nodes for r in st.last_results] == [6, 5, 4]  # 12 - 5 measured - 1 pending


def test_exhausted_library_raises_unless_repeats_are_allowed():
    domain = library_domain(n_cats=2, n_values=2)
    rows = [("k0", 0.0), ("k0", 1.0), ("k1", 0.0), ("k1", 1.0)]
    st = strategy(domain)
    st.tell(experiments(domain, rows))
    with pytest.raises(LibraryExhaustedError, match="allow_repeats=True"):
        st.ask(1)
    st = strategy(domain, allow_repeats=True)
    st.tell(experiments(domain, rows))
    cand = st.ask(1)
    assert keys(cand) <= keys(pd.DataFrame(rows, columns=["c", "d"]))
    assert st.last_results[0].nodes == 4


def test_categorical_exclusion_is_applied():
    exclusion = CategoricalExcludeConstraint(
        features=["c", "d"], conditions=[SelectionCondition(selection=["k1"]),
                                         SelectionCondition(selection=[0.0, 1.0])])
    domain = library_domain([exclusion])
    st = strategy(domain)
    st.tell(experiments(domain, MEASURED))
    cands = st.ask(4)
    assert not keys(cands) & {("k1", 0.0), ("k1", 1.0)}
    assert domain.constraints.is_fulfilled(cands).all()


def test_categorical_exclusion_needs_an_enumerated_domain():
    exclusion = CategoricalExcludeConstraint(
        features=["c", "d"], conditions=[SelectionCondition(selection=["k1"]),
                                         SelectionCondition(selection=[0.0])])
    mixed = Domain(inputs=Inputs(features=[*library_domain().inputs.get(),
                                           ContinuousInput(key="x", bounds=(0, 1))]),
                   outputs=library_domain().outputs, constraints=[exclusion])
    with pytest.raises(ValidationError, match="only on finite domains"):
        BARKStrategy(domain=mixed)
    with pytest.raises(ValidationError, match="solver 'bnb' cannot hold it"):
        BARKStrategy(domain=library_domain([exclusion]), solver="bnb")
    big = library_domain([exclusion], n_cats=400, n_values=300)
    with pytest.raises(ValidationError, match="120000 points, above the enumeration limit"):
        BARKStrategy(domain=big)


def test_above_the_limit_falls_back_with_a_log_line(caplog):
    domain = library_domain(n_cats=400, n_values=300)
    st = strategy(domain, time_limit=1.0, n_start_points=200)
    rng = np.random.default_rng(0)
    rows = [(f"k{rng.integers(400)}", float(rng.integers(300))) for _ in range(6)]
    st.tell(experiments(domain, rows))
    with caplog.at_level(logging.INFO, logger="bofire_bark.strategy"):
        st.ask(1)
    lines = [r.getMessage() for r in caplog.records if "enumeration limit" in r.getMessage()]
    assert len(lines) == 1 and "120000 points" in lines[0]
    assert st.last_results[0].solver == "bnb"


def test_library_ask_keeps_pyomo_out():
    code = (
        "import sys, pandas as pd\n"
        "sys.path.insert(0, 'tests')\n"
        "from test_strategy_library import library_domain, experiments, strategy, MEASURED\n"
        "d = library_domain(); st = strategy(d); st.tell(experiments(d, MEASURED))\n"
        "st.ask(1)\n"
        "assert st.last_results[0].solver == 'enumeration'\n"
        "print('pyomo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
