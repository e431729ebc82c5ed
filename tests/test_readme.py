"""README.md stays short and true: every ```python block runs as written, every link resolves.

Each block runs in its own Python process from the repository root (a fresh namespace, as a
reader pasting it would), so a snippet that depends on an earlier one, on a name it never
defines or on an API that changed fails here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 250


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every fenced ```python block."""
    blocks = []
    for m in re.finditer(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, flags=re.S | re.M):
        blocks.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return blocks


BLOCKS = python_blocks(README.read_text())


def test_readme_has_python_blocks_and_fits_one_sitting():
    assert len(BLOCKS) >= 2
    assert len(README.read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_readme_python_block_runs(line, code, tmp_path):
    script = tmp_path / f"readme_line{line}.py"
    script.write_text(code)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    result = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, (
        f"README.md's python block at line {line} failed:\n{result.stdout}\n{result.stderr}")


def test_readme_relative_links_resolve():
    text = README.read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    missing = [t for t in targets if not re.match(r"[a-z]+://", t)
               and not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README links to missing files: {missing}"
