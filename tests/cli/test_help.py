"""Every verb's help: ``-h`` works, an example is shown, and the text is reflowed prose (no
reStructuredText literals, no line breaks inside a paragraph)."""

from __future__ import annotations

import pytest
import typer
from typer.core import TyperCommand, TyperGroup

from sim2human.cli.app import app, main


def _walk(
    command: TyperCommand | TyperGroup, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], TyperCommand | TyperGroup]]:
    found = [(path, command)]
    if isinstance(command, TyperGroup):
        ctx = command.context_class(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert isinstance(sub, TyperCommand | TyperGroup)
            found += _walk(sub, (*path, name))
    return found


COMMANDS = _walk(typer.main.get_command(app))


def test_the_walk_finds_every_verb() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"", "study", "report", "diagnose", "stress", "eval-agent", "human serve"} <= names
    assert len(names) >= 20


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "root")
def test_help_has_an_example_and_clean_prose(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, "-h"]) == 0
    short = capsys.readouterr().out
    assert main([*path, "--help"]) == 0
    assert capsys.readouterr().out == short
    assert "Example" in short, f"sim2human {' '.join(path)} --help shows no example"
    assert "``" not in short
    command = dict(COMMANDS)[path]
    for paragraph in (command.help or "").split("\n\n"):
        assert "\n" not in paragraph, f"hard-wrapped help: {paragraph!r}"


def test_every_option_says_what_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    bare = [
        f"{' '.join(path)} {param.opts[0]}"
        for path, command in COMMANDS
        for param in command.params
        if param.param_type_name == "option" and not getattr(param, "help", None)
    ]
    assert bare == []


@pytest.mark.parametrize("module", ["sim2human", "sim2human.cli"])
def test_python_dash_m_runs_the_command(module: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "sim2human" in done.stdout
