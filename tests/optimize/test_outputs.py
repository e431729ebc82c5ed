"""Several outputs in one search: the acquisition's formula, sound box bounds over the shared
grid, the enumerated optimum with objectives and output limits, and a clear error for a limit
no candidate can meet."""

from __future__ import annotations

import numpy as np
import pytest
from acq_helpers import cells, fit, mixed_domain, mixed_f
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import ContinuousInput, ContinuousOutput
from bofire.data_models.objectives.api import (
    CloseToTargetObjective,
    MaximizeObjective,
    MaximizeSigmoidObjective,
    MinimizeObjective,
    MinimizeSigmoidObjective,
    TargetObjective,
)

from bofire_bark.optimize import grid as bnb
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.optimize.entry import optimize_outputs
from bofire_bark.optimize.incumbent import random_points
from bofire_bark.optimize.outputs import draw_weights, output_acquisition
from bofire_bark.optimize.problem import build_problem
from bofire_bark.optimize.result import InfeasibleOutputLimitError

KAPPA = 1.96


def with_outputs(domain: Domain, objectives: dict) -> Domain:
    return Domain(inputs=domain.inputs, constraints=domain.constraints, outputs=Outputs(
        features=[ContinuousOutput(key=k, objective=o) for k, o in objectives.items()]))


def fit_outputs(domain: Domain, functions: dict, n: int = 12, n_trees: int = 4):
    """One posterior per output, all on the same inputs."""
    base = Domain(inputs=domain.inputs, constraints=domain.constraints)
    X = None
    posteriors = {}
    for i, (key, f) in enumerate(functions.items()):
        space, post = fit(base, f, n=n, n_trees=n_trees, seed=i, X=X)
        X = post.X
        posteriors[key] = post
    return space, posteriors


def channel_values(acq, posteriors, X):
    """The channels from the engine's own integrated UCB."""
    return np.stack([posteriors[acq.keys[c.output]].systems().integrated_ucb(X, KAPPA, c.sign)
                     for c in acq.channels], axis=-1)


def multi_grid(acq, posteriors, domain, space):
    problems, systems = [], []
    for key in acq.keys:
        p, s = build_problem(posteriors[key], domain, space, KAPPA, 1.0, None, gps=False)
        problems.append(p)
        systems.append(s)
    box = problems[0].box
    thresholds = tuple(np.unique(np.concatenate([p.ensemble.thresholds[j] for p in problems]))
                       for j in range(box.n_features))
    grids = []
    for c in acq.channels:
        from dataclasses import replace

        gm = bnb.grid_model(replace(problems[c.output], sign=c.sign), systems[c.output],
                            posteriors[acq.keys[c.output]], None, thresholds=thresholds)
        grids.append(bnb.Grid(gm, box))
    cons = bnb.Constraints(problems[0].constraints, box, problems[0].delta)
    return problems[0], bnb.MultiGrid(grids, acq), cons


@pytest.fixture(scope="module")
def three_outputs():
    domain = with_outputs(mixed_domain(), {
        "yield": MaximizeObjective(),
        "cost": MinimizeObjective(),
        "purity": CloseToTargetObjective(target_value=1.0, exponent=1),
        "impurity": MinimizeSigmoidObjective(tp=0.8, steepness=10),
    })
    space, posteriors = fit_outputs(domain, {
        "yield": mixed_f,
        "cost": lambda X: X[:, 0] + X[:, 2],
        "purity": lambda X: X[:, 1] * X[:, 0],
        "impurity": lambda X: 1.0 - X[:, 0] + 0.3 * (X[:, 3] == 0),
    })
    return domain, space, posteriors


def test_values_follow_the_formula(three_outputs):
    """Chebyshev of normalized objectives, -inf past a limit; one objective: its own UCB."""
    domain, space, posteriors = three_outputs
    w = np.array([0.2, 0.5, 0.3])
    acq = output_acquisition(domain, posteriors, w)
    X = space.encode(domain.inputs.sample(200, seed=1))
    U = channel_values(acq, posteriors, X)
    ch = {(acq.keys[c.output], c.sign): i for i, c in enumerate(acq.channels)}
    f = {"yield": U[:, ch["yield", 1.0]], "cost": U[:, ch["cost", -1.0]]}
    post = posteriors["purity"]
    t = (1.0 - post.y_mean) / post.y_std
    f["purity"] = -np.maximum(0, np.maximum(t - U[:, ch["purity", 1.0]],
                                            -U[:, ch["purity", -1.0]] - t))
    obs = {"yield": posteriors["yield"].y, "cost": -posteriors["cost"].y,
           "purity": -np.abs(post.y - t)}
    order = [g.key for g in acq.goals]  # BoFire's order of the outputs
    assert sorted(order) == ["cost", "purity", "yield"]
    fn = np.stack([(f[k] - obs[k].min()) / np.ptp(obs[k]) for k in order], axis=1)
    g = (w * fn).min(axis=1) + 0.05 * (w * fn).sum(axis=1)
    imp = posteriors["impurity"]
    ok = U[:, ch["impurity", -1.0]] >= -(0.8 - imp.y_mean) / imp.y_std
    assert 0 < ok.sum() < len(X)  # the limit binds somewhere
    np.testing.assert_allclose(acq.value(U), np.where(ok, g, -np.inf))
    single = output_acquisition(with_outputs(domain, {"cost": MinimizeObjective()}), posteriors)
    np.testing.assert_allclose(single.value(channel_values(single, posteriors, X)),
                               posteriors["cost"].systems().integrated_ucb(X, KAPPA, -1.0))


def test_weights_differ_between_draws_and_replay():
    a = draw_weights(3, np.random.default_rng(1))
    assert a.sum() == pytest.approx(1.0) and np.all(a > 0)
    assert np.array_equal(a, draw_weights(3, np.random.default_rng(1)))
    assert not np.allclose(a, draw_weights(3, np.random.default_rng(2)))


def _inside(grid, box, lo, hi, cat, X):
    keep = []
    for x in X:
        c_lo, _, c_cat = grid.cell_of(x)
        inside = np.all((c_lo >= lo) & (c_lo <= hi) | (box.kinds == CATEGORICAL))
        inside &= all((cat[j] & c_cat[j]).any() for j in range(grid.d)
                      if box.kinds[j] == CATEGORICAL)
        if inside:
            keep.append(x)
    return np.array(keep)


@pytest.mark.parametrize("scalarization", ["chebyshev", "weighted_sum"])
def test_bound_holds_on_every_box(three_outputs, scalarization):
    """Over the shared grid the combined bound of a box is >= the exact acquisition of every
    point in it (limits included), and equals it on a box decided for every channel."""
    domain, space, posteriors = three_outputs
    acq = output_acquisition(domain, posteriors, np.array([0.5, 0.3, 0.2]), scalarization)
    problem, grid, _ = multi_grid(acq, posteriors, domain, space)
    rng = np.random.default_rng(0)
    X = random_points(problem.box, (), 4000, problem.delta, rng)
    values = acq.value(channel_values(acq, posteriors, X))
    checked = decided = 0
    for _ in range(60):
        lo, hi, cat = grid.root()
        for _ in range(int(rng.integers(0, 40))):
            _, n_und, split = grid.bound(lo, hi, cat)
            if n_und == 0 or split < 0:
                break
            lo, hi, cat = grid.branch(lo, hi, cat, split)[rng.integers(2)]
        ub, n_und, _ = grid.bound(lo, hi, cat)
        inside = _inside(grid, problem.box, lo, hi, cat, X[:400])
        if len(inside) == 0:
            continue
        v = acq.value(channel_values(acq, posteriors, inside))
        assert v.max() <= ub + 1e-9
        if n_und == 0:
            np.testing.assert_allclose(v, ub, atol=1e-10)
            decided += 1
        checked += 1
    assert checked >= 20 and decided >= 1
    assert np.isinf(values).any()  # the limit prunes


@pytest.mark.parametrize("seed,second", [
    (0, MinimizeObjective()), (2, MaximizeObjective()),
    (2, CloseToTargetObjective(target_value=0.2, exponent=2))])
def test_search_returns_the_enumerated_optimum(seed, second):
    """Two objectives and two output limits on a grid small enough to enumerate every cell:
    the search proves the best cell's value (a wrong bound or a wrong channel fails here)."""
    domain = with_outputs(Domain(inputs=Inputs(features=[
        ContinuousInput(key="x0", bounds=(0, 1)), ContinuousInput(key="x1", bounds=(0, 1))])),
        {"a": MaximizeObjective(), "b": second,
         "lim": TargetObjective(target_value=0.5, tolerance=0.1, steepness=5),
         "low": MaximizeSigmoidObjective(tp=-0.3, steepness=5)})
    space, posteriors = fit_outputs(domain, {
        "a": lambda X: np.sin(5 * X[:, 0]) + 3 * X[:, 1],
        "b": lambda X: np.cos(4 * X[:, 0]) + X[:, 1],
        "lim": lambda X: X[:, 0] * X[:, 1] + 0.3,
        "low": lambda X: -X[:, 1],
    }, n=14, n_trees=3)
    acq = output_acquisition(domain, posteriors, draw_weights(2, np.random.default_rng(seed)))
    problem, grid, _ = multi_grid(acq, posteriors, domain, space)
    points = np.array(list(cells(grid, problem.box)))
    values = acq.value(channel_values(acq, posteriors, points))
    best = values.max()
    assert np.isfinite(best)
    assert acq.objective(channel_values(acq, posteriors, points)).max() > best  # limits bind
    res = optimize_outputs(posteriors, acq, domain, space, kappa=KAPPA, time_limit=60.0,
                           mip_gap=0.0, abs_gap=0.0, seed=seed)
    assert res.status == "optimal"
    assert res.ucb == pytest.approx(best, abs=1e-9)
    assert res.bound == pytest.approx(best, abs=1e-9)
    assert acq.value(channel_values(acq, posteriors, res.x[None]))[0] == pytest.approx(best)


def test_unreachable_limit_is_named(three_outputs):
    domain, space, posteriors = three_outputs
    objectives = {f.key: f.objective for f in domain.outputs.get()}
    objectives["impurity"] = MinimizeSigmoidObjective(tp=-50.0, steepness=10)
    strict = with_outputs(domain, objectives)
    acq = output_acquisition(strict, posteriors)
    with pytest.raises(InfeasibleOutputLimitError, match="'impurity' <= -50"):
        optimize_outputs(posteriors, acq, strict, space, kappa=KAPPA, time_limit=1.0)
