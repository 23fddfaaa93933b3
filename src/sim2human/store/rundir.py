"""Run directories: resolved configs, append-only episode and metric logs, checkpoints.

Every episode line is flushed as soon as it is written, so an interrupted run keeps every episode
that finished. Readers name the file and line of anything they cannot parse. An episode log
never holds one episode id twice: ``EpisodeLog`` refuses to write a duplicate and
``read_episodes`` refuses a log that has one (counting it twice would make every CI too narrow).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from sim2human import outputs
from sim2human.errors import RunDirError
from sim2human.store import collector
from sim2human.types import Episode


def json_text(data: Any) -> str:
    """``data`` (a pydantic model or plain data) as the JSON text ``write_json`` writes."""
    payload = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
    return json.dumps(payload, indent=2, sort_keys=False) + "\n"


def write_json(path: Path, data: Any, *, inside: Path | None = None) -> None:
    """Write atomically (``outputs.write_text``): a reader never sees half a file."""
    outputs.write_text(path, json_text(data), inside=inside)


def read_json(path: Path) -> Any:
    """A JSON file of a run; missing, damaged or unreadable is one ``RunDirError`` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path}: missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise RunDirError(f"{path}: not valid JSON ({err})") from None
    except OSError as err:
        raise RunDirError(f"{path}: cannot read ({err.strerror})") from None


class JsonlWriter:
    """Appends one JSON object per line, each line written whole at once (one ``write``).

    The log is opened by ``outputs.open_append``: never through a symlink, never a FIFO, and
    with ``inside`` (the run directory) never in a folder that leads outside it. A write that
    fails (a full disk) is cut back to the last whole line and raised as one ``OutputError``
    naming the file and the disk, so the log never keeps half a line."""

    def __init__(self, path: Path, *, inside: Path | None = None) -> None:
        self.path = path
        self._fd: int | None = outputs.open_append(path, inside=inside)
        self._size = os.fstat(self._fd).st_size

    def write(self, row: BaseModel | dict[str, Any]) -> None:
        """Append ``row`` as one whole line (a failed write leaves the log at its last whole
        line)."""
        line = row.model_dump_json() if isinstance(row, BaseModel) else json.dumps(row)
        encoded = (line + "\n").encode("utf-8")
        if self._fd is None:
            raise ValueError(f"{self.path}: the log is closed")
        try:
            data = memoryview(encoded)
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError as err:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
            raise outputs.describe_os_error(self.path, err) from None
        self._size += len(encoded)

    def close(self) -> None:
        """Close the log (closing twice is harmless)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __del__(self) -> None:  # a writer nobody closed, like the file object it replaces
        if getattr(self, "_fd", None) is not None:
            self.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EpisodeLog(JsonlWriter):
    """``episodes.jsonl``: refuses an episode whose id is already in the log (earlier lines of an
    existing file included)."""

    def __init__(self, path: Path, *, inside: Path | None = None) -> None:
        super().__init__(path, inside=inside)  # first: a linked log is refused before it is read
        self.ids: dict[str, int] = {}
        try:
            for number, row in iter_jsonl(path) if self._size else ():
                if isinstance(row, dict):
                    self.ids.setdefault(str(row.get("id")), number)
            self._lines = sum(1 for _ in path.open("rb")) if self._size else 0
        except BaseException:
            self.close()
            raise

    def write(self, row: BaseModel | dict[str, Any]) -> None:
        """Append an episode; one whose id the log already holds is refused."""
        eid = str(row.id if isinstance(row, Episode) else dict(row).get("id"))
        if eid in self.ids:
            raise RunDirError(
                f"{self.path}: episode {eid!r} is already stored (line {self.ids[eid]}); "
                "refusing to store it twice"
            )
        super().write(row)
        self._lines += 1
        self.ids[eid] = self._lines


@dataclass(frozen=True)
class BadLine:
    """A log line that could not be read: what it is not, and why. Each reader decides what to
    do with it (``read_episodes`` refuses the log, the diagnostics count and skip it)."""

    number: int
    what: str
    """``not valid JSON`` or ``not an episode``."""
    detail: str

    def error(self, path: Path) -> RunDirError:
        """The one-line error naming ``path``, this line and what is wrong with it."""
        return RunDirError(f"{path}:{self.number}: {self.what} ({self.detail})")


_TORN = object()
"""The last line of a log cut short: an interrupted write, to skip, not to report."""


def log_lines(text: str) -> list[str]:
    """The lines of a JSONL log, split at ``\\n`` only. ``str.splitlines`` also breaks at
    U+2028, U+0085 and other separators that JSON strings may hold raw (pydantic writes them
    so; an LLM can say them), which would cut one episode in two."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _text_lines(path: Path) -> list[str]:
    try:
        return log_lines(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path}: missing") from None
    except UnicodeDecodeError as err:
        raise RunDirError(f"{path}: not UTF-8 text (byte offset {err.start})") from None
    except OSError as err:
        raise RunDirError(f"{path}: cannot read ({err.strerror})") from None


def _json_line(number: int, line: str, count: int) -> Any:
    """The object on line ``number`` of ``count``: a ``BadLine`` when it is not JSON, or
    ``_TORN`` when that line is the last one."""
    try:
        return json.loads(line)
    except (json.JSONDecodeError, RecursionError) as err:
        if number == count:
            return _TORN
        return BadLine(number, "not valid JSON", getattr(err, "msg", "nested too deeply"))


def json_lines(lines: Sequence[str]) -> Iterator[tuple[int, Any]]:
    """(line number, object or ``BadLine``) for each line that is not blank; a torn last line
    ends it."""
    for number, line in enumerate(lines, 1):
        if line.strip():
            row = _json_line(number, line, len(lines))
            if row is _TORN:
                return
            yield number, row


def episode_lines(lines: Sequence[str]) -> Iterator[tuple[int, Episode | BadLine]]:
    """``json_lines`` as episodes: each line parsed and validated in one pass first
    (``parse_episode``); one that fails it is read again the slow way, to say what is wrong."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        episode: Episode | BadLine | None = parse_episode(line)
        if episode is None:
            row = _json_line(number, line, len(lines))
            if row is _TORN:
                return
            episode = row if isinstance(row, BadLine) else _episode(number, row)
        yield number, episode


def _episode(number: int, row: Any) -> Episode | BadLine:
    try:
        return Episode.model_validate(row)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return BadLine(number, "not an episode", f"{where}: {first['msg']}")


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each complete line; a torn last line is skipped, not fatal."""
    for number, row in json_lines(_text_lines(path)):
        if isinstance(row, BadLine):
            raise row.error(path)
        yield number, row


def check_unique(ids: Iterable[tuple[int, str]], path: Path) -> None:
    """Refuse a log in which an episode id appears twice, naming both lines."""
    seen: dict[str, int] = {}
    for number, eid in ids:
        if eid in seen:
            raise RunDirError(
                f"{path}:{number}: episode {eid!r} is stored twice (also line {seen[eid]}); "
                "the log was written by two runs at once: rerun this sub-run"
            )
        seen[eid] = number


def parse_episode(line: str) -> Episode | None:
    """The episode on one log line, parsed and validated in one pass (pydantic's JSON mode,
    about 1.6x faster than ``json.loads`` then ``model_validate``); None when that fails, for
    the caller to read the line the slow way, which says what is wrong in the readers' words."""
    try:
        return Episode.model_validate_json(line)
    except ValidationError:
        return None


def read_episodes(path: Path) -> list[Episode]:
    """Every episode of a log; the first line that is not one is an error naming it."""
    episodes, lines = [], []
    with collector.paused():
        for number, episode in episode_lines(_text_lines(path)):
            if isinstance(episode, BadLine):
                raise episode.error(path)
            episodes.append(episode)
            lines.append(number)
    check_unique(zip(lines, (e.id for e in episodes), strict=True), path)
    return episodes
