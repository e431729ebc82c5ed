"""Ask time with ``tie_break="farthest"`` and ``"smooth"`` against ``"none"``: the same fitted
posterior (20 points, 4 continuous inputs and a categorical; with a smooth share, which
``"smooth"`` needs), the settings alternating, 6 rounds.

    python -m benchmarks.tie_break_speed
"""

from __future__ import annotations

import time

import numpy as np


def main() -> None:
    import bofire.strategies.api as strategies
    from bofire.data_models.domain.api import Domain
    from bofire.data_models.features.api import (
        CategoricalInput,
        ContinuousInput,
        ContinuousOutput,
    )

    import bofire_bark  # noqa: F401 (registers BARK)
    from bofire_bark.data_models import BARKStrategy
    from bofire_bark.optimize.entry import optimize_acquisition

    domain = Domain.from_lists(
        [ContinuousInput(key=f"x{i}", bounds=(0, 1)) for i in range(4)]
        + [CategoricalInput(key="c", categories=["a", "b", "c"])], [ContinuousOutput(key="y")])
    data = domain.inputs.sample(20, seed=1)
    data["y"] = np.sin(6 * data.x0) + data.x1 + (data.c == "b")
    strategy = strategies.map(BARKStrategy(domain=domain, seed=3,
                                           surrogate_specs={"smooth_share": True}))
    strategy.tell(data)
    post, space = strategy.surrogate.posterior, strategy.surrogate.space
    seconds: dict[str, list[float]] = {"none": [], "farthest": [], "smooth": []}
    for r in range(6):
        for tie_break in seconds:
            t0 = time.perf_counter()
            optimize_acquisition(post, domain, space, tie_break=tie_break, seed=r)
            seconds[tie_break].append(time.perf_counter() - t0)
    for name, s in seconds.items():
        print(f"{name}: ask s {np.round(s, 3).tolist()}")
    for name in ("farthest", "smooth"):
        ratio = np.array(seconds[name]) / np.array(seconds["none"])
        print(f"{name} / none, median of the {len(ratio)} pairs: {np.median(ratio):.3f}")


if __name__ == "__main__":
    main()
