"""``python -m bofire_bark warmup``: compile numba's kernels into its cache ahead of use."""

from __future__ import annotations

import argparse
import logging
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bofire_bark")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("warmup", help="compile (or load from numba's cache) every kernel a "
                        "BO loop uses, e.g. when a pipeline's image is built")
    parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from bofire_bark.warmup import warmup

    t0 = time.perf_counter()
    cases = warmup()
    print(f"BARK warm-up: {len(cases)} cases in {time.perf_counter() - t0:.1f} s "
          f"({', '.join(f'{c.name} {c.seconds:.1f} s' for c in cases)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
