"""``BARKStrategy.acquisition_function``: BoFire's acquisition types BARK answers, refusals
that name the cause, ``kappa`` as an alias of qUCB, old specs that ask as before, and the
strategy's candidates maximizing the chosen rule."""

from __future__ import annotations

import json
from pathlib import Path

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.acquisition_functions.api import (
    qEHVI,
    qEI,
    qLogEI,
    qLogNEHVI,
    qLogNEI,
    qLogPF,
    qNEI,
    qPI,
    qSR,
    qUCB,
)
from bofire.data_models.constraints.api import NonlinearEqualityConstraint
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
)
from bofire.data_models.objectives.api import (
    MaximizeObjective,
    MinimizeObjective,
    MinimizeSigmoidObjective,
)

from bofire_bark import load_spec
from bofire_bark.data_models import BARKSettings, BARKStrategy

DATA = Path(__file__).parent / "data"
SPECS = Path(__file__).parents[1] / "specs"
FAST = BARKSettings(n_trees=8, n_chains=2, n_samples=4, thinning=5, burn_in=50)


def domain(objective=None, outputs=None, constraints=()):
    return Domain(
        inputs=Inputs(features=[
            ContinuousInput(key="x1", bounds=(0, 1)), ContinuousInput(key="x2", bounds=(0, 1)),
            CategoricalInput(key="c", categories=["a", "b", "c"])]),
        outputs=Outputs(features=outputs or [
            ContinuousOutput(key="y", objective=objective or MaximizeObjective())]),
        constraints=Constraints(constraints=list(constraints)))


def experiments(d, n=12, seed=3):
    X = d.inputs.sample(n, seed=seed)
    X["y"] = np.sin(4 * X["x1"]) + X["x2"] * (X["c"] == "b") - 0.5 * (X["c"] == "c")
    X["valid_y"] = 1
    return X


@pytest.mark.parametrize("acqf", [qUCB(beta=1.0), qEI(), qLogEI(), qNEI(), qLogNEI(), qPI()])
def test_supported_types_validate_and_round_trip(acqf):
    spec = BARKStrategy(domain=domain(), acquisition_function=acqf)
    again = load_spec(spec.model_dump_json())
    assert again.acquisition_function == acqf


def test_default_is_ucb_at_kappa_196():
    spec = BARKStrategy(domain=domain())
    assert spec.acquisition_function == qUCB(beta=3.8416)
    assert spec.kappa == 1.96
    assert strategies.map(spec).kappa == 1.96


@pytest.mark.parametrize("acqf", [qSR(), qLogPF()])
def test_other_types_are_refused_by_name(acqf):
    name = type(acqf).__name__
    with pytest.raises(ValueError, match=f"acquisition_function {name}: BARKStrategy answers"):
        BARKStrategy(domain=domain(), acquisition_function=acqf)
    with pytest.raises(ValueError, match=f"acquisition_function {name}: BARKStrategy answers"):
        load_spec({**json.loads(BARKStrategy(domain=domain()).model_dump_json()),
                   "acquisition_function": {"type": name}})


def test_kappa_is_an_alias_of_qucb():
    spec = BARKStrategy(domain=domain(), kappa=2.5)
    assert spec.acquisition_function == qUCB(beta=6.25) and spec.kappa == 2.5
    assert "kappa" not in json.loads(spec.model_dump_json())
    assert BARKStrategy(domain=domain(), kappa=2.5, acquisition_function=qUCB(beta=6.25)) == spec
    with pytest.raises(ValueError, match="kappa=1.0 and acquisition_function=.*both given"):
        BARKStrategy(domain=domain(), kappa=1.0, acquisition_function=qEI())
    with pytest.raises(ValueError, match="kappa: the UCB weight must be a finite number >= 0"):
        BARKStrategy(domain=domain(), kappa=-1.0)


def test_rules_other_than_ucb_refuse_what_they_cannot_search():
    two = [ContinuousOutput(key="y", objective=MaximizeObjective()),
           ContinuousOutput(key="z", objective=MinimizeObjective())]
    with pytest.raises(ValueError, match="acquisition_function qEI: several objectives"):
        BARKStrategy(domain=domain(outputs=two), acquisition_function=qEI())
    limit = [ContinuousOutput(key="y", objective=MaximizeObjective()),
             ContinuousOutput(key="z", objective=MinimizeSigmoidObjective(tp=1, steepness=1))]
    with pytest.raises(ValueError, match="acquisition_function qNEI: .*output limits"):
        BARKStrategy(domain=domain(outputs=limit), acquisition_function=qNEI())
    with pytest.raises(ValueError, match="acquisition_function qPI: solver 'scip'"):
        BARKStrategy(domain=domain(), acquisition_function=qPI(), solver="scip")
    eq = NonlinearEqualityConstraint(expression="x1 * x2 - 0.2", features=["x1", "x2"])
    with pytest.raises(ValueError, match=r"constraint 0 \(NonlinearEqualityConstraint\)"):
        BARKStrategy(domain=domain(constraints=[eq]), acquisition_function=qLogEI())
    # the UCB keeps them
    BARKStrategy(domain=domain(outputs=two), acquisition_function=qUCB(beta=4.0))
    # but meets output limits optimistically only
    with pytest.raises(ValueError, match="output_limits 'probability': only the hypervolume"):
        BARKStrategy(domain=domain(outputs=limit), output_limits="probability")


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.json")), ids=lambda p: p.stem)
def test_committed_specs_load_as_ucb(path):
    data = json.loads(path.read_text())
    spec = load_spec(path)
    kappa = data.get("kappa", 1.96)
    expected = qUCB(beta=kappa**2) if "acquisition_function" not in data else None
    assert spec.acquisition_function == (expected or load_spec(data).acquisition_function)
    assert spec.kappa == pytest.approx(kappa)


def test_a_spec_written_before_the_field_asks_as_before():
    """The spec, experiments and candidates recorded at commit 463bb32 (kappa 1.5;
    ``tests/data/record_spec_463bb32.py``): the same first candidate for the same seed, and a
    second one in the same cell of the grid (the same acquisition, conditioned on the first:
    since a batch's starts share their random draws, the point within the cell may differ)."""
    from bofire_bark.optimize import prepare_search

    spec = load_spec(DATA / "spec_463bb32.json")
    assert spec.acquisition_function == qUCB(beta=2.25) and spec.kappa == 1.5
    strategy = strategies.map(spec)
    strategy.tell(pd.read_csv(DATA / "spec_463bb32_experiments.csv"))
    cand = strategy.ask(2)
    old = pd.read_csv(DATA / "spec_463bb32_candidates.csv")
    assert list(cand["c"]) == list(old["c"])
    np.testing.assert_allclose(cand[["x1", "x2"]].to_numpy()[0], old[["x1", "x2"]].to_numpy()[0],
                               atol=1e-9)
    keys = strategy.domain.inputs.get_keys()
    first = strategy.space.encode(cand.iloc[[0]][keys])
    (posterior,) = strategy.posteriors().values()
    job = prepare_search(posterior, strategy.domain, strategy.space,
                         strategy.acquisition_settings(0), pending=first)
    values = job.score(strategy.space.encode(pd.concat([cand.iloc[[1]][keys],
                                                        old.iloc[[1]][keys]])))
    assert values[0] == pytest.approx(values[1], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("acqf", [qLogEI(), qNEI(), qPI()])
@pytest.mark.parametrize("objective", [MaximizeObjective(), MinimizeObjective()])
def test_strategy_candidates_maximize_the_rule(acqf, objective):
    """A batch of 2: each candidate's value under the rule (on the systems it was searched
    with) is at least that of 500 random points, and the search proved its bound."""
    from bofire_bark.optimize.problem import build_problem

    d = domain(objective)
    strategy = strategies.map(BARKStrategy(domain=d, seed=1, acquisition_function=acqf,
                                           surrogate_specs=FAST, time_limit=10.0))
    strategy.tell(experiments(d))
    cand = strategy.ask(2)
    assert len(cand) == 2 and strategy.rule in ("ei", "nei", "pi")
    post, space = strategy.surrogate.posterior, strategy.space
    X = space.encode(d.inputs.sample(500, seed=4))
    pending = None
    for i, result in enumerate(strategy.last_results):
        problem, systems = build_problem(post, d, space, sign=strategy.sign, pending=pending,
                                         gps=False, rule=strategy.rule)
        rule = problem.acquisition_rule
        value = rule.score(systems, result.x[None], problem.sign, problem.incumbents)[0]
        assert value == pytest.approx(result.ucb, abs=1e-10)
        assert value >= rule.score(systems, X, problem.sign, problem.incumbents).max() - 1e-9
        assert result.bound >= value - 1e-12
        pending = space.encode(cand.iloc[: i + 1])


@pytest.mark.parametrize(("acqf", "limits"), [(qEHVI(), "optimistic"),
                                              (qLogNEHVI(), "optimistic"),
                                              (qLogNEHVI(), "probability")])
@pytest.mark.parametrize("library", [False, True])
def test_hypervolume_rules_ask_on_several_outputs(acqf, limits, library):
    """Two objectives and an output limit (pruning or weighing), continuous (grid search) or
    finite (enumeration): a batch of 2 distinct candidates with a proven bound; one objective
    is refused."""
    from bofire.data_models.features.api import DiscreteInput
    from bofire.data_models.objectives.api import MaximizeSigmoidObjective

    outs = [ContinuousOutput(key="y", objective=MaximizeObjective()),
            ContinuousOutput(key="z", objective=MinimizeObjective()),
            ContinuousOutput(key="w", objective=MaximizeSigmoidObjective(tp=-1.0,
                                                                         steepness=1.0))]
    d = domain(outputs=outs)
    if library:
        d = Domain(inputs=Inputs(features=[
            DiscreteInput(key="x1", values=list(np.linspace(0, 1, 6))),
            DiscreteInput(key="x2", values=list(np.linspace(0, 1, 5))),
            CategoricalInput(key="c", categories=["a", "b", "c"])]),
            outputs=Outputs(features=outs))
    X = experiments(d)
    X["z"] = X["x1"] - X["x2"]
    X["w"] = X["y"] - X["z"]
    X["valid_z"] = X["valid_w"] = 1
    strategy = strategies.map(BARKStrategy(domain=d, seed=2, acquisition_function=acqf,
                                           surrogate_specs=FAST, time_limit=10.0,
                                           output_limits=limits))
    assert strategy.acquisition_settings().output_limits == limits
    strategy.tell(X)
    cand = strategy.ask(2)
    assert len(cand.drop_duplicates(subset=["x1", "x2", "c"])) == 2
    res = strategy.last_results[0]
    assert res.solver == ("enumeration" if library else "bnb") and np.isfinite(res.ucb)
    if not library:
        assert res.bound >= res.ucb - 1e-12
        assert res.units == "ehvi"
    with pytest.raises(ValueError, match=f"acquisition_function {type(acqf).__name__}: the "
                                         "hypervolume needs two or more"):
        BARKStrategy(domain=domain(), acquisition_function=acqf)


def test_ref_point_as_mobo_takes_it():
    """``ref_point`` as MoboStrategy's field: a dict of fixed values or BoFire's
    ExplicitReferencePoint (here a moving value: 0.5 worse than the best measured cost; BoFire's
    offsets count in the maximized orientation) reaches the
    hypervolume standardized and oriented; qUCB and keys that miss an objective are refused."""
    from bofire.data_models.strategies.api import (
        AbsoluteMovingReferenceValue,
        ExplicitReferencePoint,
        FixedReferenceValue,
    )

    outs = [ContinuousOutput(key="y", objective=MaximizeObjective()),
            ContinuousOutput(key="z", objective=MinimizeObjective())]
    d = domain(outputs=outs)
    X = experiments(d)
    X["z"], X["valid_z"] = X["x1"] - X["x2"], 1
    moving = ExplicitReferencePoint(values={
        "y": FixedReferenceValue(value=-1.0),
        "z": AbsoluteMovingReferenceValue(orient_at_best=True, offset=-0.5)})
    for ref, want in (({"y": -1.0, "z": 2.0}, {"y": -1.0, "z": 2.0}),
                      (moving, {"y": -1.0, "z": X["z"].min() + 0.5})):
        dm = BARKStrategy(domain=d, seed=1, acquisition_function=qLogNEHVI(), ref_point=ref,
                          surrogate_specs=FAST)
        assert BARKStrategy.model_validate_json(dm.model_dump_json()).ref_point == dm.ref_point
        strategy = strategies.map(dm)
        strategy.tell(X)
        assert strategy.reference_point() == pytest.approx(want)
        acq = strategy.acquisition(0)
        posts = strategy.posteriors()
        for g, sign in zip(acq.goals, (1.0, -1.0), strict=True):
            post = posts[g.key]
            assert g.reference == pytest.approx(sign * (want[g.key] - post.y_mean) / post.y_std)
    with pytest.raises(ValueError, match="ref_point: only the hypervolume rules"):
        BARKStrategy(domain=d, ref_point={"y": 0.0, "z": 1.0})
    with pytest.raises(ValueError, match=r"ref_point: keys \['y'\] do not match"):
        BARKStrategy(domain=d, acquisition_function=qLogNEHVI(), ref_point={"y": 0.0})
