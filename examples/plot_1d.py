"""A 1-D toy: BARK's posterior samples and the integrated UCB, plotted to a PNG.

Run: python examples/plot_1d.py [out.png]   (default: out/figures/bark_1d.png)
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no screen needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from bofire_bark.engine import fit_posterior  # noqa: E402

# git-ignored (/out/), so running the example leaves the working tree clean
FIGURES = Path(__file__).resolve().parents[1] / "out" / "figures"


def f(x):
    return np.sin(6 * x) + 0.5 * (x > 0.6)


def main(out: str | None = None, kappa: float = 1.96) -> None:
    out = Path(out) if out else FIGURES / "bark_1d.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0.0, 1.0, 12))
    y = f(x) + 0.05 * rng.normal(size=len(x))
    space = (np.array([0]), np.array([0.0]), np.array([1.0]), np.array([0]))
    post = fit_posterior(x[:, None], y, space, seed=0)

    grid = np.linspace(0.0, 1.0, 400)[:, None]
    pred = post.predict(grid)
    ucb = post.systems().integrated_ucb(grid, kappa=kappa)  # standardized units
    ucb_user = post.y_mean + post.y_std * ucb

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    for s in range(post.n_samples):
        mean = pred["sample_mean"][s]
        sd = np.sqrt(pred["sample_var"][s])
        top.plot(grid[:, 0], mean, color="tab:blue", lw=0.8, alpha=0.5)
        top.fill_between(grid[:, 0], mean - sd, mean + sd, color="tab:blue", alpha=0.04)
    sd = np.sqrt(pred["var_latent"])
    top.plot(grid[:, 0], pred["mean"], color="black", lw=2, label="BARK mixture mean")
    top.fill_between(grid[:, 0], pred["mean"] - 2 * sd, pred["mean"] + 2 * sd, color="grey",
                     alpha=0.2, label="mixture +-2 sd (latent)")
    top.plot(grid[:, 0], f(grid[:, 0]), "--", color="tab:green", label="truth")
    top.scatter(x, y, color="tab:red", zorder=3, label="data")
    top.set_ylabel("y")
    top.legend(loc="lower left", fontsize=8)
    top.set_title(f"BARK: {post.n_samples} posterior samples (blue), each a forest-kernel GP")
    bottom.plot(grid[:, 0], ucb_user, color="tab:orange")
    best = grid[np.argmax(ucb), 0]
    bottom.axvline(best, color="tab:orange", ls=":")
    bottom.set_ylabel(f"integrated UCB\n(kappa={kappa})")
    bottom.set_xlabel("x")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}; UCB maximizer on the grid: x = {best:.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
