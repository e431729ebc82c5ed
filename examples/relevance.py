"""Which conditions matter, and did the chains mix? A screen with the sparse split prior.

Run: python examples/relevance.py [out_dir]   (default: out/figures/)

Loads ``specs/screening.json`` (ten inputs, ``split_prior="dirichlet"``), runs a few ask/tell
rounds against a simulated lab whose yield depends on the catalyst, the temperature and the
residence time only, then prints ``feature_relevance()`` and draws, with
``bofire_bark.plots`` (the ``[plots]`` extra), the relevance (``relevance.png``), the response
over temperature and residence time (``response.png``), the best yield so far
(``progress.png``) and the chains' traces (``trace.png``).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
from bofire.data_models.strategies.api import RandomStrategy

from bofire_bark import load_spec, plots  # importing bofire_bark registers BARK with BoFire

ROOT = Path(__file__).parents[1]
FIGURES = ROOT / "out" / "figures"  # git-ignored (/out/): running leaves the tree clean


def lab(batch: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Yield in %: catalyst, temperature and residence time; the other seven do nothing."""
    catalyst = batch["catalyst"].map({"Pd(OAc)2": 10.0, "Pd2dba3": 25.0, "NiCl2": 0.0,
                                      "CuI": -5.0})
    temp = -((batch["temperature"] - 90.0) / 40.0) ** 2 * 15.0
    time_ = -np.log(batch["residence_time"] / 15.0) ** 2 * 4.0
    y = 40.0 + catalyst + temp + time_ + rng.normal(0.0, 1.5, len(batch))
    return batch.assign(**{"yield": np.clip(y, 0.0, 100.0).round(1), "valid_yield": 1})


def main(out_dir: str | None = None, n_rounds: int = 3) -> None:
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("bofire_bark.strategy").setLevel(logging.INFO)  # top inputs per fit
    out = Path(out_dir) if out_dir else FIGURES
    out.mkdir(parents=True, exist_ok=True)
    spec = load_spec(ROOT / "specs" / "screening.json")
    strategy = strategies.map(spec)
    rng = np.random.default_rng(0)
    start = strategies.map(RandomStrategy(domain=spec.domain, seed=1)).ask(16)
    strategy.tell(lab(start, rng))
    for _ in range(n_rounds):
        batch = strategy.ask(2)
        strategy.tell(lab(batch[spec.domain.inputs.get_keys()], rng))
    best = strategy.experiments.sort_values("yield").iloc[-1]
    print(f"best yield after {len(strategy.experiments)} runs: {best['yield']:.1f} % "
          f"({best['catalyst']}, {best['temperature']:.0f} degC, "
          f"{best['residence_time']:.0f} min)")

    rel = strategy.feature_relevance()
    print(rel.round(3).to_string())
    print(strategy.fit_summary().round(2).to_string())
    # plots return figures and never show them: save each
    figures = {
        "relevance.png": plots.plot_relevance(strategy).figure,
        "response.png": plots.plot_response(strategy, "temperature", "residence_time"),
        "progress.png": plots.plot_progress(strategy, n_initial=16).figure,
        "trace.png": plots.plot_traces(strategy),
    }
    for name, fig in figures.items():
        fig.savefig(out / name, dpi=110)
        print(f"wrote {out / name}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
