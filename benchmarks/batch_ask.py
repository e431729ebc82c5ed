"""How long a batch takes: ``ask(n)`` on the warm-up's constrained reaction domain (three
fractions summing to one with NChooseK, a nonlinear inequality, a temperature, a discrete and
a categorical input; ``bofire_bark.warmup``), after ``tell`` of ``--points`` random points
with a smooth response, the strategy's defaults otherwise (issue 37, item 3).

    python -m benchmarks.batch_ask [--n 8] [--points 30] [--seed 0] [--no-constraints]
        [--batch-polish] [--acquisition qLogNEI]

``--no-constraints``: the same inputs and output without the constraints (where a single ask
runs the numba box loop). ``--batch-polish``: ``GridSettings(batch_polish=True)`` (every
candidate's search goes on towards the 1 % gap, as before batches shared their work).
``--acquisition``: BoFire's acquisition type by name (default: the strategy's, qUCB).

Prints one JSON line: the ask's wall seconds, the seconds its searches' starts took
(``incumbent_time``) and the searches (``solve_time``), each candidate's status, the largest
proven gap, how many candidates are distinct and fulfil the domain's constraints, and a digest
of the candidates (two trees that pick the same candidates print the same digest). Run it in two
checkouts in turn (``farm-bench``, or alternately by hand) for a ratio; numba's cache should be
warm in both (a first run compiles).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np


def run(n: int = 8, points: int = 30, seed: int = 0, constraints: bool = True,
        batch_polish: bool = False, acquisition: str | None = None) -> dict:
    import bofire.strategies.api as strategies
    from bofire.data_models.domain.api import Domain

    from bofire_bark.data_models import BARKStrategy
    from bofire_bark.warmup import _domains

    domain = _domains()["constrained"]
    if not constraints:
        domain = Domain(inputs=domain.inputs, outputs=domain.outputs)
    optimizer = {"grid": {"batch_polish": True}} if batch_polish else {}
    rule = {} if acquisition is None else {"acquisition_function": {"type": acquisition}}
    strategy = strategies.map(BARKStrategy(domain=domain, seed=seed,
                                           acquisition_optimizer=optimizer, **rule))
    X = domain.inputs.sample(points, seed=seed)
    rng = np.random.default_rng(seed)
    num = X.select_dtypes("number")
    for key in domain.outputs.get_keys():
        X[key] = np.sin(3 * num).sum(axis=1) + 0.1 * rng.normal(size=len(X))
        X[f"valid_{key}"] = 1
    t0 = time.perf_counter()
    strategy.tell(X)
    tell = time.perf_counter() - t0
    t0 = time.perf_counter()
    cands = strategy.ask(n)
    ask = time.perf_counter() - t0
    results = strategy.last_results
    text = cands.round(9).to_csv(index=False).encode()
    return {"n": n, "points": points, "seed": seed, "tell_s": round(tell, 2),
            "ask_s": round(ask, 2),
            "start_s": round(sum(r.incumbent_time for r in results), 2),
            "search_s": round(sum(r.solve_time for r in results), 2),
            "status": [r.status for r in results],
            "max_gap": round(max(r.gap for r in results), 4),
            "distinct": len(cands.drop_duplicates()),
            "feasible": int(domain.constraints.is_fulfilled(cands).sum()) if len(
                domain.constraints) else len(cands),
            "digest": hashlib.sha1(text).hexdigest()[:12]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--points", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-constraints", action="store_true")
    parser.add_argument("--batch-polish", action="store_true")
    parser.add_argument("--acquisition", default=None)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.n, args.points, args.seed, not args.no_constraints,
                         args.batch_polish, args.acquisition)), flush=True)


if __name__ == "__main__":
    main()
