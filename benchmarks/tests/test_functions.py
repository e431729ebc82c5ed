"""Benchmark functions: shapes, determinism, known optima, and that categories matter."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from bofire.data_models.strategies.api import RandomStrategy
from bofire.strategies.api import map as map_strategy
from scipy.optimize import minimize

from benchmarks.functions import (
    BENCHMARKS,
    TUNING_BENCHMARKS,
    DiscreteAckley,
    DiscreteRosenbrock,
    MixedConstrained,
    PestControl,
    StyblinskiTang,
    SVRBench,
    TreeFunction,
    TreeFunctionCat,
    XGBoostMNIST,
    ackley,
    make_benchmark,
    rosenbrock,
)

DIMS = {"TreeFunction": 10, "TreeFunctionCat": 20, "DiscreteAckley": 13,
        "DiscreteRosenbrock": 10, "PestControl": 25, "Hartmann6": 6, "StyblinskiTang10": 10,
        "MixedConstrained": 5, "Hartmann6Spurious20": 26}


def random_points(bench, n, seed=0):
    return map_strategy(RandomStrategy(domain=bench.domain, seed=seed)).ask(n)


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_shapes_validity_and_determinism(name):
    bench = make_benchmark(name)
    assert len(bench.domain.inputs) == DIMS[name]
    X = random_points(bench, 7)
    X.index = np.arange(10, 17)  # an index that is not 0..n-1
    out = bench.f(X, return_complete=True)
    assert out.shape == (7, DIMS[name] + 2)
    assert list(out.index) == list(X.index)
    assert np.isfinite(out["y"]).all() and (out["valid_y"] == 1).all()
    bench.domain.validate_candidates(X, only_inputs=True)
    again = make_benchmark(name).f(X)
    np.testing.assert_array_equal(again["y"].to_numpy(), out["y"].to_numpy())


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_known_optimum_is_not_beaten_by_random_points(name):
    bench = make_benchmark(name)
    try:
        opt = bench.get_optima()
    except NotImplementedError:
        return
    keys = bench.domain.inputs.get_keys()
    y_opt = float(opt["y"].iloc[0])
    np.testing.assert_allclose(bench.f(opt[keys])["y"].iloc[0], y_opt, rtol=1e-5, atol=1e-5)
    assert (bench.f(random_points(bench, 200, seed=1))["y"] >= y_opt - 1e-9).all()


def test_tree_functions_depend_on_seed_and_have_unit_scale():
    a, b = TreeFunction(seed=0), TreeFunction(seed=1)
    X = random_points(a, 500)
    ya, yb = a.f(X)["y"].to_numpy(), b.f(X)["y"].to_numpy()
    assert not np.allclose(ya, yb)
    assert len(np.unique(np.round(ya, 12))) > 10  # not constant: the trees split
    assert 0.05 < ya.std() < 3.0


def test_tree_function_cat_categories_change_the_value():
    bench = TreeFunctionCat()
    keys = bench.domain.inputs.get_keys()
    split = bench.split_features()
    cat_cols = [keys.index(f"h{i}") for i in range(10)]
    assert np.isin(split, cat_cols).sum() >= 10  # many categorical splits
    assert np.isin(split, [keys.index(f"x{i}") for i in range(10)]).sum() >= 10
    X = random_points(bench, 300)
    y = bench.f(X)["y"].to_numpy()
    changed = X.copy()
    rng = np.random.default_rng(0)
    for i in range(10):
        changed[f"h{i}"] = rng.choice([f"c{k}" for k in range(5)], size=len(X))
    y2 = bench.f(changed)["y"].to_numpy()
    assert np.mean(np.abs(y - y2) > 1e-9) > 0.5
    # with the continuous part fixed, the categories alone span a real range
    assert np.std(y - y2) > 0.1


def test_ackley_and_rosenbrock_raw_optima():
    assert ackley(np.zeros((1, 13)))[0] == pytest.approx(0.0, abs=1e-12)
    assert rosenbrock(np.ones((1, 10)))[0] == 0.0


def test_discrete_ackley_optimum_over_the_binary_space():
    bench = DiscreteAckley()
    y_opt = bench.get_optima()["y"].iloc[0]
    assert y_opt == pytest.approx(20.0 * (1.0 - np.exp(-0.2 * np.sqrt(10.0 / 13.0))))
    # every binary pattern at x = 0 gives the same value (symmetry); 64 patterns checked
    for bits in itertools.islice(itertools.product([-1.0, 1.0], repeat=10), 0, 1024, 16):
        assert ackley(np.r_[0.0, 0.0, 0.0, bits][None])[0] == pytest.approx(y_opt)


def test_discrete_rosenbrock_optimum_by_local_solves():
    bench = DiscreteRosenbrock()
    y_opt = bench.get_optima()["y"].iloc[0]
    assert y_opt == pytest.approx(6.237475, abs=1e-5)
    rng = np.random.default_rng(0)
    # any nonzero integer is far worse even with the continuous block at its best
    for combo in itertools.product([-5.0, 0.0, 5.0, 10.0], repeat=3):
        z = np.r_[bench._OPT_X, combo, 0.0, 0.0, 0.0]
        if any(combo):
            assert rosenbrock(z[None])[0] > y_opt + 1.0
    def f(x):
        return rosenbrock(np.r_[x, np.zeros(6)][None])[0]
    for _ in range(10):
        r = minimize(f, rng.uniform(-5, 10, 4), method="L-BFGS-B", bounds=[(-5, 10)] * 4)
        assert r.fun >= y_opt - 1e-6


def test_styblinski_tang_optimum():
    bench = StyblinskiTang(dim=10)
    assert bench.get_optima()["y"].iloc[0] == pytest.approx(-391.6617, abs=1e-3)


def test_mixed_constrained_optimum_is_feasible_and_best_per_catalyst():
    bench = MixedConstrained()
    opt = bench.get_optima()
    keys = bench.domain.inputs.get_keys()
    assert bench.domain.constraints.is_fulfilled(opt[keys], tol=1e-6).all()
    y_opt = opt["y"].iloc[0]
    rng = np.random.default_rng(0)
    cons = [{"type": "ineq", "fun": lambda v: 0.35 - v[0] * v[2]},
            {"type": "ineq", "fun": lambda v: 1.0 - v[0] - v[1]}]
    for cat in "ABC":
        def g(v, cat=cat):
            return MixedConstrained.value(v[0], v[1], 1 - v[0] - v[1], v[2], [cat])[0]
        for _ in range(5):
            r = minimize(g, rng.uniform(0, 0.5, 3), method="SLSQP", bounds=[(0, 1)] * 3,
                         constraints=cons)
            if r.success:
                assert r.fun >= y_opt - 1e-6
    # the unconstrained best of catalyst A violates the nonlinear constraint
    a, b, t0, _ = MixedConstrained.params["A"]
    assert a * t0 > 0.35


def test_pest_control_deterministic_given_seed_and_sensitive_to_choices():
    bench = PestControl(seed=0)
    none = pd.DataFrame([{k: "none" for k in bench.keys}])
    spray = pd.DataFrame([{k: "pest4" for k in bench.keys}])
    y_none, y_spray = bench.f(none)["y"].iloc[0], bench.f(spray)["y"].iloc[0]
    assert y_none > y_spray  # doing nothing lets the pests spread every stage
    assert y_none == PestControl(seed=0).f(none)["y"].iloc[0]
    assert y_spray != PestControl(seed=1).f(spray)["y"].iloc[0]
    # the cost counts the pest stages (at most 25) plus at most 25 purchases
    assert 0.0 < y_spray < 50.0 and 0.0 < y_none <= 25.0


@pytest.mark.parametrize("cls", [TreeFunction, TreeFunctionCat])
def test_tree_function_minimum_from_the_mip_is_not_beaten(cls):
    bench = cls()
    opt = bench.get_optima()
    keys = bench.domain.inputs.get_keys()
    y_opt = opt["y"].iloc[0]
    assert bench.f(opt[keys])["y"].iloc[0] == pytest.approx(y_opt)
    X = random_points(bench, 3000, seed=5)
    assert bench.f(X)["y"].min() > y_opt - 1e-9
    # one-coordinate moves from the optimum never improve it
    rng = np.random.default_rng(1)
    for key in keys:
        moved = pd.concat([opt[keys]] * 5, ignore_index=True)
        if key.startswith("h"):
            moved[key] = [f"c{k}" for k in range(5)]
        else:
            moved[key] = rng.uniform(0, 1, 5)
        assert bench.f(moved)["y"].min() >= y_opt - 1e-9


def test_typed_optima_are_what_their_functions_compute():
    """The constants in functions.py are regenerable: the functions that found them (at a
    fraction of their default effort) land on them again."""
    from benchmarks.functions import (
        discrete_rosenbrock_optimum,
        mixed_constrained_optimum,
    )

    x, y = discrete_rosenbrock_optimum(n_starts=20)
    np.testing.assert_allclose(x, DiscreteRosenbrock._OPT_X, atol=1e-6)
    assert y == pytest.approx(DiscreteRosenbrock().get_optima()["y"].iloc[0], abs=1e-9)
    opt, y = mixed_constrained_optimum(n_starts=10)
    typed = MixedConstrained._OPT
    assert opt["catalyst"] == typed["catalyst"]
    for key in ("x1", "x2", "x3", "t"):
        assert opt[key] == pytest.approx(typed[key], abs=1e-6)
    assert y == pytest.approx(MixedConstrained().get_optima()["y"].iloc[0], abs=1e-9)


# --------------------------------------------------------------------------------------------
# The hyperparameter-tuning benchmarks (opt-in: not in BENCHMARKS)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "dim", "kinds"), [
    ("SVRBench", 53, {"ContinuousInput": 3, "CategoricalInput": 50}),
    ("XGBoostMNIST", 8, {"ContinuousInput": 4, "DiscreteInput": 1, "CategoricalInput": 3}),
])
def test_tuning_benchmarks_are_posed_as_the_paper_and_bark_takes_them(name, dim, kinds):
    from bofire_bark.data_models import BARKStrategy

    assert name in TUNING_BENCHMARKS and name not in BENCHMARKS  # opt-in by name
    bench = make_benchmark(name)  # building needs no xgboost: it is imported on evaluation
    inputs = bench.domain.inputs
    assert len(inputs) == dim
    counts = {}
    for feat in inputs.get():
        counts[type(feat).__name__] = counts.get(type(feat).__name__, 0) + 1
    assert counts == kinds
    BARKStrategy(domain=bench.domain)  # validates


def test_svr_bench_bounds_data_and_values():
    bench = SVRBench()
    bounds = {k: bench.domain.inputs.get_by_key(k).bounds
              for k in ("log_epsilon", "log_C", "log_gamma")}
    assert bounds == {"log_epsilon": (-2.0, 0.0), "log_C": (-2.0, 2.0),
                      "log_gamma": (-1.0, 1.0)}
    assert bench.X.shape == (442, 50) and bench.y.shape == (442,)
    assert len(set(bench.feature_names)) == 50
    # most correlated first: bmi and s5 lead the diabetes features
    assert bench.feature_names[:2] == ["bmi", "s5"]
    X = random_points(bench, 5)
    y = bench.f(X)["y"].to_numpy()
    assert np.isfinite(y).all() and (y > 0).all()
    assert len(np.unique(y)) == 5  # different points, different errors
    np.testing.assert_array_equal(SVRBench().f(X)["y"].to_numpy(), y)  # deterministic
    # the features matter: none included predicts the training mean, worse than the best two
    point = X.iloc[[0]].copy()
    point[bench.keys] = "exclude"
    y_none = bench.f(point)["y"].iloc[0]
    point[["h00", "h01"]] = "include"
    assert bench.f(point)["y"].iloc[0] < y_none
    assert y_none == pytest.approx(np.mean([np.mean((yv - yt.mean()) ** 2)
                                            for _, _, yt, yv in bench._splits]))


def test_xgboost_mnist_values_are_finite_deterministic_and_differ():
    pytest.importorskip("xgboost", reason="XGBoostMNIST needs the [lab] extra's xgboost")
    bench = XGBoostMNIST()
    assert len(bench.y_train) == 400 and len(bench.y_val) == 1797 - 400
    # gbtree points (dart costs seconds each); one dart point for its path
    X = pd.DataFrame({"log_learning_rate": [-0.5, -1.0, -4.0, -0.5],
                      "min_split_loss": [0.0, 2.0, 5.0, 0.0],
                      "subsample": [1.0, 0.5, 0.8, 1.0], "reg_lambda": [1.0, 3.0, 0.5, 1.0],
                      "max_depth": [6.0, 3.0, 1.0, 4.0],
                      "booster": ["gbtree", "gbtree", "gbtree", "dart"],
                      "grow_policy": ["depthwise", "lossguide", "depthwise", "depthwise"],
                      "objective": ["multi:softprob", "multi:softmax", "multi:softprob",
                                    "multi:softmax"]}, index=[3, 5, 7, 9])
    bench.domain.validate_candidates(X, only_inputs=True)
    y = bench.f(X)["y"]
    assert list(y.index) == [3, 5, 7, 9]
    y = y.to_numpy()
    assert np.isfinite(y).all() and ((y >= 0) & (y <= 1)).all()
    assert len(np.unique(y[:3])) == 3
    assert y[0] < 0.2 and y[2] > y[0]  # a tiny learning rate barely learns in 100 rounds
    # deterministic (on the gbtree rows: the dart row alone takes seconds)
    np.testing.assert_array_equal(XGBoostMNIST().f(X.iloc[:3])["y"].to_numpy(), y[:3])
