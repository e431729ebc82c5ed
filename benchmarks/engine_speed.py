"""Speed of the BARK engine: JIT compile time, ms per MCMC sweep, and a full-Cholesky baseline.

A benchmark, not a test: it prints numbers and checks them against the targets below.

    python -m benchmarks.engine_speed            # full run (a few minutes)
    python -m benchmarks.engine_speed --quick    # smoke run, N = 40 and 100 only

What is measured:

1. JIT compile time of the engine, in subprocesses sharing a fresh ``NUMBA_CACHE_DIR``: the
   first compiles everything (cold), the second loads the cache. Each imports the engine and
   runs one tiny ``fit_posterior``.
2. ms per sweep (m = 50 trees, one proposal per tree plus a noise step) of one chain after a
   burn-in, for the N-space ("n") and leaf-space ("leaf") likelihood forms and the "auto"
   choice, D = 10 continuous features in [0, 1].
3. The same with 4 chains advanced together in threads: wall time per sweep (every chain
   advances one sweep in that time) and the throughput speed-up over one chain.
4. A baseline in the same run: a sweep that recomputes the likelihood from scratch for each
   of the 50 tree proposals (K* = A*/m + sigma^2 I, Cholesky, forward solve) and once more for
   the noise step, on the shared-leaf counts A of a warmed chain. A proposal is mimicked by a
   random rank-2 change of A: a leaf of the tree is split into two random halves. LAPACK is
   limited to one thread (as the engine uses one core per chain).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit

from bofire_bark.engine.rng import normal, randint, uniform

D = 10
M_TREES = 50
FORMS = ("n", "leaf", "auto")
TARGETS_MS = {100: 0.3, 400: 0.5, 1000: 1.0}  # ms per sweep per chain
TARGET_JIT_CACHED_S = 5.0

# --------------------------------------------------------------------------- machine info


def n_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_avg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    libs = threadpool_info()
    return (
        "; ".join(
            f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} thr)" for i in libs
        )
        or "none loaded"
    )


def print_machine_info() -> None:
    print("== machine")
    print(f"nproc (affinity) : {n_cpus()}   (os.cpu_count: {os.cpu_count()})")
    print(f"CPU              : {cpu_model()}")
    print(f"python           : {platform.python_version()}  ({platform.platform()})")
    print(f"numpy / numba    : {np.__version__} / {numba.__version__}")
    print(f"numba threading  : NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}")
    print(f"load average     : {load_avg()}  (other processes share these CPUs)")
    print()


# --------------------------------------------------------------------------------- data


def make_data(n: int, d: int = D, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """X uniform in [0, 1]^d; y smooth + step + noise, standardized."""
    from bofire_bark.engine import standardize

    gen = np.random.default_rng(seed + 1000 * n)
    X = gen.random((n, d))
    f = (
        np.sin(2.0 * np.pi * X[:, 0])
        + 0.5 * (X[:, 1] - 0.5) ** 2 * 4.0
        + 1.0 * (X[:, 2] > 0.5)
        - 0.5 * (X[:, 3] > 0.3) * X[:, 4]
    )
    y = f + 0.1 * gen.standard_normal(n)
    ys, _, _ = standardize(y)
    return X, ys


def make_space(d: int = D):
    return (np.zeros(d, dtype=np.int64), np.zeros(d), np.ones(d), np.zeros(d, dtype=np.int64))


# ----------------------------------------------------------------------------- JIT time

_JIT_SNIPPET = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
from bofire_bark.engine import fit_posterior
t1 = time.perf_counter()
d = 3
space = (np.zeros(d, dtype=np.int64), np.zeros(d), np.ones(d), np.zeros(d, dtype=np.int64))
gen = np.random.default_rng(0)
X = gen.random((8, d))
y = X[:, 0] + 0.1 * gen.standard_normal(8)
post = fit_posterior(X, y, space, n_chains=1, n_samples=1, thinning=2, burn_in=2, seed=0)
t2 = time.perf_counter()
post.predict(X[:3])
t3 = time.perf_counter()
print("JIT_RESULT " + json.dumps({"import": t1 - t0, "fit": t2 - t1, "predict": t3 - t2}))
"""


def _jit_subprocess(cache_dir: str | None) -> dict[str, float]:
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _JIT_SNIPPET], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"JIT subprocess failed:\n{proc.stderr}")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("JIT_RESULT "))
    out = json.loads(line[len("JIT_RESULT ") :])
    out["wall"] = wall
    return out


def measure_jit(cold: bool) -> dict[str, dict[str, float]]:
    """Cold and cached compile times (cold=False: only from the package's default cache)."""
    results = {}
    if cold:
        with tempfile.TemporaryDirectory(prefix="bark_numba_cache_") as cache:
            results["cold (empty cache)"] = _jit_subprocess(cache)
            results["from cache"] = _jit_subprocess(cache)
    else:
        results["from cache (default dir)"] = _jit_subprocess(None)
    return results


def print_jit(results: dict[str, dict[str, float]]) -> float:
    print("== JIT compile time (subprocess: import engine + tiny fit_posterior [+ predict])")
    print(
        f"{'':26s} {'import s':>9s} {'fit s':>8s} {'import+fit':>11s} {'predict s':>10s}"
        f" {'process wall s':>15s}"
    )
    cached = math.nan
    for name, r in results.items():
        tot = r["import"] + r["fit"]
        print(
            f"{name:26s} {r['import']:9.2f} {r['fit']:8.2f} {tot:11.2f} {r['predict']:10.2f}"
            f" {r['wall']:15.2f}"
        )
        if name.startswith("from cache"):
            cached = tot
    print()
    return cached


# ------------------------------------------------------------------------ chain timing


def _run_budgeted(chain, n_sweeps: int, budget_s: float, max_chunk: int = 50) -> tuple[int, float]:
    """Run up to n_sweeps sweeps, stopping once budget_s is spent; (sweeps, seconds).

    Chunks start at one sweep and grow to about a quarter of the remaining budget, so slow
    configurations overshoot the budget by little.
    """
    done = 0
    t0 = time.perf_counter()
    k = 1
    while done < n_sweeps:
        chain.run(k)
        done += k
        elapsed = time.perf_counter() - t0
        left = budget_s - elapsed
        if left <= 0.0:
            break
        k = int(max(1, min(max_chunk, n_sweeps - done, 0.25 * left * done / elapsed)))
    return done, time.perf_counter() - t0


def n_leaves(chain) -> int:
    from bofire_bark.engine.forest import LEAF

    return int((chain.forest["feat"] == LEAF).sum())


def time_single(X, y, form: str, burn: int, sweeps: int, repeats: int, budget_s: float):
    """Warm one chain, then time ``repeats`` x ``k`` sweeps; returns (ms/sweep, k, chain)."""
    from bofire_bark.engine import Chain, MCMCSettings
    from bofire_bark.engine.rng import seed_states

    chain = Chain(make_space(X.shape[1]), MCMCSettings(likelihood=form, split_prior="uniform"),
                  seed_states(0, 1)[0])
    chain.set_data(X, y)
    done, secs = _run_budgeted(chain, burn, 2.0 * budget_s)
    est = secs / max(done, 1)
    k = int(max(3, min(sweeps, budget_s / repeats / max(est, 1e-9))))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        chain.run(k)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times) / k, k, chain, done


def time_parallel(X, y, form: str, burn: int, k: int, repeats: int, n_chains: int, budget_s: float):
    """Warm n_chains chains (in threads), then time them advancing k sweeps each in threads.

    Returns wall ms per sweep (all chains advance one sweep in that time).
    """
    from bofire_bark.engine import Chain, MCMCSettings
    from bofire_bark.engine.rng import seed_states

    space = make_space(X.shape[1])
    settings = MCMCSettings(likelihood=form, split_prior="uniform")
    chains = [Chain(space, settings, st) for st in seed_states(0, n_chains)]
    for c in chains:
        c.set_data(X, y)
    with ThreadPoolExecutor(max_workers=n_chains) as pool:
        list(pool.map(lambda c: _run_budgeted(c, burn, 2.0 * budget_s), chains))
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            list(pool.map(lambda c: c.run(k), chains))
            times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times) / k


# ------------------------------------------------------------------ full-Cholesky baseline


@njit(cache=True, nogil=True)
def _full_loglik(A, pert_a, na, pert_b, nb, y, m, sigma2, K, z):
    """log N(y; 0, K) for K = (A - (1a 1b^T + 1b 1a^T)) / m + sigma2 I by Cholesky."""
    n = A.shape[0]
    for i in range(n):
        for k in range(n):
            K[i, k] = A[i, k]
    for ia in range(na):
        i = pert_a[ia]
        for ib in range(nb):
            k = pert_b[ib]
            K[i, k] -= 1.0
            K[k, i] -= 1.0
    inv_m = 1.0 / m
    for i in range(n):
        for k in range(n):
            K[i, k] *= inv_m
        K[i, i] += sigma2
    L = np.linalg.cholesky(K)
    logdet = 0.0
    quad = 0.0
    for i in range(n):
        logdet += 2.0 * math.log(L[i, i])
        s = y[i]
        for k in range(i):
            s -= L[i, k] * z[k]
        z[i] = s / L[i, i]
        quad += z[i] * z[i]
    return -0.5 * (quad + logdet)


@njit(cache=True, nogil=True)
def baseline_sweeps(n_sweeps, A, leaf_of, y, sigma2, state):
    """Sweeps that refactor K from scratch per proposal: m tree proposals + one noise step.

    Each tree proposal splits the leaf of a random point into two random halves (a rank-2
    change of A) and evaluates the likelihood by a full Cholesky; the noise proposal refactors
    once more with a perturbed sigma^2. Proposals are accepted at random without changing A
    (the cost of an accept, O(N^2), is dominated by the O(N^3) factorization anyway).
    """
    m, n = leaf_of.shape
    K = np.empty((n, n))
    z = np.empty(n)
    pa = np.empty(n, dtype=np.int64)
    pb = np.empty(n, dtype=np.int64)
    ll_cur = _full_loglik(A, pa, 0, pb, 0, y, m, sigma2, K, z)
    acc = 0
    for _ in range(n_sweeps):
        for t in range(m):
            leaf = leaf_of[t, randint(state, n)]
            na = 0
            nb = 0
            for i in range(n):
                if leaf_of[t, i] == leaf:
                    if uniform(state) < 0.5:
                        pa[na] = i
                        na += 1
                    else:
                        pb[nb] = i
                        nb += 1
            ll = _full_loglik(A, pa, na, pb, nb, y, m, sigma2, K, z)
            if math.log(uniform(state)) < ll - ll_cur:
                acc += 1
        s2 = sigma2 * math.exp(0.1 * normal(state))
        ll = _full_loglik(A, pa, 0, pb, 0, y, m, s2, K, z)
        if math.log(uniform(state)) < ll - ll_cur:
            acc += 1
    return acc


def time_baseline(chain, y, repeats: int, budget_s: float) -> tuple[float, int]:
    """ms per baseline sweep on the counts of a warmed chain (LAPACK limited to 1 thread)."""
    from bofire_bark.engine.rng import seed_states
    from bofire_bark.engine.sampler import shared_leaf_counts

    state = seed_states(1, 1)[0]

    leaf_of = np.ascontiguousarray(chain.leaf_of)
    A = shared_leaf_counts(leaf_of)
    sigma2 = float(chain.sigma2[0])
    try:
        from threadpoolctl import threadpool_limits

        one_thread = threadpool_limits(limits=1)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scipy's usual stacks
        one_thread = contextlib.nullcontext()
    baseline_sweeps(1, A[:4, :4].copy(), leaf_of[:, :4].copy(), y[:4].copy(), 1.0, state)  # JIT
    with one_thread:
        t0 = time.perf_counter()
        baseline_sweeps(1, A, leaf_of, y, sigma2, state)
        est = time.perf_counter() - t0
        k = int(max(1, min(50, budget_s / repeats / max(est, 1e-9))))
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            baseline_sweeps(k, A, leaf_of, y, sigma2, state)
            times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times) / k, k


# -------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: fewer sweeps, N = 40 and 100, JIT from default cache",
    )
    parser.add_argument("--no-jit", action="store_true", help="skip the JIT subprocesses")
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS/LAPACK threads (threadpoolctl) while timing the engine;"
        " default: leave the library default",
    )
    args = parser.parse_args(argv)

    quick = args.quick
    sizes = [40, 100] if quick else [40, 100, 400, 1000]
    burn = 100 if quick else 300
    sweeps = 100 if quick else 300
    repeats = 3
    budget = 0.6 if quick else 4.0  # seconds for all timed repeats of one configuration
    n_par = 4

    print_machine_info()

    cached_jit = math.nan
    if not args.no_jit:
        # the default-cache measurement needs a populated cache: warm it in this process first
        t0 = time.perf_counter()
        if quick:
            warm_engine()
        jit = measure_jit(cold=not quick)
        cached_jit = print_jit(jit)
        if quick:
            print(
                f"(--quick: no cold compile; warm-up in this process took "
                f"{time.perf_counter() - t0:.1f} s)\n"
            )

    warm_engine()
    with blas_limit(args.blas_threads):
        rows = time_all(sizes, burn, sweeps, repeats, budget, n_par)
    report(rows, n_par, cached_jit)
    return 0


def blas_limit(n_threads: int | None):
    if n_threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=n_threads)


def time_all(sizes, burn, sweeps, repeats, budget, n_par) -> list[dict]:
    print(f"BLAS while timing the engine: {blas_info()}")
    print(f"load average before timing: {load_avg()}\n")

    from bofire_bark.engine.sampler import choose_mode

    mode_names = {1: "n", 2: "leaf"}
    rows = []
    print("== sweep timing (D = 10, m = 50; medians of 3 repeats) ... running")
    for n in sizes:
        X, y = make_data(n)
        base_ms = None
        for form in FORMS:
            label = form
            if form == "auto":
                label = f"auto={mode_names.get(choose_mode('auto', n, M_TREES), '?')}"
            slow = form == "n" and n >= 1000
            b = 30 if slow else burn
            s = 20 if slow else sweeps
            ms1, k, chain, burned = time_single(X, y, form, b, s, repeats, budget)
            msp = time_parallel(X, y, form, burned, k, repeats, n_par, budget)
            if base_ms is None:
                base_ms, base_k = time_baseline(chain, y, repeats, budget)
            leaves = n_leaves(chain)
            rows.append(
                dict(
                    N=n,
                    form=label,
                    ms1=ms1,
                    k=k,
                    burn=burned,
                    msp=msp,
                    speedup=n_par * ms1 / msp,
                    base=base_ms,
                    base_k=base_k,
                    ratio=base_ms / ms1,
                    leaves=leaves,
                )
            )
            print(
                f"  N={n:5d} {label:9s} {ms1:8.3f} ms/sweep  (burn {burned}, timed {k}x3, "
                f"{leaves} leaves)  4 chains {msp:8.3f} ms/sweep",
                flush=True,
            )
    print(f"load average after timing: {load_avg()}\n")
    return rows


def report(rows: list[dict], n_par: int, cached_jit: float) -> None:
    print(f"== results  (ms per sweep; 4 chains run in threads on {n_cpus()} CPU(s))")
    hdr = (
        f"{'N':>5s} {'form':9s} {'leaves':>6s} {'sweeps':>6s} {'1 chain':>9s} "
        f"{'4ch/chain':>9s} {'4ch thru':>9s} {'speedup':>7s} {'full-Chol':>10s} "
        f"{'ratio':>8s}"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(
            f"{r['N']:5d} {r['form']:9s} {r['leaves']:6d} {r['k']:6d} {r['ms1']:9.3f} "
            f"{r['msp']:9.3f} {r['msp'] / n_par:9.3f} {r['speedup']:6.2f}x "
            f"{r['base']:10.2f} {r['ratio']:7.1f}x"
        )
    print(
        "columns: 'sweeps' = sweeps per timed repeat; '1 chain' = ms/sweep of one chain;\n"
        "  '4ch/chain' = ms/sweep/chain with 4 chains in threads = wall / sweeps (each chain\n"
        "  advances one sweep in that time); '4ch thru' = 4ch/chain / 4 (wall ms per\n"
        "  chain-sweep); speedup = 4 x (1 chain) / (4ch/chain), the throughput gain;\n"
        "  full-Chol = baseline ms/sweep (51 Cholesky factorizations, 1 BLAS thread);\n"
        "  ratio = full-Chol / (1 chain)."
    )
    print()

    print("== targets (per chain = one chain's ms/sweep, with the 'auto' likelihood form)")
    for n, target in TARGETS_MS.items():
        match = [r for r in rows if r["N"] == n and r["form"].startswith("auto")]
        if not match:
            print(f"N={n:5d}: < {target} ms/sweep   (not run)")
            continue
        r = match[0]
        ok = "PASS" if r["ms1"] < target else "MISS"
        ok4 = "PASS" if r["msp"] < target else "MISS"
        print(
            f"N={n:5d}: < {target} ms/sweep   1 chain {r['ms1']:.3f} ms {ok}   "
            f"(4 chains {r['msp']:.3f} ms/sweep/chain {ok4} on {n_cpus()} CPU(s))"
        )
    if math.isnan(cached_jit):
        print(f"JIT from cache: < {TARGET_JIT_CACHED_S} s   (not run)")
    else:
        ok = "PASS" if cached_jit < TARGET_JIT_CACHED_S else "MISS"
        print(f"JIT from cache: < {TARGET_JIT_CACHED_S} s   import+fit {cached_jit:.2f} s {ok}")


def warm_engine() -> None:
    """Compile (or load) the engine and the baseline in this process before timing."""
    from bofire_bark.engine import MCMCSettings, fit_posterior
    from bofire_bark.engine.rng import seed_states

    X, y = make_data(8)
    space = make_space()
    for form in ("n", "leaf"):
        fit_posterior(
            X,
            y,
            space,
            MCMCSettings(likelihood=form, split_prior="uniform"),
            n_chains=1,
            n_samples=1,
            thinning=2,
            burn_in=2,
            seed=0,
        )
    A = np.eye(4)
    state = seed_states(0, 1)[0]
    baseline_sweeps(1, A, np.zeros((2, 4), dtype=np.int64), np.zeros(4), 1.0, state)


if __name__ == "__main__":
    sys.exit(main())
