"""The exit-code table in docs/reference/cli.md names every error class with its exit code."""

from __future__ import annotations

import re
from pathlib import Path

from sim2human import errors

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md"


def _table() -> dict[int, set[str]]:
    rows: dict[int, set[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            rows[int(cells[0])] = set(re.findall(r"`(\w+)`", cells[2]))
    return rows


def _classes() -> list[type[errors.Sim2HumanError]]:
    found = [errors.Sim2HumanError]
    for cls in found:
        found += cls.__subclasses__()
    return list(dict.fromkeys(found))


def test_every_error_class_is_listed_under_its_exit_code() -> None:
    table = _table()
    assert set(table) == {0, 1, 2, 3, 130, 143}
    listed = {name: code for code, names in table.items() for name in names}
    tree = [cls for cls in _classes() if cls.__module__ == errors.__name__]
    assert listed == {cls.__name__: cls.exit_code for cls in tree}
    # subclasses elsewhere (say, a torn sub-run) exit with a documented code too
    assert {cls.exit_code for cls in _classes()} <= set(table)


def test_the_check_sees_subclasses_defined_elsewhere() -> None:
    import sim2human.experiments.study.runner  # noqa: F401 (defines its own error subclasses)

    assert any(cls.__module__ != errors.__name__ for cls in _classes())


def test_the_module_docstring_names_the_page() -> None:
    assert "docs/reference/cli.md" in (errors.__doc__ or "")
