"""MCMC sweep time of this tree against an earlier commit, measured in the same run.

    python -m benchmarks.sweep_ratio --baseline facf902 [--rounds 3] [--sweeps 400]

The baseline commit is exported (``git archive``) into a temporary folder; each round runs one
child process per tree (alternating, so the machine's load hits both alike) that imports
``bofire_bark`` from that tree, fits the same data with the same chain seed, and times
``Chain.run`` after a warm-up (numba compiles outside the timing). Cases: continuous inputs
(D = 10, N = 40 and 200; the N-space and leaf-space forms) and a mixed domain (continuous,
discrete and a 12-category input, N = 40); trees with descriptor split variables (1822e7b
on) also a library of 391 categories split by about 1,750 synthetic fingerprint bits and
counts (N = 30). Prints ms per sweep per tree and the ratio (this tree / baseline), median
over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._common import REPO

CHILD = r"""
import json, sys, time
import numpy as np
from bofire_bark.engine import Chain, MCMCSettings
from bofire_bark.engine.model import standardize
from bofire_bark.engine.rng import seed_states

sweeps = int(sys.argv[1])
out = {}
rng = np.random.default_rng(0)
cases = {}
for n in (40, 200):
    X = rng.random((n, 10))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(n)
    cases[f"continuous N={n}"] = ((np.zeros(10, np.int64), np.zeros(10), np.ones(10),
                                   np.zeros(10, np.int64)), X, y)
X = np.column_stack([rng.random(40), rng.integers(0, 5, 40), rng.integers(0, 12, 40)])
y = X[:, 0] + (X[:, 2] % 3) + 0.1 * rng.standard_normal(40)
cases["mixed N=40"] = ((np.array([0, 1, 2], np.int64), np.array([0.0, 0, 0]),
                        np.array([1.0, 4, 11]), np.array([0, 5, 12], np.int64)), X, y)
try:  # trees with descriptor split variables only
    from bofire_bark.engine.forest import split_variables
    # a library of 391 categories described like BoFire's FingerprintsFragments of the
    # photoswitches: 1,700 bits (10 % set) and 50 small counts, at N = 30
    k = 391
    table = np.column_stack([rng.random((k, 1700)) < 0.1, rng.integers(0, 4, (k, 50))])
    table = table[:, table.min(axis=0) < table.max(axis=0)].astype(float)
    codes = rng.choice(k, 30, replace=False)
    X = codes[:, None].astype(float)
    y = table[codes, 0] + table[codes, 1700 - 1] + 0.1 * rng.standard_normal(30)
    cases["fingerprints N=30"] = (split_variables(
        np.array([2], np.int64), np.zeros(1), np.array([k - 1.0]), np.array([k], np.int64),
        [(table, False)]), X, y)
except ImportError:
    pass
for name, (space, X, y) in cases.items():
    chain = Chain(space, MCMCSettings(split_prior="dirichlet"), seed_states(1, 1)[0])
    chain.set_data(X, standardize(y)[0])
    chain.run(300)  # compile and warm up
    start = time.perf_counter()
    chain.run(sweeps)
    out[name] = 1000 * (time.perf_counter() - start) / sweeps
print(json.dumps(out))
"""


def run_child(tree: Path, sweeps: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(sweeps)], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sweep_ratio")
    parser.add_argument("--baseline", required=True, help="a commit of this repository")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sweeps", type=int, default=400)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.baseline, "bofire_bark"], cwd=REPO,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        times: dict[str, dict[str, list[float]]] = {"baseline": {}, "this tree": {}}
        for _ in range(args.rounds):
            for label, tree in (("baseline", base), ("this tree", REPO)):
                for case, ms in run_child(tree, args.sweeps).items():
                    times[label].setdefault(case, []).append(ms)
    print(f"ms per sweep (median of {args.rounds} rounds, {args.sweeps} sweeps each), "
          f"baseline {args.baseline}:")
    print("| case | baseline | this tree | this / baseline |")
    print("|---|---|---|---|")
    for case in times["baseline"]:
        b = statistics.median(times["baseline"][case])
        t = statistics.median(times["this tree"][case])
        print(f"| {case} | {b:.3f} | {t:.3f} | {t / b:.2f} |")


if __name__ == "__main__":
    main()
