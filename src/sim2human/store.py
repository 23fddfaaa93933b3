"""Run directories: resolved configs, append-only episode and metric logs, checkpoints.

Every episode line is flushed as soon as it is written, so an interrupted run keeps every episode
that finished. Readers name the file and line of anything they cannot parse.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ValidationError

from sim2human.errors import RunDirError
from sim2human.types import Episode

EPISODES = "episodes.jsonl"
METRICS = "metrics.jsonl"
CONFIG = "config.json"
MEMBERS = "members.json"
SUMMARY = "summary.json"
CHECKPOINT = "checkpoint.pt"


def write_json(path: Path, data: Any) -> None:
    """Write atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    payload = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
    tmp.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path}: missing") from None
    except json.JSONDecodeError as err:
        raise RunDirError(f"{path}: not valid JSON ({err})") from None


class JsonlWriter:
    """Appends one JSON object per line, flushed at once."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: TextIO = path.open("a", encoding="utf-8")

    def write(self, row: BaseModel | dict[str, Any]) -> None:
        line = row.model_dump_json() if isinstance(row, BaseModel) else json.dumps(row)
        self._file.write(line + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each complete line; a torn last line is skipped, not fatal."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise RunDirError(f"{path}: missing") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as err:
            if number == len(lines):  # an interrupted write: keep everything before it
                return
            raise RunDirError(f"{path}:{number}: not valid JSON ({err.msg})") from None


def read_episodes(path: Path) -> list[Episode]:
    episodes = []
    for number, row in iter_jsonl(path):
        try:
            episodes.append(Episode.model_validate(row))
        except ValidationError as err:
            where = ".".join(str(p) for p in err.errors()[0]["loc"])
            raise RunDirError(
                f"{path}:{number}: not an episode ({where}: {err.errors()[0]['msg']})"
            ) from None
    return episodes
