"""Paired comparison of results/bo_defaults against results/bo_product: final regret and area
under the regret curve, per benchmark, paired by seed, two-sided sign test.

    python results/bo_defaults/paired.py [--new results/bo_defaults] [--old results/bo_product]

Regret = best value so far - f*. f* is the committed study's (results/bo/regret.csv: exact
optima; PestControl: the best value any committed run found), lowered to any better value seen
in the two folders compared. Area under the curve (AUC): the mean regret over iterations
0..last (0 = after the initial design), i.e. the area per iteration. Only runs finished in both
folders (to the baseline's last iteration) are paired. A pair is a tie when the two values agree
to 1e-12 (relative). Also: per benchmark, the share of BARK fits whose R-hat warned (> 1.1) and
the median sweeps per chain of a fit, from the columns the worktree's runner adds (fit_warned,
fit_sweeps), and median tell / ask seconds of both folders.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def curve(path: Path, last: int) -> np.ndarray:
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    per_it = df.groupby("iteration")["best"].last()
    return per_it.loc[0:last].to_numpy(dtype=float)


def sign(new, old, rel=1e-12):
    d = np.asarray(old) - np.asarray(new)  # > 0: the new run is lower (better)
    scale = np.maximum(1.0, np.maximum(np.abs(new), np.abs(old)))
    tie = np.abs(d) <= rel * scale
    w, l = int(np.sum((d > 0) & ~tie)), int(np.sum((d < 0) & ~tie))
    t = int(np.sum(tie))
    p = binomtest(w, w + l).pvalue if w + l else 1.0
    return w, l, t, p


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--new", type=Path, default=HERE)
    ap.add_argument("--old", type=Path, default=REPO / "results" / "bo_product")
    ap.add_argument("--fstar", type=Path, default=REPO / "results" / "bo" / "regret.csv")
    args = ap.parse_args(argv)
    fstar = pd.read_csv(args.fstar).groupby("benchmark")["f_star"].min().to_dict()
    rows, allf, alla = [], [], []
    per_run = []
    for bdir in sorted((args.new / "runs").iterdir()):
        if not bdir.is_dir():
            continue
        bench = bdir.name
        new_f, old_f, new_a, old_a, seeds = [], [], [], [], []
        warned, sweeps, tell_n, ask_n, tell_o, ask_o = [], [], [], [], [], []
        curves = []
        for path in sorted((bdir / "BARK").glob("seed*.csv"),
                           key=lambda p: int(p.stem[4:])):
            ref = args.old / "runs" / bench / "BARK" / path.name
            if not ref.exists():
                continue
            a = pd.read_csv(path, keep_default_na=False, na_values=[""])
            b = pd.read_csv(ref, keep_default_na=False, na_values=[""])
            last = int(b["iteration"].max())
            if int(a["iteration"].max()) < last:
                continue  # unfinished
            cn, co = curve(path, last), curve(ref, last)
            curves.append((int(path.stem[4:]), cn, co))
            seeds.append(int(path.stem[4:]))
            it = a["iteration"] > 0
            if "fit_warned" in a:
                warned += list(a.loc[it, "fit_warned"].astype(str) == "True")
                sweeps += list(a.loc[it, "fit_sweeps"].astype(float))
            tell_n += list(a.loc[it, "fit_time"])
            ask_n += list(a.loc[it, "acq_time"])
            itb = (b["iteration"] > 0) & (b["iteration"] <= last)
            tell_o += list(b.loc[itb, "fit_time"])
            ask_o += list(b.loc[itb, "acq_time"])
        if not curves:
            continue
        f = min([fstar.get(bench, np.inf)] + [min(c[1].min(), c[2].min()) for c in curves])
        for s, cn, co in curves:
            rn, ro = cn - f, co - f
            new_f.append(rn[-1])
            old_f.append(ro[-1])
            new_a.append(rn.mean())
            old_a.append(ro.mean())
            per_run.append({"benchmark": bench, "seed": s, "f_star": f,
                            "final_regret_new": rn[-1], "final_regret_old": ro[-1],
                            "auc_new": rn.mean(), "auc_old": ro.mean(),
                            "same_curve": bool(np.array_equal(cn, co))})
        wf, lf, tf, pf = sign(new_f, old_f)
        wa, la, ta, pa = sign(new_a, old_a)
        allf.append((new_f, old_f))
        alla.append((new_a, old_a))
        rows.append({
            "benchmark": bench, "seeds": f"{len(seeds)} ({min(seeds)}-{max(seeds)})",
            "final regret median new / old": f"{np.median(new_f):.3g} / {np.median(old_f):.3g}",
            "final: new better/worse/tie": f"{wf}/{lf}/{tf}", "final p": f"{pf:.3g}",
            "AUC median new / old": f"{np.median(new_a):.3g} / {np.median(old_a):.3g}",
            "AUC: new better/worse/tie": f"{wa}/{la}/{ta}", "AUC p": f"{pa:.3g}",
            "fits warned (new)": (f"{100 * np.mean(warned):.1f} % of {len(warned)}"
                                  if warned else "-"),
            "median sweeps/chain (new)": f"{np.median(sweeps):.0f}" if sweeps else "-",
            "median tell s new / old": f"{np.nanmedian(tell_n):.2f} / {np.nanmedian(tell_o):.2f}",
            "median ask s new / old": f"{np.nanmedian(ask_n):.2f} / {np.nanmedian(ask_o):.2f}",
        })
    if len(rows) > 1:
        nf = np.concatenate([x[0] for x in allf])
        of = np.concatenate([x[1] for x in allf])
        na = np.concatenate([x[0] for x in alla])
        oa = np.concatenate([x[1] for x in alla])
        wf, lf, tf, pf = sign(nf, of)
        wa, la, ta, pa = sign(na, oa)
        rows.append({"benchmark": "all", "seeds": str(len(nf)),
                     "final regret median new / old": "-",
                     "final: new better/worse/tie": f"{wf}/{lf}/{tf}", "final p": f"{pf:.3g}",
                     "AUC median new / old": "-",
                     "AUC: new better/worse/tie": f"{wa}/{la}/{ta}", "AUC p": f"{pa:.3g}",
                     "fits warned (new)": "", "median sweeps/chain (new)": "",
                     "median tell s new / old": "", "median ask s new / old": ""})
    frame = pd.DataFrame(rows)
    text = ("| " + " | ".join(frame.columns) + " |\n|" + "---|" * len(frame.columns) + "\n"
            + "".join("| " + " | ".join(map(str, r)) + " |\n" for r in frame.values))
    (args.new / f"paired_vs_{args.old.name}.md").write_text(text)
    pd.DataFrame(per_run).to_csv(args.new / f"paired_vs_{args.old.name}.csv", index=False)
    print(text)


if __name__ == "__main__":
    main()
