"""Behaviour check of the optimizer refactor (issue 24): candidates, ask time and boxes per
second on the 60 posteriors of ``results/acquisition``, old commit against this one.

    # 1. the 60 posteriors (fitted once, pickled; needs the study code of either tree)
    PYTHONPATH=<tree> python results/refactor/compare.py cases --cache DIR
    # 2. one pass of optimize_acquisition (the work of ask(1) after the fit) per case
    PYTHONPATH=<tree> python results/refactor/compare.py run --cache DIR --out FILE.json
    # 3. old and new alternated case by case in two worker processes, in one run (the
    #    timing ratio under the same load; also the candidates)
    python results/refactor/compare.py alternate --cache DIR --old /work/wt-old \
        --new /work/wt-opt --out DIR/alternate.json
    python results/refactor/compare.py report OLD.json NEW.json [--alternate FILE]

Each ``run`` reads the pickled (domain, space, posterior, sign), calls
``bofire_bark.optimize.optimize_acquisition`` at the default settings (seed 0) and records the
candidate, its UCB, the bound, status, boxes, wall time and boxes per second.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path


def cmd_cases(args) -> None:
    try:  # the study lab left the package after this check was made (benchmarks/)
        from benchmarks.acq_cases import case_names, make_case
    except ImportError:
        from bofire_bark.benchmarks.acq_cases import case_names, make_case

    out = Path(args.cache)
    out.mkdir(parents=True, exist_ok=True)
    for name in case_names():
        path = out / (name.replace(":", "_") + ".pkl")
        if path.exists():
            continue
        t0 = time.perf_counter()
        c = make_case(name, cache=False)
        path.write_bytes(pickle.dumps((c.name, c.domain, c.space, c.posterior, c.sign)))
        print(f"{name} {time.perf_counter() - t0:.1f}s", flush=True)


def _one(path: Path, time_limit: float | None) -> dict:
    import numpy as np

    from bofire_bark.optimize import optimize_acquisition

    name, domain, space, posterior, sign = pickle.loads(path.read_bytes())  # our own cache
    kw = {} if time_limit is None else {"time_limit": time_limit}
    t0 = time.perf_counter()
    r = optimize_acquisition(posterior, domain, space, sign=sign, seed=0, **kw)
    wall = time.perf_counter() - t0
    return {"case": name, "x": np.asarray(r.x, dtype=float).tolist(), "ucb": r.ucb,
            "bound": r.bound, "status": r.status, "source": r.source, "nodes": r.nodes,
            "wall_s": wall, "search_s": r.solve_time,
            "boxes_per_s": r.nodes / r.solve_time if r.solve_time > 0 else None}


def _paths(cache: str, only: str | None) -> list[Path]:
    paths = sorted(Path(cache).glob("*.pkl"))
    return [p for p in paths if only is None or only in p.name]


def cmd_run(args) -> None:
    import bofire_bark

    print("importing", bofire_bark.__file__, file=sys.stderr)
    # first call compiles or loads the kernels: warm up on one case, not timed
    _one(_paths(args.cache, None)[0], 0.2)
    rows = [_one(p, args.time_limit) for p in _paths(args.cache, args.only)]
    Path(args.out).write_text(json.dumps(rows, indent=1))


def cmd_serve(args) -> None:
    """A worker: warm up, then one case file name per stdin line, one JSON row per line out."""
    import bofire_bark

    print("importing", bofire_bark.__file__, file=sys.stderr, flush=True)
    _one(_paths(args.cache, None)[0], 0.2)  # compiles or loads the kernels, not timed
    print("ready", flush=True)
    for line in sys.stdin:
        row = _one(Path(args.cache) / line.strip(), args.time_limit)
        print(json.dumps(row), flush=True)


def cmd_alternate(args) -> None:
    """Old and new in two worker processes, one case at a time in turn (old first on even
    cases, new first on odd), so both meet the same machine load; only one works at a time."""
    workers = {}
    for tag in ("old", "new"):
        env = {**os.environ, "PYTHONPATH": getattr(args, tag)}
        cmd = [sys.executable, __file__, "serve", "--cache", args.cache]
        if args.time_limit is not None:
            cmd += ["--time-limit", str(args.time_limit)]
        workers[tag] = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env, cwd=getattr(args, tag))
        assert workers[tag].stdout.readline().strip() == "ready"
    rows = {"old": [], "new": []}
    try:
        for i, p in enumerate(_paths(args.cache, args.only)):
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            for tag in order:
                w = workers[tag]
                w.stdin.write(p.name + "\n")
                w.stdin.flush()
                rows[tag].append(json.loads(w.stdout.readline()))
            print(p.name, *(f"{t} {rows[t][-1]['wall_s']:.2f}s "
                            f"{rows[t][-1]['boxes_per_s'] or 0:.0f}/s" for t in ("old", "new")),
                  flush=True)
    finally:
        for w in workers.values():
            w.stdin.close()
            w.wait()
    Path(args.out).write_text(json.dumps(rows, indent=1))


def _compare(old: list, new: list) -> None:
    import numpy as np

    o = {r["case"]: r for r in old}
    n = {r["case"]: r for r in new}
    same_x = same_all = 0
    done_same = done_n = 0
    diffs = []
    for c in sorted(o):
        a, b = o[c], n[c]
        sx = np.allclose(a["x"], b["x"], rtol=0, atol=1e-12)
        same_x += sx
        exact = sx and a["ucb"] == b["ucb"] and a["status"] == b["status"]
        same_all += exact and a["bound"] == b["bound"] and a["nodes"] == b["nodes"]
        if a["status"] != "time_limit" and b["status"] != "time_limit":
            done_n += 1
            done_same += exact and a["bound"] == b["bound"] and a["nodes"] == b["nodes"]
        if not sx:
            diffs.append((c, a["status"], b["status"], a["ucb"], b["ucb"]))
    print(f"cases {len(o)}: same candidate x {same_x}, same x/ucb/status/bound/boxes {same_all}")
    print(f"cases closed by the gap in both runs: {done_n}, identical in every field {done_same}")
    for d in diffs:
        print("  differs:", d)


def _ratios(rows: dict) -> None:
    import numpy as np

    old, new = rows["old"], rows["new"]
    wall = np.array([b["wall_s"] / a["wall_s"] for a, b in zip(old, new, strict=True)])
    bps = np.array([b["boxes_per_s"] / a["boxes_per_s"] for a, b in zip(old, new, strict=True)
                    if a["boxes_per_s"] and b["boxes_per_s"]])
    gm = lambda v: float(np.exp(np.mean(np.log(v))))  # noqa: E731
    print(f"ask wall new/old: geometric mean {gm(wall):.3f}, median {np.median(wall):.3f}, "
          f"[{np.min(wall):.2f}, {np.max(wall):.2f}] over {len(wall)} cases")
    print(f"boxes/s new/old: geometric mean {gm(bps):.3f}, median {np.median(bps):.3f}, "
          f"[{np.min(bps):.2f}, {np.max(bps):.2f}] over {len(bps)} cases")
    print(f"total wall old {sum(r['wall_s'] for r in old):.1f}s new "
          f"{sum(r['wall_s'] for r in new):.1f}s")


def cmd_report(args) -> None:
    if args.old and args.new:
        print("== separate runs (candidates) ==")
        _compare(json.loads(Path(args.old).read_text()), json.loads(Path(args.new).read_text()))
    if args.alternate:
        rows = json.loads(Path(args.alternate).read_text())
        print("== alternated run (candidates) ==")
        _compare(rows["old"], rows["new"])
        print("== alternated run (timing) ==")
        _ratios(rows)


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--cache", required=True)
    r = sub.add_parser("run")
    r.add_argument("--cache", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--only")
    r.add_argument("--time-limit", type=float)
    a = sub.add_parser("alternate")
    a.add_argument("--cache", required=True)
    a.add_argument("--old", required=True)
    a.add_argument("--new", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--only")
    a.add_argument("--time-limit", type=float)
    w = sub.add_parser("serve")
    w.add_argument("--cache", required=True)
    w.add_argument("--time-limit", type=float)
    q = sub.add_parser("report")
    q.add_argument("old", nargs="?")
    q.add_argument("new", nargs="?")
    q.add_argument("--alternate")
    args = p.parse_args()
    {"cases": cmd_cases, "run": cmd_run, "alternate": cmd_alternate, "serve": cmd_serve,
     "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
