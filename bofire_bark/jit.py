"""First use of the numba kernels: tell the user that they compile, and for how long; and a
cache that never outlives the code it was compiled from.

In a fresh environment the first fit compiles the engine's kernels and the first asks the
optimizer's (about 40 s and 20 + 25 s measured here on a busy 2-core machine; 2 s and 1 s once
cached), and nothing else would say why the call waits. ``compiling`` wraps such a call: it
logs at INFO when numba starts compiling one of the layer's kernels (its ``numba:compile``
event, which a kernel loaded from the cache never sends; once per process), and after the call
how many kernels compiled in how long, from numba's own cache-miss counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import time
from pathlib import Path

logger = logging.getLogger("bofire_bark")
_announced: set[str] = set()


def _dispatchers(layers: tuple[str, ...]) -> list:
    """The cached numba functions of the loaded modules ``bofire_bark.<layer>...``."""
    from numba.core.registry import CPUDispatcher

    prefix = tuple(f"bofire_bark.{layer}" for layer in layers)
    out = []
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix) and module is not None:
            out.extend(obj for obj in vars(module).values()
                       if isinstance(obj, CPUDispatcher) and obj.__module__ == name)
    return out


def _misses(dispatchers) -> int:
    return sum(sum(d.stats.cache_misses.values()) for d in dispatchers)


def guard_cache_writes() -> None:
    """Let a kernel run when numba cannot write its cache file (a full disk, a quota): numba
    0.68 raises the OSError out of the kernel's first call, so a fit or an ask failed where
    only the next process's compile time was at stake. Installed once per process, on
    numba's cache class, before the package's first compile (``compiling``)."""
    from numba.core import caching

    if getattr(caching.Cache.save_overload, "_bark_guard", False):
        return
    save = caching.Cache.save_overload

    def save_overload(self, sig, data):
        try:
            save(self, sig, data)
        except OSError as err:
            logger.warning("BARK: numba could not write its cache (%s); the kernel runs, and "
                           "compiles again in the next process", err)

    save_overload._bark_guard = True
    caching.Cache.save_overload = save_overload


@contextlib.contextmanager
def compiling(what: str, *layers: str):
    """Around a call (``what``, for the message) that may compile the kernels of
    ``bofire_bark.<layer>`` for each of ``layers``."""
    from numba.core import event

    guard_cache_writes()

    prefix = tuple(f"bofire_bark.{layer}" for layer in layers)

    class Announce(event.Listener):
        # Guessing from cache files beforehand announced a compile in every new process:
        # kernels called only from other kernels never get a cache index of their own.
        def on_start(self, ev):
            dispatcher = (ev.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if what not in _announced and module.startswith(prefix):
                _announced.add(what)
                logger.info("BARK: %s compiles numba kernels first (once per environment, up "
                            "to a minute; later runs load them from numba's cache)", what)

        def on_end(self, ev):
            pass

    before = _misses(_dispatchers(layers))
    start = time.perf_counter()
    with event.install_listener("numba:compile", Announce()):
        yield
    compiled = _misses(_dispatchers(layers)) - before
    if compiled:
        logger.info("BARK: %s compiled %d numba kernels; it took %.0f s in all", what, compiled,
                    time.perf_counter() - start)


class CompileClock:
    """Seconds numba spent compiling while installed (``compile_clock``), so that a search's
    time limit leaves them out: in a new environment the first asks compile the search's
    kernels inside the search, and would otherwise return the starting point with a loose gap.
    Compiles nest (a kernel compiles its callees); only the outermost counts."""

    def __init__(self):
        self.seconds = 0.0
        self._depth = 0
        self._since = 0.0

    def elapsed(self) -> float:
        """Compile seconds so far, a compile still running included."""
        running = time.perf_counter() - self._since if self._depth else 0.0
        return self.seconds + running


@contextlib.contextmanager
def compile_clock():
    """A ``CompileClock`` counting numba's compiles (in any thread) during the block."""
    from numba.core import event

    guard_cache_writes()
    clock = CompileClock()

    class Count(event.Listener):
        def on_start(self, ev):
            if clock._depth == 0:
                clock._since = time.perf_counter()
            clock._depth += 1

        def on_end(self, ev):
            clock._depth -= 1
            if clock._depth == 0:
                clock.seconds += time.perf_counter() - clock._since

    with event.install_listener("numba:compile", Count()):
        yield clock


PACKAGE = Path(__file__).parent
MARKER = PACKAGE / "__pycache__" / "numba_sources.sha256"


def drop_stale_caches() -> None:
    """Delete numba's cache files inside the package when any of its sources changed.

    numba re-validates a cached kernel against its own file only: a kernel whose callee in
    another module changed (engine.sampler's run_sweeps calling engine.priors) keeps running
    the old callee from the cache. Caches next to the sources (an editable install, this
    repository) are therefore keyed here on a digest of the kernels' source files. An installed
    package's caches live in numba's user directory and are renewed by an upgrade, which
    touches every file. Called when the engine or the optimizer package is imported.
    """
    if not os.access(PACKAGE, os.W_OK):
        return
    digest = hashlib.sha256()
    # the kernels' modules, and kinds.py, whose constants are compiled into them
    sources = [PACKAGE / "kinds.py", *PACKAGE.glob("engine/*.py"),
               *PACKAGE.glob("optimize/**/*.py")]
    for path in sorted(sources):
        digest.update(str(path.relative_to(PACKAGE)).encode())
        digest.update(path.read_bytes())
    current = digest.hexdigest()
    try:
        if MARKER.read_text() == current:
            return
    except OSError:
        pass
    removed = 0
    for pattern in ("*.nbi", "*.nbc"):
        for path in PACKAGE.rglob(f"__pycache__/{pattern}"):
            with contextlib.suppress(OSError):  # another process may have removed it
                path.unlink()
                removed += 1
    with contextlib.suppress(OSError):
        MARKER.parent.mkdir(exist_ok=True)
        MARKER.write_text(current)
    if removed:
        logger.info("BARK: sources changed; removed %d stale numba cache files", removed)
