"""The one loading layer for what a user hands the CLI: config files, JSON files, run and output
directories, checkpoints. Every failure becomes a ``UsageError`` naming the path and the problem.

Hostile input is bounded before it is built: a path is ``stat``-ed before it is opened (a FIFO or
device never blocks a read, a directory is named as one), files have a size cap, text must be
UTF-8, YAML may not repeat a key, nest deeper than ``MAX_DEPTH`` or expand (through aliases) into
more than ``MAX_YAML_NODES`` nodes, which stops a "billion laughs" file before it costs memory.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import yaml

from sim2human.errors import ConfigError, UsageError

MAX_TEXT_BYTES = 1024 * 1024
"""Config and prompt files: far above any real one (the flagship study is ~3 KB)."""
MAX_JSON_BYTES = 256 * 1024 * 1024
MAX_YAML_NODES = 100_000
"""Nodes a YAML document may have once every alias is expanded."""
MAX_DEPTH = 64
"""Nesting of YAML/JSON collections (the deepest real config nests 5)."""


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _problem(err: OSError) -> str:
    return (err.strerror or str(err)).lower()


def _stat_of_kind(
    path: Path, what: str, is_kind: Callable[[int], bool], verb: str
) -> os.stat_result:
    """``stat`` of ``path`` (symlinks followed), which must be of the kind ``is_kind`` accepts;
    otherwise one line naming the path, what was expected and what is there."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}") from None
    except OSError as err:
        raise UsageError(f"{path}: cannot {verb} the {what} ({_problem(err)})") from None
    if not is_kind(st.st_mode):
        raise UsageError(f"{path}: is {_kind(st.st_mode)}, expected a {what}")
    return st


def regular_file(path: Path, what: str = "file") -> os.stat_result:
    """``stat`` of ``path``, which must be a readable-looking regular file (symlinks followed)."""
    return _stat_of_kind(path, what, stat.S_ISREG, "read")


def read_bytes(path: Path, what: str = "file", limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes. Opened non-blocking and checked
    again on the open descriptor, so a path swapped for a FIFO after the ``stat`` cannot hang."""
    st = regular_file(path, what)
    if st.st_size > limit:
        raise UsageError(f"{path}: {st.st_size} bytes, above the limit of {limit} for a {what}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise UsageError(f"{path}: cannot read the {what} ({_problem(err)})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"{path}: is not a regular file, expected a {what}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as err:
        raise UsageError(f"{path}: cannot read the {what} ({_problem(err)})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UsageError(f"{path}: above the limit of {limit} bytes for a {what}")
    return data


def decode_utf8(data: bytes, path: Path, what: str = "file") -> str:
    """UTF-8 text (a UTF-8 byte-order mark is allowed); anything else is named, with the byte."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UsageError(f"{path}: the {what} is UTF-16; save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        bad = data[err.start : err.start + 1].hex()
        raise UsageError(
            f"{path}: the {what} is not UTF-8 text (byte 0x{bad} at offset {err.start}); "
            "save it as UTF-8"
        ) from None


def read_text(path: Path, what: str = "file", limit: int = MAX_TEXT_BYTES) -> str:
    return decode_utf8(read_bytes(path, what, limit), path, what)


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping key given twice (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Hashable, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {seen[key]})",
                    key_node.start_mark,
                )
            if isinstance(key, Hashable):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _expanded_size(root: yaml.Node, path: Path) -> int:
    """Nodes the document has once aliases are expanded (shared nodes counted every time they
    are used), computed without expanding; also enforces ``MAX_DEPTH`` and refuses cycles."""
    memo: dict[int, int] = {}
    # Iterative post-order walk: a deeply nested document must not exhaust Python's stack here.
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    active: set[int] = set()
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            active.discard(key)
            total = 1 + sum(memo[id(c)] for c in children)
            memo[key] = min(total, MAX_YAML_NODES + 1)
            continue
        if key in memo:
            continue
        if key in active:
            raise ConfigError(f"{path}: a YAML alias refers to itself (a recursive structure)")
        if depth > MAX_DEPTH:
            raise ConfigError(f"{path}: nested deeper than the limit of {MAX_DEPTH} levels")
        active.add(key)
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children if id(c) not in memo)
    return memo[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def parse_yaml(text: str, path: Path) -> Any:
    """One YAML document, checked for size, depth, cycles and duplicate keys before it is built."""
    try:
        loader = _StrictLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            size = _expanded_size(node, path)
            if size > MAX_YAML_NODES:
                raise ConfigError(
                    f"{path}: expands (through YAML aliases) to more than the limit of "
                    f"{MAX_YAML_NODES} values"
                )
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as err:
        raise ConfigError(_yaml_error(path, err)) from None
    except RecursionError:
        raise ConfigError(f"{path}: nested deeper than the limit of {MAX_DEPTH} levels") from None


_YAML_FIXES = (
    ("'\\t'", "indent with spaces, not tabs"),
    ("expected <block end>", "line this key up with the keys of its mapping (same indent)"),
    (
        "mapping values are not allowed",
        "check this line's indentation, or quote a value that holds ': '",
    ),
    ("did not find expected key", "line this key up with the keys above it (same indent)"),
    ("did not find expected '-'", "line this list item's '-' up with the items above it"),
    ("found unexpected end of stream", "close the quote or bracket opened here"),
    ("while scanning a quoted scalar", "close the quote opened here"),
    ("duplicate key", "give each key once"),
)
"""Words of a PyYAML problem -> what to do about it (the first that fits)."""


def _yaml_error(path: Path, err: yaml.YAMLError) -> str:
    """``FILE:LINE: not valid YAML: problem (column C); what to do``: one line, naming where
    and the fix, for the commonest slips (a tab, a key out of line, an unclosed quote)."""
    what = _one_line(err)
    mark = err.problem_mark if isinstance(err, yaml.MarkedYAMLError) else None
    fix = next((f for words, f in _YAML_FIXES if words in what), "fix the YAML syntax here")
    if mark is None:
        return f"{path}: not valid YAML: {what}; {fix}"
    problem = " ".join(str(getattr(err, "problem", "") or what).split())  # without the context
    what = problem.replace(f" (line {mark.line + 1}, column {mark.column + 1})", "")
    return f"{path}:{mark.line + 1}: not valid YAML: {what} (column {mark.column + 1}); {fix}"


def _one_line(err: yaml.YAMLError) -> str:
    """``problem (line L, column C)``, without PyYAML's multi-line snippet."""
    if isinstance(err, yaml.MarkedYAMLError) and err.problem:
        mark = err.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        context = f"{err.context}: " if err.context else ""
        text = f"{context}{err.problem}{where}"
    else:
        text = str(err)
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def read_yaml(path: Path, what: str = "config file") -> Any:
    return parse_yaml(read_text(path, what), path)


def read_json(path: Path, what: str = "JSON file", limit: int = MAX_JSON_BYTES) -> Any:
    text = decode_utf8(read_bytes(path, what, limit), path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"{path}: not valid JSON ({err})") from None
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply") from None


def read_json_object(path: Path, what: str = "JSON file") -> dict[str, Any]:
    data = read_json(path, what)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the {what} must be a JSON object, got {_json_type(data)}")
    return data


def _json_type(value: Any) -> str:
    names = {
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def existing_dir(path: Path, what: str = "run directory") -> Path:
    """``path``, which must be an existing directory (not a file, FIFO or device)."""
    _stat_of_kind(path, what, stat.S_ISDIR, "open")
    return path


def output_dir(path: Path, what: str = "output directory") -> Path:
    """``path`` made ready to write into: created if missing, refused if it is something else."""
    if path.exists() or path.is_symlink():
        existing_dir(path, what)
    else:
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            existing_dir(path, what)
        except OSError as err:
            raise UsageError(f"{path}: cannot create the {what} ({_problem(err)})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{path}: the {what} is not writable")
    return path


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A policy checkpoint (tensors only: ``weights_only``), or a UsageError saying why not."""
    read_bytes(path, "checkpoint", MAX_JSON_BYTES)  # regular file, readable, bounded size
    import pickle

    import torch

    try:
        blob = torch.load(path, weights_only=True, map_location="cpu")
    except (pickle.UnpicklingError, RuntimeError, ValueError, EOFError, OSError) as err:
        first = " ".join(str(err).split())[:200]
        raise UsageError(f"{path}: not a sim2human checkpoint ({first})") from None
    if not isinstance(blob, dict) or not {"state", "acts"} <= blob.keys():
        raise UsageError(f"{path}: not a sim2human checkpoint (no policy state in it)")
    return blob
