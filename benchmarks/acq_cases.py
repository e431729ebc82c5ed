"""Acquisition posteriors as a BO run meets them, regenerated from seeds.

A case is a BARK posterior with the study's model settings (50 trees, 4 chains x 4 samples,
thinning 100, burn-in 1000) fitted to:

- ``bo``: the first ``n`` points of a committed BO run (``results/bo/runs/<benchmark>/BARK/
  seed<k>.csv``), i.e. exactly the data BARK had at that iteration;
- ``spec``: ``n`` random feasible points of one of the ``specs/`` domains (BoFire's
  ``RandomStrategy`` with the case's seed), with a synthetic response (``spec_response``):
  half of them drawn near a random optimum, as late-BO data are.

Each case is rebuilt from its name alone (``make_case``), so the fixture is this file plus the
committed runs; posteriors are cached under ``results/acquisition/cache`` (not committed).
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks._common import REPO
from benchmarks.bo import DEFAULT_OUT, BOConfig, read_run

SPECS = REPO / "specs"
CACHE = REPO / "results" / "acquisition" / "cache"
SPEC_NAMES = ("reaction", "formulation", "process", "continuous_benchmark")


@dataclass
class Case:
    name: str
    domain: object
    space: object
    posterior: object
    sign: float

    @property
    def n(self) -> int:
        return len(self.posterior.y)


def case_names(bo_seeds=(0, 1), spec_seeds=(0, 1, 2)) -> list[str]:
    """The standard case list: every study benchmark at three points of two seeds' runs, and
    every spec domain at N = 20, 50, 100 for three seeds."""
    from benchmarks.bo import STUDY_BENCHMARKS
    from benchmarks.functions import make_benchmark

    names = []
    for bench in STUDY_BENCHMARKS:
        n0 = min(2 * len(make_benchmark(bench).domain.inputs), 30)
        for seed in bo_seeds:
            for it in (5, 20, 40):
                names.append(f"bo:{bench}:{seed}:{n0 + it}")
    for spec in SPEC_NAMES:
        for seed in spec_seeds:
            names.append(f"spec:{spec}:{seed}:{(20, 50, 100)[seed % 3]}")
    return names


def _fit(domain, data: pd.DataFrame, seed: int):
    """The posterior BARK has after ``tell(data)`` with the study's settings."""
    from benchmarks.bo import make_strategy

    strategy = make_strategy("BARK", domain, seed, BOConfig())
    strategy.tell(data)
    return strategy


def spec_domain(name: str):
    import bofire.data_models.strategies.api as strategy_models
    from pydantic import TypeAdapter

    import bofire_bark  # noqa: F401  (registers BARK with BoFire)

    spec = TypeAdapter(strategy_models.AnyStrategy).validate_python(
        json.loads((SPECS / f"{name}.json").read_text()))
    return spec.domain


def spec_response(domain, X: pd.DataFrame, seed: int) -> np.ndarray:
    """A synthetic response on a domain: a random quadratic bowl in the ordered inputs
    (scaled to [0, 1]), random offsets per category, and a step in the first input."""
    rng = np.random.default_rng(1000 + seed)
    y = np.zeros(len(X))
    for k, key in enumerate(domain.inputs.get_keys()):
        feat = domain.inputs.get_by_key(key)
        if hasattr(feat, "categories"):
            effects = dict(zip(feat.categories, rng.normal(0, 1, len(feat.categories)),
                               strict=True))
            y += X[key].map(effects).to_numpy(dtype=float)
            continue
        lo, hi = (feat.lower_bound, feat.upper_bound)
        z = (X[key].to_numpy(dtype=float) - lo) / (hi - lo if hi > lo else 1.0)
        c = rng.uniform(0.2, 0.8)
        y -= rng.uniform(1, 4) * (z - c) ** 2
        if k == 0:
            y += 0.5 * (z > c)
    return y


def _spec_data(domain, n: int, seed: int) -> pd.DataFrame:
    import bofire.strategies.api as strategies
    from bofire.data_models.strategies.api import RandomStrategy

    X = strategies.map(RandomStrategy(domain=domain, seed=seed)).ask(4 * n)
    X = X[domain.inputs.get_keys()].reset_index(drop=True)
    key = domain.outputs.get_keys()[0]
    y = spec_response(domain, X, seed)
    # half random, half the best of the larger draw (data concentrated near the optimum)
    order = np.argsort(-y)
    top = order[: n // 2]
    rest = np.setdiff1d(np.arange(len(X)), top)[: n - len(top)]
    pick = np.concatenate((top, rest))
    data = X.iloc[pick].reset_index(drop=True)
    sign = 1.0 if "Maximize" in type(domain.outputs.get_by_key(key).objective).__name__ else -1.0
    data[key] = sign * y[pick]  # the response is "higher is better" before the sign
    data[f"valid_{key}"] = 1
    return data


def make_case(name: str, cache: bool = True) -> Case:
    """Rebuild a case from its name ``bo:<benchmark>:<seed>:<n>`` or ``spec:<spec>:<seed>:<n>``."""
    kind, what, seed, n = name.split(":")
    seed, n = int(seed), int(n)
    path = CACHE / (name.replace(":", "_") + ".pkl")
    if kind == "bo":
        from benchmarks.functions import make_benchmark

        domain = make_benchmark(what).domain
    else:
        domain = spec_domain(what)
    if cache and path.exists():
        posterior, space = pickle.loads(path.read_bytes())  # trusted: this study's cache
    else:
        if kind == "bo":
            run = read_run(DEFAULT_OUT / "runs" / what / "BARK" / f"seed{seed}.csv")
            keys = domain.inputs.get_keys()
            data = run.iloc[:n][keys + ["y"]].assign(valid_y=1)
        else:
            data = _spec_data(domain, n, seed)
        strategy = _fit(domain, data, seed)
        posterior, space = strategy.surrogate.posterior, strategy.space
        posterior = _detached(posterior)
        if cache:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(pickle.dumps((posterior, space)))
    from bofire.data_models.objectives.api import MaximizeObjective

    objective = domain.outputs.get_by_objective()[0].objective
    sign = 1.0 if isinstance(objective, MaximizeObjective) else -1.0
    return Case(name, domain, space, posterior, sign)


def _detached(posterior):
    """The posterior without its chains (not needed to optimize, and large)."""
    import dataclasses

    return dataclasses.replace(posterior, chains=[])


def case_start(case: Case, settings=None, **overrides):
    """(prepared search, starting point) of a case's acquisition, as the optimizer starts it
    (``optimize.prepare_search``: the default random draws and ascents unless ``settings`` or
    ``overrides`` say otherwise; a MIP ``solver`` builds the MIP's cone data)."""
    from bofire_bark.optimize import prepare_search

    search = prepare_search(case.posterior, case.domain, case.space, settings, sign=case.sign,
                            **overrides)
    return search, search.start()

