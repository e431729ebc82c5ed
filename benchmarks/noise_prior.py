"""The noise prior's study (issue 35): tables from the runs of ``results/noise_prior/run.sh``.

Arms, paired by seed: today's defaults (inverse gamma noise prior) and the same with
``noise_prior="lognormal"`` (BoFire's GP noise prior). Per problem: the final best of each seed
under both, better / worse / tied for the log-normal, a two-sided sign test on the untied
seeds (``scipy.stats.binomtest``), medians; on ReactionSynergy also whether BO tried the
synergy pair, and from the Measure A fits the posterior noise sd and how the untried
combinations' sd compares with the tried ones'.

    python -m benchmarks.noise_prior --out results/noise_prior

writes ``summary.md`` and ``per_seed.csv`` there.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from scipy import stats

from benchmarks._common import publish

# the seeds fixed before the runs (run.sh); run2.sh added more
PLANNED = {"reaction_synergy": range(12), "crosscoupling": range(5)}
BASE = "max_sampling_sweeps=12800,split_prior=dirichlet,start=no_pair"
NEW = "max_sampling_sweeps=12800,noise_prior=lognormal,split_prior=dirichlet,start=no_pair"


def paired(base: pd.Series, new: pd.Series) -> dict:
    """Better / worse / tied counts of ``new`` against ``base`` (indexed by seed), the sign
    test's two-sided p on the untied seeds, and both medians."""
    both = pd.concat([base.rename("base"), new.rename("new")], axis=1, join="inner")
    up = int((both.new > both.base).sum())
    down = int((both.new < both.base).sum())
    p = stats.binomtest(up, up + down, 0.5).pvalue if up + down else 1.0
    return {"seeds": len(both), "better": up, "worse": down, "tied": len(both) - up - down,
            "p": p, "median_base": both.base.median(), "median_new": both.new.median()}


def interaction_runs(out: Path) -> pd.DataFrame:
    """Per (arm, seed) of the complete ReactionSynergy runs: final best, pair tried."""
    rows = []
    for arm, config in (("inverse_gamma", BASE), ("lognormal", NEW)):
        path = out / "interaction" / "bo" / config / "iterations.csv"
        if not path.exists():
            continue
        df = pd.read_csv(path)
        for seed, sub in df.groupby("seed"):
            if sub.iteration.max() < 20:
                continue
            first = sub[sub.pair.astype(bool)].iteration
            rows.append({"problem": "reaction_synergy", "arm": arm, "seed": seed,
                         "final_best": sub.best.max(), "pair_tried": bool(sub.pair.any()),
                         "pair_first": int(first.min()) if len(first) else None,
                         "resumes": int(sub.resumes.max())})
    return pd.DataFrame(rows)


def chem_runs(out: Path) -> pd.DataFrame:
    path = out / "chem_bo" / "crosscoupling" / "runs.csv"
    if not path.exists():
        return pd.DataFrame()
    df = pd.read_csv(path)
    rows = []
    for (method, seed), sub in df.groupby(["method", "seed"]):
        if sub.iteration.max() < 20:
            continue
        rows.append({"problem": "crosscoupling",
                     "arm": "lognormal" if method == "bark_lognormal" else "inverse_gamma",
                     "seed": seed, "final_best": sub.best.max()})
    return pd.DataFrame(rows)


def noise_table(out: Path) -> list[str]:
    """The Measure A fits under both priors: posterior noise sd (true 1) and the sds."""
    from benchmarks.interaction import uncertainty_table
    from benchmarks.mixing import read_fits

    lines = ["| prior | fits | noise sd, median [range] | output sd | latent sd tried / "
             "untried (UCB's) | untried / tried | pair's UCB rank of 20 | pair's UCB above "
             "every tried |", "|---|---|---|---|---|---|---|---|"]
    for arm in ("inverse_gamma", "lognormal"):
        path = out / "uncertainty" / arm / "uncertainty.csv"
        if not path.exists():
            continue
        df = read_fits(path)
        noise = df.groupby("seed").noise_sd.first()
        t = uncertainty_table(df).iloc[0]
        lines.append(
            f"| {arm} | {int(t.fits)} | {noise.median():.2f} [{noise.min():.2f}, "
            f"{noise.max():.2f}] | {t.y_sd:.1f} | {t.sd_sample_tried:.2f} / "
            f"{t.sd_sample_untried:.2f} | {t.ratio_sample:.2f} | {t.ucb_rank_pair:.0f} | "
            f"{int(t.pair_beats_tried)} of {int(t.fits)} |")
    return lines


def paired_rows(problem: str, seeds: str, sub: pd.DataFrame) -> list[str]:
    """Table rows of one problem's runs ``sub``: the final best, and for ReactionSynergy
    whether the pair was tried (medians: the runs that tried it)."""
    base = sub[sub.arm == "inverse_gamma"].set_index("seed")
    new = sub[sub.arm == "lognormal"].set_index("seed")
    measures = [("final best", "final_best", ".3f" if problem == "crosscoupling" else ".1f")]
    if problem == "reaction_synergy":
        measures.append(("pair tried", "pair_tried", None))
    lines = []
    for label, col, fmt in measures:
        r = paired(base[col].astype(float), new[col].astype(float))
        if fmt is None:
            common = new.index.intersection(base.index)
            med = tuple(f"{int(arm.loc[common, col].sum())} of {r['seeds']}"
                        for arm in (base, new))
        else:
            med = (f"{r['median_base']:{fmt}}", f"{r['median_new']:{fmt}}")
        lines.append(f"| {problem} | {seeds} | {label} | {r['seeds']} | {r['better']} / "
                     f"{r['worse']} / {r['tied']} | {r['p']:.3g} | {med[0]} | {med[1]} |")
    return lines


def summary(out: Path) -> str:
    runs = pd.concat([interaction_runs(out), chem_runs(out)], ignore_index=True)
    runs.to_csv(out / "per_seed.csv", index=False)
    lines = ["Generated by `python -m benchmarks.noise_prior --out results/noise_prior` from "
             "the runs of `run.sh` and `run2.sh`. The log-normal noise prior "
             "(`noise_prior=\"lognormal\"`, loc -4, scale 1) against today's default "
             "(inverse gamma, nu 3, q 0.9), paired by "
             "seed; complete runs only (20 BO iterations). Sign test: two-sided, on the "
             "untied seeds. Last two columns: the median final best, or the runs that tried "
             "the pair.", "",
             "| problem | seeds | measure | pairs | log-normal better / worse / tied | "
             "sign test p | inverse gamma | log-normal |",
             "|---|---|---|---|---|---|---|---|"]
    for problem, all_runs in runs.groupby("problem", sort=False):
        planned = all_runs[all_runs.seed.isin(PLANNED[problem])]
        parts = [(f"planned {min(PLANNED[problem])}-{max(PLANNED[problem])}", planned)]
        if len(all_runs) > len(planned):
            parts.append((f"all {all_runs.seed.min()}-{all_runs.seed.max()}", all_runs))
        for seeds, sub in parts:
            lines += paired_rows(problem, seeds, sub)
    lines += ["", "Per seed (final best; ReactionSynergy: BO iteration of the first try of "
              "the pair, - never):", ""]
    wide = runs.pivot_table(index=["problem", "seed"], columns="arm", values="final_best")
    first = {(r.problem, r.seed, r.arm): r.get("pair_first") for _, r in runs.iterrows()}
    lines += ["| problem | seed | inverse gamma | log-normal |", "|---|---|---|---|"]
    for (problem, seed), r in wide.iterrows():
        cells = []
        for arm in ("inverse_gamma", "lognormal"):
            v = r.get(arm)
            text = "" if pd.isna(v) else (f"{v:.3f}" if problem == "crosscoupling" else
                                           f"{v:.1f}")
            if problem == "reaction_synergy" and text:
                it = first.get((problem, seed, arm))
                text += f" ({'-' if it is None or pd.isna(it) else int(it)})"
            cells.append(text)
        lines.append(f"| {problem} | {seed} | {cells[0]} | {cells[1]} |")
    noise = noise_table(out)
    if len(noise) > 2:
        lines += ["", "ReactionSynergy, Measure A fits (14 random points without the pair, "
                  "seeds 0-11, one fit each; the true noise sd is 1). Noise sd: the posterior "
                  "mean of sigma_y in the output's units; latent sd: the UCB's (mean over "
                  "samples of each sample's latent sd) at the 20 combinations at the good "
                  "conditions, medians over fits:", "", *noise]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.noise_prior")
    parser.add_argument("--out", type=Path, default=Path("results/noise_prior"))
    args = parser.parse_args(argv)
    publish(args.out / "summary.md", summary(args.out))


if __name__ == "__main__":
    main()
