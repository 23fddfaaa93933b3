"""``src/sim2human/scenarios/README.md`` names only files and folders that exist: a scenario's
file moved or renamed fails here until the table says where it went."""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "src" / "sim2human" / "scenarios" / "README.md"
PATHLIKE = re.compile(r"`([\w*./-]+(?:\.(?:py|yaml|md)|/))`")


def named_paths(text: str) -> list[str]:
    """The backticked names in ``text`` that are files (``.py``, ``.yaml``, ``.md``) or folders."""
    return sorted(set(PATHLIKE.findall(text)))


def not_there(names: list[str], paths: list[str]) -> list[str]:
    """The names no path ends with (a name may hold a ``*``)."""
    return [n for n in names if not any(fnmatch(p, f"*/{n.rstrip('/')}") for p in paths)]


def _paths() -> list[str]:
    return [p.as_posix() for top in ("src", "docs") for p in (ROOT / top).rglob("*")]


def test_every_file_the_scenarios_readme_names_exists() -> None:
    named = named_paths(README.read_text(encoding="utf-8"))
    assert len(named) > 30  # the table is read, not skipped
    assert not (gone := not_there(named, _paths())), (
        f"{README.name} names what is not there: {gone}"
    )


def test_the_check_sees_a_name_that_is_gone() -> None:
    names = named_paths("see `intake/parsing.py`, `readers.py`, `intake/data/` and `files/*.py`")
    assert names == ["files/*.py", "intake/data/", "intake/parsing.py", "readers.py"]
    assert not_there(names, _paths()) == ["intake/parsing.py"]
