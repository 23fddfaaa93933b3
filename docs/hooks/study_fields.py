"""MkDocs hook: the study-file reference, generated from the config models at build time.

A page holding ``<!-- study-fields -->`` gets, in its place, one table per model reachable from
``StudyConfig`` (key, type, default, bounds, and the field's docstring or description), so the
reference cannot drift from what the loader accepts. pydantic keeps ``Field(description=...)``
but not attribute docstrings (the project writes most field docs that way), so those are read
from the classes' source with ``ast``.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
import types
import typing
from typing import Any

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

MARKER = "<!-- study-fields -->"


def _docstrings(cls: type) -> dict[str, str]:
    """``name -> docstring`` for attributes followed by a string literal, over the MRO."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for a, b in itertools.pairwise(body):
            if (
                isinstance(a, ast.AnnAssign)
                and isinstance(a.target, ast.Name)
                and isinstance(b, ast.Expr)
                and isinstance(b.value, ast.Constant)
                and isinstance(b.value.value, str)
            ):
                out[a.target.id] = " ".join(b.value.value.split())
    return out


def _models(tp: Any) -> list[type[BaseModel]]:
    """The models inside an annotation (``tuple[Condition, ...]`` gives ``Condition``)."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in typing.get_args(tp) for m in _models(arg)]


def _type(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return _type(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(a) for a in args)
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (tuple, list):
        return f"list of {_type(args[0])}" if args else "list"
    if origin is dict:
        return f"mapping {_type(args[0])} to {_type(args[1])}" if args else "mapping"
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return f"[{tp.__name__}](#{tp.__name__.lower()})"
    return getattr(tp, "__name__", str(tp)).replace("typing.", "")


BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


def _bounds(info: FieldInfo) -> str:
    parts = []
    for m in info.metadata:
        for attr, sign in BOUNDS.items():
            if isinstance(m, (at.Ge, at.Gt, at.Le, at.Lt)) and hasattr(m, attr):
                parts.append(f"{sign} {getattr(m, attr)}")
        if isinstance(m, at.MinLen):
            parts.append(f"at least {m.min_length} long")
        if isinstance(m, at.MaxLen):
            parts.append(f"at most {m.max_length} long")
        pattern = getattr(m, "pattern", None)
        if isinstance(pattern, str):
            parts.append(f"matches `{pattern}`")
    return ", ".join(parts)


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value: Any = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if isinstance(value, BaseModel):
        return "see its table"
    return f"`{value!r}`".replace("|", "\\|") if value not in ({}, (), None) else f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def model_table(model: type[BaseModel]) -> str:
    docs = _docstrings(model)
    lines = [f"### {model.__name__}\n"]
    if model.__doc__ and model.__doc__ is not BaseModel.__doc__:
        lines.append(" ".join(model.__doc__.split()) + "\n")
    lines.append("| key | type | default | bounds | what it is |")
    lines.append("|---|---|---|---|---|")
    for name, info in model.model_fields.items():
        what = info.description or docs.get(name, "")
        key = info.alias or name
        row = [f"`{key}`", _type(info.annotation), _default(info), _bounds(info), _cell(what)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def reference() -> str:
    from sim2human.experiments.study.config import StudyConfig

    seen: list[type[BaseModel]] = []
    todo: list[type[BaseModel]] = [StudyConfig]
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen.append(model)
        for info in model.model_fields.values():
            todo += _models(info.annotation)
    return "\n".join(model_table(m) for m in seen)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return markdown.replace(MARKER, reference()) if MARKER in markdown else markdown
