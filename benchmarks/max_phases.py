"""The paper's materials benchmark: pick the MAX-phase compound of highest bulk modulus.

Data: ``MAX_data.json`` (402 compounds; ``../shared/data/max``, see its README). The domain
is one ``CategoricalDescriptorInput`` whose categories are the compounds (``<MAX>_<Type>``:
the formula alone repeats across M2AX, M3AX2 ...), described by the 9 computed properties
before ``y`` in each record (``e_a``, ``APF``, ``C``, ``m``, ``Cv``, ``a_exp``, ``c_exp``,
``Z``, ``I_dist``) and the paper's 16 nuisance features (uniform noise on [-1, 1]): the
paper's 28 inputs less its three element labels (M, A, X), which a descriptor input cannot
carry. The output ``y`` (bulk modulus, GPa) is maximized.

As the paper: ``min(2 D, 30) = 30`` compounds drawn at random (the same for every method of
a seed), then one pick per iteration; regret is the best bulk modulus of the 402 minus the
best found. A run stops once it holds the best compound (its simple regret is 0 from then
on, so the summary counts it at every later iteration). Compounds already measured are not
proposed again: each iteration the study
marks them not ``allowed`` in a fresh domain (BoFire's way to exclude categories), so every
BARK fit starts its chains anew (burn-in 1000), like the GP's refits.

Methods: ``bark`` (defaults: descriptor splits, sparse split prior), ``bark_uniform`` (the
uniform split prior), ``bark_subsets`` (``categorical_encodings={"compound": "ONE_HOT"}``:
the compounds as labels, the ablation), ``sobo`` (BoFire's ``SoboStrategy`` with its
default GP, which encodes the input by its descriptors) and ``random``.

    python -m benchmarks.max_phases run --out results/max [--methods ...]
        [--seeds 20] [--first-seed 0] [--iterations 100] [--data PATH]
    python -m benchmarks.max_phases summary --out results/max   # also writes summary.md

``runs.csv`` gets one row per evaluated compound (``method``, ``seed``, ``iteration`` (0 for
the initial design), ``compound``, ``y``, ``best``, ``regret``, ``seconds`` of the ask), appended
as each pick is made, so a stopped study resumes where it stopped. ``relevance.csv`` holds
the last BARK fit's ``feature_relevance(detail=True)`` of each run (one row per descriptor).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import SHARED_DATA, publish

PROPERTIES = ("e_a", "APF", "C", "m", "Cv", "a_exp", "c_exp", "Z", "I_dist")
NUISANCE = tuple(f"nuisance{i}" for i in range(16))
METHODS = ("bark", "bark_uniform", "bark_subsets", "sobo", "random")
N_INIT = 30
DEFAULT_DATA = SHARED_DATA / "max" / "MAX_data.json"


def load(path: Path = DEFAULT_DATA) -> pd.DataFrame:
    """One row per compound: ``compound``, the descriptors, ``y``."""
    records = json.loads(Path(path).read_text())
    frame = pd.DataFrame(records)
    frame["compound"] = frame["MAX"] + "_" + frame["Type"].astype(str)
    if frame["compound"].duplicated().any():
        raise ValueError("MAX data: compound names repeat")
    return frame[["compound", *PROPERTIES, *NUISANCE, "y"]].reset_index(drop=True)


def domain_of(data: pd.DataFrame, measured: set[str]):
    """The compounds as one descriptor input, the measured ones not allowed."""
    from bofire.data_models.domain.api import Domain, Inputs, Outputs
    from bofire.data_models.features.api import CategoricalDescriptorInput, ContinuousOutput
    from bofire.data_models.objectives.api import MaximizeObjective

    compounds = data["compound"].tolist()
    feature = CategoricalDescriptorInput(
        key="compound", categories=compounds, descriptors=[*PROPERTIES, *NUISANCE],
        values=data[[*PROPERTIES, *NUISANCE]].to_numpy().tolist(),
        allowed=[c not in measured for c in compounds])
    return Domain(inputs=Inputs(features=[feature]), outputs=Outputs(
        features=[ContinuousOutput(key="y", objective=MaximizeObjective())]))


def initial_compounds(n_compounds: int, seed: int) -> np.ndarray:
    """The row numbers of a seed's ``N_INIT`` random starting compounds (every method's)."""
    return np.random.default_rng(seed).choice(n_compounds, N_INIT, replace=False)


def informative_seeds(data: pd.DataFrame, count: int, first: int = 0) -> list[int]:
    """The first ``count`` seeds from ``first`` on whose start lacks the best compound (a run
    that starts with it has nothing to find)."""
    best = int(data.y.to_numpy().argmax())
    seeds, seed = [], first
    while len(seeds) < count:
        if best not in initial_compounds(len(data), seed):
            seeds.append(seed)
        seed += 1
    return seeds


def strategy_of(method: str, domain, seed: int, changes: dict | None = None):
    """``method``'s strategy; ``changes`` are BARKStrategy keywords on top of a BARK method's
    (``surrogate_specs``: a dict of settings merged into the method's own)."""
    from bofire.strategies.api import map as map_strategy

    import bofire_bark  # noqa: F401 (registers BARK)
    from bofire_bark.data_models import BARKStrategy

    if method == "sobo":
        from bofire.data_models.strategies.api import SoboStrategy

        return map_strategy(SoboStrategy(domain=domain, seed=seed))
    specs = {"seed": seed}
    if method == "bark_uniform":
        specs["split_prior"] = "uniform"
    if method == "bark_subsets":
        specs["categorical_encodings"] = {"compound": "ONE_HOT"}
    changes = dict(changes or {})
    specs.update(changes.pop("surrogate_specs", {}))
    return map_strategy(BARKStrategy(domain=domain, surrogate_specs=specs, **changes))


def run_one(data: pd.DataFrame, method: str, seed: int, iterations: int, out: Path,
            changes: dict | None = None) -> None:
    """One BO run, resumed from the rows of ``runs.csv`` it already has (``changes``: see
    ``strategy_of``)."""
    runs_csv = out / "runs.csv"
    done = pd.read_csv(runs_csv) if runs_csv.exists() else pd.DataFrame()
    if len(done):
        done = done[(done.method == method) & (done.seed == seed)]
    rows = done.to_dict("records") if len(done) else []
    best_y = float(data.y.max())
    if not rows:
        start = initial_compounds(len(data), seed)
        best = -np.inf
        for i in start:
            best = max(best, float(data.y[i]))
            rows.append({"method": method, "seed": seed, "iteration": 0,
                         "compound": data.compound[i], "y": float(data.y[i]), "best": best,
                         "regret": best_y - best, "seconds": 0.0})
        _append(runs_csv, rows)
    by_name = data.set_index("compound")
    rng = np.random.default_rng([seed, 1])
    strategy = None
    for it in range(int(max(r["iteration"] for r in rows)) + 1, iterations + 1):
        if rows[-1]["regret"] == 0:
            break
        measured = {r["compound"] for r in rows}
        start = time.perf_counter()
        if method == "random":
            pick = rng.choice(sorted(set(data.compound) - measured))
        else:
            strategy = strategy_of(method, domain_of(data, measured), seed + 1000 * it,
                                   changes)
            experiments = pd.DataFrame({"compound": [r["compound"] for r in rows],
                                        "y": [r["y"] for r in rows]})
            strategy.tell(experiments)
            pick = str(strategy.ask(1)["compound"].iloc[0])
        seconds = time.perf_counter() - start
        if pick in measured:
            raise RuntimeError(f"{method} seed {seed}: proposed the measured {pick}")
        y = float(by_name.y[pick])
        best = max(rows[-1]["best"], y)
        row = {"method": method, "seed": seed, "iteration": it, "compound": pick, "y": y,
               "best": best, "regret": best_y - best, "seconds": seconds}
        rows.append(row)
        _append(runs_csv, [row])
        if method.startswith("bark") and (it == iterations or row["regret"] == 0):
            # one row per descriptor, the columns relevance.csv has always had
            rel = strategy.feature_relevance(detail=True)
            rel = rel[[c for c in rel if c.startswith("split_")]].rename_axis(
                "input").reset_index()
            rel.insert(0, "seed", seed)
            rel.insert(0, "method", method)
            _append(out / "relevance.csv", rel.to_dict("records"))


def _append(path: Path, rows: list[dict]) -> None:
    frame = pd.DataFrame(rows)
    frame.to_csv(path, mode="a", header=not path.exists(), index=False)


def summary(out: Path, iterations: tuple[int, ...] = (0, 10, 20, 30, 50, 100)) -> str:
    """Mean simple regret at some iterations and the share of runs that found the best
    compound, per method (only runs that reached an iteration count there)."""
    runs = pd.read_csv(out / "runs.csv")
    last = runs.groupby(["method", "seed"]).iteration.max()
    # a run that holds the best compound stopped there: its regret stays 0 at every iteration
    last[runs.groupby(["method", "seed"]).regret.min() == 0] = max(iterations)
    lines = ["| method | runs | " + " | ".join(f"regret @{i}" for i in iterations)
             + " | found best (by last iteration) | median s per ask |",
             "|---|---|" + "---|" * len(iterations) + "---|---|"]
    for method in [m for m in METHODS if m in set(runs.method)]:
        sub = runs[runs.method == method]
        cells = []
        for i in iterations:
            reached = last[method][last[method] >= i].index
            at = sub[(sub.iteration <= i) & sub.seed.isin(reached)].groupby("seed").regret.min()
            cells.append(f"{at.mean():.1f} (n={len(at)})" if len(at) else "")
        final = sub.groupby("seed").regret.min()
        picks = sub[sub.iteration > 0]
        lines.append(f"| {method} | {sub.seed.nunique()} | " + " | ".join(cells)
                     + f" | {int((final == 0).sum())} of {len(final)} (the others end at iteration "
                     f"{_span(last[method][final != 0])}) | "
                     f"{picks.seconds.median():.1f} |")
    text = "\n".join(lines)
    rel_csv = out / "relevance.csv"
    if rel_csv.exists():
        rel = pd.read_csv(rel_csv)
        col = "split_share"
        rel["nuisance"] = rel.input.str.contains("nuisance")
        share = rel.groupby(["method", "seed", "nuisance"])[col].sum().unstack()
        text += "\n\nShare of the forest's splits on the 16 nuisance descriptors (of 25), " \
                "last fit of each run, mean over runs:\n\n"
        text += "\n".join(f"- {m}: {share.loc[m][True].mean():.3f} ({len(share.loc[m])} runs)"
                          for m in share.index.get_level_values(0).unique()
                          if True in share.columns and share.loc[m][True].notna().any())
    return text


def _span(last: pd.Series) -> str:
    return f"{int(last.min())}-{int(last.max())}" if len(last) else "-"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.max_phases")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    run.add_argument("--seeds", type=int, default=20)
    run.add_argument("--first-seed", type=int, default=0)
    run.add_argument("--iterations", type=int, default=100)
    run.add_argument("--data", type=Path, default=DEFAULT_DATA)
    summ = sub.add_parser("summary")
    summ.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "summary":
        publish(args.out / "summary.md", summary(args.out))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore")
    data = load(args.data)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for method in args.methods:
            run_one(data, method, seed, args.iterations, args.out)
            print(f"{method} seed {seed} done", flush=True)


if __name__ == "__main__":
    main()
