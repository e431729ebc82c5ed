"""What the studies share: where the repository and the shared data are, the code a result was
made with, how a study publishes a table (written beside its data and printed), and where its
runs go (``--backend loky|dask|ray``: this machine's processes, or a Dask or Ray cluster)."""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
from pathlib import Path

# the lab runs from a checkout, not an install: results/ is beside this folder, the shared data
# sets beside the repository
REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def code_version(paths) -> str:
    """HEAD's short hash, plus a digest of uncommitted changes under ``paths`` if any (other
    work may edit the code while a study runs; the digest tells such runs apart)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout.strip()
        diff = subprocess.run(["git", "diff", "HEAD", "--", *paths], cwd=REPO,
                              check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+wip:{hashlib.sha1(diff).hexdigest()[:8]}" if diff else head


def publish(path: Path | str, text: str) -> str:
    """Write ``text`` to ``path`` with one final newline (as the committed tables end), making
    its folder if needed, print it, and return what was written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = text.rstrip("\n") + "\n"
    path.write_text(text)
    print(text, end="", flush=True)
    return text


# --------------------------------------------------------------------------------------------
# Where the runs go: a joblib backend
# --------------------------------------------------------------------------------------------

BACKENDS = ("loky", "dask", "ray")


def add_backend_arguments(parser) -> None:
    """``--n-jobs``, ``--backend`` and ``--scheduler`` of a study whose runs are joblib jobs."""
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="runs at the same time (joblib); default 1 with loky, every "
                        "worker with dask or ray; with dask and no --scheduler, the local "
                        "cluster's number of workers")
    parser.add_argument("--backend", choices=BACKENDS, default="loky",
                        help="loky: processes on this machine; dask: a Dask cluster "
                        "(--scheduler, else a local one); ray: a Ray cluster (--scheduler, "
                        "else a local one; needs ray installed). A remote cluster's workers "
                        "must import this checkout and write to its results folder")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="the Dask scheduler (tcp://host:8786) or Ray cluster address")


@contextlib.contextmanager
def joblib_backend(name: str = "loky", scheduler: str | None = None,
                   n_workers: int | None = None, processes: bool = True):
    """Send the ``joblib.Parallel`` calls inside the block to ``name``'s workers.

    ``loky`` is joblib's default (nothing changes). ``dask`` connects to ``scheduler``, or
    starts a ``LocalCluster`` of ``n_workers`` single-threaded workers (processes, or threads
    with ``processes=False``) on the loopback interface and closes it afterwards. ``ray`` joins
    the Ray cluster at ``scheduler`` or starts a local one. Dask and Ray are imported only here,
    so the lab runs without them.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose from {BACKENDS}")
    if name == "loky":
        yield
        return
    from joblib import parallel_config

    if name == "dask":
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError as err:
            raise SystemExit("--backend dask needs dask.distributed: "
                             "pip install -e '.[lab]' (or 'dask[distributed]')") from err
        with contextlib.ExitStack() as stack:
            if scheduler is None:
                # non-daemonic workers: mo.py runs each run in a child process of its own
                stack.enter_context(dask.config.set({"distributed.worker.daemon": False}))
                cluster = stack.enter_context(LocalCluster(
                    n_workers=n_workers, threads_per_worker=1, processes=processes,
                    host="127.0.0.1", dashboard_address=None))
                client = stack.enter_context(Client(cluster))
            else:
                client = stack.enter_context(Client(scheduler))
            with parallel_config(backend="dask"):
                yield client
        return
    try:
        import ray
        from ray.util.joblib import register_ray
    except ImportError as err:
        raise SystemExit("--backend ray needs Ray, which the lab does not install: "
                         "pip install 'ray[default]'") from err
    register_ray()
    started = not ray.is_initialized()
    if started:
        ray.init(address=scheduler)
    try:
        with parallel_config(backend="ray"):
            yield None
    finally:
        if started:
            ray.shutdown()


@contextlib.contextmanager
def study_backend(args):
    """``joblib_backend`` from a study's arguments (``add_backend_arguments``); yields the
    ``n_jobs`` to give ``joblib.Parallel``."""
    name = getattr(args, "backend", "loky")
    n_jobs = getattr(args, "n_jobs", None)
    workers = n_jobs if n_jobs is not None and n_jobs > 0 else None  # a local cluster's
    with joblib_backend(name, getattr(args, "scheduler", None), n_workers=workers):
        # dask and ray: -1 lets the cluster's workers set how many runs go at once
        yield n_jobs if n_jobs is not None else (1 if name == "loky" else -1)


def markdown_table(frame) -> str:
    """A markdown table (pandas' to_markdown needs tabulate, not a dependency here)."""
    def cell(v):
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    cols = [frame.index.name or ""] + list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for key, row in frame.iterrows():
        lines.append("| " + " | ".join([str(key)] + [cell(v) for v in row]) + " |")
    return "\n".join(lines)
