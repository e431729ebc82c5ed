"""Why BARK stays at ingredient 1 on the chemistry suite's mixture (issue 35): the model's view
of the optimum after a run has settled there.

Takes the first ``--iterations`` (10) BO iterations of a finished ``bark`` run of the suite
(``results/chem_suite/runs/mixture/bark/seed<k>``; seed 3 stopped at 1.206 against the optimum
1.0086), fits each arm of ``chem_suite.BARK_ARMS`` named by ``--arms`` (``sobo``: BoFire's
``SoboStrategy``, its GP's view) on those points, asks one candidate and predicts
(``strategy.predict``: mean and sd, noise included) at the candidate, the optimum (ingredients
2, 3, 5), the best pair (2, 5) and the pure ingredients 1-3. ``kappa to reach``: the smallest
multiple of the sd at which the point's lower bound (mean - kappa sd; cost is minimized)
would fall below the candidate's (inf: never).

The output scale (issue 35's "sampling the output scale" lever, measured without building it):
BARK fixes the kernel's scale at 1 on the standardized output. Given a posterior sample's forest
and noise, the likelihood of a scale s (kernel s K, noise s r: the same ratio) peaks at
``s_hat = y' (K + r I)^-1 y / N``, with ``(K + r I)^-1 y = (y - mean) / r`` at the training
points. ``s_hat`` per arm (median and 10-90 % over the samples): a sampled scale would widen
every sd by about ``sqrt(s_hat)``, far and near alike.

    python -m benchmarks.mixture_trap [--seed 3] [--iterations 10] [--arms bark ... sobo]
        [--out results/mixture_trap]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import REPO, markdown_table, publish

POINTS = {
    "optimum (2, 3, 5)": [0, 0.419, 0.095, 0, 0.486, 0],
    "best pair (2, 5)": [0, 0.45, 0, 0, 0.55, 0],
    "ingredient 1 alone": [1, 0, 0, 0, 0, 0],
    "ingredient 2 alone": [0, 1, 0, 0, 0, 0],
    "ingredient 3 alone": [0, 0, 1, 0, 0, 0],
}


def refit(arm: str, seed: int, iterations: int):
    """``arm``'s strategy told the first ``iterations`` of ``bark``'s run ``seed``, its
    candidate and ``POINTS`` (one frame, the candidate first), the told frame, the problem."""
    from benchmarks.chem_bo import strategy_of
    from benchmarks.chem_suite import BARK_ARMS, INGREDIENTS, Mixture, arm_changes

    runs = REPO / "results/chem_suite/runs/mixture/bark" / f"seed{seed}/mixture/runs.csv"
    rows = pd.read_csv(runs)
    rows = rows[rows.iteration <= iterations]
    problem = Mixture()
    if arm not in (*BARK_ARMS, "sobo"):
        raise SystemExit(f"unknown arm {arm!r}; choose from {[*BARK_ARMS, 'sobo']}")
    strategy = strategy_of("mixture", arm, problem.domain(), seed, arm_changes(arm))
    frame = rows[list(INGREDIENTS)].copy()
    frame["cost"] = rows["y"].to_numpy()
    strategy.tell(frame)
    candidate = strategy.ask(1)[list(INGREDIENTS)]
    X = pd.concat([candidate, pd.DataFrame(list(POINTS.values()), columns=INGREDIENTS)],
                  ignore_index=True)
    return strategy, X, frame, problem


def view(arm: str, seed: int, iterations: int) -> list[dict]:
    strategy, X, frame, problem = refit(arm, seed, iterations)
    pred = strategy.predict(X)
    names = ["candidate", *POINTS]
    true = problem.evaluate(X)
    m, s = pred["cost_pred"].to_numpy(), pred["cost_sd"].to_numpy()
    scale = ""
    if arm != "sobo":
        post = strategy.posteriors()["cost"]
        mean, _ = post.predict_each(post.X)
        r = post.samples["sigma2"]
        s_hat = (post.y[None, :] * (post.y[None, :] - mean)).sum(axis=1) / r / len(post.y)
        scale = ("s_hat {:.2f} ({:.2f}-{:.2f}), noise sd {:.3f}".format(
            *np.percentile(s_hat, [50, 10, 90]), np.median(np.sqrt(r))))
    y_sd = float(np.std(frame["cost"], ddof=1))
    out = []
    for i, name in enumerate(names):
        gap, extra = m[i] - m[0], s[i] - s[0]
        reach = 0.0 if gap <= 0 else (gap / extra if extra > 0 else np.inf)
        out.append({"arm": arm, "seed": seed, "iterations": iterations, "point": name,
                    "true cost": true[i], "mean": m[i], "sd": s[i],
                    "y sd": y_sd,
                    "kappa to reach": reach if i else np.nan,
                    "search": (strategy.last_results[0].summary() + "; " + scale
                               if i == 0 and arm != "sobo" else "")})
    return out


def hybrid(seed: int, iterations: int, shares=(0.0, 0.25, 0.5, 0.75),
           lengths=(0.1, 0.2, 0.4)) -> list[dict]:
    """The ``bark`` arm's posterior samples with a smooth kernel added (issue 35's next
    lever, screened without building it): each sample's kernel becomes
    ``(1 - share) K_forest + share K_rbf(length)`` (an RBF on the ingredient fractions, both
    of scale 1), with the sample's noise; predictive mean and sd (noise included) as a
    mixture over the samples, and the kappa at which each point's lower bound reaches the
    ``bark`` candidate's. The trees were sampled under the forest alone, so this is a screen
    of what the kernel would do, not a fit of it. ``log ML``: the summed log marginal
    likelihood of the samples, which would choose share and length."""
    from benchmarks.smooth_screen import Hybrid

    strategy, Q, frame, problem = refit("bark", seed, iterations)
    post = strategy.posteriors()["cost"]
    kernels = Hybrid(strategy, frame, Q, samples=None)
    n, S = len(post.y), len(kernels.picks)
    true = problem.evaluate(Q)
    names = ["candidate", *POINTS]
    out = []
    for share in shares:
        for length in lengths if share > 0 else lengths[:1]:
            log_ml, means, latent = kernels.fit(share, length)
            log_ml -= 0.5 * S * n * np.log(2 * np.pi)
            variances = latent + kernels.noise[:, None]
            m = post.y_mean + post.y_std * means.mean(axis=0)
            sd = post.y_std * np.sqrt(variances.mean(axis=0) + means.var(axis=0))
            for i, name in enumerate(names):
                gap, extra = m[i] - m[0], sd[i] - sd[0]
                reach = 0.0 if gap <= 0 else (gap / extra if extra > 0 else np.inf)
                out.append({"share": share, "length": length if share > 0 else np.nan,
                            "log ML": log_ml, "point": name, "true cost": true[i],
                            "mean": m[i], "sd": sd[i],
                            "kappa to reach": reach if i else np.nan})
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--arms", nargs="+",
                        default=["bark", "bark_lognormal", "bark_deep", "bark_uniform", "sobo"])
    parser.add_argument("--out", type=Path, default=REPO / "results/mixture_trap")
    parser.add_argument("--hybrid", action="store_true",
                        help="screen the forest plus a smooth kernel instead (``hybrid``)")
    args = parser.parse_args(argv)
    if args.hybrid:
        df = pd.DataFrame(hybrid(args.seed, args.iterations))
        args.out.mkdir(parents=True, exist_ok=True)
        name = f"hybrid_seed{args.seed}_it{args.iterations}"
        df.to_csv(args.out / f"{name}.csv", index=False)
        text = (f"# The forest plus a smooth kernel on the mixture's trap: seed {args.seed}, "
                f"after {args.iterations} iterations\n\nGenerated by `python -m "
                "benchmarks.mixture_trap --hybrid` (the docstring of `hybrid`).\n\n"
                + markdown_table(df.round(3).set_index("share")))
        publish(args.out / f"{name}.md", text)
        return
    rows = [r for arm in args.arms for r in view(arm, args.seed, args.iterations)]
    df = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out / f"seed{args.seed}_it{args.iterations}.csv", index=False)
    show = df.drop(columns=["search", "seed", "iterations"]).round(3)
    text = (f"# The mixture's trap: seed {args.seed}, after {args.iterations} iterations\n\n"
            "Generated by `python -m benchmarks.mixture_trap` (its docstring). Searches, and "
            "the output scale's conditional peak (noise sd in output sds):\n\n"
            + "\n".join(f"- {r['arm']}: {r['search']}" for r in rows if r["search"])
            + "\n\n" + markdown_table(show.set_index("arm")))
    publish(args.out / f"seed{args.seed}_it{args.iterations}.md", text)


if __name__ == "__main__":
    main()
