"""One-threaded BLAS around the engine's small factorizations."""

from __future__ import annotations

from threadpoolctl import ThreadpoolController

_CONTROLLER = ThreadpoolController()


def single_threaded_blas():
    """Context in which BLAS/LAPACK use one thread.

    The kernels factor small matrices (P x P or N x N, a few hundred at most); a
    multi-threaded BLAS on them only adds contention (measured: 5-300x slower sweeps on two
    busy cores). The limit is process-wide, so enter it once per call tree from one thread.
    """
    return _CONTROLLER.limit(limits=1, user_api="blas")
