"""Import layering: the data models need nothing of the optimizer, and the default
acquisition path (the grid search) needs no Pyomo. Each check runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def _run(code: str, **env) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env={**os.environ, **env}, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_data_models_import_no_optimizer():
    out = _run("""
        import sys
        import bofire_bark.data_models
        print(sorted(m for m in sys.modules if m.startswith("bofire_bark.optimize")))
    """, BOFIRE_BARK_NO_REGISTRATION="1")
    assert out.strip() == "[]"
