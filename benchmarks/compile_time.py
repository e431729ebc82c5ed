"""Where the cold first tell (and ask) spends its numba compile time, kernel by kernel, and
how a change compares with a reference commit measured alternately in the same run (issue 37,
item 1).

    python -m benchmarks.compile_time [--against REF] [--rounds 2] [--ask] [--speed]
        [--label NOTE] [--out DIR]

Each measurement is a fresh process with an empty ``NUMBA_CACHE_DIR``: it tells the
constrained warm-up domain's 8 random points to a ``BARKStrategy`` with small MCMC settings
(compile time does not depend on them) and, with ``--ask``, asks one candidate. numba's
compile events give each kernel's own compile time (its callees' compiles subtracted; CPU
seconds of the compiling thread, which a loaded machine disturbs far less than wall time) and
its number of compiled signatures. With ``--against REF`` the sources of git ``REF`` are
exported to a temporary folder and the two trees are measured alternately, ``--rounds``
times each (the machine is shared: ratios within a run, not absolute seconds, are the
result). ``--speed`` then times MCMC sweeps in the same processes (CPU ms per sweep of one
chain, N = 100, D = 10, m = 50, N-space and leaf-space likelihood, best of 3 x 300 sweeps),
so that a change's run-time cost is read beside its compile time. Prints per-run totals,
the median ratio, and the longest kernels of the last run of this tree; appends the totals
to ``<out>/compile_time.csv``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
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

    stack, own, total, first_call = [], {{}}, [0.0], {{}}

    def name_of(ev):
        f = getattr((ev.data or {{}}).get("dispatcher"), "py_func", None)
        return f"{{getattr(f, '__module__', '?')}}.{{getattr(f, '__qualname__', '?')}}"

    class Record(event.Listener):
        def on_start(self, ev):
            now = time.thread_time()
            if stack:
                stack[-1][1] += now - stack[-1][2]
            stack.append([name_of(ev), 0.0, now])

        def on_end(self, ev):
            now = time.thread_time()
            name, spent, since = stack.pop()
            spent += now - since
            n, s = own.get(name, (0, 0.0))
            own[name] = (n + 1, s + spent)
            total[0] += spent
            if stack:
                stack[-1][2] = now

    event.register("numba:compile", Record())
    import bofire.strategies.api as strategies
    from bofire_bark.data_models import BARKSettings, BARKStrategy
    from bofire_bark.warmup import _domains

    domain = _domains()["constrained"]
    fast = BARKSettings(n_trees=5, n_chains=1, n_samples=2, thinning=2, burn_in=10)
    strategy = strategies.map(BARKStrategy(domain=domain, surrogate_specs=fast, seed=0,
                                           time_limit=2.0))
    X = domain.inputs.sample(8, seed=0)
    X["y"] = np.random.default_rng(0).normal(size=len(X))
    X["valid_y"] = 1
    t0 = time.perf_counter()
    strategy.tell(X)
    t_tell = time.perf_counter() - t0
    tell_compile = total[0]
    t_ask = float("nan")
    if {ask!r}:
        t0 = time.perf_counter()
        strategy.ask(1)
        t_ask = time.perf_counter() - t0
    compiled = total[0]  # before the sweeps' timing, which may compile leaf-space kernels
    sweep_ms = {{}}
    if {speed!r}:
        from bofire_bark.engine import Chain, MCMCSettings
        from bofire_bark.engine.forest import split_variables
        from bofire_bark.engine.rng import seed_states
        gen = np.random.default_rng(1)
        D, N = 10, 100
        Xs = gen.uniform(size=(N, D))
        ys = np.sin(6 * Xs[:, 0]) + Xs[:, 1] + 0.1 * gen.normal(size=N)
        space = split_variables(np.zeros(D, dtype=np.int64), np.zeros(D), np.ones(D),
                                np.zeros(D, dtype=np.int64))
        for form in ("n", "leaf"):
            chain = Chain(space, MCMCSettings(likelihood=form), seed_states(0, 1)[0])
            chain.set_data(Xs, (ys - ys.mean()) / ys.std())
            chain.run(300)
            best = np.inf
            for _ in range(3):
                t0 = time.thread_time()
                chain.run(300)
                best = min(best, (time.thread_time() - t0) / 300 * 1e3)
            sweep_ms[form] = best
    print("RESULT" + json.dumps({{"tell_s": t_tell, "ask_s": t_ask, "tell_compile_s": tell_compile,
                                 "compile_s": compiled, "kernels": own, "sweep_ms": sweep_ms}}))
"""


def measure(source: Path, ask: bool, speed: bool) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(source)}
        code = textwrap.dedent(PROCESS.format(ask=ask, speed=speed))
        out = subprocess.run([sys.executable, "-c", code],
                             capture_output=True, text=True, env=env, cwd=source, timeout=3600)
    line = next((s for s in out.stdout.splitlines() if s.startswith("RESULT")), None)
    if line is None:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(line[len("RESULT"):])


def export(ref: str, folder: Path) -> None:
    """The package and benchmarks of ``ref`` in ``folder`` (no worktree, no caches)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "bofire_bark",
                              "benchmarks"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", default=None, help="git ref to compare with")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--ask", action="store_true", help="also time the first ask")
    parser.add_argument("--label", default="", help="a note for the rows of this run")
    parser.add_argument("--speed", action="store_true",
                        help="also time MCMC sweeps (CPU ms; N = 100, D = 10, m = 50)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--out", type=Path, default=REPO / "results" / "first_use")
    args = parser.parse_args(argv)
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                 "bofire_bark"], capture_output=True, text=True).stdout)
    this = head + ("+" if dirty else "")
    rows, last = [], None
    with tempfile.TemporaryDirectory() as tmp:
        trees = [(this, REPO)]
        if args.against:
            export(args.against, Path(tmp))
            trees.append((args.against, Path(tmp)))
        for round_ in range(args.rounds):
            for label, source in (trees if round_ % 2 == 0 else trees[::-1]):
                r = measure(source, args.ask, args.speed)
                sigs = sum(n for n, _ in r["kernels"].values())
                rows.append({"tree": label, "label": args.label, "round": round_,
                             "tell_s": r["tell_s"], "ask_s": r["ask_s"],
                             "tell_compile_s": r["tell_compile_s"],
                             "compile_s": r["compile_s"], "signatures": sigs,
                             "sweep_ms_n": r["sweep_ms"].get("n", math.nan),
                             "sweep_ms_leaf": r["sweep_ms"].get("leaf", math.nan)})
                print(f"{label:>12} round {round_}: tell {r['tell_s']:.1f} s "
                      f"(compile {r['tell_compile_s']:.1f} s), ask {r['ask_s']:.1f} s, "
                      f"compile {r['compile_s']:.1f} s in {sigs} signatures"
                      + "".join(f", {k} sweep {v:.3f} ms" for k, v in r["sweep_ms"].items()),
                      flush=True)
                if source == REPO:
                    last = r
    frame = pd.DataFrame(rows)
    if args.against:
        keys = ["tell_compile_s", "compile_s"] + (["sweep_ms_n", "sweep_ms_leaf"] if args.speed
                                                  else [])
        for key in keys:
            a = frame[frame.tree == this][key].to_numpy()
            b = frame[frame.tree == args.against][key].to_numpy()
            ratio = statistics.median(a / b)
            print(f"{key}: {this} / {args.against} = {ratio:.3f} (median of {len(a)} pairs)")
    print(f"longest kernels of {this} (own compile time, callees' compiles left out):")
    for name, (n, s) in sorted(last["kernels"].items(), key=lambda kv: -kv[1][1])[:args.top]:
        print(f"  {s:6.1f} s  {n:2d} sig  {name}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "compile_time.csv"
    frame.to_csv(path, mode="a", header=not path.exists(), index=False)


if __name__ == "__main__":
    main()
