"""Strategies asking at once in threads of one process; the guards behind it.

Two (and eight) strategies in threads give the candidates of serial runs with the same seeds;
the process-wide BLAS limit the engine sets comes back as it was when threads enter and leave
it out of order; the descriptor table cache stays bounded under threads; one strategy used
from two threads at once is refused. Processes sharing one numba cache: test_properties.py.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import bofire.strategies.api as strategies
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.constraints.api import LinearInequalityConstraint
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MaximizeObjective
from threadpoolctl import threadpool_info

import bofire_bark  # noqa: F401  (registration)
from bofire_bark.data_models import BARKSettings, BARKStrategy
from bofire_bark.engine import blas

TINY = BARKSettings(n_trees=5, n_chains=2, n_samples=2, thinning=2, burn_in=20,
                    max_sampling_sweeps=0)


def blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_blas_limit_comes_back_when_threads_leave_out_of_order():
    """A enters, B enters, A leaves, B leaves: the limit is the original one again (each
    restoring what it found left BLAS at one thread for good)."""
    before = blas_threads()
    if not before or max(before) < 2:
        pytest.skip("BLAS runs one thread here: a lost limit would not show")
    a, b = blas.single_threaded_blas(), blas.single_threaded_blas()
    a.__enter__()
    b.__enter__()
    assert max(blas_threads()) == 1
    a.__exit__(None, None, None)
    assert max(blas_threads()) == 1  # B still runs its small factorizations
    b.__exit__(None, None, None)
    assert blas_threads() == before


# ------------------------------------------------------------ strategies in threads
def small_domain() -> Domain:
    return Domain(
        inputs=Inputs(features=[
            ContinuousInput(key="a", bounds=(0.0, 1.0)),
            ContinuousInput(key="b", bounds=(0.0, 2.0)),
            DiscreteInput(key="d", values=[1.0, 2.0, 4.0]),
            CategoricalInput(key="c", categories=["p", "q", "r"]),
        ]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())]),
        constraints=Constraints(constraints=[
            LinearInequalityConstraint(features=["a", "b"], coefficients=[1.0, 1.0], rhs=2.0)]),
    )


def data(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = small_domain().inputs.sample(8, seed=seed)
    y = X["a"] - (X["b"] - 1) ** 2 + X["c"].map({"p": 0.0, "q": 1.0, "r": 0.3}) \
        + 0.1 * rng.normal(size=len(X))
    return X.assign(y=y, valid_y=1)


def tell_and_ask(seed: int) -> pd.DataFrame:
    """A new strategy with this seed, told data(seed), asked for two candidates."""
    spec = BARKStrategy(domain=small_domain(), seed=seed, surrogate_specs=TINY,
                        time_limit=10.0, n_start_points=200)
    strategy = strategies.map(spec)
    strategy.tell(data(seed))
    return strategy.ask(2)


@pytest.mark.parametrize("n_threads", [2, 8])
def test_strategies_asking_at_once_match_serial_runs(n_threads):
    seeds = list(range(n_threads))
    before = blas_threads()
    serial = [tell_and_ask(s) for s in seeds]
    # each thread a strategy of its own; a barrier so that they really run at once
    barrier = threading.Barrier(n_threads)

    def run(seed):
        barrier.wait()
        return tell_and_ask(seed)

    with ThreadPoolExecutor(n_threads) as pool:
        threaded = list(pool.map(run, seeds))
    for s, t in zip(serial, threaded, strict=True):
        pd.testing.assert_frame_equal(s, t)
    assert blas_threads() == before  # the engine's BLAS limit left nothing behind


# ----------------------------------------------------------- the descriptor table cache
def fake_molecule(i: int):
    from bofire.data_models.features.api import CategoricalMolecularInput

    # model_construct: no RDKit parse; the featurizer is faked below
    return CategoricalMolecularInput.model_construct(key=f"m{i}", categories=["C", "CC", "CCC"],
                                                     allowed=[True, True, True])


@pytest.fixture
def fake_featurizer(monkeypatch):
    from bofire_bark.space import split_space

    calls = []

    def table(feature, encoding):
        calls.append(feature.key)
        return np.arange(3.0)[:, None], ("d",)

    monkeypatch.setattr(split_space, "_TABLES", {})
    monkeypatch.setattr(split_space, "_molecular_table", table)
    return split_space, calls


def test_descriptor_tables_are_cached_and_bounded(fake_featurizer):
    from bofire.data_models.molfeatures.api import Fingerprints

    split_space, calls = fake_featurizer
    split_space.descriptor_table(fake_molecule(0), Fingerprints())
    split_space.descriptor_table(fake_molecule(0), Fingerprints())
    assert calls == ["m0"]  # featurized once
    for i in range(1, 3 * split_space._TABLES_SIZE):
        split_space.descriptor_table(fake_molecule(i), Fingerprints())
    assert len(split_space._TABLES) == split_space._TABLES_SIZE


def test_descriptor_table_cache_under_threads(fake_featurizer, monkeypatch):
    """Eight threads asking for more tables than the cache keeps, switching threads as often
    as the interpreter allows: every answer right, no error, the bound kept."""
    from bofire.data_models.molfeatures.api import Fingerprints

    split_space, _ = fake_featurizer
    monkeypatch.setattr(split_space, "_TABLES_SIZE", 3)  # evictions all the time
    features = [fake_molecule(i) for i in range(8)]
    encoding = Fingerprints()

    def work(k):
        for i in range(3000):
            table, names = split_space.descriptor_table(features[(i * 7 + k) % len(features)],
                                                        encoding)
            assert names == ("d",) and table.shape == (3, 1)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(work, range(8)))
    finally:
        sys.setswitchinterval(interval)
    assert len(split_space._TABLES) <= split_space._TABLES_SIZE


# ------------------------------------------------- one strategy shared between threads
def test_one_strategy_used_from_two_threads_at_once_is_refused(monkeypatch):
    spec = BARKStrategy(domain=small_domain(), seed=0, surrogate_specs=TINY,
                        time_limit=10.0, n_start_points=200)
    strategy = strategies.map(spec)
    strategy.tell(data(0))
    inside, release = threading.Event(), threading.Event()
    solve = strategy._solve

    def held(*args, **kwargs):  # the first thread stays inside ask until released
        inside.set()
        assert release.wait(60)
        return solve(*args, **kwargs)

    monkeypatch.setattr(strategy, "_solve", held)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(strategy.ask, 1)
        assert inside.wait(120)
        with pytest.raises(RuntimeError, match="in use by another thread.*its own"):
            strategy.ask(1)
        with pytest.raises(RuntimeError, match="in use by another thread"):
            strategy.tell(data(1))
        release.set()
        assert len(first.result()) == 1
    monkeypatch.undo()
    assert len(strategy.ask(1)) == 1  # free again once the first thread left
