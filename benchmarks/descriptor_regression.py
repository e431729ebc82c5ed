"""Regression where the inputs are described categories: BARK with descriptor splits, BARK
with the categories as labels (the ablation) and BoFire's GP, on random train/test splits.

Data sets (one categorical input each, so every test point is a category the training data
never had: labels alone can only predict the mean there):

- ``max``: the paper's 402 MAX-phase compounds (``../shared/data/max``), a
  ``CategoricalDescriptorInput`` with 9 properties and 16 nuisance features
  (``benchmarks.max_phases``), bulk modulus.
- ``photoswitch``: the photoswitch table BoFire ships (``bofire.benchmarks.data.photoswitches``),
  the 391 molecules with a measured E-isomer pi-pi* wavelength (nm), a
  ``CategoricalMolecularInput``. BARK splits on ``FingerprintsFragments()`` bits and counts;
  the GP is BoFire's ``TanimotoGPSurrogate`` on the same features, as BoFire's tutorial
  "Bayesian Optimisation Over Molecules" (the Photoswitch paper's reference: a Tanimoto GP on
  fragprints, RMSE 20.9 nm, MAE 13.3 nm, R2 0.90 over 20 random 80/20 splits).

Models: ``bark`` (defaults: descriptors, sparse split prior), ``bark_subsets``
(``ONE_HOT``), ``bark_mixed`` (descriptors and subsets: ``descriptor_subset_splits=True``),
``gp`` (``SingleTaskGPSurrogate`` with BoFire's default descriptor encoding for
``max``; ``TanimotoGPSurrogate`` for ``photoswitch``).

    python -m benchmarks.descriptor_regression run --out results/descriptor_regression
        [--datasets max photoswitch] [--models bark bark_subsets bark_mixed gp] [--splits 5]
    python -m benchmarks.descriptor_regression summary --out ...

One row per (data set, model, split) in ``scores.csv`` (appended; a rerun skips rows it has):
RMSE, MAE, R2 and the test NLPD (Gaussian predictive, per point, in the output's units) and
the fit seconds; ``sweeps``, a BARK fit's sweeps per chain (burn-in and continuation
included). Splits are 80/20, ``numpy.random.default_rng(split)``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import publish

MODELS = ("bark", "bark_subsets", "bark_mixed", "gp")
DATASETS = ("max", "photoswitch")
TARGET = "E isomer pi-pi* wavelength in nm"


def dataset(name: str):
    """(inputs, frame with the input column and ``y``)."""
    from bofire.data_models.domain.api import Inputs
    from bofire.data_models.features.api import CategoricalMolecularInput

    if name == "max":
        from benchmarks.max_phases import DEFAULT_DATA, domain_of, load

        data = load(DEFAULT_DATA)
        inputs = domain_of(data, set()).inputs
        return inputs, data[["compound", "y"]]
    from bofire.benchmarks.data.photoswitches import EXPERIMENTS

    table = pd.DataFrame(json.loads(EXPERIMENTS))[["SMILES", TARGET]].dropna()
    table = table.drop_duplicates("SMILES").rename(columns={"SMILES": "smiles", TARGET: "y"})
    inputs = Inputs(features=[CategoricalMolecularInput(key="smiles",
                                                        categories=table.smiles.tolist())])
    return inputs, table.reset_index(drop=True)


def surrogate(name: str, model: str, inputs):
    import bofire.surrogates.api as surrogates
    from bofire.data_models.domain.api import Outputs
    from bofire.data_models.features.api import ContinuousOutput
    from bofire.data_models.molfeatures.api import FingerprintsFragments

    from bofire_bark.data_models import BARKSurrogate

    outputs = Outputs(features=[ContinuousOutput(key="y")])
    key = inputs.get_keys()[0]
    featurizer = FingerprintsFragments() if name == "photoswitch" else None
    if model == "gp":
        from bofire.data_models.surrogates.api import (
            SingleTaskGPSurrogate,
            TanimotoGPSurrogate,
        )

        if featurizer is not None:
            return surrogates.map(TanimotoGPSurrogate(
                inputs=inputs, outputs=outputs, categorical_encodings={key: featurizer}))
        return surrogates.map(SingleTaskGPSurrogate(inputs=inputs, outputs=outputs))
    encodings = {key: "ONE_HOT"} if model == "bark_subsets" else (
        {key: featurizer} if featurizer is not None else {})
    return surrogates.map(BARKSurrogate(inputs=inputs, outputs=outputs, seed=0,
                                        categorical_encodings=encodings,
                                        descriptor_subset_splits=model == "bark_mixed"))


def score(y: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> dict:
    resid = y - mean
    var = np.maximum(sd, 1e-12) ** 2
    return {"rmse": float(np.sqrt(np.mean(resid**2))), "mae": float(np.mean(np.abs(resid))),
            "r2": float(1.0 - np.sum(resid**2) / np.sum((y - y.mean()) ** 2)),
            "nlpd": float(np.mean(0.5 * np.log(2 * math.pi * var) + 0.5 * resid**2 / var))}


def run(out: Path, datasets, models, splits: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "scores.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(
        columns=["dataset", "model", "split"])
    have = set(zip(done.dataset, done.model, done.split, strict=True))
    for name in datasets:
        inputs, data = dataset(name)
        key = inputs.get_keys()[0]
        for split in range(splits):
            order = np.random.default_rng(split).permutation(len(data))
            n_train = int(round(0.8 * len(data)))
            train, test = data.iloc[order[:n_train]], data.iloc[order[n_train:]]
            for model in models:
                if (name, model, split) in have:
                    continue
                sur = surrogate(name, model, inputs)
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sur.fit(train.assign(valid_y=1))
                seconds = time.perf_counter() - start
                pred = sur.predict(test[[key]])
                fit = getattr(sur, "last_fit", None)  # BARK: sweeps per chain after burn-in too
                row = {"dataset": name, "model": model, "split": split, "n_train": len(train),
                       **score(test.y.to_numpy(), pred["y_pred"].to_numpy(),
                               pred["y_sd"].to_numpy()), "fit_s": seconds,
                       "sweeps": fit.sweeps if fit is not None else np.nan}
                done = pd.concat([done, pd.DataFrame([row])], ignore_index=True)
                done.to_csv(path, index=False)  # whole file: older files lack ``sweeps``
                print(row, flush=True)


def summary(out: Path) -> str:
    scores = pd.read_csv(out / "scores.csv")
    table = scores.groupby(["dataset", "model"]).agg(
        splits=("split", "count"), rmse=("rmse", "mean"), mae=("mae", "mean"),
        r2=("r2", "mean"), nlpd=("nlpd", "mean"), fit_s=("fit_s", "median"))
    lines = ["| data set | model | splits | RMSE | MAE | R2 | NLPD | fit s (median) |",
             "|---|---|---|---|---|---|---|---|"]
    for (name, model), row in table.iterrows():
        lines.append(f"| {name} | {model} | {int(row.splits)} | {row.rmse:.2f} | {row.mae:.2f} | "
                     f"{row.r2:.3f} | {row.nlpd:.3f} | {row.fit_s:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks."
                                     "descriptor_regression")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    r.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    r.add_argument("--splits", type=int, default=5)
    s = sub.add_parser("summary")
    s.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "summary":
        publish(args.out / "summary.md", summary(args.out))
    else:
        run(args.out, args.datasets, args.models, args.splits)


if __name__ == "__main__":
    main()
