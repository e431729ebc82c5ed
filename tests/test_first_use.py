"""A fresh environment: an installed, read-only package and an empty numba cache. The first
ask still searches for its whole time limit (compilation is left out of it), and the next
process loads the kernels from numba's user cache instead of compiling again."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIRST_ASK = """
    import logging, sys
    import numpy as np
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    import bofire_bark
    assert bofire_bark.__file__.startswith({site!r}), bofire_bark.__file__
    import bofire.strategies.api as strategies
    from bofire_bark.warmup import _domains
    from bofire_bark.data_models import BARKSettings, BARKStrategy

    domain = _domains()["continuous"]
    settings = BARKSettings(n_trees=5, n_chains=2, n_samples=2, thinning=2, burn_in=20)
    strategy = strategies.map(BARKStrategy(domain=domain, surrogate_specs=settings, seed=0,
                                           time_limit=2.0))
    X = domain.inputs.sample(8, seed=0)
    X["y"] = np.sin(3 * X["x0"]) + X["x1"]
    X["valid_y"] = 1
    strategy.tell(X)
    strategy.ask(1)
    print("STATUS", strategy.last_results[0].status)
"""


def _read_only_copy(site: Path) -> None:
    """The package without caches, where nothing can be written next to the sources: the
    folders are read-only, and since root writes through permission bits (CI may run as root)
    every package folder also holds a file named ``__pycache__``, where numba and Python
    would make their cache folder."""
    shutil.copytree(ROOT / "bofire_bark", site / "bofire_bark",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [site / "bofire_bark", *(site / "bofire_bark").rglob("*")]:
        if folder.is_dir():
            (folder / "__pycache__").write_text("not a folder: the package is read-only\n")
    for path in [site, *site.rglob("*")]:
        mode = path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        path.chmod(mode)


def test_first_ask_in_a_fresh_read_only_install(tmp_path):
    site = tmp_path / "site"
    _read_only_copy(site)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(site), HOME=str(tmp_path / "home"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1")
    code = textwrap.dedent(FIRST_ASK.format(site=str(site)))
    try:
        runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=env, timeout=1500, cwd=tmp_path) for _ in range(2)]
    finally:
        for path in [site, *site.rglob("*")]:  # let pytest remove it
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    first, second = (run.stdout for run in runs)
    # the first process compiled inside the search, and the search still proved its gap
    assert "of numba compilation" in first, first[-3000:]
    assert "STATUS gap" in first or "STATUS optimal" in first, first[-3000:]
    # numba's user cache served the second process: nothing compiled
    assert "compiles numba kernels first" not in second, second[-3000:]
    assert any((tmp_path / "cache" / "numba").rglob("*.nbi"))
