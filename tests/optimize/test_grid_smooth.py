"""The grid branch-and-bound on posteriors with a smooth share (``engine.smooth``): bin edges
in the grid, a point's value the engine's, bounds never below the best cell of a box (and a
bound broken on purpose caught), the brute-force optimum proven by both box loops and through
``entry.prepare_search``, with pending points; the MIP refuses such a posterior. Smooth
coordinates are binned continuous inputs, categorical inputs (``cat_cols``: one-hot or
descriptor tables), or both."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from acq_helpers import (
    cells,
    cells_in,
    continuous_domain,
    fit,
    mixed_domain,
    random_box,
    search_settings,
)

from bofire_bark.engine.smooth import SEPARATE, SmoothKernel, category_d2
from bofire_bark.optimize import grid as gr
from bofire_bark.optimize.ensemble import CATEGORICAL
from bofire_bark.optimize.entry import prepare_search
from bofire_bark.optimize.grid.bound import LAM_OFF, box_bound, scratch
from bofire_bark.optimize.problem import build_problem

KAPPA = 1.96


def smooth_posterior(post, box, cols, lengths, n_bins, seed=0, lower=None, upper=None,
                     cat_cols=(), encodings=()):
    """``post`` with a smooth share on the continuous columns ``cols`` (random shares in
    (0.2, 0.9), one per sample: the trees need not have been sampled under it), scaled by the
    box's bounds or by ``lower``, ``upper``; and on the categorical columns ``cat_cols``, each
    with an (encoding, lengths) pair of ``encodings`` (``engine.smooth.category_d2``)."""
    S = len(post.samples["sigma2"])
    samples = dict(post.samples)
    samples["smooth_share"] = np.random.default_rng(seed).uniform(0.2, 0.9, S)
    cols = np.asarray(cols, dtype=np.int64)
    C = max([len(e) for e, _ in encodings] or [1])
    cat_d2 = np.zeros((len(cat_cols), C, C))  # codes beyond a column's categories: unused
    for c, (encoding, lengths_c) in enumerate(encodings):
        cat_d2[c, :len(encoding), :len(encoding)] = category_d2(encoding, lengths_c)
    kernel = SmoothKernel(cols=cols, lower=box.lower[cols] if lower is None else lower,
                          upper=box.upper[cols] if upper is None else upper,
                          lengths=np.asarray(lengths, dtype=np.float64), n_bins=n_bins,
                          cat_cols=np.asarray(cat_cols, dtype=np.int64), cat_d2=cat_d2)
    return dataclasses.replace(post, samples=samples, smooth=kernel)


def cat_domain(constraints=()):
    """x1 continuous, c1 of five categories (the third not allowed), c2 of three."""
    from bofire.data_models.domain.api import Domain, Inputs
    from bofire.data_models.features.api import CategoricalInput, ContinuousInput

    return Domain(inputs=Inputs(features=[
        ContinuousInput(key="x1", bounds=(0, 1)),
        CategoricalInput(key="c1", categories=["p", "q", "r", "s", "t"],
                         allowed=[True, True, False, True, True]),
        CategoricalInput(key="c2", categories=["u", "v", "w"])]),
        constraints=list(constraints))


def _descriptors(k, p, seed):
    """A random descriptor table (k categories, p descriptors) and its lengths."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(k, p)), rng.uniform(0.5, 1.5, p)


def _box(domain, space, post):
    problem, _ = build_problem(post, domain, space, KAPPA, gps=False)
    return problem.box


@functools.cache
def _make(case):
    """(domain, space, posterior) of a named small case: binned smooth coordinates only
    (cont1, cont3, mixed), with a one-hot categorical one (mixed_cat), with a descriptor and a
    plain one whose categories the smooth part keeps apart as the library does
    (``surrogate.SEPARATE``: one-hot at lengths 40^-1/2) (cat2), or those two alone (cat_only:
    no binned coordinate)."""
    if case in ("cat2", "cat_only"):
        domain = cat_domain()
        space, post = fit(domain, lambda X: np.sin(4 * X[:, 0]) + 0.4 * X[:, 1]
                          - 0.6 * (X[:, 2] == 2), n=14, n_trees=4, seed=3)
        cols, lengths = ([0], [0.3]) if case == "cat2" else ([], [])
        return domain, space, smooth_posterior(
            post, _box(domain, space, post), cols, lengths, 4, seed=3, cat_cols=[1, 2],
            encodings=[_descriptors(5, 2, seed=7), (np.eye(3), [SEPARATE ** -0.5] * 3)])
    if case == "mixed_cat":
        domain = mixed_domain()
        space, post = fit(domain, lambda X: np.sin(3 * X[:, 0]) + X[:, 1] * (X[:, 3] == 1),
                          n=12, n_trees=5, seed=2)
        return domain, space, smooth_posterior(post, _box(domain, space, post), [0, 1],
                                               [0.3, 0.5], 5, seed=2, cat_cols=[3],
                                               encodings=[(np.eye(3), [0.8] * 3)])
    if case == "cont1":
        domain = continuous_domain(1)
        space, post = fit(domain, lambda X: np.sin(6 * X[:, 0]), n=10, n_trees=6, seed=3)
        # bins scaled to a wider range than the box's: an edge below it, one above
        return domain, space, smooth_posterior(post, _box(domain, space, post), [0], [0.2], 8,
                                               lower=[-0.3], upper=[1.2])
    if case == "cont3":
        domain = continuous_domain(3)
        space, post = fit(domain, lambda X: np.sin(6 * X[:, 0]) * X[:, 1] + X[:, 2], n=12,
                          n_trees=5, seed=1)
        return domain, space, smooth_posterior(post, _box(domain, space, post), [0, 1, 2],
                                               [0.3, 0.5, 0.4], 4, seed=1)
    domain = mixed_domain()  # x1, x2 continuous (smooth), d discrete, c categorical
    space, post = fit(domain, lambda X: np.sin(3 * X[:, 0]) + X[:, 1] * (X[:, 3] == 1), n=12,
                      n_trees=5, seed=2)
    return domain, space, smooth_posterior(post, _box(domain, space, post), [0, 1],
                                           [0.3, 0.5], 5, seed=2)


CAT_CASES = ["mixed_cat", "cat2", "cat_only"]


@pytest.fixture(scope="module", params=["cont1", "cont3", "mixed", *CAT_CASES])
def small(request):
    return _make(request.param)


@pytest.fixture(scope="module")
def mixed_smooth():
    return _make("mixed")


def grid_of(small, rule="ucb", sign=1.0, pending=None, kappa=KAPPA, numba_loop=False):
    domain, space, post = small
    problem, systems = build_problem(post, domain, space, kappa, sign, pending, gps=False,
                                     rule=rule)
    grid = gr.Grid(gr.grid_model(problem, systems, post, pending, numba_loop=numba_loop),
                   problem.box)
    cons = gr.Constraints(problem.constraints, problem.box, problem.delta)
    return problem, systems, grid, cons


def _score(problem, systems, X):
    return problem.acquisition_rule.score(systems, X, problem.sign, problem.incumbents)


def _pending(small, n=2, seed=5):
    domain, space, _ = small
    return space.encode(domain.inputs.sample(n, seed=seed))



def bound_violations(bound, grid, problem, systems, boxes=30, seed=1) -> int:
    """Random boxes (dives from the root) whose ``bound(lo, hi, cat)`` is below the best cell
    inside, or differs from the exact value on a decided box."""
    rng = np.random.default_rng(seed)
    bad = 0
    for _ in range(boxes):
        lo, hi, cat = random_box(grid, rng, depth=int(rng.integers(0, 10)))
        _ub, n_und, _ = grid.bound(lo, hi, cat)
        ub = bound(lo, hi, cat)
        values = _score(problem, systems, cells_in(grid, problem.box, lo, hi, cat))
        if values.max() > ub + 1e-9 or (n_und == 0 and abs(values.max() - ub) > 1e-9):
            bad += 1
    return bad


def test_grid_holds_the_bin_edges_and_each_cell_one_bin(small):
    """Every bin edge in [lower, upper) of the box is a threshold of its feature; the model's
    cell -> bin map is the kernel's bin of every cell's centre, and of points on the edges
    (which go left)."""
    problem, systems, grid, _ = grid_of(small)
    kernel = small[2].smooth
    bm = grid.gm.bm
    for j, col in enumerate(kernel.cols):
        t = grid.gm.thresholds[col]
        edges = kernel.edges(j)
        inside = (edges >= problem.box.lower[col]) & (edges < problem.box.upper[col])
        assert np.isin(edges[inside], t).all() and not np.isin(edges[~inside], t).any()
        edges = edges[inside]
        lo, hi, cat = grid.root()
        for c in range(len(t) + 1):
            lo[col] = hi[col] = c
            x = gr.driver.centre(grid, lo, hi, cat)
            assert kernel.bins(x[None])[0, j] == bm.smooth.cbin[j, c]
        X = np.repeat(gr.driver.centre(grid, *grid.root())[None], len(edges), 0)
        X[:, col] = edges
        cell = np.searchsorted(t, edges, side="left")
        np.testing.assert_array_equal(kernel.bins(X)[:, j], bm.smooth.cbin[j, cell])
        ours = np.array([grid.value(x) for x in X])
        np.testing.assert_allclose(ours, systems.integrated_ucb(X, KAPPA), atol=1e-9)


def test_an_edge_on_the_lower_bound():
    """A bin edge on the box's lower bound is a threshold: cell 0 is that point alone, in the
    bin above the edges below it; values and the proven optimum are the engine's."""
    domain = continuous_domain(1)
    space, post = fit(domain, lambda X: np.cos(5 * X[:, 0]), n=10, n_trees=5, seed=6)
    post = smooth_posterior(post, _box(domain, space, post), [0], [0.3], 4, lower=[-1.0],
                            upper=[1.0])
    problem, systems, grid, cons = grid_of((domain, space, post))
    assert grid.gm.thresholds[0][0] == 0.0 and grid.gm.bm.smooth.cbin[0, 0] == 1
    X = np.array([[0.0], [1e-9], [0.25], [0.5], [0.5 + 1e-9], [1.0]])
    ours = np.array([grid.value(x) for x in X])
    np.testing.assert_allclose(ours, systems.integrated_ucb(X, KAPPA), atol=1e-9)
    best = systems.integrated_ucb(np.array(list(cells(grid, problem.box))), KAPPA).max()
    res = gr.search(grid, cons, None, -np.inf, search_settings())
    assert res.status == "optimal" and res.value == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("rule", ["ucb", "ei", "nei"])
@pytest.mark.parametrize("pending", [False, True])
def test_value_at_points_is_the_engines(small, rule, pending):
    """A point is a decided box (one leaf per tree, one bin per smooth coordinate): its bound
    is the rule's exact value, from the smooth system's K^-1 (with pending points too)."""
    domain, space, _ = small
    pend = _pending(small) if pending else None
    problem, systems, grid, _ = grid_of(small, rule, pending=pend)
    X = space.encode(domain.inputs.sample(100, seed=1))
    ours = np.array([grid.value(x) for x in X])
    np.testing.assert_allclose(ours, _score(problem, systems, X), atol=1e-9)
    if rule == "ucb":
        np.testing.assert_allclose(ours, systems.integrated_ucb(X, KAPPA), atol=1e-9)


@pytest.mark.parametrize(("rule", "sign"), [("ucb", 1.0), ("ucb", -1.0), ("ei", 1.0),
                                            ("nei", -1.0), ("pi", 1.0)])
def test_bound_holds_on_random_boxes(small, rule, sign):
    problem, systems, grid, _ = grid_of(small, rule, sign, pending=_pending(small))
    assert bound_violations(lambda *b: grid.bound(*b)[0], grid, problem, systems) == 0


def _codes(cat_row) -> list[int]:
    """The codes a bit set (W,) allows."""
    return [a for a in range(64 * len(cat_row)) if int(cat_row[a >> 6]) >> (a & 63) & 1]


def _mean_bound(grid, post, lo, hi, cat, broken=None):
    """The integrated mean bound (kappa 0) in numpy: per sample the best reachable leaf of
    every tree plus sh sum_n alpha_n rbf_n with each rbf at its largest (alpha_n > 0) or
    smallest value over the box's bins and codes; ``broken`` "bins" or "codes": the factors of
    the binned or the categorical coordinates at the other end."""
    kernel = post.smooth
    bm = grid.gm.bm
    grid.bound(lo, hi, cat)  # leaves the reachable leaves in the scratch
    reach = grid.scratch[0].reach
    nb = int(kernel.n_bins)
    lo_bin = np.array([bm.smooth.cbin[j, lo[c]] for j, c in enumerate(kernel.cols)])
    hi_bin = np.array([bm.smooth.cbin[j, hi[c]] for j, c in enumerate(kernel.cols)])
    U = kernel.bins(post.X)
    near = np.clip(U, lo_bin, hi_bin) - U
    far = np.maximum(np.abs(U - lo_bin), np.abs(U - hi_bin))
    rbf_hi = np.exp(-0.5 * ((near / nb / kernel.lengths) ** 2).sum(axis=1))
    rbf_lo = np.exp(-0.5 * ((far / nb / kernel.lengths) ** 2).sum(axis=1))
    if broken == "bins":
        rbf_hi, rbf_lo = rbf_lo, rbf_hi
    A = kernel.codes(post.X)
    for c, col in enumerate(kernel.cat_cols):
        # factor of point n over the box's codes a: exp(-cat_d2[c, a, a_n])
        F = np.exp(-kernel.cat_d2[c][np.ix_(_codes(cat[col]), A[:, c])])
        f_hi, f_lo = F.max(axis=0), F.min(axis=0)
        if broken == "codes":
            f_hi, f_lo = f_lo, f_hi
        rbf_hi, rbf_lo = rbf_hi * f_hi, rbf_lo * f_lo
    total = 0.0
    for s in range(len(bm.s_weight)):
        mu = 0.0
        for t in range(bm.s_tree_u.shape[1]):
            u = bm.s_tree_u[s, t]
            leaves = np.flatnonzero(reach[bm.leaf_off[u]:bm.leaf_off[u] + bm.tree_nleaf[u]])
            mu += np.max(bm.sign * bm.beta[bm.s_off[s] + bm.s_base[s, t] + leaves])
        c = bm.sign * bm.smooth.alpha[s]
        mu += bm.smooth.share[s] * np.sum(c * np.where(c > 0, rbf_hi, rbf_lo))
        total += bm.s_weight[s] * mu
    return total / np.sum(bm.s_weight)


def test_a_broken_bound_is_caught(mixed_smooth):
    """The mean bound (kappa 0) in numpy equals the kernel's on random boxes and passes the
    check; the same bound with each point's RBF at the wrong end of its range (the smallest
    where alpha_n > 0) falls below cells inside boxes, and the check says so."""
    _check_broken_mean_bound(mixed_smooth, "bins")


def _check_broken_mean_bound(small, broken: str) -> None:
    """The numpy mean bound equals the kernel's on random boxes and holds; ``broken`` puts
    the bins' or the codes' factors at the wrong end and must be caught."""
    problem, systems, grid, _ = grid_of(small, kappa=0.0)
    post = small[2]
    rng = np.random.default_rng(4)
    for _ in range(20):
        box = random_box(grid, rng, depth=int(rng.integers(0, 8)))
        assert _mean_bound(grid, post, *box) == pytest.approx(grid.bound(*box)[0], abs=1e-12)
    assert bound_violations(lambda *b: _mean_bound(grid, post, *b), grid, problem,
                            systems) == 0
    assert bound_violations(lambda *b: _mean_bound(grid, post, *b, broken=broken), grid,
                            problem, systems) > 0


@pytest.mark.parametrize("case", CAT_CASES)
def test_a_broken_categorical_range_is_caught(case):
    """The same with categorical smooth coordinates: the numpy mean bound (each point's factor
    at its largest or smallest value over the box's codes) is the kernel's and holds; with the
    categorical factors at the wrong end (the smallest where the largest is due, and the
    reverse) it falls below cells inside boxes, and the check says so."""
    _check_broken_mean_bound(_make(case), "codes")


@pytest.mark.parametrize("case", CAT_CASES)
def test_a_box_of_several_codes_is_undecided(case):
    """Each categorical smooth coordinate has a tree no sample holds whose leaves are its
    allowed codes, one each (no other code in any split); a box fixed to one cell of every
    other feature is still undecided while it allows several of its codes, whatever the
    sampled trees do: no sample's sd is taken as known there (the range stays [0, 1]).
    Branching it down ends in boxes of one code each, where every sample's sd is exact."""
    problem, _systems, grid, _ = grid_of(_make(case))
    kernel, bm, box = _make(case)[2].smooth, grid.gm.bm, problem.box
    sc = scratch(bm, per_sample=True)
    x0 = np.array(list(cells(grid, box)))[0]
    for c, col in enumerate(kernel.cat_cols):
        u = int(bm.smooth.tree_u[len(kernel.cols) + c])
        nodes = range(bm.tree_root[u], bm.tree_root[u + 1] if u + 1 < len(bm.tree_root)
                      else len(bm.node_feat))
        splits = [k for k in nodes if bm.node_feat[k] >= 0]
        assert {int(bm.node_feat[k]) for k in splits} == {int(col)}
        assert bm.tree_nleaf[u] == len(box.allowed[col]) == len(splits) + 1
        for k in splits:  # the two sides part the codes that reach the split
            left, right = _codes(bm.node_lmask[k]), _codes(bm.node_rmask[k])
            assert left and right and not set(left) & set(right)
            assert set(left + right) <= set(box.allowed[col])
        lo, hi, cat = grid.cell_of(x0)
        cat[col] = grid.root()[2][col]
        open_boxes, codes = [(lo, hi, cat)], []
        while open_boxes:
            b = open_boxes.pop()
            _ub, n_und, split = box_bound(bm, *b, sc, LAM_OFF)
            if len(_codes(b[2][col])) > 1:
                assert n_und > 0
                assert np.all(sc.per[:, 1] == 0.0) and np.all(sc.per[:, 2] == 1.0)
            if n_und == 0:
                assert np.all(sc.per[:, 1] == sc.per[:, 2])
                codes.extend(_codes(b[2][col]))
                continue
            open_boxes.extend(grid.branch(*b, split))
        assert sorted(codes) == sorted(box.allowed[col])


@pytest.mark.parametrize("numba_loop", [True, False])
@pytest.mark.parametrize(("rule", "sign"), [("ucb", 1.0), ("ucb", -1.0), ("ei", 1.0),
                                            ("nei", 1.0)])
def test_search_proves_the_brute_force_optimum(small, rule, sign, numba_loop):
    """No start, gap 0: the best of every cell (the engine's values), proven, by either box
    loop (the Python one with multipliers on a categorical feature)."""
    problem, systems, grid, cons = grid_of(small, rule, sign, numba_loop=numba_loop)
    best = _score(problem, systems, np.array(list(cells(grid, problem.box)))).max()
    res = gr.search(grid, cons, None, -np.inf, search_settings(grid=gr.GridSettings(threads=1)),
                    numba_loop=numba_loop)
    assert res.status == "optimal"
    assert res.value == pytest.approx(best, abs=1e-9)
    assert res.bound == pytest.approx(best, abs=1e-9)
    assert _score(problem, systems, res.x[None])[0] == pytest.approx(best, abs=1e-9)
    for j in np.flatnonzero(problem.box.kinds == CATEGORICAL):  # never a code not allowed
        assert int(res.x[j]) in problem.box.allowed[j]


@pytest.mark.parametrize("case", ["mixed", "mixed_cat", "cat2", "cat_only"])
@pytest.mark.parametrize("rule", ["ucb", "nei"])
def test_prepare_search_proves_the_optimum_with_pending_points(case, rule):
    """Through the studies' seam, with two pending points: the proven answer is the best
    cell of the conditioned posterior, scored by the engine."""
    small = _make(case)
    domain, space, post = small
    pend = _pending(small)
    job = prepare_search(post, domain, space, rule=rule, pending=pend, mip_gap=0.0,
                         abs_gap=0.0, time_limit=60.0)
    res = job.solve(job.start())
    problem, systems, grid, _ = grid_of(small, rule, pending=pend)
    best = _score(problem, systems, np.array(list(cells(grid, problem.box)))).max()
    assert res.status == "optimal"
    assert res.ucb == pytest.approx(best, abs=1e-9)
    assert _score(problem, systems, res.x[None])[0] == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("solver", ["scip", "gurobi", "highs"])
def test_the_mip_refuses_a_smooth_share(mixed_smooth, solver):
    """The MIP holds leaf systems only: the error names the smooth share first, before the
    solver is looked up."""
    domain, space, post = mixed_smooth
    with pytest.raises(ValueError, match=r"^a smooth share \(smooth_share\) is searched by "
                                         "the grid branch-and-bound"):
        prepare_search(post, domain, space, solver=solver, kappa=0.0 if solver == "highs"
                       else KAPPA)
    with pytest.raises(ValueError, match=r"^a smooth share"):
        build_problem(post, domain, space, gps=True)


def _two_outputs(cat=False):
    """Two objectives (y1 maximized, y2 minimized) on x1, x2 and a category, each output's
    posterior with its own smooth share on x1, x2 (and the category: ``cat``)."""
    from bofire.data_models.domain.api import Domain, Inputs, Outputs
    from bofire.data_models.features.api import (
        CategoricalInput,
        ContinuousInput,
        ContinuousOutput,
    )
    from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective

    from bofire_bark.space import SplitSpace

    inputs = Inputs(features=[ContinuousInput(key="x1", bounds=(0, 1)),
                              ContinuousInput(key="x2", bounds=(0, 1)),
                              CategoricalInput(key="c", categories=["a", "b"])])
    domain = Domain(inputs=inputs, outputs=Outputs(features=[
        ContinuousOutput(key="y1", objective=MaximizeObjective()),
        ContinuousOutput(key="y2", objective=MinimizeObjective())]))
    space = SplitSpace.from_domain(domain)
    X = space.encode(inputs.sample(12, seed=4))
    fs = {"y1": lambda X: np.sin(3 * X[:, 0]) + X[:, 2],
          "y2": lambda X: X[:, 1] - X[:, 0] * X[:, 2]}
    box = None
    posts = {}
    for i, key in enumerate(fs):
        post = fit(domain, fs[key], n_trees=4, seed=i, X=X)[1]
        box = _box(domain, space, post) if box is None else box
        posts[key] = smooth_posterior(post, box, [0, 1], [0.3 + 0.2 * i, 0.4], 4, seed=i,
                                      cat_cols=[2] if cat else [],
                                      encodings=[(np.eye(2), [0.7 + 0.3 * i] * 2)] if cat
                                      else [])
    return domain, space, posts


@pytest.mark.parametrize("cat", [False, True])
@pytest.mark.parametrize("rule", ["ucb", "ehvi"])
def test_several_outputs_prove_the_brute_force_optimum(rule, cat):
    """Two smooth outputs on one grid (the union of both grids' thresholds and bin edges),
    scalarized UCB or the expected hypervolume improvement, with a categorical smooth
    coordinate too (``cat``): the proven answer is the best cell, scored by the engine."""
    from bofire_bark.optimize.entry import _Outputs, optimize_outputs
    from bofire_bark.optimize.outputs import output_acquisition
    from bofire_bark.settings import AcquisitionSettings
    from bofire_bark.space.finite import plan_search

    domain, space, posts = _two_outputs(cat)
    acq = output_acquisition(domain, posts)
    res = optimize_outputs(posts, acq, domain, space, rule=rule, mip_gap=0.0, abs_gap=0.0,
                           time_limit=60.0)
    job = _Outputs(posts, acq, domain, space, None,
                   plan_search(domain, AcquisitionSettings(), space))
    settings = AcquisitionSettings(rule=rule)
    job.prepare(settings)
    job.build(settings)
    for j, col in enumerate(posts["y1"].smooth.cols):
        assert np.isin(posts["y1"].smooth.edges(j), job.thresholds[col]).all()
    grid = gr.Grid(gr.grid_model(job.problems[0], job.systems[0], posts["y1"],
                                 thresholds=job.thresholds), job.box)
    best = job.score(np.array(list(cells(grid, job.box)))).max()
    assert res.status == "optimal"
    assert res.ucb == pytest.approx(best, abs=1e-9)
    assert res.bound == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("coords", ["bins", "codes", "both"])
@pytest.mark.parametrize("rule", ["ucb", "nei"])
def test_library_scores_a_smooth_share_by_the_engine(rule, coords):
    """A finite domain's enumeration (no leaf tables for N-space systems): its point is the
    best library point under the engine's scores, with pending points; the smooth
    coordinates binned, categorical or both."""
    from bofire.data_models.domain.api import Domain, Inputs, Outputs
    from bofire.data_models.features.api import CategoricalInput, ContinuousOutput, DiscreteInput
    from bofire.data_models.objectives.api import MaximizeObjective

    from bofire_bark.optimize.library import build_library, optimize_library
    from bofire_bark.optimize.outputs import output_acquisition
    from bofire_bark.settings import AcquisitionSettings

    domain = Domain(inputs=Inputs(features=[
        DiscreteInput(key="a", values=[0.0, 1.0, 2.0, 3.0, 4.0]),
        CategoricalInput(key="c", categories=["p", "q", "r"])]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())]))
    space, post = fit(domain, lambda X: np.sin(X[:, 0]) * (X[:, 1] == 1), n=8, n_trees=4)
    # a smooth coordinate on the discrete index (a finite domain has no continuous range)
    cols, lengths = ([0], [0.4]) if coords != "codes" else ([], [])
    post = smooth_posterior(post, _box(domain, space, post), cols, lengths, 5,
                            cat_cols=[1] if coords != "bins" else [],
                            encodings=[_descriptors(3, 2, seed=1)] if coords != "bins" else [])
    lib = build_library(domain, space)
    pend = lib.X[[3]]
    res = optimize_library(lib, {"y": post}, output_acquisition(domain, {"y": post}), space,
                           AcquisitionSettings(rule=rule), pending=pend)
    problem, systems = build_problem(post, domain, space, pending=pend, gps=False, rule=rule)
    assert res.ucb == pytest.approx(_score(problem, systems, lib.X).max(), abs=1e-10)


@pytest.mark.parametrize("case", ["mixed", "cat2"])
@pytest.mark.parametrize("rule", ["ucb", "nei"])
def test_batch_from_the_frontier_proves_each_optimum(case, rule):
    """A 3-batch, each search starting from the partition the one before left (one more
    pending point can only lower a smooth share's acquisition too): every candidate is the
    best cell of its conditioned acquisition."""
    from bofire_bark.optimize.grid.driver import Frontier

    frontier, pending = Frontier(), None
    for i in range(3):
        problem, systems, grid, cons = grid_of(_make(case), rule, pending=pending)
        assert frontier.fits(grid) == (i > 0)  # the search starts from the boxes left
        res = gr.search(grid, cons, None, -np.inf, search_settings(), frontier=frontier)
        best = _score(problem, systems, np.array(list(cells(grid, problem.box)))).max()
        assert res.status == "optimal"
        assert res.value == pytest.approx(best, abs=1e-9)
        assert res.bound == pytest.approx(best, abs=1e-9)
        pending = res.x[None] if pending is None else np.vstack([pending, res.x])


def _assert_best_feasible_cell_proven(small) -> None:
    """The search's answer under the domain's constraints is feasible, at least the best
    feasible cell's value, within its proven bound, and scored as the engine scores it."""
    problem, systems, grid, cons = grid_of(small)
    X = np.array(list(cells(grid, problem.box)))
    X = X[[cons.satisfied(x) for x in X]]
    best = systems.integrated_ucb(X, KAPPA).max()
    res = gr.search(grid, cons, None, -np.inf, search_settings())
    assert res.status == "optimal" and cons.satisfied(res.x)
    assert res.value >= best - 1e-9
    assert res.bound >= res.value - 1e-12
    assert systems.integrated_ucb(res.x[None], KAPPA)[0] == pytest.approx(res.value,
                                                                           abs=1e-9)


def test_constrained_search_holds_its_bound():
    """Three smooth inputs under a linear inequality (the Python loop, feasible points in
    decided boxes): the answer is feasible, at least the best feasible cell centre and
    within its proven bound."""
    from bofire.data_models.constraints.api import LinearInequalityConstraint

    domain = continuous_domain(3, [LinearInequalityConstraint(
        features=["x0", "x1"], coefficients=[1.0, 1.0], rhs=1.2)])
    space, post = fit(domain, lambda X: np.sin(6 * X[:, 0]) + X[:, 1] - X[:, 2], n=12,
                      n_trees=5, seed=4)
    post = smooth_posterior(post, _box(domain, space, post), [0, 1, 2], [0.3, 0.3, 0.5], 4)
    _assert_best_feasible_cell_proven((domain, space, post))


def test_constrained_search_with_categorical_coordinates():
    """The mixed domain under a linear inequality, smooth on x1, x2 and the category (the
    Python loop): the answer is the best feasible cell, proven."""
    from bofire.data_models.constraints.api import LinearInequalityConstraint

    domain = mixed_domain([LinearInequalityConstraint(features=["x1", "x2"],
                                                      coefficients=[1.0, 1.0], rhs=0.8)])
    space, post = fit(domain, lambda X: np.sin(3 * X[:, 0]) + X[:, 1] * (X[:, 3] == 1), n=12,
                      n_trees=5, seed=2)
    post = smooth_posterior(post, _box(domain, space, post), [0, 1], [0.3, 0.5], 5,
                            cat_cols=[3], encodings=[_descriptors(3, 2, seed=4)])
    _assert_best_feasible_cell_proven((domain, space, post))


def test_an_underflowed_rbf_factor_gives_finite_impacts():
    """Where a binned coordinate's RBF factor underflows to 0 (a short length, points many
    bins away), the branching impacts stay finite: the 0 / 0 of such a point's slack is 0 (its
    largest RBF over the box is 0 too), not NaN. Checked on each one-cell box at the ends of
    cont1's coordinate, with the factor table cut to 0 beyond one bin."""
    from bofire_bark.optimize.grid.bound import _add_smooth_impacts, _smooth_range

    problem, _systems, grid, _ = grid_of(_make("cont1"))
    bm = grid.gm.bm
    f = bm.smooth.f.copy()
    f[:, 2:] = 0.0
    sm = bm.smooth._replace(f=f)
    n, u = sm.alpha.shape[1], int(sm.tree_u[0])
    und_start = np.zeros(len(bm.tree_root) + 1, np.int64)
    und_start[u + 1:] = 1  # one undecided split, in the coordinate's own tree
    rmax, rmin = np.empty(n), np.empty(n)
    lo, hi, cat = grid.root()
    ends = [0, int(hi[0]) - 1]
    assert max(abs(int(b) - int(sm.cbin[0, e])) for e in ends for b in sm.ubin[:, 0]) >= 2
    for e in ends:
        box_lo, box_hi = lo.copy(), hi.copy()
        box_lo[0], box_hi[0] = e, e
        _smooth_range(sm, box_lo, box_hi, cat, rmax, rmin)
        impact = np.zeros((1, 2))
        _add_smooth_impacts(sm, np.ones(len(sm.share)), box_lo, box_hi, cat, und_start, rmax,
                            impact)
        assert np.all(np.isfinite(impact)), (e, impact)


# ``tie_break="smooth"``: the continuous extension ranks the points of the candidate's cell.

@pytest.mark.parametrize("case", ["cont1", "cont3", "mixed", "mixed_cat"])
def test_the_continuous_extension_is_the_model_at_bin_centres(case):
    """``binned=False`` scores the scaled coordinates themselves: the binned model's values at
    bin centres, other values between them."""
    domain, space, post = _make(case)
    problem, systems, _, _ = grid_of(_make(case))
    k = post.smooth
    X = space.encode(domain.inputs.sample(40, seed=4))
    centred = X.copy()
    centred[:, k.cols] = k.lower + (k.bins(X) + 0.5) / k.n_bins * (k.upper - k.lower)
    for a, b in zip(systems.predict_each(centred, binned=False),
                    systems.predict_each(centred), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    fine, coarse = systems.predict_each(X, binned=False)[0], systems.predict_each(X)[0]
    assert np.abs(fine - coarse).max() > 1e-6


def _cell_grid(x, box, thresholds, k=9):
    """A k-point grid of every continuous feature over x's cell (other features as x)."""
    from bofire_bark.optimize.ensemble import CONTINUOUS
    from bofire_bark.optimize.incumbent import cell_bounds

    lo, hi = cell_bounds(x, box, thresholds)
    axes = [np.linspace(lo[j], hi[j], k) if box.kinds[j] == CONTINUOUS and hi[j] > lo[j]
            else np.array([x[j]]) for j in range(len(x))]
    return np.array(np.meshgrid(*axes, indexing="ij")).reshape(len(x), -1).T


@pytest.mark.parametrize("case", ["cont1", "cont3", "mixed", "mixed_cat"])
@pytest.mark.parametrize("rule", ["ucb", "nei"])
def test_smooth_tie_break_takes_the_cells_best_point_by_brute_force(case, rule):
    """The proven value and bound stay; the point stays in the cell (same binned value) and
    its continuous-extension score is the best of a fine grid of the cell (less a little: the
    choice is among the corners and random points), and above the centre's in some case."""
    domain, space, post = _make(case)
    kw = dict(rule=rule, mip_gap=0.0, abs_gap=0.0, time_limit=60.0)
    plain = prepare_search(post, domain, space, **kw)
    a = plain.solve(plain.start())
    job = prepare_search(post, domain, space, tie_break="smooth", **kw)
    b = job.solve(job.start())
    assert b.ucb == pytest.approx(a.ucb, abs=1e-9) and b.bound == pytest.approx(a.bound)
    assert b.status == a.status == "optimal"
    box, thresholds = job.problem.box, job.problem.ensemble.thresholds
    G = _cell_grid(a.x, box, thresholds)
    coarse = job.score(G)
    assert np.all(np.abs(coarse - a.ucb) <= 1e-9 * max(1.0, abs(a.ucb)))  # one cell
    fine = job.score(G, binned=False)
    fb = float(job.score(b.x[None], binned=False)[0])
    assert fb >= fine.max() - 0.02 * (fine.max() - fine.min()) - 1e-12
    assert fb >= float(job.score(a.x[None], binned=False)[0])


def test_smooth_tie_break_moves_the_point():
    """cont1's cell is one bin wide: the centre is not where the extension is largest."""
    domain, space, post = _make("cont3")
    a = prepare_search(post, domain, space, mip_gap=0.0, abs_gap=0.0)
    b = prepare_search(post, domain, space, tie_break="smooth", mip_gap=0.0, abs_gap=0.0)
    xa, xb = a.solve(a.start()).x, b.solve(b.start()).x
    assert not np.allclose(xa, xb)
    assert b.score(xb[None], binned=False)[0] > b.score(xa[None], binned=False)[0]


def test_smooth_tie_break_keeps_linear_constraints():
    """A sum-to-one mixture: the chosen point satisfies it and keeps the proven value."""
    from bofire.data_models.constraints.api import LinearEqualityConstraint
    from bofire.data_models.domain.api import Domain, Inputs
    from bofire.data_models.features.api import ContinuousInput

    from bofire_bark.optimize.constraints import feasible

    domain = Domain(inputs=Inputs(features=[ContinuousInput(key=f"x{i}", bounds=(0, 1))
                                            for i in range(3)]),
                    constraints=[LinearEqualityConstraint(features=["x0", "x1", "x2"],
                                                          coefficients=[1, 1, 1], rhs=1)])
    space, post = fit(domain, lambda X: X[:, 0] - (X[:, 1] - 0.3) ** 2, n=12, n_trees=5,
                      seed=4)
    post = smooth_posterior(post, _box(domain, space, post), [0, 1, 2], [0.3, 0.3, 0.3], 6)
    a = prepare_search(post, domain, space, mip_gap=0.0, abs_gap=0.0, time_limit=30.0)
    b = prepare_search(post, domain, space, tie_break="smooth", mip_gap=0.0, abs_gap=0.0,
                       time_limit=30.0)
    ra, rb = a.solve(a.start()), b.solve(b.start())
    assert rb.ucb == pytest.approx(ra.ucb, abs=1e-9)
    assert feasible(domain, space, b.problem.box, rb.x[None], tol=1e-6)[0]
    assert b.score(rb.x[None], binned=False)[0] >= b.score(ra.x[None], binned=False)[0]


def test_smooth_tie_break_needs_a_smooth_share():
    from bofire.data_models.domain.api import Domain, Inputs, Outputs
    from bofire.data_models.features.api import ContinuousInput, ContinuousOutput

    import bofire_bark  # noqa: F401 (registers BARK with BoFire)
    from bofire_bark.data_models.strategy import BARKStrategy

    domain = Domain(inputs=Inputs(features=[ContinuousInput(key="a", bounds=(0, 1))]),
                    outputs=Outputs(features=[ContinuousOutput(key="y")]))
    with pytest.raises(ValueError, match="acquisition_optimizer.tie_break: 'smooth'"):
        BARKStrategy(domain=domain, acquisition_optimizer={"tie_break": "smooth"})
    BARKStrategy(domain=domain, acquisition_optimizer={"tie_break": "smooth"},
                 surrogate_specs={"smooth_share": True})
