"""The study lab lives outside the package: it finds the repository root from its own folder,
runs as ``python -m benchmarks`` from that root, and the wheel leaves it out."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks

ROOT = Path(__file__).resolve().parents[2]


def test_every_study_finds_the_repository_root():
    # a study one folder deeper or shallower would write its results/ in the wrong place
    for info in pkgutil.iter_modules(benchmarks.__path__):
        module = importlib.import_module(f"benchmarks.{info.name}")
        for name in ("REPO", "ROOT"):
            if hasattr(module, name):
                assert getattr(module, name) == ROOT, f"benchmarks.{info.name}.{name}"
    from benchmarks import max_phases, regression

    assert max_phases.DEFAULT_DATA.is_relative_to(ROOT.parent / "shared" / "data")
    assert regression.DEFAULT_DATA_DIR == ROOT.parent / "shared" / "data" / "uci"


def test_the_lab_runs_from_the_repository_root():
    out = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "python -m benchmarks" in out.stdout


def test_the_wheel_packages_only_the_library():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert find["find"]["include"] == ["bofire_bark*"]
    # (an old checkout may keep an ignored __pycache__ there: no sources is what counts)
    assert not list((ROOT / "bofire_bark").glob("benchmarks/*.py"))
