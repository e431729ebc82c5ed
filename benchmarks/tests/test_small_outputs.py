"""``all --small`` is a spot check: it must write outside the tracked ``results/`` (under the
git-ignored ``out/``), while the full runs keep writing to ``results/``. Each step is stopped
at its first write, so nothing runs and nothing is written."""

from __future__ import annotations

import inspect
import subprocess
from pathlib import Path

import pytest

from benchmarks import __main__ as cli
from benchmarks import bo, plots, regression

REPO = bo.REPO
RESULTS = REPO / "results"


class Stop(Exception):
    """Raised in place of the first write; carries the folder it would have written to."""


def _stopper(func):
    """``func``'s stand-in: raises Stop with the ``out_dir`` it was called with."""
    signature = inspect.signature(func)

    def stop(*args, **kwargs):
        raise Stop(signature.bind(*args, **kwargs).arguments["out_dir"])
    return stop


def _out_dirs(monkeypatch, extra: list[str]) -> dict[str, Path]:
    """The folder each step of ``all`` (with ``extra``) would write to."""
    monkeypatch.setattr(regression, "run", _stopper(regression.run))
    monkeypatch.setattr(bo, "check_settings", lambda cfg, *a, **k: _stopper(bo.BOConfig)(
        out_dir=cfg.out_dir))  # settings.json is bo's first write
    monkeypatch.setattr(plots, "make_all", _stopper(plots.make_all))
    dirs = {}
    for name, module in (("regression", regression), ("bo", bo), ("plots", plots)):
        with pytest.raises(Stop) as stopped:
            module.run_from_args(cli._defaults(module, extra))  # as ``all`` calls it
        dirs[name] = Path(stopped.value.args[0]).resolve()
    return dirs


def test_small_writes_outside_the_tracked_results(monkeypatch):
    dirs = _out_dirs(monkeypatch, ["--small"])
    for name, path in dirs.items():
        assert not path.is_relative_to(RESULTS), f"{name} --small writes to {path}"
        assert path.is_relative_to(REPO / "out"), f"{name} --small writes to {path}"
    assert dirs["plots"] == dirs["bo"]  # the plots read the small runs where bo wrote them
    try:  # and git ignores the folder, so a spot check leaves `git status` clean
        ignored = subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q",
                                  str(dirs["bo"] / "runs_small" / "settings.json")],
                                 capture_output=True).returncode
    except OSError:
        pytest.skip("no git")
    if ignored == 128:
        pytest.skip("not a git checkout")
    assert ignored == 0


def test_full_runs_still_write_to_results(monkeypatch):
    dirs = _out_dirs(monkeypatch, [])
    assert dirs == {"regression": RESULTS / "regression", "bo": RESULTS / "bo",
                    "plots": RESULTS / "bo"}


def test_explicit_out_dir_wins(monkeypatch, tmp_path):
    dirs = _out_dirs(monkeypatch, ["--small", "--out-dir", str(tmp_path)])
    assert set(dirs.values()) == {tmp_path.resolve()}
