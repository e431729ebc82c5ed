"""The MIP is the engine's integrated UCB: reduced trees route like the engine, the model's
objective at any point equals ``SampleSystems.integrated_ucb``, and solved to optimality it is
at least as good as any of 2,000 random candidates."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from bofire_bark.engine.forest import route
from bofire_bark.optimize import build_model, build_problem, optimize_acquisition
from bofire_bark.optimize.mip.model import set_start
from bofire_bark.optimize.mip.solvers import parse_scip_log
from bofire_bark.optimize.problem import model_objective, with_tangent_cuts


def random_encoded(domain, space, n, seed):
    return space.encode(domain.inputs.sample(n, seed=seed))


def test_reduced_trees_route_like_the_engine(mixed):
    domain, space, post = mixed
    problem, _ = build_problem(post, domain, space)
    ens, sm = problem.ensemble, post.samples
    for x in random_encoded(domain, space, 50, seed=3):
        for s in range(ens.n_samples):
            for t in range(ens.n_trees):
                tree = ens.trees[ens.tree_of[s, t]]
                node = route(sm["feat"][s], sm["thr"][s], sm["mask"][s], sm["left"][s],
                             sm["right"][s], post.kinds, t, x)
                assert ens.leaf_nodes[s][t][tree.leaf_of(x, problem.box.kinds)] == node


def test_single_leaf_trees_get_no_variables(mixed):
    domain, space, post = mixed
    problem, _ = build_problem(post, domain, space)
    m = build_model(problem)
    trees = problem.ensemble.trees
    assert any(t.constant for t in trees)  # the disallowed category "c" collapses splits
    n_z = sum(t.n_leaves for t in trees if not t.constant)
    assert len(m.z) == n_z
    assert len(m.tree_a) == sum(not t.constant for t in trees)
    for j, t in enumerate(problem.ensemble.thresholds):
        assert np.all(np.diff(t) > 0), f"thresholds of feature {j} not distinct and sorted"


@pytest.mark.parametrize("form", ["N", "leaf"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_model_objective_equals_engine_ucb(mixed, form, sign):
    domain, space, post = mixed
    pending = random_encoded(domain, space, 2, seed=7)
    problem, systems = build_problem(post, domain, space, kappa=1.3, sign=sign,
                                     pending=pending, form=form)
    assert {gp.form for gp in problem.gps} == {form}
    X = random_encoded(domain, space, 40, seed=5)
    expected = systems.integrated_ucb(X, 1.3, sign)
    numpy_obj = np.array([model_objective(problem, x) for x in X])
    np.testing.assert_allclose(numpy_obj, expected, rtol=1e-9, atol=1e-9)
    m = build_model(problem)
    for x, e in zip(X[:8], expected[:8], strict=True):
        set_start(m, problem, x)
        assert pyo.value(m.acq) == pytest.approx(e, rel=1e-8, abs=1e-8)
        worst = max(abs(min(0.0, c.slack())) for c in
                    m.component_data_objects(pyo.Constraint, active=True))
        assert worst < 1e-7, "the start must satisfy every constraint of the model"


@pytest.mark.parametrize("isolate", [False, True])
def test_optimum_is_the_engine_ucb_and_beats_random(mixed, isolate):
    domain, space, post = mixed
    kappa = 1.96
    res = optimize_acquisition(post, domain, space, kappa=kappa, mip_gap=0.0, abs_gap=0.0,
                               time_limit=60, isolate=isolate, n_start_points=50, n_starts=1,
                               n_sweeps=1)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(res.ucb, rel=1e-6, abs=1e-9)
    assert res.ucb >= res.incumbent_ucb
    systems = post.systems()
    assert systems.integrated_ucb(space.encode(res.candidate), kappa, 1.0)[0] == pytest.approx(
        res.ucb, rel=1e-12)
    X = random_encoded(domain, space, 2000, seed=11)
    assert res.ucb >= systems.integrated_ucb(X, kappa, 1.0).max() - 1e-9
    assert list(res.candidate.columns) == list(space.keys)
    assert res.candidate["d"].iloc[0] in (0.5, 1.0, 3.0)
    assert res.candidate["c"].iloc[0] in ("a", "b")


def test_deterministic_given_seed(continuous3):
    domain, space, post = continuous3
    a = optimize_acquisition(post, domain, space, mip_gap=0.0, isolate=False, seed=4)
    b = optimize_acquisition(post, domain, space, mip_gap=0.0, isolate=False, seed=4)
    np.testing.assert_array_equal(a.x, b.x)


def test_conditioned_systems_keep_the_leaves_of_every_point(mixed):
    """The believer's leaf system routes each training and pending point once and keeps its
    leaves: they are the engine's, and the system equals one built from all points routed
    afresh with the sample's own means as the pending points' outputs."""
    from bofire_bark.engine.forest import Forest, route_all
    from bofire_bark.engine.predict import leaf_system

    domain, space, post = mixed
    pending = random_encoded(domain, space, 3, seed=5)
    systems = post.systems(pending)
    Xa = np.ascontiguousarray(np.concatenate((post.X, pending)))
    means, _ = post.systems().predict_each(pending)
    for s, (lcol, Ginv, beta, leaf_of) in enumerate(systems.systems):
        f = Forest.of_sample(post.samples, s)
        routed = route_all(f.feat, f.thr, f.mask, f.left, f.right, post.kinds, Xa,
                           np.empty((f.feat.shape[0], len(Xa)), dtype=np.int64))
        np.testing.assert_array_equal(leaf_of, routed)
        fresh = leaf_system(f, post.kinds, Xa, np.concatenate((post.y, means[s])),
                            float(post.samples["sigma2"][s]))
        np.testing.assert_array_equal(fresh.lcol, lcol)
        np.testing.assert_allclose(fresh.Ginv, Ginv, rtol=0, atol=1e-12)
        np.testing.assert_allclose(fresh.beta, beta, rtol=0, atol=1e-10)


def test_pending_points_shrink_sigma_there(continuous3):
    domain, space, post = continuous3
    first = optimize_acquisition(post, domain, space, kappa=5.0, mip_gap=0.0, isolate=False)
    problem, systems = build_problem(post, domain, space, kappa=5.0, pending=first.x[None, :])
    at_first = systems.integrated_ucb(first.x[None, :], 5.0, 1.0)[0]
    assert at_first < first.ucb - 1e-6
    assert model_objective(problem, first.x) == pytest.approx(at_first, rel=1e-9)
    second = optimize_acquisition(post, domain, space, kappa=5.0, mip_gap=0.0, isolate=False,
                                  pending=first.x[None, :])
    assert second.objective == pytest.approx(second.ucb, rel=1e-6)
    assert second.ucb >= at_first - 1e-9


def test_tangent_cuts_cut_off_no_point(mixed):
    domain, space, post = mixed
    problem, systems = build_problem(post, domain, space, kappa=1.5)
    cut = with_tangent_cuts(problem, random_encoded(domain, space, 6, seed=21))
    assert len(cut.cuts) > 0
    m = build_model(cut)
    X = random_encoded(domain, space, 30, seed=22)
    for x in X:
        set_start(m, cut, x)
        assert min(c.slack() for c in m.tangent.values()) > -1e-9
    res = optimize_acquisition(post, domain, space, kappa=1.5, mip_gap=0.0, isolate=False,
                               n_cuts=8)
    ref = optimize_acquisition(post, domain, space, kappa=1.5, mip_gap=0.0, isolate=False,
                               n_cuts=0)
    assert res.ucb == pytest.approx(ref.ucb, rel=1e-7)
    assert res.objective == pytest.approx(res.ucb, rel=1e-6)


def test_scip_log_is_parsed_into_a_trace():
    log = (
        " time | node  | left  |LP iter|  dualbound   | primalbound  |  gap   | compl. \n"
        "p 0.1s|     1 |     0 |     0 | 3.252767e+01 | 3.387625e+00 | 860.19%| unknown\n"
        " 12.5s|     1 |     0 |    29 | 8.208265e+00 |      --      |    Inf | unknown\n"
        "SCIP Status        : problem is solved [optimal solution found]\n")
    trace = parse_scip_log(log)
    assert trace[0] == pytest.approx((0.1, 3.387625, 32.52767, 8.6019))
    assert trace[1][0] == 12.5 and np.isnan(trace[1][1]) and trace[1][3] == np.inf
    assert len(trace) == 2


def test_degenerate_features():
    """A fixed continuous feature and a categorical with one allowed category (BoFire refuses
    a one-value discrete input)."""
    from acq_helpers import fit
    from bofire.data_models.domain.api import Domain, Inputs
    from bofire.data_models.features.api import (
        CategoricalInput,
        ContinuousInput,
        DiscreteInput,
    )

    domain = Domain(inputs=Inputs(features=[
        ContinuousInput(key="a", bounds=(0.5, 0.5)),
        ContinuousInput(key="b", bounds=(0, 1)),
        DiscreteInput(key="d", values=[2.0, 5.0]),
        CategoricalInput(key="c", categories=["u", "v"], allowed=[False, True]),
    ]))
    X = np.column_stack([np.full(8, 0.5), np.linspace(0, 1, 8), np.repeat([0.0, 1.0], 4),
                         np.tile([0.0, 1.0], 4)])
    space, post = fit(domain, lambda X: X[:, 1] + X[:, 3] - X[:, 2], X=X)
    res = optimize_acquisition(post, domain, space, mip_gap=0.0, isolate=False)
    row = res.candidate.iloc[0]
    assert row["a"] == 0.5 and row["d"] in (2.0, 5.0) and row["c"] == "v"
    assert res.objective == pytest.approx(res.ucb, rel=1e-6)
