"""BO where the categories carry chemistry: BARK with descriptors against labels, Sobo, random.

Problems (issue 23's evidence besides MAX, which ``max_phases`` runs):

- ``crosscoupling``: BoFire's ``CrossCoupling`` emulator (catalyst, 3 categories, and base, 4,
  each a ``CategoricalDescriptorInput``; base equivalents, temperature, residence time),
  maximizing its ``yield`` alone (its ``cost`` output is dropped). ``min(2 D, 30) = 10``
  random feasible points first (BoFire's ``RandomStrategy(seed)``, the same for every
  method of a seed), then one ask per iteration.
- ``photoswitch``: the 391 molecules of the photoswitch table BoFire ships with a measured
  E-isomer pi-pi* wavelength, as one ``CategoricalMolecularInput``; maximize the wavelength
  over that library. 10 random molecules first, then one pick per iteration; measured ones
  are marked not ``allowed`` in a fresh domain every iteration (BoFire's way), so no method
  picks a molecule twice. Regret: the library's best wavelength minus the best found.

Methods: ``bark`` (defaults; descriptors of descriptor inputs, and ``FingerprintsFragments()``
for the molecules, the featurizer of BoFire's tutorial "Bayesian Optimisation Over
Molecules"), ``bark_subsets`` (``ONE_HOT``: the categories as labels, the ablation),
``bark_lognormal`` (``bark`` with ``noise_prior="lognormal"``, BoFire's GP noise prior; not in
the default ``--methods``), ``sobo``
(BoFire's ``SoboStrategy``: its default GP with descriptor encoding on crosscoupling; on
photoswitch ``TanimotoGPSurrogate`` on ``FingerprintsFragments()``, as the tutorial) and
``random`` (a uniformly random unmeasured molecule / BoFire's ``RandomStrategy``).

    python -m benchmarks.chem_bo run --out results/chem_bo --problem crosscoupling
        [--methods ...] [--seeds 5] [--first-seed 0] [--iterations 20]
    python -m benchmarks.chem_bo summary --out results/chem_bo

``<out>/<problem>/runs.csv`` gets one row per evaluated point (``method``, ``seed``,
``iteration`` (0 for the initial design), the inputs, ``y``, ``best``, ``seconds`` of the
tell and ask), appended as each point is made, so a stopped study resumes where it stopped
(BARK's chains then restart with a full burn-in, as every iteration here does).
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

from benchmarks._common import publish
from benchmarks.max_phases import _append

PROBLEMS = ("crosscoupling", "photoswitch")
METHODS = ("bark", "bark_subsets", "bark_lognormal", "sobo", "random")
N_INIT = {"crosscoupling": 10, "photoswitch": 10}
TARGET = "E isomer pi-pi* wavelength in nm"


class CrossCoupling:
    """BoFire's emulator with its yield as the one output."""

    def __init__(self):
        from benchmarks.mo import make_benchmark

        self.bench = make_benchmark("CrossCoupling")
        self.keys = self.bench.domain.inputs.get_keys()
        self.best_y = None  # not known: the summary reports the best yield found

    def domain(self, measured: set):
        from bofire.data_models.domain.api import Domain, Outputs
        from bofire.data_models.features.api import ContinuousOutput
        from bofire.data_models.objectives.api import MaximizeObjective

        old = self.bench.domain
        return Domain(inputs=old.inputs, constraints=old.constraints, outputs=Outputs(
            features=[ContinuousOutput(key="yield", objective=MaximizeObjective())]))

    def initial(self, seed: int) -> pd.DataFrame:
        import bofire.strategies.api as strategies
        from bofire.data_models.strategies.api import RandomStrategy

        X = strategies.map(RandomStrategy(domain=self.domain(set()), seed=seed)).ask(
            N_INIT["crosscoupling"])
        return X[self.keys].reset_index(drop=True)

    def random(self, seed: int, it: int, measured: set) -> pd.DataFrame:
        import bofire.strategies.api as strategies
        from bofire.data_models.strategies.api import RandomStrategy

        X = strategies.map(RandomStrategy(domain=self.domain(set()), seed=seed + 1000 * it))
        return X.ask(1)[self.keys].reset_index(drop=True)

    def evaluate(self, X: pd.DataFrame) -> np.ndarray:
        return self.bench.f(X[self.keys])["yield"].to_numpy(dtype=float)

    @staticmethod
    def point_key(row) -> str:
        return ""


class Photoswitch:
    """The measured molecules as a library."""

    def __init__(self):
        from bofire.benchmarks.data.photoswitches import EXPERIMENTS

        table = pd.DataFrame(json.loads(EXPERIMENTS))[["SMILES", TARGET]].dropna()
        table = table.drop_duplicates("SMILES")
        self.y = dict(zip(table.SMILES, table[TARGET].astype(float), strict=True))
        self.smiles = list(self.y)
        self.keys = ["smiles"]
        self.best_y = max(self.y.values())

    def domain(self, measured: set):
        from bofire.data_models.domain.api import Domain, Inputs, Outputs
        from bofire.data_models.features.api import CategoricalMolecularInput, ContinuousOutput
        from bofire.data_models.objectives.api import MaximizeObjective

        feature = CategoricalMolecularInput(
            key="smiles", categories=self.smiles, allowed=[s not in measured for s in self.smiles])
        return Domain(inputs=Inputs(features=[feature]), outputs=Outputs(
            features=[ContinuousOutput(key="y", objective=MaximizeObjective())]))

    def initial(self, seed: int) -> pd.DataFrame:
        picks = np.random.default_rng(seed).choice(len(self.smiles), N_INIT["photoswitch"],
                                                   replace=False)
        return pd.DataFrame({"smiles": [self.smiles[i] for i in picks]})

    def random(self, seed: int, it: int, measured: set) -> pd.DataFrame:
        rng = np.random.default_rng([seed, it])
        return pd.DataFrame({"smiles": [rng.choice(sorted(set(self.smiles) - measured))]})

    def evaluate(self, X: pd.DataFrame) -> np.ndarray:
        return np.array([self.y[s] for s in X["smiles"]], dtype=float)

    @staticmethod
    def point_key(row) -> str:
        return row["smiles"]


def make_problem(name: str):
    if name == "crosscoupling":
        return CrossCoupling()
    if name == "photoswitch":
        return Photoswitch()
    raise ValueError(f"unknown problem {name!r}; choose from {PROBLEMS}")


def strategy_of(problem: str, method: str, domain, seed: int, changes: dict | None = None):
    """``method``'s strategy on ``problem``; ``changes`` are BARKStrategy keywords on top of a
    BARK method's (``surrogate_specs``: a dict of settings merged into the method's own)."""
    from bofire.data_models.molfeatures.api import FingerprintsFragments
    from bofire.strategies.api import map as map_strategy

    import bofire_bark  # noqa: F401 (registers BARK)
    from bofire_bark.data_models import BARKStrategy

    categorical = [f.key for f in domain.inputs.get() if hasattr(f, "categories")]
    if method == "sobo":
        from bofire.data_models.strategies.api import SoboStrategy

        if problem == "photoswitch":
            from bofire.data_models.surrogates.api import (
                BotorchSurrogates,
                TanimotoGPSurrogate,
            )

            gp = TanimotoGPSurrogate(inputs=domain.inputs, outputs=domain.outputs,
                                     categorical_encodings={"smiles": FingerprintsFragments()})
            return map_strategy(SoboStrategy(domain=domain, seed=seed,
                                             surrogate_specs=BotorchSurrogates(surrogates=[gp])))
        return map_strategy(SoboStrategy(domain=domain, seed=seed))
    specs = {"seed": seed}
    if method == "bark_lognormal":
        specs["noise_prior"] = "lognormal"
    if method == "bark_subsets":
        specs["categorical_encodings"] = {k: "ONE_HOT" for k in categorical}
    elif problem == "photoswitch":
        specs["categorical_encodings"] = {"smiles": FingerprintsFragments()}
    changes = dict(changes or {})
    specs.update(changes.pop("surrogate_specs", {}))
    return map_strategy(BARKStrategy(domain=domain, surrogate_specs=specs, **changes))


def run_one(problem, name: str, method: str, seed: int, iterations: int, out: Path,
            changes: dict | None = None, propose=None) -> None:
    """One BO run, resumed from the rows of ``runs.csv`` it already has (``changes``: see
    ``strategy_of``). ``best`` is the running maximum of ``y``, or the running minimum when
    the problem says ``minimize = True``. ``propose(strategy, problem, frame, seed, it)``, if
    given, picks the point from the told strategy instead of its ``ask(1)`` (a study's own
    rule)."""
    better = min if getattr(problem, "minimize", False) else max
    runs_csv = out / name / "runs.csv"
    runs_csv.parent.mkdir(parents=True, exist_ok=True)
    done = pd.read_csv(runs_csv) if runs_csv.exists() else pd.DataFrame()
    if len(done):
        done = done[(done.method == method) & (done.seed == seed)]
    rows = done.to_dict("records") if len(done) else []
    if not rows:
        X = problem.initial(seed)
        y = problem.evaluate(X)
        best = (np.minimum if better is min else np.maximum).accumulate(y)
        rows = [{"method": method, "seed": seed, "iteration": 0, **X.iloc[i].to_dict(),
                 "y": y[i], "best": best[i], "seconds": 0.0} for i in range(len(X))]
        _append(runs_csv, rows)
    for it in range(int(max(r["iteration"] for r in rows)) + 1, iterations + 1):
        measured = {problem.point_key(r) for r in rows} - {""}
        start = time.perf_counter()
        if method == "random":
            X = problem.random(seed, it, measured)
        else:
            strategy = strategy_of(name, method, problem.domain(measured), seed + 1000 * it,
                                   changes)
            y_key = strategy.domain.outputs.get_keys()[0]
            frame = pd.DataFrame([{k: r[k] for k in problem.keys} for r in rows])
            frame[y_key] = [r["y"] for r in rows]
            strategy.tell(frame)
            X = (propose(strategy, problem, frame, seed, it) if propose else
                 strategy.ask(1))[problem.keys].reset_index(drop=True)
        seconds = time.perf_counter() - start
        if problem.point_key(X.iloc[0]) in measured:
            raise RuntimeError(f"{name} {method} seed {seed}: proposed a measured point")
        y = float(problem.evaluate(X)[0])
        row = {"method": method, "seed": seed, "iteration": it, **X.iloc[0].to_dict(), "y": y,
               "best": better(rows[-1]["best"], y), "seconds": seconds}
        rows.append(row)
        _append(runs_csv, [row])


def summary(out: Path) -> str:
    """Per problem and method: the median and mean best at some iterations, wins against
    ``bark`` paired by seed, and for a library the runs that found its best."""
    parts = []
    for name in PROBLEMS:
        runs_csv = out / name / "runs.csv"
        if not runs_csv.exists():
            continue
        runs = pd.read_csv(runs_csv)
        top = runs.iteration.max()
        marks = sorted({0, 1, 2, 5, 10, top} | set(range(0, top + 1, 10)))
        best_y = make_problem(name).best_y if name == "photoswitch" else None
        fmt = ".1f" if runs.y.abs().max() > 10 else ".3f"  # wavelengths in nm, yields in [0, 1]
        lines = [f"### {name}", "",
                 "Best output found by iteration (median over the runs that reached it, mean in "
                 "brackets); final best of each method against `bark`'s, paired by seed.", "",
                 "| method | runs | " + " | ".join(f"@{i}" for i in marks)
                 + " | final best vs bark (higher/lower/tie) | found library's best"
                 " | median s per iteration |",
                 "|---|---|" + "---|" * len(marks) + "---|---|---|"]
        last = runs.groupby(["method", "seed"]).iteration.max()
        final = runs.groupby(["method", "seed"]).best.max()
        for method in [m for m in METHODS if m in set(runs.method)]:
            sub = runs[runs.method == method]
            cells = []
            for i in marks:
                reached = last[method][last[method] >= i].index
                at = sub[(sub.iteration <= i) & sub.seed.isin(reached)].groupby("seed").best.max()
                cells.append(f"{at.median():{fmt}} ({at.mean():{fmt}})" if len(at) else "")
            if method != "bark" and "bark" in final.index.get_level_values(0):
                paired = pd.concat([final[method], final["bark"]], axis=1, join="inner")
                vs = (f"{int((paired.iloc[:, 0] > paired.iloc[:, 1]).sum())}/"
                      f"{int((paired.iloc[:, 0] < paired.iloc[:, 1]).sum())}/"
                      f"{int((paired.iloc[:, 0] == paired.iloc[:, 1]).sum())}")
            else:
                vs = "-"
            found = (f"{int((final[method] >= best_y).sum())} of {len(final[method])}"
                     if best_y is not None else "-")
            picks = sub[sub.iteration > 0]
            lines.append(f"| {method} | {sub.seed.nunique()} (to iteration "
                         f"{int(last[method].min())}-{int(last[method].max())}) | "
                         + " | ".join(cells) + f" | {vs} | {found} | "
                         f"{picks.seconds.median():.1f} |")
        if best_y is not None:
            lines += ["", f"The library's best: {best_y:.1f}."]
        parts.append("\n".join(lines))
    head = ("Generated by `python -m benchmarks.chem_bo summary --out "
            f"{out}` from `<problem>/runs.csv` (see `benchmarks/chem_bo.py`).")
    return "\n\n".join([head, *parts])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chem_bo")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--problem", choices=PROBLEMS, required=True)
    run.add_argument("--methods", nargs="+", choices=METHODS,
                     default=[m for m in METHODS if m != "bark_lognormal"])
    run.add_argument("--seeds", type=int, default=5)
    run.add_argument("--first-seed", type=int, default=0)
    run.add_argument("--iterations", type=int, default=20)
    summ = sub.add_parser("summary")
    summ.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "summary":
        publish(args.out / "summary.md", summary(args.out))
        return
    logging.basicConfig(level=logging.WARNING)
    warnings.simplefilter("ignore")
    problem = make_problem(args.problem)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for method in args.methods:
            run_one(problem, args.problem, method, seed, args.iterations, args.out)
            print(f"{args.problem} {method} seed {seed} done", flush=True)


if __name__ == "__main__":
    main()
