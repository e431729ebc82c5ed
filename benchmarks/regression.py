"""The paper's model-fit table: BARK against BoFire's SingleTaskGP on four UCI data sets.

For each data set and each of ``n_splits`` random train/test splits (split ``s`` uses seed
``s``), ``n`` rows train (the paper's n) and the rest test; the target is standardized with
the training split's mean and standard deviation, and both models see only the standardized
target. Metrics, in standardized units, averaged over the test rows:

- NLPD: BARK's predictive density is the equal-weight mixture over its S posterior samples
  of N(mean_s, latent var_s + noise var_s) (log-sum-exp over samples); the GP's is the
  Gaussian with its latent variance plus its fitted noise (BoFire's ``predict`` sd).
- MSE of the predictive mean.

Fit time is the wall time of ``fit_posterior`` (BARK) or ``surrogate.fit`` (GP).

Run: ``python -m benchmarks regression [--small] [--splits 20] [--data-dir D]``.
Per-split rows go to ``results/regression/regression.csv`` (a rerun skips the rows that are
there, so an interrupted run resumes), the summary to ``results/regression/summary.md``;
``--small`` writes ``regression_small.csv`` and ``summary_small.md`` to ``out/small/regression``.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from benchmarks._common import REPO, SHARED_DATA, publish

DEFAULT_DATA_DIR = SHARED_DATA / "uci"
DEFAULT_OUT = REPO / "results" / "regression"
# --small's default: outside the tracked results/ (/out/ is git-ignored), so a spot check
# never touches the published table
SMALL_OUT = REPO / "out" / "small" / "regression"

# The paper's table (mean over 20 splits): NLPD, MSE.
PAPER = {
    "abalone": {"BARK": (1.09, 0.52), "BART": (1.10, 0.53), "GP-RBF": (1.06, 0.49)},
    "auto-mpg": {"BARK": (0.45, 0.15), "BART": (0.46, 0.14), "GP-RBF": (0.50, 0.15)},
    "concrete": {"BARK": (0.31, 0.11), "BART": (0.54, 0.17), "GP-RBF": (0.39, 0.15)},
    "student": {"BARK": (1.27, 0.73), "BART": (1.27, 0.72), "GP-RBF": (1.43, 1.00)},
}

COLUMNS = ["dataset", "model", "split", "n_train", "n_test", "nlpd", "mse", "fit_time",
           "settings"]


@dataclass
class Dataset:
    """A regression table: inputs by kind, target, and the paper's training size."""

    name: str
    n_train: int
    target: str
    continuous: list[str]
    discrete: list[str] = field(default_factory=list)
    categorical: list[str] = field(default_factory=list)
    frame: pd.DataFrame | None = None

    @property
    def keys(self) -> list[str]:
        return self.continuous + self.discrete + self.categorical

    @property
    def label(self) -> str:
        return f"{len(self.continuous)}+{len(self.discrete)}+{len(self.categorical)}"

    def inputs(self):
        """BoFire inputs on the whole table's ranges (values and categories seen anywhere)."""
        from bofire.data_models.domain.api import Inputs
        from bofire.data_models.features.api import (
            CategoricalInput,
            ContinuousInput,
            DiscreteInput,
        )

        df = self.frame
        feats = []
        for k in self.continuous:
            lo, hi = float(df[k].min()), float(df[k].max())
            feats.append(ContinuousInput(key=k, bounds=(lo, hi if hi > lo else lo + 1.0)))
        for k in self.discrete:
            vals = sorted(float(v) for v in df[k].unique())
            if len(vals) == 1:
                vals.append(vals[0] + 1.0)
            feats.append(DiscreteInput(key=k, values=vals))
        for k in self.categorical:
            feats.append(CategoricalInput(key=k, categories=sorted(df[k].astype(str).unique())))
        return Inputs(features=feats)


def load(name: str, data_dir: Path | str = DEFAULT_DATA_DIR) -> Dataset:
    """One of ``abalone``, ``auto-mpg``, ``concrete``, ``student`` (see the data README)."""
    d = Path(data_dir)
    if name == "abalone":
        # UCI's abalone has 4177 distinct rows; this copy repeats 5 of them (10 extra rows,
        # consecutive, all with extreme ring counts), so exact repeats are dropped.
        df = pd.read_csv(d / "abalone.csv").drop_duplicates().reset_index(drop=True)
        target = "Rings"
        cat = ["Sex"]
        ds = Dataset(name, 400, target, [c for c in df.columns if c not in (target, *cat)],
                     categorical=cat)
    elif name == "auto-mpg":
        cols = ["mpg", "cylinders", "displacement", "horsepower", "weight", "acceleration",
                "model_year", "origin", "name"]
        df = pd.read_csv(d / "auto-mpg.data", sep=r"\s+", header=None, na_values="?",
                         names=cols).dropna().reset_index(drop=True)
        ds = Dataset(name, 100, "mpg", ["displacement", "horsepower", "weight", "acceleration"],
                     discrete=["cylinders", "model_year", "origin"])
    elif name == "concrete":
        df = pd.read_csv(d / "concrete.csv")
        target = df.columns[-1]
        ds = Dataset(name, 300, target, [c for c in df.columns if c != target])
    elif name == "student":
        df = pd.read_csv(d / "student-por.csv", sep=";").drop(columns=["G1", "G2"])
        target = "G3"
        feats = [c for c in df.columns if c != target]
        disc = [c for c in feats if pd.api.types.is_numeric_dtype(df[c])]
        cat = [c for c in feats if c not in disc]
        ds = Dataset(name, 250, target, [], discrete=disc, categorical=cat)
    else:
        raise ValueError(f"unknown data set {name!r}; choose from {sorted(PAPER)}")
    for k in ds.categorical:
        df[k] = df[k].astype(str)
    ds.frame = df
    return ds


def split(ds: Dataset, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Train/test frames and standardized targets for split ``seed``."""
    df = ds.frame
    perm = np.random.default_rng(seed).permutation(len(df))
    tr, te = df.iloc[perm[: ds.n_train]], df.iloc[perm[ds.n_train:]]
    y_tr = tr[ds.target].to_numpy(dtype=np.float64)
    mu, sd = y_tr.mean(), y_tr.std()
    y_te = te[ds.target].to_numpy(dtype=np.float64)
    return (tr[ds.keys].reset_index(drop=True), te[ds.keys].reset_index(drop=True),
            (y_tr - mu) / sd, (y_te - mu) / sd)


def gaussian_nlpd(y: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    return 0.5 * (np.log(2 * np.pi * var) + (y - mean) ** 2 / var)


def mixture_nlpd(y: np.ndarray, means: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """-log of the equal-weight mixture of N(means[s], variances[s]) at y; (S, n) -> (n,)."""
    logp = -gaussian_nlpd(y[None, :], means, variances)
    return -(logsumexp(logp, axis=0) - np.log(means.shape[0]))


@dataclass
class BarkBudget:
    n_chains: int = 4
    n_samples: int = 4
    thinning: int = 100
    burn_in: int = 1000
    n_jobs: int = 1  # chain threads (1 here: the machine is shared)

    def describe(self) -> str:
        return (f"chains={self.n_chains} samples={self.n_samples} thin={self.thinning} "
                f"burn={self.burn_in}")


def sample_bark(inputs, X_tr, y_tr, seed: int, budget: BarkBudget, settings=None):
    """BARK's posterior on a training split, its split space, and the fit's wall time.

    ``settings``: the engine's ``MCMCSettings`` (None: the paper's defaults)."""
    from bofire_bark.engine import fit_posterior
    from bofire_bark.space import SplitSpace

    space = SplitSpace.from_inputs(inputs)
    start = time.perf_counter()
    post = fit_posterior(space.encode(X_tr), y_tr, space.engine_arrays(), settings,
                         n_chains=budget.n_chains, n_samples=budget.n_samples,
                         thinning=budget.thinning, burn_in=budget.burn_in, seed=seed,
                         n_jobs=budget.n_jobs)
    return post, space, time.perf_counter() - start


def score_bark(post, space, X_te, y_te) -> tuple[float, float]:
    """Test NLPD and MSE of a BARK posterior, standardized units."""
    pred = post.predict(space.encode(X_te))
    noise = post.samples["sigma2"][:, None] * post.y_std**2
    nlpd = mixture_nlpd(y_te, pred["sample_mean"], pred["sample_var"] + noise)
    mse = (pred["mean"] - y_te) ** 2
    return float(nlpd.mean()), float(mse.mean())


def fit_bark(ds: Dataset, inputs, X_tr, y_tr, X_te, y_te, seed: int, budget: BarkBudget):
    post, space, fit_time = sample_bark(inputs, X_tr, y_tr, seed, budget)
    return (*score_bark(post, space, X_te, y_te), fit_time, budget.describe())


def fit_gp(ds: Dataset, inputs, X_tr, y_tr, X_te, y_te, seed: int):
    import torch
    from bofire.data_models.domain.api import Outputs
    from bofire.data_models.features.api import ContinuousOutput
    from bofire.data_models.surrogates.api import SingleTaskGPSurrogate
    from bofire.surrogates.api import map as map_surrogate

    torch.manual_seed(seed)
    spec = SingleTaskGPSurrogate(inputs=inputs, outputs=Outputs(
        features=[ContinuousOutput(key="y")]))
    model = map_surrogate(spec)
    train = X_tr.copy()
    train["y"] = y_tr
    start = time.perf_counter()
    model.fit(train)
    fit_time = time.perf_counter() - start
    pred = model.predict(X_te)
    mean = pred["y_pred"].to_numpy()
    var = pred["y_sd"].to_numpy() ** 2  # BoFire's sd includes the observation noise
    nlpd = gaussian_nlpd(y_te, mean, var)
    return float(nlpd.mean()), float(((mean - y_te) ** 2).mean()), fit_time, "BoFire default"


def run(datasets=tuple(PAPER), n_splits: int = 20, models=("BARK", "GP"),
        data_dir: Path | str = DEFAULT_DATA_DIR, out_dir: Path | str = DEFAULT_OUT,
        budget: BarkBudget | None = None, csv_name: str = "regression.csv",
        verbose: bool = True) -> pd.DataFrame:
    """Run every (data set, model, split) not yet in the CSV; return the whole CSV."""
    budget = budget or BarkBudget()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / csv_name
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=COLUMNS)
    finished = {(r.dataset, r.model, int(r.split)) for r in done.itertuples()}
    for name in datasets:
        ds = load(name, data_dir)
        inputs = ds.inputs()
        for s in range(n_splits):
            todo = [m for m in models if (name, m, s) not in finished]
            if not todo:
                continue
            X_tr, X_te, y_tr, y_te = split(ds, s)
            for m in todo:
                if m == "BARK":
                    res = fit_bark(ds, inputs, X_tr, y_tr, X_te, y_te, s, budget)
                elif m == "GP":
                    res = fit_gp(ds, inputs, X_tr, y_tr, X_te, y_te, s)
                else:
                    raise ValueError(f"unknown model {m!r}")
                row = dict(zip(COLUMNS, [name, m, s, len(X_tr), len(X_te), *res], strict=True))
                if verbose:
                    print(f"{name:9s} {m:4s} split {s:2d}: NLPD {row['nlpd']:.3f} "
                          f"MSE {row['mse']:.3f} fit {row['fit_time']:.1f} s", flush=True)
                new = pd.DataFrame([row], columns=COLUMNS)
                done = new if done.empty else pd.concat([done, new], ignore_index=True)
                tmp = path.with_suffix(".tmp")
                done.to_csv(tmp, index=False)
                os.replace(tmp, path)
    return done


def summarize(results: pd.DataFrame, data_dir: Path | str = DEFAULT_DATA_DIR) -> str:
    """Markdown table: mean (std) over splits, next to the paper's numbers."""
    lines = [
        "| data set | n | D (cont+int+cat) | splits | NLPD BARK | NLPD GP | NLPD paper BARK / "
        "GP-RBF | MSE BARK | MSE GP | MSE paper BARK / GP-RBF | fit s BARK | fit s GP |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(sub, col):
        if sub.empty:
            return "-"
        return f"{sub[col].mean():.2f} ({sub[col].std(ddof=1) if len(sub) > 1 else 0:.2f})"

    def median(sub, col):
        if sub.empty:
            return "-"
        q1, q2, q3 = np.percentile(sub[col], [25, 50, 75])
        return f"{q2:.1f} [{q1:.1f}-{q3:.1f}]"

    for name in PAPER:
        rows = results[results["dataset"] == name]
        if rows.empty:
            continue
        ds = load(name, data_dir)
        b, g = rows[rows["model"] == "BARK"], rows[rows["model"] == "GP"]
        p = PAPER[name]
        n_splits = max(len(b), len(g))
        lines.append(
            f"| {name} | {ds.n_train} | {ds.label} | {n_splits} | {cell(b, 'nlpd')} | "
            f"{cell(g, 'nlpd')} | {p['BARK'][0]:.2f} / {p['GP-RBF'][0]:.2f} | "
            f"{cell(b, 'mse')} | {cell(g, 'mse')} | {p['BARK'][1]:.2f} / {p['GP-RBF'][1]:.2f} | "
            f"{median(b, 'fit_time')} | {median(g, 'fit_time')} |")
    settings = sorted(set(results.loc[results["model"] == "BARK", "settings"]))
    lines += ["", "Mean (standard deviation) over splits; NLPD and MSE on the test rows in "
              "units of the training split's standard deviation. Fit seconds: median "
              "[interquartile range] on one thread of a shared 2-core machine. GP: BoFire's "
              "SingleTaskGP with its defaults. BARK settings: " + "; ".join(settings)
              + ". Paper columns: BARK and GP-RBF from the paper's tables (20 splits)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks regression",
                                     description=__doc__.splitlines()[0])
    add_arguments(parser)
    run_from_args(parser.parse_args(argv))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--small", action="store_true",
                        help="2 splits of auto-mpg and concrete, BARK with a reduced MCMC "
                        "budget, written to out/small/regression/regression_small.csv")
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--datasets", nargs="+", default=list(PAPER), choices=list(PAPER))
    parser.add_argument("--models", nargs="+", default=["BARK", "GP"], choices=["BARK", "GP"])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--out-dir", type=Path, default=None,
                        help="default results/regression; with --small out/small/regression")
    parser.add_argument("--threads", type=int, default=1, help="threads for BARK's chains")


def out_dir_from_args(args) -> Path:
    """``--out-dir`` if given, else ``results/regression`` (``out/small/regression`` with
    ``--small``)."""
    if args.out_dir is not None:
        return Path(args.out_dir)
    return SMALL_OUT if args.small else DEFAULT_OUT


def run_from_args(args) -> None:
    import torch

    torch.set_num_threads(args.threads)  # the GP's fit time is measured on as many threads
    budget = BarkBudget(n_jobs=args.threads)
    csv_name, summary_name = "regression.csv", "summary.md"
    datasets, splits = args.datasets, args.splits
    if args.small:
        budget = BarkBudget(n_chains=2, n_samples=4, thinning=20, burn_in=200,
                            n_jobs=args.threads)
        csv_name, summary_name = "regression_small.csv", "summary_small.md"
        datasets = [d for d in datasets if d in ("auto-mpg", "concrete")] or datasets[:1]
        splits = min(splits, 2)
    out_dir = out_dir_from_args(args)
    results = run(datasets, splits, args.models, args.data_dir, out_dir, budget, csv_name)
    publish(out_dir / summary_name, summarize(results, args.data_dir))


if __name__ == "__main__":
    main()
