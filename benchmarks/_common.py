"""What the studies share: where the repository and the shared data are, the code a result was
made with, and how a study publishes a table (written beside its data and printed)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

# the lab runs from a checkout, not an install: results/ is beside this folder, the shared data
# sets beside the repository
REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def code_version(paths) -> str:
    """HEAD's short hash, plus a digest of uncommitted changes under ``paths`` if any (other
    work may edit the code while a study runs; the digest tells such runs apart)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout.strip()
        diff = subprocess.run(["git", "diff", "HEAD", "--", *paths], cwd=REPO,
                              check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+wip:{hashlib.sha1(diff).hexdigest()[:8]}" if diff else head


def publish(path: Path | str, text: str) -> str:
    """Write ``text`` to ``path`` with one final newline (as the committed tables end), making
    its folder if needed, print it, and return what was written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = text.rstrip("\n") + "\n"
    path.write_text(text)
    print(text, end="", flush=True)
    return text
