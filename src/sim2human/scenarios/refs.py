"""What a study's ``scenario:`` may name, and the scenario it names.

A reference is one of: a name registered in ``scenarios.catalog.SCENARIOS``; a path to a
scenario file (``.yaml``/``.yml``, or any path with a slash); ``module:Name``, a Python scenario
class (no edit of the installed package); or the name of an entry point in the
``sim2human.scenarios`` group (a packaged scenario).

A run directory is data, never code. ``module:Name`` is imported from installed packages
(``sys.path`` without the working directory) and from the folders ``allowing`` names: ``study``
and ``eval-agent`` allow the working directory (the user's own study file names the class, as
docs/guides/scenario-files.md promises), a reader allows only what its ``--scenario-path``
gives. Before, every resolution put the working directory on ``sys.path``, so ``cd RUN &&
sim2human view .`` ran a module shipped inside a downloaded run that named it. The folders
travel in ``SCENARIO_PATH_ENV``, so a study's spawned workers resolve what their parent did.
An import is also contained: whatever it raises (``SystemExit`` included) is one line, and
``sys.path`` is restored from a copy whatever the module did to it.

A scenario is known everywhere by its reference (``Scenario.name``: what stored episodes carry
and every reader of a run directory resolves again): a file's is its absolute path, a class's
its ``module:Name`` (a subclass renames the class: it must not find its own data files by
``self.name``). So a run made from a file or a class opens again wherever that file or module
is found.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from sim2human.errors import UsageError
from sim2human.scenarios.capabilities import CORE_MEMBERS
from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.files.load import load_scenario_file

GROUP = "sim2human.scenarios"
"""The entry-point group of packaged scenarios (``[project.entry-points."sim2human.scenarios"]``,
``name = "package.module:Class"``)."""
MEMBERS = CORE_MEMBERS
"""What a Python scenario must have to be played: the core's members (``scenarios.core.Scenario``;
its ``name`` is the reference). Whatever else a consumer needs is an optional capability with a
default or a one-line refusal (``scenarios.capabilities``)."""

SCENARIO_PATH_ENV = "SIM2HUMAN_SCENARIO_PATH"
"""The folders (``os.pathsep``-separated) a ``module:Name`` may be imported from besides the
installed packages: set by ``allowing``, inherited by spawned workers."""

Table = Mapping[str, Callable[[], AnyScenario]]


@contextmanager
def allowing(*folders: Path) -> Iterator[None]:
    """Within the block, ``module:Name`` may also be imported from ``folders`` (in this process
    and the workers it spawns); what was allowed before it is allowed again after (``allow``
    inside the block included): the command's ``main`` runs every verb in one."""
    before = os.environ.get(SCENARIO_PATH_ENV)
    allow(*folders)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SCENARIO_PATH_ENV, None)
        else:
            os.environ[SCENARIO_PATH_ENV] = before


def allow(*folders: Path) -> None:
    """Let ``module:Name`` be imported from ``folders`` too, until the enclosing ``allowing``
    ends (a verb's ``--scenario-path``; ``study`` and ``eval-agent`` allow the working
    directory, from which their user's own study file names its class)."""
    now = [*allowed_folders(), *(str(f.expanduser().resolve()) for f in folders)]
    os.environ[SCENARIO_PATH_ENV] = os.pathsep.join(dict.fromkeys(now))


def allowed_folders() -> list[str]:
    """The folders ``allowing`` has named, besides the installed packages."""
    return [p for p in os.environ.get(SCENARIO_PATH_ENV, "").split(os.pathsep) if p]


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
        _named(_python(ref), ref)  # a class that cannot be built fails here, not in a worker
        return ref
    if (point := _entry_point(ref)) is not None:
        _named(point, ref)
        return ref
    known = ", ".join(sorted(table))
    raise UsageError(
        f"unknown scenario {ref!r} (known: {known}); or give a scenario file's path (.yaml) "
        "or module:Name of a Python scenario class"
    )


def build(ref: str, table: Table) -> AnyScenario:
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


def _file(path: Path) -> AnyScenario:
    try:
        st = path.stat()
    except OSError:
        raise UsageError(f"{path}: no such scenario file") from None
    return _cached_file(path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=16)
def _cached_file(path: Path, mtime_ns: int, size: int) -> AnyScenario:
    """Loaded once per version of the file (``RunDir.scenario`` asks again and again)."""
    return load_scenario_file(path, name=str(path))


def _python(ref: str) -> type[Any]:
    module_name, _, name = ref.partition(":")
    if not module_name or not name:
        raise UsageError(f"scenario {ref!r}: expected module:Name, e.g. my_tasks:RepairDesk")
    module = import_module(module_name, f"scenario {ref!r}")
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"scenario {ref!r}: {module_name!r} has no {name!r}")
        obj = getattr(obj, part)
    return _scenario_class(obj, ref)


def import_module(module_name: str, what: str) -> ModuleType:
    """``module_name`` imported from the installed packages and ``allowed_folders`` only, never
    from the working directory; whatever the import raises is one ``UsageError`` (what, the
    module, why), and ``sys.path`` is the same list after as before."""
    saved = sys.path.copy()
    folders = allowed_folders()
    sys.path[:] = [*folders, *_without_working_dir(saved)]
    try:
        return importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # SystemExit too: a module that exits is the user's module's
        where = _where(err, module_name, folders)
        raise UsageError(f"{what}: cannot import {module_name!r} ({_why(err)}){where}") from None
    finally:
        sys.path[:] = saved


def _without_working_dir(path: list[str]) -> list[str]:
    """``sys.path`` without ``""`` and ``"."``, the entries that mean whatever the working
    directory is (an interactive session's). Absolute folders stay: a script's own folder, and
    one the user put on ``PYTHONPATH``, were their decision; ``python -m sim2human`` drops the
    working directory it would put first (``sim2human.__main__``)."""
    return [p for p in path if p not in ("", ".")]


def _why(err: BaseException) -> str:
    """An error's own words; one that is not an ``Exception`` (``SystemExit``) named too."""
    text = str(err)
    if isinstance(err, Exception):
        return text or type(err).__name__
    return f"it raised {type(err).__name__}" + (f": {text}" if text else "")


def _where(err: BaseException, module_name: str, folders: list[str]) -> str:
    """For a module that is not found: where it was looked for, and how to name its folder."""
    if not isinstance(err, ModuleNotFoundError) or err.name != module_name.split(".")[0]:
        return ""
    if not folders:
        return (
            "; a stored module:Name is imported from installed packages only, never from the "
            "run or the working directory: give its folder with --scenario-path DIR"
        )
    return (
        f"; looked in installed packages and {', '.join(folders)}: run from the folder holding "
        "it, or name that folder (--scenario-path DIR, PYTHONPATH)"
    )


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
            f"{', '.join(missing)}; implement sim2human.scenarios.core.Scenario, or subclass "
            "sim2human.scenarios.slots.SlotFilling for slot filling)"
        )
    return obj


def _named(cls: type[Any], ref: str) -> AnyScenario:
    """An instance of ``cls`` known by ``ref`` (a subclass that only renames it)."""
    named = type(cls.__name__, (cls,), {"name": ref, "__module__": cls.__module__})
    try:
        return cast(AnyScenario, named())
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # the user's constructor failed (or exited): one line
        raise UsageError(f"scenario {ref!r}: {cls.__name__}() failed: {_why(err)}") from None
