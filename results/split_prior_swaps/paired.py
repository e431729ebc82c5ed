"""Test NLPD with label swaps (this folder) against without (results/split_prior), paired by
data set, variant, prior and split; two-sided sign test on the differences.

    python results/split_prior_swaps/paired.py      # writes paired.md beside this file

Both folders come from ``python -m benchmarks split-prior regression`` with the same splits;
results/split_prior ran before label swaps existed (engine at 96b02c2), this one with the
default ``label_swap_every=10``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from scipy.stats import binomtest

HERE = Path(__file__).resolve().parent
OLD = HERE.parent / "split_prior" / "regression.csv"
KEY = ["dataset", "variant", "prior", "split"]


def table() -> str:
    new = pd.read_csv(HERE / "regression.csv")
    old = pd.read_csv(OLD)
    both = new.merge(old, on=KEY, suffixes=("_swaps", "_before"))
    both["diff"] = both.nlpd_swaps - both.nlpd_before
    lines = ["| data set | variant | prior | splits | mean NLPD with swaps | without | mean "
             "difference | swaps lower / higher | sign-test p | median fit s with / without |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (ds, var, prior), g in both.groupby(["dataset", "variant", "prior"]):
        lower, higher = int((g["diff"] < 0).sum()), int((g["diff"] > 0).sum())
        p = binomtest(lower, lower + higher).pvalue if lower + higher else 1.0
        lines.append(f"| {ds} | {var} | {prior} | {len(g)} | {g.nlpd_swaps.mean():.4f} | "
                     f"{g.nlpd_before.mean():.4f} | {g['diff'].mean():+.4f} | {lower} / "
                     f"{higher} | {p:.3g} | {g.fit_s_swaps.median():.1f} / "
                     f"{g.fit_s_before.median():.1f} |")
    lower, higher = int((both["diff"] < 0).sum()), int((both["diff"] > 0).sum())
    lines.append(f"| all | | | {len(both)} | | | {both['diff'].mean():+.4f} | {lower} / "
                 f"{higher} | {binomtest(lower, lower + higher).pvalue:.3g} | |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = table()
    (HERE / "paired.md").write_text(text)
    print(text)
