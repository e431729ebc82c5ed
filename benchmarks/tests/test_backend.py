"""A study's runs go to the joblib backend its command names: on a local Dask cluster the BO
study writes the same runs as on loky (``--backend dask``), and Ray says how to get it."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from benchmarks import _common, bo

pytest.importorskip("dask.distributed")

# one benchmark, two seeds, the random method: seconds per run, so the test times the backend
TINY = ["--small", "--benchmarks", "DiscreteAckley", "--methods", "Random", "--seeds", "2"]
TIMES = ["fit_time", "acq_time"]  # wall times differ between any two runs


def _runs(out) -> dict[str, pd.DataFrame]:
    found = sorted((out / "runs_small" / "DiscreteAckley" / "Random").glob("seed*.csv"))
    return {p.name: bo.read_run(p).drop(columns=TIMES) for p in found}


def test_a_local_dask_cluster_writes_the_runs_loky_writes(tmp_path):
    bo.main([*TINY, "--out-dir", str(tmp_path / "loky"), "--n-jobs", "2"])  # 2 processes
    # the default path of --backend dask: a LocalCluster of 2 worker processes, closed after
    bo.main([*TINY, "--out-dir", str(tmp_path / "dask"), "--backend", "dask", "--n-jobs", "2"])
    loky, dask = _runs(tmp_path / "loky"), _runs(tmp_path / "dask")
    assert sorted(loky) == ["seed0.csv", "seed1.csv"] == sorted(dask)
    for name in loky:
        assert loky[name]["iteration"].max() == bo.small_config(tmp_path).n_iterations
        pd.testing.assert_frame_equal(loky[name], dask[name])


def test_an_existing_dask_scheduler_takes_the_runs(tmp_path):
    from dask.distributed import Client, LocalCluster, get_task_stream

    # threads: quick to start; the scheduler's task stream shows the runs went through it
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        with get_task_stream(client) as stream:
            bo.main([*TINY, "--out-dir", str(tmp_path), "--backend", "dask",
                     "--scheduler", cluster.scheduler_address])
    assert len(stream.data) >= 1
    assert sorted(_runs(tmp_path)) == ["seed0.csv", "seed1.csv"]


def test_ray_is_optional_and_named_when_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(SystemExit, match="pip install 'ray"):
        with _common.joblib_backend("ray"):
            pass


def test_unknown_backends_are_refused():
    with pytest.raises(ValueError, match="loky"):
        with _common.joblib_backend("spark"):
            pass
