"""Which conditions matter, and did the chains mix? A screen with the sparse split prior.

Run: python examples/relevance.py [out_dir]   (default: out/figures/)

Loads ``specs/screening.json`` (ten inputs, ``split_prior="dirichlet"``), runs a few ask/tell
rounds against a simulated lab whose yield depends on the catalyst, the temperature and the
residence time only, then prints ``feature_relevance()``, plots it (``relevance.png``) and
writes ArviZ's trace plot of the chains (``trace.png``; needs ``bofire-bark[diagnostics]``).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import bofire.strategies.api as strategies
import matplotlib
import numpy as np
import pandas as pd
from bofire.data_models.strategies.api import RandomStrategy

from bofire_bark import load_spec  # importing bofire_bark registers BARK with BoFire

matplotlib.use("Agg")  # no screen needed
import matplotlib.pyplot as plt  # noqa: E402

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


def plot_relevance(rel: pd.DataFrame, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 4))
    y = np.arange(len(rel))[::-1]
    ax.errorbar(rel.split_prob, y, fmt="o", xerr=[rel.split_prob - rel.split_prob_q05,
                                                   rel.split_prob_q95 - rel.split_prob])
    ax.set_yticks(y, rel.index)
    ax.set_xlabel("split probability (posterior mean, 90 % interval)")
    ax.set_title("Which inputs the forest uses")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


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
    plot_relevance(rel, out / "relevance.png")
    print(f"wrote {out / 'relevance.png'}")

    try:
        import arviz as az
    except ImportError:
        print("pip install 'bofire-bark[diagnostics]' for R-hat, ESS and the trace plot")
        return
    idata = strategy.surrogate.to_inference_data()
    print(az.summary(idata, var_names=["log_marginal_likelihood", "noise_var",
                                       "split_concentration"], kind="diagnostics"))
    axes = az.plot_trace(idata, var_names=["log_marginal_likelihood", "noise_var",
                                           "leaves_per_tree"])
    axes[0, 0].figure.tight_layout()
    axes[0, 0].figure.savefig(out / "trace.png", dpi=100)
    print(f"wrote {out / 'trace.png'}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
