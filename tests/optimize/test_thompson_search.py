"""The searches on a Thompson draw (kappa 0, one sample with drawn leaf weights): the grid
search proves the enumerated maximum of the drawn function, not of the posterior mean."""

from __future__ import annotations

import numpy as np
import pytest
from acq_helpers import cells

from bofire_bark.optimize import grid as gr
from bofire_bark.optimize import optimize_acquisition
from bofire_bark.optimize.problem import build_problem
from bofire_bark.optimize.settings import AcquisitionSettings


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_returns_the_best_cell_of_the_draw(mixed, sign, seed):
    domain, space, post = mixed
    draw = post.draw_function(np.random.default_rng(seed))
    problem, systems = build_problem(draw, domain, space, 0.0, sign, gps=False)
    grid = gr.Grid(gr.grid_model(problem, systems, draw), problem.box)
    X = np.array(list(cells(grid, problem.box)))
    drawn = sign * draw.predict_each(X)[0][0]
    res = optimize_acquisition(draw, domain, space, AcquisitionSettings(
        kappa=0.0, mip_gap=0.0, abs_gap=0.0, time_limit=30.0, seed=seed), sign=sign)
    assert res.status == "optimal"
    value = sign * draw.predict_each(res.x[None])[0][0, 0]
    assert value == pytest.approx(drawn.max(), abs=1e-9)


def test_draws_pick_different_cells(mixed):
    """Draws explore: their best cells are not all the posterior mean's best cell."""
    domain, space, post = mixed
    best = []
    for seed in range(8):
        draw = post.draw_function(np.random.default_rng(seed))
        problem, systems = build_problem(draw, domain, space, 0.0, 1.0, gps=False)
        grid = gr.Grid(gr.grid_model(problem, systems, draw), problem.box)
        X = np.array(list(cells(grid, problem.box)))
        best.append(tuple(np.round(X[np.argmax(draw.predict_each(X)[0][0])], 9)))
    assert len(set(best)) >= 3
