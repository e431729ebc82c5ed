"""The documentation site builds without a warning (``mkdocs build --strict``).

Strict mode fails on a broken link or anchor between pages, a missing snippet (README's code
blocks, the tables under ``results/``), a missing figure and a docstring mkdocstrings cannot
read, so CI catches a page that drifted from the code or the results.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed: pip install -e '.[docs]' (part of [dev])")
def test_mkdocs_build_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice, not about this site
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
         str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    for page in ("index.html", "getting-started/index.html", "api/surrogate/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    # README's tested loop is what the getting-started page shows
    assert "run_experiments" in (tmp_path / "site" / "getting-started" / "index.html").read_text()
