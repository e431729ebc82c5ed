"""Seconds of 2,400 ``farthest_in_cell`` and ``distinct_point`` calls on a toy mixed domain
(6 continuous inputs with 12 thresholds each, a discrete and a categorical input, 30 data
points), in process after the imports: the per-call cost of the grid-cell helpers. Compare two
checkouts by running it under each in turn:

    for i in 1 2 3; do PYTHONPATH=. python -m benchmarks.cell_speed; \
        PYTHONPATH=../other python benchmarks/cell_speed.py; done
"""

import time

import numpy as np
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.features.api import CategoricalInput, ContinuousInput, DiscreteInput

from bofire_bark.optimize.constraints import feasible, input_box
from bofire_bark.optimize.incumbent import distinct_point, farthest_in_cell
from bofire_bark.space import SplitSpace


def main() -> None:
    domain = Domain(inputs=Inputs(features=[
        *(ContinuousInput(key=f"x{i}", bounds=(0, 1)) for i in range(6)),
        DiscreteInput(key="d", values=[1, 2, 3, 5]),
        CategoricalInput(key="c", categories=["p", "q", "r"])]))
    space = SplitSpace.from_domain(domain)
    box = input_box(domain, space)
    rng = np.random.default_rng(0)
    thresholds = (*(np.sort(rng.uniform(0, 1, 12)) for _ in range(6)), np.array([0.5, 1.5]),
                  np.array([]))

    def feas(X):
        return feasible(domain, space, box, X)

    def score(X):
        return X[:, :6].round(1).sum(axis=1)

    data = rng.uniform(0, 1, (30, 8))
    data[:, 6] = rng.integers(0, 4, 30)
    data[:, 7] = rng.integers(0, 3, 30)
    start = time.perf_counter()
    for _ in range(40):
        for x in data:
            farthest_in_cell(x, float(score(x[None])[0]), box, thresholds, score, feas, (),
                             data, rng)
            distinct_point(x, box, thresholds, score, feas, data)
    print(f"{time.perf_counter() - start:.3f}")


if __name__ == "__main__":
    main()
