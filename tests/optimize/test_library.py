"""Finite domains solved by enumeration (``optimize.library``): the kernel against a plain NumPy
posterior, the optimum against brute force and the grid search, exclusions, constraints."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from acq_helpers import fit
from bofire.data_models.constraints.api import (
    CategoricalExcludeConstraint,
    LinearInequalityConstraint,
    SelectionCondition,
    ThresholdCondition,
)
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import (
    MaximizeObjective,
    MaximizeSigmoidObjective,
    MinimizeObjective,
)

from bofire_bark.optimize import optimize_acquisition
from bofire_bark.optimize.library import build_library, optimize_library, sample_moments
from bofire_bark.optimize.outputs import output_acquisition
from bofire_bark.optimize.result import InfeasibleDomainError, LibraryExhaustedError
from bofire_bark.settings import AcquisitionSettings, SearchSettings
from bofire_bark.space.finite import SearchPlan, library_size, plan_search

KAPPA = 1.96
SETTINGS = AcquisitionSettings(kappa=KAPPA)


def finite_domain(constraints=(), objective=None) -> Domain:
    """3 x 4 x 4 = 48 points (category 'z' not allowed); encoded columns d, e, c."""
    return Domain(
        inputs=Inputs(features=[
            CategoricalInput(key="c", categories=["a", "b", "c", "z"],
                             allowed=[True, True, True, False]),
            DiscreteInput(key="d", values=[0.5, 1.0, 2.0, 4.0]),
            DiscreteInput(key="e", values=[0.0, 1.0, 2.0, 3.0]),
        ]),
        outputs=Outputs(features=[ContinuousOutput(
            key="y", objective=objective or MaximizeObjective())]),
        constraints=list(constraints))


def truth(X):
    return np.sin(2 * X[:, 0]) + 0.6 * X[:, 1] - 0.3 * X[:, 0] * X[:, 1] + (X[:, 2] == 1)


@pytest.fixture(scope="module", params=[0, 1])
def finite(request):
    domain = finite_domain()
    space, post = fit(domain, truth, n=12, n_trees=8, seed=request.param)
    return domain, space, post


def every_point(space):
    """All allowed points, built here without the library (itertools over the codes)."""
    axes = [np.flatnonzero(space.allowed[j]) if space.allowed[j] is not None
            else np.arange(space.n_values[j]) for j in range(space.n_features)]
    return np.array(list(itertools.product(*axes)), dtype=np.float64)


def route_np(samples, s, kinds, X):
    """Leaf node of every row of X in every tree of sample s, (m, n), walking in NumPy."""
    feat, thr, mask = samples["feat"][s], samples["thr"][s], samples["mask"][s]
    left, right = samples["left"][s], samples["right"][s]
    out = np.zeros((feat.shape[0], len(X)), dtype=np.int64)
    for t in range(feat.shape[0]):
        for i, x in enumerate(X):
            node = 0
            while feat[t, node] >= 0:
                j = feat[t, node]
                if kinds[j] == 2:
                    code = int(x[j])
                    go_left = (int(mask[t, node, code // 64]) >> (code % 64)) & 1
                else:
                    go_left = x[j] <= thr[t, node]
                node = left[t, node] if go_left else right[t, node]
            out[t, i] = node
    return out


def moments_np(post, X, pending=None):
    """(S, n) means and latent variances from the leaf systems, in plain NumPy:
    mu = sum_t beta[c_t], var = sigma^2 phi^T Ginv phi."""
    systems = post.systems(pending).systems
    S = len(systems)
    mu, var = np.empty((S, len(X))), np.empty((S, len(X)))
    for s, (lcol, Ginv, beta, _) in enumerate(systems):
        leaves = route_np(post.samples, s, post.kinds, X)
        cols = lcol[np.arange(lcol.shape[0])[:, None], leaves]  # (m, n)
        phi = np.zeros((len(X), len(beta)))
        np.put_along_axis(phi, cols.T, 1.0, axis=1)
        mu[s] = phi @ beta
        var[s] = np.maximum(post.samples["sigma2"][s] * np.einsum("np,pq,nq->n", phi, Ginv,
                                                                  phi), 0.0)
    return mu, var


def brute_force(post, X, kappa, sign, pending=None):
    mu, var = moments_np(post, X, pending)
    return (sign * mu + kappa * np.sqrt(var)).mean(axis=0)


@pytest.mark.parametrize("low_rank", [0.0, 100.0], ids=["direct", "low_rank"])
def test_moments_match_numpy(finite, low_rank):
    """Both forms of the kernel give the NumPy posterior's mean and sd, with pending points."""
    _, space, post = finite
    X = every_point(space)
    pending = X[[3, 17]]
    mu, var = moments_np(post, X, pending)
    systems = post.systems(pending).systems
    kmu, ksd = sample_moments(post.samples, post.kinds, systems, X, low_rank)
    np.testing.assert_allclose(kmu, mu.mean(axis=0), atol=1e-10)
    np.testing.assert_allclose(ksd, np.sqrt(var).mean(axis=0), atol=1e-9)


@pytest.mark.parametrize("objective", [MaximizeObjective(), MinimizeObjective()])
def test_enumeration_is_brute_force_and_grid_search(finite, objective):
    """The enumeration's candidate and value are the brute-force argmax and max over every
    point (plain NumPy), and the grid search run to gap 0 on the same posterior finds them."""
    domain, space, post = finite
    domain = finite_domain(objective=objective)
    sign = 1.0 if isinstance(objective, MaximizeObjective) else -1.0
    acq = output_acquisition(domain, {"y": post})
    lib = build_library(domain, space)
    assert len(lib.X) == library_size(space) == 48
    res = optimize_library(lib, {"y": post}, acq, space, SETTINGS)
    X = every_point(space)
    values = brute_force(post, X, KAPPA, sign)
    best = int(np.argmax(values))
    assert res.status == "optimal" and res.gap == 0.0 and res.solver == "enumeration"
    assert res.ucb == pytest.approx(values[best], abs=1e-9)
    assert res.bound == res.ucb
    ties = np.flatnonzero(values >= values[best] - 1e-9)
    assert any(np.array_equal(res.x, X[i]) for i in ties)
    if len(ties) == 1:
        np.testing.assert_array_equal(res.x, X[best])
    grid = optimize_acquisition(post, domain, space, kappa=KAPPA, sign=sign, solver="bnb",
                                time_limit=60.0, mip_gap=0.0, abs_gap=0.0)
    assert grid.status == "optimal"
    assert grid.ucb == pytest.approx(res.ucb, abs=1e-9)
    if len(ties) == 1:
        np.testing.assert_array_equal(grid.x, res.x)
    pd_row = res.candidate.iloc[0]
    assert pd_row["c"] in ("a", "b", "c")


def test_pending_points_condition_and_are_excluded(finite):
    """Pending points condition every sample (the brute force with them) and are skipped;
    so are measured points; the next best point is returned."""
    domain, space, post = finite
    acq = output_acquisition(domain, {"y": post})
    lib = build_library(domain, space)
    X = every_point(space)
    first = optimize_library(lib, {"y": post}, acq, space, SETTINGS)
    pending = first.x[None, :]
    measured = post.X
    res = optimize_library(lib, {"y": post}, acq, space, SETTINGS, pending=pending,
                           exclude=np.vstack([measured, pending]))
    values = brute_force(post, X, KAPPA, 1.0, pending)
    known = lib.excluded(np.vstack([measured, pending]))
    assert known.sum() >= 2
    values[known] = -np.inf
    assert res.ucb == pytest.approx(values.max(), abs=1e-9)
    assert not any(np.array_equal(res.x, row) for row in np.vstack([measured, pending]))
    # without exclusions the same conditioned posterior may pick a known point
    free = optimize_library(lib, {"y": post}, acq, space, SETTINGS, pending=pending)
    assert free.ucb >= res.ucb


def test_everything_excluded_is_a_clear_error(finite):
    domain, space, post = finite
    lib = build_library(domain, space)
    acq = output_acquisition(domain, {"y": post})
    with pytest.raises(LibraryExhaustedError, match="allow_repeats=True"):
        optimize_library(lib, {"y": post}, acq, space, SETTINGS, exclude=lib.X)


def test_positions_outside_the_enumeration():
    domain = finite_domain()
    space = fit_space(domain)
    lib = build_library(domain, space)
    X = np.array([[0.0, 0.0, 0.0], [2.0, 3.0, 1.0]])
    X[0, space.feature_index("c")] = 3.0  # 'z' is not allowed
    pos = lib.positions(X)
    assert pos[0] == -1 and pos[1] >= 0
    np.testing.assert_array_equal(lib.X[lib.position == pos[1]][0], X[1])


def fit_space(domain):
    from bofire_bark.space import SplitSpace

    return SplitSpace.from_domain(domain)


def test_constraints_drop_points(finite):
    """A linear inequality on discrete inputs and a categorical exclusion: the library holds
    exactly the points BoFire calls feasible, and the optimum is the brute force's over them."""
    _, space, post = finite
    constraints = [
        LinearInequalityConstraint(features=["d", "e"], coefficients=[1.0, 1.0], rhs=4.0),
        CategoricalExcludeConstraint(
            features=["c", "e"], conditions=[SelectionCondition(selection=["b"]),
                                             ThresholdCondition(threshold=1.5, operator=">")]),
    ]
    domain = finite_domain(constraints)
    lib = build_library(domain, space)
    X = every_point(space)
    ok = domain.constraints.is_fulfilled(space.decode(X), tol=1e-6).to_numpy(bool)
    assert 0 < ok.sum() < len(X)
    np.testing.assert_array_equal(lib.X, X[ok])
    res = optimize_library(lib, {"y": post}, output_acquisition(domain, {"y": post}), space,
                           SETTINGS)
    values = brute_force(post, X, KAPPA, 1.0)
    assert res.ucb == pytest.approx(values[ok].max(), abs=1e-9)
    assert domain.constraints.is_fulfilled(res.candidate).all()
    impossible = finite_domain([LinearInequalityConstraint(
        features=["d", "e"], coefficients=[1.0, 1.0], rhs=0.1)])
    with pytest.raises(InfeasibleDomainError, match="none of its 48 points"):
        build_library(impossible, space)


def test_output_limit_and_two_outputs(finite):
    """Two outputs, one a limit: the enumeration maximizes the same acquisition as the
    brute force (acq.value on NumPy channels) and keeps the limit."""
    domain0, space, post = finite
    _, post2 = fit(domain0, lambda X: X[:, 0] - X[:, 1] + (X[:, 2] == 0), n=12, n_trees=8, seed=5)
    domain = Domain(inputs=domain0.inputs, outputs=Outputs(features=[
        ContinuousOutput(key="y", objective=MaximizeObjective()),
        ContinuousOutput(key="w", objective=MaximizeSigmoidObjective(tp=0.0, steepness=1.0))]))
    posteriors = {"y": post, "w": post2}
    acq = output_acquisition(domain, posteriors)
    lib = build_library(domain, space)
    res = optimize_library(lib, posteriors, acq, space, SETTINGS)
    X = every_point(space)
    parts = {}
    for k, key in enumerate(acq.keys):
        mu, var = moments_np(posteriors[key], X)
        sd = np.sqrt(var)
        parts[k] = {1.0: (mu + KAPPA * sd).mean(0), -1.0: (KAPPA * sd - mu).mean(0)}
    U = np.stack([parts[c.output][c.sign] for c in acq.channels], axis=-1)
    values = acq.value(U)
    assert np.isfinite(values).any()
    assert res.ucb == pytest.approx(values.max(), abs=1e-9)


def test_plan_names_the_limit():
    domain = finite_domain()
    space = fit_space(domain)
    auto, bnb = SearchSettings(), SearchSettings(solver="bnb")
    assert plan_search(domain, auto, space) == SearchPlan("library", "auto", False, False, 48)
    assert plan_search(domain, auto) == plan_search(domain, auto, space)  # space built there
    plan = plan_search(domain, auto, space, limit=10)
    assert plan.search == "grid" and "48 points, above the enumeration limit of 10" in plan.note
    plan = plan_search(domain, bnb, space)
    assert plan.search == "grid" and "solver 'bnb'" in plan.note
    cont = Domain(inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0, 1))]),
                  outputs=domain.outputs)
    assert plan_search(cont, auto) == SearchPlan("grid", "bnb", True, False)
    fixed = Domain(inputs=Inputs(features=[ContinuousInput(key="x", bounds=(0.5, 0.5)),
                                           DiscreteInput(key="d", values=[1.0, 2.0])]))
    assert library_size(fit_space(fixed)) == 2
