"""Do two copies of a run hold the same finish-phase results?

    .venv/bin/python benchmarks/compare_finish.py DIR_A DIR_B

Compares study.json, diagnosis.json and report.json as JSON (each copy's own path, stored in
``root``, is read as the same; ``wall_seconds`` is ignored), and report.md, report.html and the
adaptive figures byte for byte. Prints one line per file and exits 1 on any difference, naming
the first differing JSON path. ``bench_finish.py --child RUN_DIR --keep DIR`` writes such copies.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

JSON_FILES = ("study.json", "diagnosis.json", "report.json")
BYTE_FILES = ("report.md", "report.html")
IGNORED = {"wall_seconds"}


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The JSON path of the first place ``a`` and ``b`` differ; None when they are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key in IGNORED:
                continue
            if key not in a or key not in b:
                return f"{where}.{key} (only in one)"
            found = first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where} (lengths {len(a)} and {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if a == b or (a != a and b != b) else f"{where}: {a!r} != {b!r}"


def _text(path: Path, root: Path) -> str:
    return path.read_text(encoding="utf-8").replace(str(root), "RUN")


def _same_file(a: Path, b: Path, rel: Path) -> bool:
    if rel.suffix == ".png":
        return (a / rel).read_bytes() == (b / rel).read_bytes()
    return _text(a / rel, a) == _text(b / rel, b)


def compare(a: Path, b: Path) -> list[str]:
    """One line per differing file (empty: the same results)."""
    problems = []
    for name in JSON_FILES:
        found = first_difference(
            json.loads(_text(a / name, a)), json.loads(_text(b / name, b)), name
        )
        print(f"{name}: {'differs at ' + found if found else 'same'}")
        if found:
            problems.append(name)
    figures = sorted(p.relative_to(a) for p in (a / "adaptive").glob("*"))
    for rel in [*map(Path, BYTE_FILES), *figures]:
        same = _same_file(a, b, rel)
        print(f"{rel}: {'same' if same else 'differs'}")
        if not same:
            problems.append(str(rel))
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    args = parser.parse_args()
    sys.exit(1 if compare(args.a.resolve(), args.b.resolve()) else 0)


if __name__ == "__main__":
    main()
