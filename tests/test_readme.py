"""The README's snippets run: the fenced block after each ``<!-- readme-test: NAME -->``."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sim2human.cli.app import main
from sim2human.testing import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"<!-- readme-test: ([a-z-]+) -->\n```[a-z]*\n(.*?)```", re.DOTALL)
SNIPPETS = dict(BLOCK.findall(README))
LOCAL = "http://localhost:8000/v1"


def in_fresh_dir(tmp_path: Path) -> dict[str, str]:
    """A working directory holding ``examples/`` as a fresh clone does, and an environment
    whose ``sim2human`` is this interpreter's."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= 200
    assert set(SNIPPETS) == {"llm", "python", "commands"}
    for name in ("llm", "python"):
        assert len(SNIPPETS[name].strip().splitlines()) < 15, name


def test_the_test_command_is_what_ci_runs() -> None:
    assert "scripts/setup --dev && scripts/test\n" in README
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == "scripts/setup --dev && scripts/test"


def test_the_llm_snippet_runs_against_an_endpoint(tmp_path: Path) -> None:
    snippet = SNIPPETS["llm"]
    assert LOCAL in snippet
    env = in_fresh_dir(tmp_path)
    with FakeOpenAI() as fake:
        script = "set -euo pipefail\n" + snippet.replace(LOCAL, fake.base_url)
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        asked = len(fake.seen)
    assert done.returncode == 0, done.stderr[-2000:]
    assert asked > 0  # the agent's turns came from the endpoint
    run = tmp_path / "runs" / "my-llm"
    assert (run / "episodes.jsonl").stat().st_size > 0
    for name in ("report.html", "report.md", "report.json"):
        assert (run / name).is_file(), name


def test_the_python_snippet_runs(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(SNIPPETS["python"])
    env = in_fresh_dir(tmp_path)
    done = subprocess.run(
        [sys.executable, "agent.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.fullmatch(r"held-out gold: \d+ of \d+ calls\n", done.stdout), done.stdout
    assert (tmp_path / "runs" / "my-agent" / "episodes.jsonl").stat().st_size > 0


def verbs(line: str) -> list[str]:
    """``sim2human human serve RUN_DIR ...`` -> ``["human", "serve"]``."""
    words = shlex.split(line.split("#")[0])[1:]
    return words[:2] if words[0] in {"human", "model"} else words[:1]


@pytest.mark.parametrize(
    "line", [ln for ln in SNIPPETS["commands"].splitlines() if ln.startswith("sim2human ")]
)
def test_every_listed_command_exists(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*verbs(line), "--help"]) == 0
    assert "Usage" in capsys.readouterr().out


def test_the_readme_links_resolve() -> None:
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if target.startswith(("http://", "https://")):
            continue
        assert (ROOT / target).exists(), target
