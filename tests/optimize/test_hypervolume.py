"""The expected hypervolume improvement (``optimize.hypervolume``): its closed form against a
Monte Carlo estimate with BoTorch's hypervolume, its value at points in the grid search, its
bound on random boxes (and a broken one caught), and the search against brute force."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from acq_helpers import cells, fit, random_box
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
)
from bofire.data_models.objectives.api import (
    MaximizeObjective,
    MaximizeSigmoidObjective,
    MinimizeObjective,
)
from botorch.utils.multi_objective.hypervolume import Hypervolume as BoTorchHV

from bofire_bark.optimize import grid as gr
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.optimize.entry import _Outputs, optimize_outputs
from bofire_bark.optimize.hypervolume import (
    Hypervolume,
    _factor_max,
    front_cells,
    reference_point,
)
from bofire_bark.optimize.outputs import output_acquisition
from bofire_bark.optimize.settings import AcquisitionSettings
from bofire_bark.settings import OUTPUT_LIMITS
from bofire_bark.space import SplitSpace
from bofire_bark.space.finite import plan_search


def test_closed_form_matches_monte_carlo():
    """EHVI of one normal point against the mean of BoTorch's hypervolume improvement over
    200,000 draws (3 objectives; the sd of the estimate bounds the tolerance)."""
    rng = np.random.default_rng(0)
    front = rng.uniform(0, 1, size=(6, 3))
    ref = reference_point(front)
    lower, upper = front_cells(front, ref)
    hv = Hypervolume(lower, upper, (0, 1, 2), (0, 1, 2), (1.0, 1.0, 1.0))
    mu, sd = np.array([0.7, 0.6, 0.5]), np.array([0.3, 0.2, 0.4])
    moments = [(np.array([[mu[k]]]), np.array([[sd[k] ** 2]])) for k in range(3)]
    ours = hv.values(moments)[0]
    Y = mu + sd * rng.normal(size=(200_000, 3))
    base = BoTorchHV(torch.as_tensor(ref)).compute(torch.as_tensor(front))
    # HVI(y) = sum over cells of the clipped box volumes (the partition is exact)
    lo, hi = lower[None], np.minimum(upper[None], 1e9)
    vol = np.prod(np.clip(Y[:, None, :], lo, hi) - lo, axis=-1).sum(axis=1)
    some = rng.choice(len(Y), 50, replace=False)
    for i in some:
        both = BoTorchHV(torch.as_tensor(ref)).compute(torch.as_tensor(np.vstack((front, Y[i]))))
        assert vol[i] == pytest.approx(both - base, abs=1e-9)
    assert abs(ours - vol.mean()) < 4 * vol.std() / np.sqrt(len(vol))


def _regions(seed: int, n: int = 300):
    """Random regions {m <= A, L <= s <= B, m + k s <= C} (L = 0 half the time), with the s
    grid a dense search walks along the path m = min(A, C - k s)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        A = rng.normal()
        L = rng.uniform(0, 0.4) * rng.integers(2)
        B = L + rng.uniform(0, 1)
        k = rng.uniform(0.3, 3)
        C = A + k * rng.uniform(-0.2, 1.2) * B
        yield rng, (A, L, B, C, k), np.linspace(L, B, 4001)


def test_factor_bound_over_its_region():
    """``_factor_max`` against a dense search of its region."""
    from bofire_bark.optimize.hypervolume import _factor

    for rng, (A, L, B, C, k), s in _regions(1):
        lo = rng.normal()
        hi = np.inf if rng.integers(3) == 0 else lo + rng.uniform(0.01, 2)
        dense = max(_factor(min(A, C - k * x), x, lo, hi) for x in s)
        assert _factor_max(A, L, B, C, k, lo, hi, 4) >= dense - 1e-12


def test_feasibility_bound_over_its_region():
    """``_feasible_max`` against a dense search of its region."""
    from bofire_bark.optimize.hypervolume import _feasible_max, _phi

    for rng, (A, L, B, C, k), s in _regions(3):
        t = A + rng.normal(0, 0.5)
        dense = max(_phi(min(A, C - k * x), x, t) for x in s)
        assert _feasible_max(A, L, B, C, k, t, 4) >= dense - 1e-12


def test_probability_weight_matches_monte_carlo():
    """The weighed value of one sample against draws of (y1, y2, y3): the hypervolume
    improvement counted only where y3 meets its limit."""
    from bofire_bark.optimize.hypervolume import Weight

    rng = np.random.default_rng(5)
    front = rng.uniform(0, 1, size=(5, 2))
    lower, upper = front_cells(front, reference_point(front))
    hv = Hypervolume(lower, upper, (0, 1), (0, 1), (1.0, 1.0),
                     (Weight(channel=2, output=2, sign=-1.0, required=-0.2),))
    mu, sd = np.array([0.7, 0.6, 0.1]), np.array([0.3, 0.2, 0.4])
    moments = [(np.array([[mu[k]]]), np.array([[sd[k] ** 2]])) for k in range(3)]
    ours = hv.values(moments)[0]
    Y = mu + sd * rng.normal(size=(400_000, 3))
    lo, hi = lower[None], np.minimum(upper[None], 1e9)
    vol = np.prod(np.clip(Y[:, None, :2], lo, hi) - lo, axis=-1).sum(axis=1)
    vol = vol * (-Y[:, 2] >= -0.2)  # y3 <= 0.2: a MinimizeSigmoid limit
    assert abs(ours - vol.mean()) < 4 * vol.std() / np.sqrt(len(vol))


def two_outputs(limit: bool = False):
    inputs = Inputs(features=[ContinuousInput(key="x1", bounds=(0, 1)),
                              ContinuousInput(key="x2", bounds=(0, 1)),
                              CategoricalInput(key="c", categories=["a", "b"])])
    outs = [ContinuousOutput(key="y1", objective=MaximizeObjective()),
            ContinuousOutput(key="y2", objective=MinimizeObjective())]
    if limit:
        outs.append(ContinuousOutput(key="y3", objective=MaximizeSigmoidObjective(
            tp=0.0, steepness=1.0)))
    domain = Domain(inputs=inputs, outputs=Outputs(features=outs))
    space = SplitSpace.from_domain(domain)
    X = space.encode(inputs.sample(12, seed=4))
    fs = {"y1": lambda X: np.sin(3 * X[:, 0]) + X[:, 2],
          "y2": lambda X: X[:, 1] - X[:, 0] * X[:, 2],
          "y3": lambda X: X[:, 0] - X[:, 1]}
    posts = {k: fit(domain, fs[k], n_trees=3, seed=i, X=X)[1]
             for i, k in enumerate(o.key for o in outs)}
    return domain, space, posts


@pytest.fixture(scope="module", params=["plain", "limit", "probability", "plain-nehvi",
                                        "limit-nehvi"])
def job(request):
    case, _, rule = request.param.partition("-")
    domain, space, posts = two_outputs(case != "plain")
    acq = output_acquisition(domain, posts)
    job = _Outputs(posts, acq, domain, space, None,
                   plan_search(domain, AcquisitionSettings(), space))
    settings = AcquisitionSettings(rule=rule or "ehvi", output_limits="probability"
                                   if case == "probability" else "optimistic")
    job.prepare(settings)
    job.build(settings)
    return job, settings


def _grid(job, settings, hv=None):
    from bofire_bark.optimize.ensemble import distinct_groups

    grids = [gr.Grid(gr.grid_model(dataclasses.replace(job.problems[c.output],
                                                       sign=float(c.sign)),
                                   job.systems[c.output], job.posteriors[job.acq.keys[c.output]],
                                   None, settings.grid,
                                   thresholds=job.thresholds), job.box)
             for c in job.acq.channels]
    groups = [distinct_groups(job.posteriors[job.acq.keys[c.output]].samples)[1]
              for c in job.acq.channels]
    return gr.HypervolumeGrid(grids, job.acq, hv or job.hv, groups)


def test_value_at_points_is_the_exact_one(job):
    job, settings = job
    grid = _grid(job, settings)
    X = np.array(list(cells(grid, job.box)))[::7]
    ours = np.array([grid.value(x) for x in X])
    np.testing.assert_allclose(ours, job.score(X), atol=1e-10)


def _violations(grid, job, boxes=30, seed=2):
    rng = np.random.default_rng(seed)
    X = np.array(list(cells(grid, job.box)))
    values = job.score(X)
    bad = 0
    for _ in range(boxes):
        lo, hi, cat = random_box(grid, rng, int(rng.integers(0, 10)))
        ub = grid.bound(lo, hi, cat)[0]
        inside = []
        for i, x in enumerate(X):
            c_lo, _, c_cat = grid.cell_of(x)
            ordered = job.box.kinds != CATEGORICAL
            if np.any(ordered & ((c_lo < lo) | (c_lo > hi))):
                continue
            if all((cat[j] & c_cat[j]).any() for j in range(grid.d) if not ordered[j]):
                inside.append(i)
        if values[inside].max() > ub + 1e-9:
            bad += 1
    return bad


def test_bound_holds_on_random_boxes(job):
    job, settings = job
    assert _violations(_grid(job, settings), job) == 0


def test_a_broken_bound_is_caught(job):
    """Cells shifted up by 0.5 sd in every objective (a front the points are not scored
    against): the check finds boxes whose bound is below a value inside."""
    job, settings = job
    wrong = dataclasses.replace(job.hv, lower=job.hv.lower + 0.5, upper=job.hv.upper + 0.5)
    assert _violations(_grid(job, settings, wrong), job) > 0


def test_a_broken_weight_bound_is_caught(job):
    """Limits raised by 1 sd in the bound only: boxes bounded below a value inside."""
    job, settings = job
    if job.hv.prunes:
        pytest.skip("the limits prune")
    wrong = dataclasses.replace(job.hv, weights=tuple(
        dataclasses.replace(w, required=w.required + 1.0) for w in job.hv.weights))
    assert _violations(_grid(job, settings, wrong), job) > 0


def test_probability_weighs_where_optimism_prunes():
    """The same posteriors: optimistic limits leave -inf where the UCB misses a limit, the
    probability weight scores every point in [0, EHVI] and never prunes."""
    domain, space, posts = two_outputs(True)
    acq = output_acquisition(domain, posts)
    scores = {}
    for mode in OUTPUT_LIMITS:
        job = _Outputs(posts, acq, domain, space, None,
                       plan_search(domain, AcquisitionSettings(), space))
        settings = AcquisitionSettings(rule="ehvi", output_limits=mode)
        job.prepare(settings)
        job.build(settings)
        scores[mode] = job.score(np.array(list(cells(_grid(job, settings), job.box))))
    cut = ~np.isfinite(scores["optimistic"])
    assert cut.any() and np.isfinite(scores["probability"]).all()
    kept = ~cut
    assert np.all(scores["probability"][kept] <= scores["optimistic"][kept] + 1e-12)


@pytest.mark.parametrize("rule", ["ehvi", "nehvi"])
@pytest.mark.parametrize("limit", ["none", *OUTPUT_LIMITS])
def test_search_proves_the_brute_force_optimum(rule, limit):
    domain, space, posts = two_outputs(limit != "none")
    acq = output_acquisition(domain, posts)
    mode = "optimistic" if limit == "none" else limit
    res = optimize_outputs(posts, acq, domain, space, rule=rule, mip_gap=0.0, abs_gap=0.0,
                           time_limit=60.0, output_limits=mode)
    job = _Outputs(posts, acq, domain, space, None,
                   plan_search(domain, AcquisitionSettings(), space))
    settings = AcquisitionSettings(rule=rule, output_limits=mode)
    job.prepare(settings)
    job.build(settings)
    grid = _grid(job, settings)
    best = job.score(np.array(list(cells(grid, job.box)))).max()
    assert res.status == "optimal"
    assert res.ucb == pytest.approx(best, abs=1e-10)
    assert res.bound == pytest.approx(best, abs=1e-10)


@pytest.mark.parametrize("limit", [False, True])
def test_reference_point_given_or_inferred(limit):
    """The cells start at the reference point: by default the worst of the front (the
    measured points that meet the limit) minus 10 % of its range, else the given one,
    standardized and oriented (y2 is minimized)."""
    domain, space, posts = two_outputs(limit)
    signs = {"y1": 1.0, "y2": -1.0}

    def cells_lower(reference):
        acq = output_acquisition(domain, posts, reference=reference)
        job = _Outputs(posts, acq, domain, space, None,
                       plan_search(domain, AcquisitionSettings(), space))
        settings = AcquisitionSettings(rule="ehvi")
        job.prepare(settings)
        job.build(settings)
        return job.hv.lower.min(axis=0)

    Y = np.stack([signs[k] * posts[k].y for k in ("y1", "y2")], axis=1)
    if limit:
        Y = Y[posts["y3"].y >= (0.0 - posts["y3"].y_mean) / posts["y3"].y_std]
    span = Y.max(axis=0) - Y.min(axis=0)
    assert np.allclose(cells_lower(None), Y.min(axis=0) - 0.1 * span)
    given = {"y1": 0.3, "y2": 0.7}
    want = [signs[k] * (given[k] - posts[k].y_mean) / posts[k].y_std for k in ("y1", "y2")]
    assert np.allclose(cells_lower(given), want)
    with pytest.raises(ValueError, match="reference point: keys"):
        output_acquisition(domain, posts, reference={"y1": 0.0})
