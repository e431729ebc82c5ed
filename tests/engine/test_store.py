"""Saved models are data: a damaged or foreign dump is a ValueError naming the array, never a
crash. The loads run in a child process (``dump_fuzz.py``) so that a crash fails this test
instead of ending the test run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def run_child(args: list[str], timeout: float = 900) -> tuple[int, list[dict], str]:
    """Exit code, JSON lines and stderr of a child Python process (a crash is a negative
    code, a hang a timeout)."""
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=HERE.parents[1])
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, rows, proc.stderr[-2000:]


def test_harness_sees_a_crash():
    """The harness tells a segfault from a clean end (so the test below can fail)."""
    code, rows, _ = run_child(["-c", "import ctypes, json; print(json.dumps({'case': 'a'}), "
                                     "flush=True); ctypes.string_at(0)"])
    assert code != 0 and [r["case"] for r in rows] == ["a"]


@pytest.fixture(scope="module")
def fuzz():
    code, rows, err = run_child([str(HERE / "dump_fuzz.py"), "400"])
    last = rows[-1]["case"] if rows else None
    assert code == 0, f"the child ended with code {code} after case {last!r}: {err}"
    return rows


def test_every_case_ends_cleanly(fuzz):
    counts = Counter((r["expect"], r["outcome"]) for r in fuzz)
    assert len(fuzz) > 600, counts
    other = [r for r in fuzz if r["outcome"] == "other"]
    assert not other, other[:5]


def test_the_real_dump_loads(fuzz):
    assert [r["outcome"] for r in fuzz if r["case"] == "original"] == ["valid"]


def test_every_targeted_corruption_is_refused_by_name(fuzz):
    targeted = [r for r in fuzz if r["expect"] == "error"]
    assert len(targeted) > 200
    wrong = [r["case"] for r in targeted if r["outcome"] != "error"]
    assert not wrong, wrong
    for r in targeted:
        if r["case"].startswith(("sample_", "chain", "X ", "y ", "scale", "n_fits")) and \
                "missing" not in r["case"]:
            key = r["case"].split()[0]
            # a forest's damage may show first in a linked array (a leaf made a split has
            # no children): the message names the forest (sample_ or chainC_) at least
            forest = key.split("_")[0] + "_" if key.startswith(("sample_", "chain")) else key
            assert forest in r["message"], (r["case"], r["message"])
        assert r["message"].startswith("dump"), (r["case"], r["message"])


def test_random_corruptions_mostly_refused(fuzz):
    """Flipped bytes, truncations, perturbed and swapped arrays: each an error or a model that
    predicts finite values and continues its chains (the child checks both)."""
    random = Counter(r["outcome"] for r in fuzz if r["expect"] == "any")
    assert sum(random.values()) == 400 and random["error"] > 200, random
