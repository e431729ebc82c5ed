"""MkDocs hook: draw ``bofire_bark.plots``' figures at build time from a small fitted strategy
(two goals, a linear constraint, a categorical input), served as ``figures/plots/*.png``, so
the diagnostics page shows what the functions draw as they are today (nothing committed)."""

from __future__ import annotations

import io

from mkdocs.structure.files import File


def _strategy():
    import bofire.strategies.api as strategies
    import numpy as np
    from bofire.data_models.constraints.api import LinearInequalityConstraint
    from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
    from bofire.data_models.features.api import (
        CategoricalInput,
        ContinuousInput,
        ContinuousOutput,
    )
    from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective

    from bofire_bark.data_models import BARKSettings, BARKStrategy

    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key="temperature", bounds=(20, 120)),
                                ContinuousInput(key="residence_time", bounds=(1, 60)),
                                CategoricalInput(key="solvent", categories=["MeCN", "THF",
                                                                            "DMF"])]),
        outputs=Outputs(features=[ContinuousOutput(key="yield", objective=MaximizeObjective()),
                                  ContinuousOutput(key="cost",
                                                   objective=MinimizeObjective())]),
        constraints=Constraints(constraints=[LinearInequalityConstraint(
            features=["temperature", "residence_time"], coefficients=[1.0, 1.0], rhs=150.0)]))
    settings = BARKSettings(n_trees=20, n_chains=2, n_samples=4, thinning=10, burn_in=200)
    strategy = strategies.map(BARKStrategy(domain=domain, surrogate_specs=settings, seed=0))
    X = domain.inputs.sample(40, seed=0)
    X = X[X["temperature"] + X["residence_time"] <= 150].head(16).reset_index(drop=True)
    t, r = X["temperature"].to_numpy(), X["residence_time"].to_numpy()
    bonus = X["solvent"].map({"MeCN": 5.0, "THF": -3.0, "DMF": 8.0}).to_numpy()
    rng = np.random.default_rng(0)
    X["yield"] = 60 - 20 * ((t - 85) / 40) ** 2 - 3 * np.log(r / 30) ** 2 + bonus + rng.normal(
        0, 1, len(X))
    X["cost"] = 0.05 * t + 0.1 * r + rng.normal(0, 0.2, len(X))
    X["valid_yield"] = X["valid_cost"] = 1
    strategy.tell(X)
    return strategy


def on_files(files, config):
    import matplotlib

    matplotlib.use("Agg")
    from bofire_bark import plots

    strategy = _strategy()
    figures = {
        "relevance": plots.plot_relevance(strategy).figure,
        "response": plots.plot_response(strategy, "temperature", "residence_time"),
        "progress": plots.plot_progress(strategy).figure,
        "pareto": plots.plot_pareto(strategy).figure,
        "traces": plots.plot_traces(strategy),
    }
    for name, fig in figures.items():
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
        files.append(File.generated(config, f"figures/plots/{name}.png",
                                    content=buffer.getvalue()))
    return files
