"""What a chemistry-suite arm's model believes on CrossCoupling part-way through a run: the fit
on the first ``--points`` measured rows of ``runs/crosscoupling/<arm>/seed<k>`` (the strategy
seeded as the run seeded that iteration's), and per (base, catalyst) its mean, sd and
integrated UCB (the arm's acquisition, qUCB) at two conditions: the best measured row's
(``best``) and the bounds the best yields sit at, t_res 1800 and base_eq 2.5 with the best
row's temperature (``bounds``); beside them BoFire's ``SoboStrategy`` GP (its defaults) mean
and sd at the same points and the emulator's yield (``true``). Then per base the largest
integrated UCB over ``--draws`` random conditions, the share of trees that put each base in
DBU's leaf at ``bounds`` (the forest's correlation between bases), the forest's splits per
descriptor, and the candidate the arm's search proposes (with ``--ask``).

    PYTHONPATH=. python -m benchmarks.cc_fit [--arm bark] [--rows ARM] [--seed 0]
        [--points 18] [--draws 4000] [--labels] [--ask]

``--rows`` fits ``--arm``'s settings to another arm's run (default: its own); ``--labels``
splits base and catalyst as labels (``ONE_HOT``) instead of by their descriptors.
"""

from __future__ import annotations

import argparse
import logging
import warnings

import numpy as np
import pandas as pd

from benchmarks import chem_bo, chem_suite

CONTINUOUS = ["base_eq", "t_res", "temperature"]
BASES = ["TEA", "TMG", "BTMG", "DBU"]
CATALYSTS = ["tBuXPhos", "tBuBrettPhos", "AlPhos"]
BOUNDS = {"t_res": 1800.0, "base_eq": 2.5}


def grid_at(conditions: dict) -> pd.DataFrame:
    """Every (base, catalyst) at the same continuous ``conditions``."""
    return pd.DataFrame([{**conditions, "base": b, "catalyst": c}
                         for b in BASES for c in CATALYSTS])


def bark_table(strategy, X: pd.DataFrame) -> pd.DataFrame:
    """Mean, sd (of f) and integrated UCB (qUCB, user units) of a BARK strategy at ``X``."""
    post, space = strategy.surrogate.posterior, strategy.surrogate.space
    pred = post.predict(space.encode(X))
    sample_sd = np.sqrt(pred["sample_var"])
    return pd.DataFrame({
        "mean": pred["mean"], "sd": np.sqrt(pred["var_latent"]),
        "ucb": (pred["sample_mean"] + strategy.kappa * sample_sd).mean(axis=0)}, index=X.index)


def leaf_sharing(strategy, conditions: dict, catalyst: str) -> pd.Series:
    """Per base: the share of trees (over every sample) in which it shares DBU's leaf at
    ``conditions`` with ``catalyst`` (BARK's kernel between the two bases there)."""
    from bofire_bark.engine.forest import Forest
    from bofire_bark.engine.sampler import leaf_of_all

    post, space = strategy.surrogate.posterior, strategy.surrogate.space
    X = space.encode(pd.DataFrame([{**conditions, "base": b, "catalyst": catalyst}
                                   for b in BASES]))
    shares = []
    for s in range(post.n_samples):
        leaves = leaf_of_all(Forest.of_sample(post.samples, s), post.kinds, X)
        shares.append((leaves == leaves[:, [BASES.index("DBU")]]).mean(axis=0))
    return pd.Series(np.mean(shares, axis=0), index=BASES)


def best_ucb_per_base(strategy, draws: int, seed: int) -> pd.DataFrame:
    """Per base the largest integrated UCB over ``draws`` random (conditions, catalyst) and
    where it is."""
    rng = np.random.default_rng(seed)
    lo = {"base_eq": 1.0, "t_res": 60.0, "temperature": 30.0}
    hi = {"base_eq": 2.5, "t_res": 1800.0, "temperature": 100.0}
    rows = []
    for base in BASES:
        X = pd.DataFrame({k: rng.uniform(lo[k], hi[k], draws) for k in CONTINUOUS})
        X["base"] = base
        X["catalyst"] = rng.choice(CATALYSTS, draws)
        table = bark_table(strategy, X)
        i = int(table.ucb.to_numpy().argmax())
        rows.append({"base": base, **X.iloc[i][["catalyst", *CONTINUOUS]].to_dict(),
                     **table.iloc[i].to_dict()})
    return pd.DataFrame(rows)


def report(arm: str, seed: int, points: int, draws: int, ask: bool,
           rows_of: str | None = None, labels: bool = False) -> str:
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import SoboStrategy

    problem = chem_bo.CrossCoupling()
    folder = (chem_suite.DEFAULT_OUT / "runs" / "crosscoupling" / (rows_of or arm)
              / f"seed{seed}")
    rows = pd.read_csv(folder / "crosscoupling" / "runs.csv").iloc[:points]
    experiments = rows[problem.keys].assign(**{"yield": rows.y})
    iteration = int(rows.iteration.max()) + 1
    domain = problem.domain(set())
    changes = chem_suite.arm_changes(arm, {"surrogate_specs": {"categorical_encodings": {
        "base": "ONE_HOT", "catalyst": "ONE_HOT"}}} if labels else None)
    strategy = chem_bo.strategy_of("crosscoupling", arm, domain, seed + 1000 * iteration,
                                   changes)
    strategy.tell(experiments)
    sobo = strategies.map(SoboStrategy(domain=domain, seed=seed))
    sobo.tell(experiments)

    best = rows.loc[rows.y.idxmax()]
    name = f"{arm} (labels)" if labels else arm
    lines = [f"{name} on {rows_of or arm}'s rows, seed {seed}, the first {len(rows)} points "
             f"(the fit of iteration {iteration}); best so far {best.y:.3f} ({best.base}, "
             f"{best.catalyst}, " + ", ".join(f"{k} {best[k]:.4g}" for k in CONTINUOUS) + ")",
             "measured per base: " + ", ".join(
                 f"{b} n={len(g)} max {g.y.max():.3f} mean {g.y.mean():.3f}"
                 for b, g in rows.groupby("base"))]
    post = strategy.surrogate.posterior
    lines.append(f"noise sd (user units): median "
                 f"{np.sqrt(np.median(post.samples['sigma2'])) * post.y_std:.4f}; "
                 f"y sd {post.y_std:.3f}; kappa {strategy.kappa:.2f}")
    for name, extra in (("best", {}), ("bounds", BOUNDS)):
        conditions = {**{k: float(best[k]) for k in CONTINUOUS}, **extra}
        X = grid_at(conditions)
        table = bark_table(strategy, X)
        pred = sobo.predict(X)
        out = pd.concat([X[["base", "catalyst"]], table.round(3)], axis=1)
        out["sobo_mean"] = pred["yield_pred"].round(3).to_numpy()
        out["sobo_sd"] = pred["yield_sd"].round(3).to_numpy()
        out["true"] = problem.evaluate(X).round(3)
        lines.append(f"-- at {name}: " + ", ".join(f"{k} {v:.4g}" for k, v in
                                                    conditions.items()))
        lines.append(out.to_string(index=False))
        share = leaf_sharing(strategy, conditions, str(best.catalyst))
        lines.append(f"trees sharing DBU's leaf ({best.catalyst}): "
                     + ", ".join(f"{b} {v:.2f}" for b, v in share.items()))
    lines.append(f"-- largest integrated UCB per base over {draws} random conditions")
    lines.append(best_ucb_per_base(strategy, draws, seed).round(3).to_string(index=False))
    relevance = strategy.feature_relevance(detail=True)
    lines.append("-- feature relevance (detail)")
    lines.append(relevance.round(3).to_string())
    if ask:
        candidate = strategy.ask(1)
        lines.append("-- the search's candidate: " + candidate.round(3).to_string(index=False))
        lines.append(strategy.last_results[-1].summary())
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", default="bark")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--points", type=int, default=18)
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--rows", default=None, help="the arm whose run's rows are fitted "
                        "(default: --arm's own)")
    parser.add_argument("--labels", action="store_true", help="base and catalyst split as "
                        "labels (ONE_HOT) instead of by their descriptors")
    parser.add_argument("--ask", action="store_true")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.getLogger("bofire_bark").setLevel(logging.ERROR)
    print(report(args.arm, args.seed, args.points, args.draws, args.ask, args.rows,
                 args.labels))


if __name__ == "__main__":
    main()
