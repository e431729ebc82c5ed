"""First iteration at which each run holds the best compound, paired by seed (writes paired.md).

Only seeds whose 30 starting compounds do not hold it count; a run that never found it ranks
after every run that did (its iteration is taken as past the budget); a run that has neither
found it nor reached the budget yet is left out.
"""
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

HERE = Path(__file__).parent
BUDGET = 100
PAIRS = [("bark", "sobo"), ("bark", "bark_uniform"), ("bark_uniform", "sobo"),
         ("bark", "bark_subsets"), ("bark", "random")]


def first_found(runs: pd.DataFrame, method: str) -> pd.Series:
    sub = runs[runs.method == method]
    first = sub[sub.regret == 0].groupby("seed").iteration.min()
    last = sub.groupby("seed").iteration.max()
    first = first.reindex(last.index)
    return first.where(first.notna() | (last < BUDGET), np.inf).sort_index()


def per_seed(col: pd.Series) -> str:
    return ", ".join(f"{seed}:{it:g}" for seed, it in col.items())


def main() -> None:
    runs = pd.read_csv(HERE / "runs.csv")
    lines = ["# MAX: first iteration holding the best compound, paired by seed",
             "", "Written by `python results/max/paired.py` from `runs.csv`; seeds whose start "
             "held the best compound left out; `inf`: not found by the run's last iteration.", "",
             "| a | b | seeds | a sooner | a later | tie | sign-test p | a per seed | b per seed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for a, b in PAIRS:
        both = pd.concat([first_found(runs, a), first_found(runs, b)], axis=1, keys=[a, b])
        both = both.dropna()
        both = both[(both[a] > 0) & (both[b] > 0)]
        sooner, later = int((both[a] < both[b]).sum()), int((both[a] > both[b]).sum())
        p = binomtest(sooner, sooner + later).pvalue if sooner + later else 1.0
        lines.append(f"| {a} | {b} | {len(both)} | {sooner} | {later} | "
                     f"{len(both) - sooner - later} | {p:.2f} | {per_seed(both[a])} | "
                     f"{per_seed(both[b])} |")
    (HERE / "paired.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
