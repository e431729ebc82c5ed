"""bofire_bark.plots draws what the strategy knows: one bar per input, the response on a grid
with the constraints, the best so far, a non-dominated front and the chains' traces."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib", reason="the plots need the [plots] extra")

import bofire.strategies.api as strategies  # noqa: E402
from bofire.data_models.constraints.api import LinearInequalityConstraint  # noqa: E402
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs  # noqa: E402
from bofire.data_models.features.api import (  # noqa: E402
    CategoricalDescriptorInput,
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
)
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective  # noqa: E402

import bofire_bark  # noqa: F401, E402
from bofire_bark import plots  # noqa: E402
from bofire_bark.data_models import BARKSettings, BARKStrategy  # noqa: E402

FAST = BARKSettings(n_trees=10, n_chains=2, n_samples=2, thinning=10, burn_in=100)


def domain() -> Domain:
    """Four inputs (one split by two descriptors), a linear constraint that cuts the x1-x2
    corner, and yield declared before cost (BoFire's sorted order puts cost first)."""
    return Domain(
        inputs=Inputs(features=[
            ContinuousInput(key="x1", bounds=(0, 1)),
            ContinuousInput(key="x2", bounds=(0, 1)),
            CategoricalDescriptorInput(key="s", categories=["u", "v", "w"],
                                       descriptors=["polarity", "size"],
                                       values=[[1.0, 3.0], [2.0, 1.0], [3.0, 2.0]]),
            CategoricalInput(key="c", categories=["a", "b"]),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="yield", objective=MaximizeObjective()),
            ContinuousOutput(key="cost", objective=MinimizeObjective()),
        ]),
        constraints=Constraints(constraints=[LinearInequalityConstraint(
            features=["x1", "x2"], coefficients=[1.0, 1.0], rhs=1.5)]))


@pytest.fixture(scope="module")
def told():
    dom = domain()
    X = dom.inputs.sample(14, seed=3)
    X = X[dom.constraints.is_fulfilled(X)].reset_index(drop=True)
    X["yield"] = 10 * X.x1 + 3 * (X.s == "w") + np.sin(5 * X.x2)
    X["cost"] = 5 * X.x1 ** 2 + X.x2 + (X.c == "b")
    X["valid_yield"] = X["valid_cost"] = 1
    strategy = strategies.map(BARKStrategy(domain=dom, surrogate_specs=FAST, seed=0))
    strategy.tell(X)
    return strategy


def test_relevance_has_one_bar_per_input(told):
    ax = plots.plot_relevance(told)
    keys = told.domain.inputs.get_keys()
    assert len(ax.patches) == len(keys) == 4
    assert {t.get_text() for t in ax.get_yticklabels()} == set(keys)
    # the descriptor input is one bar; in detail each of its descriptors is
    detail = plots.plot_relevance(told, output="cost", detail=True)
    assert len(detail.patches) == len(told.surrogates["cost"].space.split_variable_names()) == 5
    assert plots.plot_relevance(told, top=2).patches.__len__() == 2


def test_response_grid_matches_predictions_and_marks_the_constraint(told):
    fig = plots.plot_response(told, "x1", "x2", n=7, fixed={"s": "v", "c": "a"})
    mean_ax, sd_ax = fig.axes[:2]  # then their colorbars
    mean = np.asarray(mean_ax.collections[0].get_array()).reshape(7, 7)
    sd = np.asarray(sd_ax.collections[0].get_array()).reshape(7, 7)
    # row i, column j: x2 = grid[i], x1 = grid[j]
    g = np.linspace(0, 1, 7)
    point = pd.DataFrame({"x1": [g[5]], "x2": [g[1]], "s": ["v"], "c": ["a"]})
    pred = told.surrogate.predict(point)
    assert mean[1, 5] == pytest.approx(pred["yield_pred"].iloc[0])
    assert sd[1, 5] == pytest.approx(pred["yield_sd"].iloc[0])
    # x1 + x2 <= 1.5 fails in the top right corner: a hatched region and its boundary
    from matplotlib.contour import ContourSet

    sets = [c for c in mean_ax.collections if isinstance(c, ContourSet)]
    assert [list(c.hatches) for c in sets] == [["//"], [None]]  # hatched region, boundary
    assert sets[1].levels.tolist() == [0.5]
    with pytest.raises(ValueError, match="x, y: input 'c' is CategoricalInput"):
        plots.plot_response(told, "x1", "c")
    with pytest.raises(ValueError, match="fixed:"):
        plots.plot_response(told, "x1", "x2", fixed={"z": 1})


def test_progress_is_the_best_so_far(told):
    for output, accumulate in (("yield", np.maximum), ("cost", np.minimum)):
        ax = plots.plot_progress(told, output=output, n_initial=5)
        line = next(ln for ln in ax.get_lines() if ln.get_label() == "best so far")
        values = told.experiments[output].to_numpy()
        np.testing.assert_allclose(line.get_ydata(), accumulate.accumulate(values))
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, len(values) + 1))


def test_pareto_front_points_are_non_dominated(told):
    ax = plots.plot_pareto(told)
    front = next(c for c in ax.collections if c.get_label() == "Pareto front").get_offsets()
    rest = next(c for c in ax.collections if c.get_label() == "measured").get_offsets()
    everything = told.experiments[["yield", "cost"]].to_numpy()

    def dominated(p):  # maximize yield, minimize cost
        return any(q[0] >= p[0] and q[1] <= p[1] and (q[0] > p[0] or q[1] < p[1])
                   for q in everything)

    assert len(front) >= 1 and len(front) + len(rest) == len(everything)
    assert not any(dominated(p) for p in np.asarray(front))
    assert all(dominated(p) for p in np.asarray(rest))
    with pytest.raises(ValueError, match="outputs: need two"):
        plots.plot_pareto(told, outputs=["yield"])


def test_traces_one_row_per_quantity(told):
    fig = plots.plot_traces(told, output="cost", var_names=["noise_var", "leaves_per_tree"])
    assert len(fig.axes) == 4
    # the right column: one trace per chain
    assert len(fig.axes[1].get_lines()) == FAST.n_chains
    with pytest.raises(ValueError, match="var_names"):
        plots.plot_traces(told, var_names=["nope"])


def test_plots_module_imports_no_matplotlib_until_used():
    code = ("import sys, bofire_bark.plots; "
            "print(any(m == 'matplotlib' or m.startswith('matplotlib.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_missing_matplotlib_names_the_extra(monkeypatch, told):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install \"\.\[plots\]\""):
        plots.plot_relevance(told)
