"""What a new environment waits for: the first tell and ask with an empty numba cache, then the
same in a second process that loads the kernels from that cache, and which kernels compiled
longest (issue 37, item 1).

    python -m benchmarks.first_use [--case continuous|constrained] [--out results/first_use]

Each measurement runs in a fresh process with ``NUMBA_CACHE_DIR`` set to a new empty folder
(numba then neither reads nor writes the caches next to the sources). The process tells the
case's 8 random points to a ``BARKStrategy`` with the defaults and asks one candidate
(``bofire_bark.warmup``'s domains), timing each, and records numba's compile events (the
outermost ones: a kernel compiling its callees counts once, under its own name). Prints one
line per process and the ten longest compiles; appends them to ``<out>/first_use.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pandas as pd

from benchmarks._common import REPO

PROCESS = """
    import json, time
    import numpy as np
    from numba.core import event

    compiles, depth, since = [], [0], [0.0]

    class Record(event.Listener):
        def on_start(self, ev):
            if depth[0] == 0:
                since[0] = time.perf_counter()
            depth[0] += 1

        def on_end(self, ev):
            depth[0] -= 1
            if depth[0] == 0:
                d = (ev.data or {{}}).get("dispatcher")
                name = getattr(getattr(d, "py_func", None), "__qualname__", "?")
                module = getattr(getattr(d, "py_func", None), "__module__", "?")
                compiles.append((f"{{module}}.{{name}}", time.perf_counter() - since[0]))

    event.register("numba:compile", Record())
    t0 = time.perf_counter()
    import bofire.strategies.api as strategies
    from bofire_bark.data_models import BARKStrategy
    from bofire_bark.warmup import _domains
    t_import = time.perf_counter() - t0

    domain = _domains()[{case!r}]
    strategy = strategies.map(BARKStrategy(domain=domain, seed=0))
    X = domain.inputs.sample(8, seed=0)
    for key in domain.outputs.get_keys():
        X[key] = np.random.default_rng(0).normal(size=len(X))
        X[f"valid_{{key}}"] = 1
    t0 = time.perf_counter()
    strategy.tell(X)
    t_tell = time.perf_counter() - t0
    t0 = time.perf_counter()
    strategy.ask(1)
    t_ask = time.perf_counter() - t0
    r = strategy.last_results[0]
    print("RESULT" + json.dumps({{"import_s": t_import, "tell_s": t_tell, "ask_s": t_ask,
                                 "status": r.status, "search_s": r.solve_time,
                                 "compiles": compiles}}))
"""


def measure(case: str, cache: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(PROCESS.format(case=case))],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=3600)
    line = next((s for s in out.stdout.splitlines() if s.startswith("RESULT")), None)
    if line is None:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(line[len("RESULT"):])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", default="constrained",
                        choices=["continuous", "constrained", "several outputs", "finite"])
    parser.add_argument("--out", type=Path, default=REPO / "results" / "first_use")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            r = measure(args.case, cache)
            compiled = sum(s for _, s in r["compiles"])
            rows.append({"case": args.case, "cache": label, "tell_s": r["tell_s"],
                         "ask_s": r["ask_s"], "compile_s": compiled,
                         "kernels": len(r["compiles"]), "status": r["status"],
                         "search_s": r["search_s"]})
            print(f"{args.case} {label}: tell {r['tell_s']:.1f} s, ask {r['ask_s']:.1f} s, "
                  f"numba compiled {len(r['compiles'])} kernels in {compiled:.1f} s; "
                  f"ask status {r['status']} after {r['search_s']:.2f} s of search", flush=True)
            if label == "cold":
                top = sorted(r["compiles"], key=lambda c: -c[1])[:10]
                for name, seconds in top:
                    print(f"  {seconds:6.1f} s  {name}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "first_use.csv"
    frame = pd.DataFrame(rows)
    frame.to_csv(path, mode="a", header=not path.exists(), index=False)


if __name__ == "__main__":
    main()
