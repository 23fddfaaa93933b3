"""What a study's ``scenario:`` may name, and the scenario it names.

A reference is one of: a name registered in ``scenarios.catalog.SCENARIOS``; a path to a
scenario file (``.yaml``/``.yml``, or any path with a slash); ``module:Name``, a Python scenario
class importable from the working directory or the path (no edit of the installed package);
or the name of an entry point in the ``sim2human.scenarios`` group (a packaged scenario).

A scenario is known everywhere by its reference (``Scenario.name``: what stored episodes carry
and every reader of a run directory resolves again): a file's is its absolute path, a class's
its ``module:Name`` (a subclass renames the class: it must not find its own data files by
``self.name``). So a run made from a file or a class opens again wherever that file or module
is found.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, cast

from sim2human.errors import UsageError
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.file_load import load_scenario_file

GROUP = "sim2human.scenarios"
"""The entry-point group of packaged scenarios (``[project.entry-points."sim2human.scenarios"]``,
``name = "package.module:Class"``)."""
MEMBERS = ("sample_profile", "grade", "acts", "voice", "fields", "extract", "interpret", "say")
"""What a Python scenario must have to be played (the slot kit's ``SlotScenario``)."""

Table = Mapping[str, Callable[[], Scenario]]


def is_path(ref: str) -> bool:
    return ref.endswith((".yaml", ".yml")) or "/" in ref or "\\" in ref


def canonical(ref: str, table: Table) -> str:
    """``ref`` as studies store it, checked to name a scenario that loads (else UsageError)."""
    if ref in table:
        return ref
    if is_path(ref):
        path = Path(ref).expanduser().resolve()
        _file(path)
        return str(path)
    if ":" in ref:
        _python(ref)
        return ref
    if _entry_point(ref) is not None:
        return ref
    known = ", ".join(sorted(table))
    raise UsageError(
        f"unknown scenario {ref!r} (known: {known}); or give a scenario file's path (.yaml) "
        "or module:Name of a Python scenario class"
    )


def build(ref: str, table: Table) -> Scenario:
    """The scenario ``ref`` names (``canonical`` first: a stored reference is canonical)."""
    ref = canonical(ref, table)
    if ref in table:
        return table[ref]()
    if is_path(ref):
        return _file(Path(ref))
    if ":" in ref:
        return _named(_python(ref), ref)
    point = _entry_point(ref)
    assert point is not None
    return _named(point, ref)


def _file(path: Path) -> Scenario:
    try:
        st = path.stat()
    except OSError:
        raise UsageError(f"{path}: no such scenario file") from None
    return _cached_file(path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=16)
def _cached_file(path: Path, mtime_ns: int, size: int) -> Scenario:
    """Loaded once per version of the file (``RunDir.scenario`` asks again and again)."""
    return cast(Scenario, load_scenario_file(path, name=str(path)))


def _python(ref: str) -> type[Any]:
    module_name, _, name = ref.partition(":")
    if not module_name or not name:
        raise UsageError(f"scenario {ref!r}: expected module:Name, e.g. my_tasks:RepairDesk")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # an import that fails for any reason is the user's module's
        raise UsageError(f"scenario {ref!r}: cannot import {module_name!r} ({err})") from None
    finally:
        sys.path.remove(str(Path.cwd()))
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"scenario {ref!r}: {module_name!r} has no {name!r}")
        obj = getattr(obj, part)
    return _scenario_class(obj, ref)


def _entry_point(ref: str) -> type[Any] | None:
    found = entry_points(group=GROUP, name=ref)
    if not found:
        return None
    point = next(iter(found))
    try:
        obj = point.load()
    except Exception as err:  # a broken packaged scenario is named, not a traceback
        raise UsageError(f"scenario {ref!r} (entry point {point.value}): {err}") from None
    return _scenario_class(obj, ref)


def _scenario_class(obj: object, ref: str) -> type[Any]:
    if not inspect.isclass(obj):
        raise UsageError(f"scenario {ref!r}: a scenario class, got {type(obj).__name__}")
    if missing := [m for m in MEMBERS if not hasattr(obj, m)]:
        raise UsageError(
            f"scenario {ref!r}: {obj.__name__} is not a scenario class (it has no "
            f"{', '.join(missing)}; subclass sim2human.scenarios.slots.SlotFilling)"
        )
    return obj


def _named(cls: type[Any], ref: str) -> Scenario:
    """An instance of ``cls`` known by ``ref`` (a subclass that only renames it)."""
    named = type(cls.__name__, (cls,), {"name": ref, "__module__": cls.__module__})
    try:
        return cast(Scenario, named())
    except Exception as err:  # the user's constructor failed: say so in one line
        raise UsageError(f"scenario {ref!r}: {cls.__name__}() failed: {err}") from None
