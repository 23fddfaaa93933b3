"""YAML with line numbers: where each key of a document is, for one-line errors.

PyYAML builds plain dicts and lists and forgets where things were; its node tree (``compose``)
still knows. ``Lines`` walks that tree once and maps every key path to its line, so a problem
found after building (by pydantic, or a cross-check) is reported as ``file:line: key.path: what``.
The document itself is read by ``inputs.parse_yaml`` (size, depth, alias and duplicate-key
bounds), so the tree walked here is one that already loaded safely.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sim2human.errors import ConfigError
from sim2human.store.loading import parse_yaml, read_text

Key = str | int
KeyPath = tuple[Key, ...]


@dataclass(frozen=True)
class Lines:
    """The line (1-based) of every key path of one YAML document."""

    path: Path
    at: dict[KeyPath, int]

    @classmethod
    def of(cls, text: str, path: Path) -> Lines:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        at: dict[KeyPath, int] = {}
        stack: list[tuple[KeyPath, yaml.Node]] = [((), root)] if root is not None else []
        while stack:
            where, node = stack.pop()
            at.setdefault(where, node.start_mark.line + 1)
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    here = (*where, _scalar(key))
                    at[here] = key.start_mark.line + 1
                    stack.append((here, value))
            elif isinstance(node, yaml.SequenceNode):
                stack.extend(((*where, i), item) for i, item in enumerate(node.value))
        return cls(path, at)

    def real(self, loc: Sequence[Key]) -> KeyPath:
        """``loc`` without the steps the document does not have (pydantic adds a union's tag
        to its locations: ``fields.area.category.vocabulary``)."""
        out: KeyPath = ()
        for step in loc:
            for key in (step, str(step)):
                if (*out, key) in self.at:
                    out = (*out, key)
                    break
        return out

    def error(self, loc: Sequence[Key], message: str) -> ConfigError:
        """``file:line: key.path: message`` (the line of the deepest key the document has)."""
        where = self.real(loc)
        line = self.at.get(where, 1)
        dotted = ".".join(str(k) for k in where)
        return ConfigError(f"{self.path}:{line}: {dotted + ': ' if dotted else ''}{message}")


def _scalar(node: yaml.Node) -> Key:
    value = node.value if isinstance(node, yaml.ScalarNode) else str(node.value)
    return value if isinstance(value, str) else str(value)


def read_document(path: Path, what: str = "scenario file") -> tuple[Any, Lines]:
    """The document at ``path`` and where its keys are."""
    text = read_text(path, what)
    data = parse_yaml(text, path)
    return data, Lines.of(text, path)


def raise_at(lines: Lines, problems: Sequence[tuple[KeyPath, str]]) -> None:
    """The first of ``problems``, if any, as a ConfigError."""
    if problems:
        loc, message = problems[0]
        raise lines.error(loc, message)
