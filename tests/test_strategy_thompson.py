"""``acquisition_rule="thompson"``: every candidate maximizes one function drawn from the
posterior (of each output the acquisition uses), drawn afresh per candidate."""

from __future__ import annotations

import json

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import CategoricalInput, ContinuousInput, ContinuousOutput
from bofire.data_models.objectives.api import MaximizeObjective
from bofire.data_models.strategies.api import RandomStrategy
from pydantic import TypeAdapter, ValidationError
from test_multi_output import measured, toy_domain
from test_strategy_library import MEASURED, experiments, library_domain

import bofire_bark  # noqa: F401  (registration)
from bofire_bark.data_models import BARKSettings, BARKStrategy
from bofire_bark.engine.model import Posterior

FAST = BARKSettings(n_trees=10, n_chains=2, n_samples=2, thinning=10, burn_in=100)


@pytest.fixture
def draws(monkeypatch):
    """Every function the strategy draws, in order."""
    made = []
    original = Posterior.draw_function

    def record(self, rng):
        draw = original(self, rng)
        made.append(draw)
        return draw

    monkeypatch.setattr(Posterior, "draw_function", record)
    return made


def thompson(domain: Domain, **kwargs):
    return strategies.map(BARKStrategy(domain=domain, seed=0, surrogate_specs=FAST,
                                       acquisition_rule="thompson", **kwargs))


def test_enumerated_candidate_is_the_best_unmeasured_point_of_the_draw(draws):
    domain = library_domain()
    st = thompson(domain)
    st.tell(experiments(domain, MEASURED))
    for _ in range(3):
        cand = st.ask(1)
        (draw,) = draws[-1:]
        lib = st.library()
        known = st.space.encode(pd.concat([st.experiments, st.candidates])
                                if st.candidates is not None else st.experiments)
        free = ~np.array([np.any(np.all(np.isclose(known, x), axis=1)) for x in lib.X])
        value = draw.predict_each(lib.X[free])[0][0]
        best = lib.X[free][np.argmax(value)]
        np.testing.assert_allclose(st.space.encode(cand)[0], best)
        st.tell(experiments(domain, [(cand["c"].iloc[0], float(cand["d"].iloc[0]))]))
    assert len(draws) == 3


def test_grid_candidate_maximizes_the_draw_not_the_mean(draws):
    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key="x1", bounds=(0, 1)),
                                ContinuousInput(key="x2", bounds=(0, 1)),
                                CategoricalInput(key="c", categories=["a", "b", "c"])]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())]))
    X = strategies.map(RandomStrategy(domain=domain, seed=1)).ask(10)[["x1", "x2", "c"]]
    y = np.sin(4 * X["x1"]) + X["x2"] + (X["c"] == "b")
    st = thompson(domain, mip_gap=0.0, abs_gap=0.0, time_limit=20.0)
    st.tell(X.assign(y=y, valid_y=1))
    cands = st.ask(2)
    assert len(draws) == 2  # one draw per candidate of the batch
    probe = st.space.encode(strategies.map(RandomStrategy(domain=domain, seed=2)).ask(3000))
    for draw, (_, row), result in zip(draws, cands.iterrows(), st.last_results, strict=True):
        assert result.status == "optimal"
        x = st.space.encode(row.to_frame().T)
        at = draw.predict_each(x)[0][0, 0]
        assert at >= draw.predict_each(probe)[0][0].max() - 1e-9
    # the two draws differ, so the batch is not one point twice
    assert not np.allclose(draws[0].predict_each(probe)[0], draws[1].predict_each(probe)[0])


def test_several_outputs_draw_each_goal_and_limit_once_per_candidate(draws):
    domain = toy_domain()
    st = thompson(domain)
    X = strategies.map(RandomStrategy(domain=domain, seed=0)).ask(10)
    st.tell(measured(X[domain.inputs.get_keys()]))
    cands = st.ask(2)
    assert len(cands) == 2
    # f1, f2 and the limit imp per candidate; the logged output has no objective, no draw
    assert len(draws) == 6
    ys = {d.y_mean for d in draws}
    assert len(ys) == 3


def test_kappa_is_refused_with_thompson_and_the_rule_round_trips():
    domain = library_domain()
    with pytest.raises(ValidationError, match="kappa=3.0.*thompson"):
        BARKStrategy(domain=domain, kappa=3.0, acquisition_rule="thompson")
    with pytest.raises(ValidationError, match="acquisition_rule"):
        BARKStrategy(domain=domain, acquisition_rule="ei")
    spec = BARKStrategy(domain=domain, acquisition_rule="thompson")
    data = json.loads(spec.model_dump_json())
    assert data["acquisition_rule"] == "thompson"
    back = TypeAdapter(BARKStrategy).validate_python(data)
    assert back.acquisition_rule == "thompson" and back == spec
    assert BARKStrategy(domain=domain).acquisition_rule == "ucb"
