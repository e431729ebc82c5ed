"""Size rules of issue 24 over the library (``bofire_bark/`` without ``benchmarks/``): the
longest module in lines and the function with most parameters (positional and keyword, with
*args/**kwargs counted once each, ``self``/``cls`` excluded).

    python results/refactor/sizes.py [--limit-lines 600] [--limit-params 15]
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "bofire_bark"


def n_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    n = len(names) - (1 if names and names[0] in ("self", "cls") else 0)
    return n + (a.vararg is not None) + (a.kwarg is not None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit-lines", type=int, default=600)
    parser.add_argument("--limit-params", type=int, default=15)
    args = parser.parse_args()
    files = [p for p in sorted(ROOT.rglob("*.py")) if "benchmarks" not in p.parts]
    sizes = sorted(((len(p.read_text().splitlines()), p) for p in files), reverse=True)
    funcs = []
    for p in files:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                funcs.append((n_params(node), f"{p.relative_to(ROOT.parent)}:{node.lineno} "
                                              f"{node.name}"))
    funcs.sort(reverse=True)
    print("largest modules:", *(f"{n} {p.relative_to(ROOT.parent)}" for n, p in sizes[:5]),
          sep="\n  ")
    print("most parameters:", *(f"{n} {w}" for n, w in funcs[:5]), sep="\n  ")
    over = [s for s in sizes if s[0] > args.limit_lines]
    wide = [f for f in funcs if f[0] > args.limit_params]
    print(f"modules over {args.limit_lines} lines: {len(over)}; "
          f"functions over {args.limit_params} parameters: {len(wide)}")
    for n, p in over:
        print(f"  {n} {p.relative_to(ROOT.parent)}")
    for n, w in wide:
        print(f"  {n} {w}")


if __name__ == "__main__":
    main()
