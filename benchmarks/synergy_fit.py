"""What a chemistry-suite arm's model believes on ReactionSynergy part-way through a run: the
fit on the first ``--points`` measured rows of ``runs/reaction_synergy/<arm>/seed<k>``, its
smooth share's samples and each categorical input's correlation between categories (with
``smooth_categories``), and the mean, sds and integrated UCB of every (solvent, catalyst)
pair at the good conditions (the synergy pair is (THF, NiCl2)); then, for the pair of the
best measured yield, the same at other temperatures (how far the model trusts the continuous
response it has seen). ``--gp`` adds, beside each, BoFire's ``MixedSingleTaskGPSurrogate``
with its defaults (Sobo's model on these inputs) fitted to the same points: its mean and sd
as BoFire's ``predict`` gives them.

    PYTHONPATH=. python -m benchmarks.synergy_fit [--arm bark_share_cat_ln] [--seed 0]
        [--points 18] [--gp]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from benchmarks import chem_suite, interaction

INPUTS = ["solvent", "catalyst", "temperature", "residence_time", "equivalents"]


def gp_predictions(experiments: pd.DataFrame, *frames: pd.DataFrame) -> list[pd.DataFrame]:
    """Mean and sd at the rows of each of ``frames`` of BoFire's
    ``MixedSingleTaskGPSurrogate`` (defaults) fitted once to ``experiments``."""
    import bofire.surrogates.api as surrogates
    import torch
    from bofire.data_models.surrogates.api import MixedSingleTaskGPSurrogate

    domain = interaction.ReactionSynergy().domain
    torch.manual_seed(0)
    model = surrogates.map(MixedSingleTaskGPSurrogate(inputs=domain.inputs,
                                                      outputs=domain.outputs))
    model.fit(experiments.assign(valid_yield=1))
    out = []
    for X in frames:
        pred = model.predict(X[INPUTS])
        out.append(pd.DataFrame({"gp_mean": pred["yield_pred"].to_numpy(),
                                 "gp_sd": pred["yield_sd"].to_numpy()}, index=X.index))
    return out


def report(arm: str, seed: int, points: int, gp: bool = False) -> str:
    import bofire.strategies.api as strategies

    import bofire_bark  # noqa: F401 (registers BARK with BoFire)
    from bofire_bark.data_models.strategy import BARKStrategy

    folder = chem_suite.DEFAULT_OUT / "runs" / "reaction_synergy" / arm / f"seed{seed}"
    rows = pd.read_csv(next((folder / "bo").glob(f"*/{interaction.BO_CSV}"))).iloc[:points]
    experiments = rows[INPUTS].assign(**{"yield": rows.y})
    specs, kwargs = chem_suite.split_changes(chem_suite.arm_changes(arm))
    strategy = strategies.map(BARKStrategy(domain=interaction.ReactionSynergy().domain,
                                           surrogate_specs={**specs, "seed": seed}, **kwargs))
    strategy.tell(experiments)
    post, space = strategy.surrogate.posterior, strategy.surrogate.space
    lines = [f"{arm}, seed {seed}, the first {len(rows)} points"]
    if post.smooth is not None:
        share = post.samples["smooth_share"]
        lines.append(f"share: median {np.median(share):.2f}, range {share.min():.2f} - "
                     f"{share.max():.2f}; binned lengths {np.round(post.smooth.lengths, 3)}")
        for j, col in enumerate(post.smooth.cat_cols):
            n = int(space.n_values[col])
            corr = np.exp(-post.smooth.cat_d2[j, :n, :n])
            off = corr[~np.eye(n, dtype=bool)]
            lines.append(f"{space.keys[col]}: correlation between categories {off.min():.2f} "
                         f"- {off.max():.2f}")
    lines.append(f"noise variance (standardized): median {np.median(post.samples['sigma2']):.4f}")
    combos = interaction.combinations()
    table = interaction.combo_summary(post, space, combos, interaction.KAPPA)
    tried = set(zip(rows.solvent, rows.catalyst, strict=True))
    combos["tried"] = [(a, b) in tried for a, b in zip(combos.solvent, combos.catalyst,
                                                         strict=True)]
    best = rows.loc[rows.y.idxmax()]
    probe = pd.DataFrame([{**interaction.GOOD, "solvent": best.solvent,
                           "catalyst": best.catalyst, "temperature": t}
                          for t in (55.0, 70.0, 85.0, 100.0, 115.0)])
    probe_table = interaction.combo_summary(post, space, probe, interaction.KAPPA)
    if gp:
        at_combos, at_probe = gp_predictions(experiments, combos, probe)
        table, probe_table = table.join(at_combos), probe_table.join(at_probe)
    lines.append(pd.concat([combos[["solvent", "catalyst", "tried"]], table.round(2)], axis=1)
                 .to_string(index=False))
    lines.append(f"the best measured pair ({best.solvent}, {best.catalyst}) at the good "
                 "conditions but the temperature:")
    lines.append(pd.concat([probe[["temperature"]], probe_table.round(2)], axis=1)
                 .to_string(index=False))
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", default="bark_share_cat_ln")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--points", type=int, default=18)
    parser.add_argument("--gp", action="store_true",
                        help="also BoFire's MixedSingleTaskGPSurrogate on the same points")
    args = parser.parse_args(argv)
    print(report(args.arm, args.seed, args.points, args.gp))


if __name__ == "__main__":
    main()
