"""A run directory is data, never code (audit 2026-12 findings 1 and 8).

A downloaded run that names ``scenario: evilmod:X`` and ships ``evilmod.py`` used to run it in
every reader (``cd RUN && sim2human view .``: ``refs`` put the working directory on
``sys.path``). Now a stored ``module:Name`` is imported from installed packages and the
reader's ``--scenario-path`` only, and the reader says so in one line. The user's own study
file still names a class in the working directory, as the guide promises. A module that exits,
edits ``sys.path`` or whose class cannot be built, and a scenario file that ``scenario check``
fails, are each one line at ``study --check``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from importlib import resources
from pathlib import Path

import pytest
import yaml
from reliability_helpers import TINY, assert_one_clear_error, run_cli

from planted_runs import write_sub_run
from sim2human.store.layout import EPISODES

SCENARIO_PATH_ENV = "SIM2HUMAN_SCENARIO_PATH"  # scenarios.refs: what a verb allows
SKELETON = resources.files("sim2human.scenarios").joinpath("skeleton")


def evil_run(root: Path, module: str) -> tuple[Path, Path]:
    """A planted sub-run whose episodes name ``module:X`` and that ships ``module.py``, which
    writes a marker file when it is imported; (run, marker)."""
    run = write_sub_run(root / "evil", exploit=False, per_member=2)
    log = run / EPISODES
    log.write_text(log.read_text().replace('"scenario":"intake"', f'"scenario":"{module}:X"'))
    assert f"{module}:X" in log.read_text()
    marker = root / "PWNED"
    (run / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    return run, marker


def in_run(run: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m sim2human ARGV`` started inside ``run`` (the working directory first on
    ``sys.path``, as ``python -m`` puts it), with nothing allowed by the environment."""
    env = {k: v for k, v in os.environ.items() if k != SCENARIO_PATH_ENV}
    return subprocess.run(
        [sys.executable, "-m", "sim2human", *argv],
        cwd=run,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["view", ".", "--out", "{out}/v.html"],
        ["report", ".", "--out", "{out}/r"],
        ["diagnose", ".", "--out", "{out}/d"],
        ["fidelity", ".", "--embedder", "lexical", "--out", "{out}/f"],
        ["export", ".", "--out", "{out}/e.jsonl"],
    ],
)
def test_a_reader_never_imports_a_module_the_run_ships(tmp_path: Path, argv: list[str]) -> None:
    module = f"evilmod_{uuid.uuid4().hex[:8]}"
    run, marker = evil_run(tmp_path, module)
    done = in_run(run, *(a.format(out=tmp_path) for a in argv))
    assert not marker.exists(), "the reader ran code from the run directory"
    assert "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if module in line]
    assert said and "--scenario-path DIR" in said[0], done.stderr
    if argv[0] == "export":  # exported all the same, without the agent's system prompt
        assert done.returncode == 0 and "records carry no system prompt" in done.stderr
    else:
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert done.returncode == 2 and len(errors) == 1 and module in errors[0]


def test_scenario_path_is_the_readers_explicit_opt_in(tmp_path: Path) -> None:
    module = f"evilmod_{uuid.uuid4().hex[:8]}"
    run, marker = evil_run(tmp_path, module)
    done = in_run(run, "view", ".", "--out", str(tmp_path / "v.html"), "--scenario-path", ".")
    assert marker.exists() and "has no 'X'" in done.stderr  # imported: the user asked for it
    done = in_run(run, "view", ".", "--scenario-path", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "not a folder" in done.stderr


def test_a_users_own_study_file_still_names_a_class_in_the_working_directory(
    tmp_path: Path,
) -> None:
    """docs/guides/scenario-files.md: ``my_tasks:RepairDesk`` "in a module importable from
    the working directory"; ``study --check`` in a fresh process, as a user runs it."""
    module = f"my_tasks_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(
        "from sim2human.testing import TinyScenario\n\nclass Desk(TinyScenario):\n    pass\n"
    )
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({**TINY, "scenario": f"{module}:Desk"}))
    done = in_run(tmp_path, "study", "s.yaml", "--check")
    assert done.returncode == 0 and "valid" in done.stderr, done.stderr


@pytest.fixture
def own_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A working directory with a study file naming ``MODULE:X``; write ``MODULE.py`` in it."""
    module = f"edge_{uuid.uuid4().hex[:8]}"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({**TINY, "scenario": f"{module}:X"}))
    yield tmp_path, module
    sys.modules.pop(module, None)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("raise SystemExit(0)\n", "it raised SystemExit: 0"),
        ("import sys\nsys.path.insert(0, '/nowhere')\nraise ValueError('no')\n", "(no)"),
        (
            "import sys\nsys.path.remove(sys.path[-1])\n"
            "from sim2human.testing import TinyScenario\n"
            "class X(TinyScenario):\n    def __init__(self):\n        raise OSError('no db')\n",
            "X() failed: no db",
        ),
        (
            "from sim2human.testing import TinyScenario\n"
            "class X(TinyScenario):\n    def __init__(self):\n        raise SystemExit(3)\n",
            "X() failed: it raised SystemExit: 3",
        ),
    ],
    ids=["exits", "edits-sys-path", "constructor-fails", "constructor-exits"],
)
def test_a_module_that_exits_edits_sys_path_or_cannot_be_built_is_one_line_at_check(
    own_module: tuple[Path, str], capsys: pytest.CaptureFixture[str], body: str, needle: str
) -> None:
    folder, module = own_module
    (folder / f"{module}.py").write_text(body)
    before = sys.path.copy()
    code, err = run_cli(capsys, "study", str(folder / "s.yaml"), "--check")
    assert sys.path == before
    assert_one_clear_error(code, err, f"scenario '{module}:X'", needle)


def test_study_refuses_a_scenario_file_that_scenario_check_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Dates in the year 227 load, but the scenario cannot hear its own callers say them."""
    text = SKELETON.joinpath("scenario.yaml").read_text(encoding="utf-8")
    (tmp_path / "areas.txt").write_text(SKELETON.joinpath("areas.txt").read_text("utf-8"))
    bad = text.replace("__NAME__", "y227").replace(
        "2027-01-01, 2027-12-31", "0227-01-01, 0227-12-31"
    )
    assert bad != text.replace("__NAME__", "y227")
    (tmp_path / "y227.yaml").write_text(bad)
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump({**TINY, "scenario": "y227.yaml"}))
    for argv in (["--check"], ["--out", str(tmp_path / "run")]):
        code, err = run_cli(capsys, "study", str(study), *argv)
        # refused when the file loads (every say line is played back since the callers work),
        # before the study's own run of `scenario check` is reached
        assert_one_clear_error(code, err, "y227.yaml:", "the field hears None")
    assert not (tmp_path / "run").exists()
