#!/usr/bin/env python3
"""Are two run directories the same episodes? ``same_episodes.py BEFORE_RUN AFTER_RUN``.

The check a refactor that must not change behaviour runs (issue #22: the scenario core): every
``episodes.jsonl`` under BEFORE_RUN is compared with the one at the same place under AFTER_RUN,
episode by episode (every turn, proxy, gold and outcome field, recursively), and so is every
number and string of ``study.json``. What AFTER_RUN adds is allowed (a new key, such as
``gold.score``); what it drops or changes is a difference; wall-time keys (``wall_seconds``,
any ``*_seconds``) are ignored. An episode file under AFTER_RUN alone is a difference too.

``--except-family NAME`` (repeatable) leaves that family's episodes out of both runs, and
``study.json`` too, since some of its numbers pool every held-out family: the check for a change
meant to move one family's episodes only (say, which real patients a study replays).

Prints one line: ``same: ...`` (exit 0) or ``DIFFERENT: <first difference> (+N more)`` (exit 1);
a directory that is missing or holds no ``study.json`` nor episodes is a usage error (exit 2).
Standard library only, so it runs with any Python 3.11 whatever is installed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EPISODES = "episodes.jsonl"
STUDY = "study.json"


class Usage(Exception):
    """A bad argument: said on one line, exit 2."""


def wall_time(key: str) -> bool:
    """Keys that measure wall time, not behaviour."""
    return key == "wall_seconds" or key.endswith("_seconds")


def differences(before: Any, after: Any, where: str = "") -> Iterator[str]:
    """Where ``after`` drops or changes something of ``before`` (new keys in ``after`` allowed;
    numbers equal as numbers, so 1 and 1.0 agree, but bools are not numbers)."""
    if isinstance(before, dict):
        if not isinstance(after, dict):
            yield f"{where or '.'}: a {type(after).__name__} where there was an object"
            return
        for key, value in before.items():
            if wall_time(key):
                continue
            at = f"{where}.{key}" if where else key
            if key not in after:
                yield f"{at}: missing"
            else:
                yield from differences(value, after[key], at)
    elif isinstance(before, list):
        if not isinstance(after, list) or len(after) != len(before):
            n = len(after) if isinstance(after, list) else type(after).__name__
            yield f"{where}: {len(before)} items, now {n}"
            return
        for k, (x, y) in enumerate(zip(before, after, strict=True)):
            yield from differences(x, y, f"{where}[{k}]")
    elif before != after or _kind(before) != _kind(after):
        yield f"{where}: {before!r} is now {after!r}"


def _kind(x: Any) -> str:
    """A leaf's type for comparing: ints and floats alike are numbers (1 == 1.0), a bool is not
    a number (True != 1) and None is not 0."""
    return "number" if isinstance(x, int | float) and not isinstance(x, bool) else type(x).__name__


@dataclass
class Verdict:
    episodes: int = 0
    files: int = 0
    found: list[str] = field(default_factory=list)
    skipped: tuple[str, ...] = ()
    """Families left out (``--except-family``): their episodes and study.json not compared."""

    def line(self) -> str:
        if not self.found and self.skipped:
            return (
                f"same: {self.episodes} episodes in {self.files} episode files, but for "
                f"{', '.join(self.skipped)} (study.json not compared)"
            )
        if not self.found:
            return f"same: {self.episodes} episodes in {self.files} episode files, and study.json"
        more = f" (+{len(self.found) - 1} more)" if len(self.found) > 1 else ""
        return f"DIFFERENT: {self.found[0]}{more}"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise Usage(f"{path}: cannot read it as JSON ({err})") from None


def _lines(path: Path) -> list[str]:
    try:
        return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except (OSError, UnicodeDecodeError) as err:
        raise Usage(f"{path}: cannot read it ({err})") from None


def _episodes(path: Path) -> list[Any]:
    out = []
    for k, line in enumerate(_lines(path), start=1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise Usage(f"{path} line {k}: not JSON ({err})") from None
    return out


def _key(episode: Any, seen: dict[str, int]) -> tuple[str, int]:
    """An episode's id and which occurrence of that id it is (ids are unique in a run)."""
    ident = str(episode.get("id", "?")) if isinstance(episode, dict) else "?"
    seen[ident] = seen.get(ident, 0) + 1
    return ident, seen[ident]


def _kept(episodes: list[Any], skipped: tuple[str, ...]) -> list[Any]:
    return [e for e in episodes if not (isinstance(e, dict) and e.get("family") in skipped)]


def compare_episodes(before: Path, after: Path, name: str, verdict: Verdict) -> None:
    """Episode by episode, matched by id (so a file written in another order still matches)."""
    old = _kept(_episodes(before), verdict.skipped)
    new = _kept(_episodes(after), verdict.skipped)
    verdict.files += 1
    verdict.episodes += len(old)
    seen: dict[str, int] = {}
    later = {_key(e, seen): e for e in new}
    seen.clear()
    for k, episode in enumerate(old, start=1):
        key = _key(episode, seen)
        if key not in later:
            verdict.found.append(f"{name} line {k} ({key[0]}): missing")
            continue
        found = differences(episode, later.pop(key))
        verdict.found += [f"{name} line {k} ({key[0]}): {d}" for d in found]
    verdict.found += [f"{name}: episode {ident} is new" for ident, _ in later]


def compare_runs(before: Path, after: Path, skipped: tuple[str, ...] = ()) -> Verdict:
    for run in (before, after):
        if not run.is_dir():
            raise Usage(f"{run}: not a directory")
    olds = {p.relative_to(before).as_posix() for p in before.rglob(EPISODES)}
    news = {p.relative_to(after).as_posix() for p in after.rglob(EPISODES)}
    if not olds and not (before / STUDY).is_file():
        raise Usage(f"{before}: no {STUDY} and no {EPISODES} (not a run directory)")
    verdict = Verdict(skipped=skipped)
    verdict.found += [f"{n}: missing from {after}" for n in sorted(olds - news)]
    verdict.found += [f"{n}: only in {after}" for n in sorted(news - olds)]
    for name in sorted(olds & news):
        compare_episodes(before / name, after / name, name, verdict)
    if (before / STUDY).is_file() and not skipped:
        if not (after / STUDY).is_file():
            verdict.found.append(f"{STUDY}: missing from {after}")
        else:
            old, new = _read_json(before / STUDY), _read_json(after / STUDY)
            verdict.found += [f"{STUDY}: {d}" for d in differences(old, new)]
    return verdict


def main(argv: list[str]) -> int:
    skipped: list[str] = []
    runs: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--except-family":
            skipped.append(next(args, ""))
        else:
            runs.append(arg)
    if len(runs) != 2 or "" in skipped:
        print(
            "usage: same_episodes.py [--except-family NAME]... BEFORE_RUN AFTER_RUN",
            file=sys.stderr,
        )
        return 2
    try:
        verdict = compare_runs(Path(runs[0]), Path(runs[1]), tuple(skipped))
    except Usage as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(verdict.line())
    return 1 if verdict.found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
