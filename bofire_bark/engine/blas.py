"""One-threaded BLAS around the engine's small factorizations."""

from __future__ import annotations

import contextlib
import threading

from threadpoolctl import ThreadpoolController

_CONTROLLER = ThreadpoolController()
# The limit is process-wide, and chains, outputs and strategies enter it from several threads
# at once: the first to enter sets it and the last to leave restores it (each restoring what
# it found would let an early leaver lift the limit under the others, and a late leaver
# restore one thread for good).
_LOCK = threading.Lock()
_USERS = 0
_LIMITER = None


@contextlib.contextmanager
def single_threaded_blas():
    """Context in which BLAS/LAPACK use one thread.

    The kernels factor small matrices (P x P or N x N, a few hundred at most); a
    multi-threaded BLAS on them only adds contention (measured: 5-300x slower sweeps on two
    busy cores). The limit is process-wide; nested and concurrent entries (any thread) share
    it, and it is lifted when the last one leaves.
    """
    global _USERS, _LIMITER
    with _LOCK:
        if _USERS == 0:
            _LIMITER = _CONTROLLER.limit(limits=1, user_api="blas")
        _USERS += 1
    try:
        yield
    finally:
        with _LOCK:
            _USERS -= 1
            if _USERS == 0:
                _LIMITER.restore_original_limits()
                _LIMITER = None
