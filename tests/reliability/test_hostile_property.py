"""Property-based: hostile study configs, run directories and command lines.

Whatever Hypothesis generates, the CLI answers with exit code 0 (a valid input) or 2 (anything
else; 0 or 2 for ``diagnose``, which reads what it can), at most one error line and never a
traceback, touches nothing outside the directory it was given, and stays within a time and
memory bound. Configs are checked with ``study --check`` (the validation a real run does first)
so that no example trains. ``SIM2HUMAN_FUZZ_COUNTS=file.json`` writes how many inputs each
property tried and their outcomes.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_helpers import TINY

from planted_runs import write_sub_run
from sim2human.cli.app import main

COUNTS: Counter[str] = Counter()
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SECONDS = 240.0
"""Per example: a hang guard, not a speed claim (typically well under 1 s; a resume that reruns
a torn sub-run took 99 s once on a loaded 2-core machine)."""
MEGABYTES = 300
"""Peak resident memory an example may add."""


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> Iterator[None]:
    yield
    if path := os.environ.get("SIM2HUMAN_FUZZ_COUNTS"):
        Path(path).write_text(json.dumps(dict(sorted(COUNTS.items())), indent=1) + "\n")


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath) / name
            st_ = p.lstat()
            out[str(p.relative_to(root))] = (st_.st_mtime_ns, st_.st_size)
    return out


def _run(
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    case: Path,
    allowed: Path | None,
    kind: str,
    ok: tuple[int, ...] = (0, 2),
) -> int:
    """Run ``sim2human ARGV`` in-process and check every property; returns the exit code."""
    before = {
        k: v
        for k, v in _tree(case).items()
        if allowed is None or not (case / k).is_relative_to(allowed)
    }
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    capsys.readouterr()
    started = time.monotonic()
    code = main(argv)
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) / 1024
    COUNTS[f"{kind}: tried"] += 1
    COUNTS[f"{kind}: exit {code}"] += 1
    assert code in ok, (argv, err)
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.lower().startswith("error:")]
    assert len(errors) == (1 if code == 2 else 0), err
    assert elapsed < SECONDS, (argv, elapsed)
    assert grown < MEGABYTES, (argv, grown)
    after = {
        k: v
        for k, v in _tree(case).items()
        if allowed is None or not (case / k).is_relative_to(allowed)
    }
    assert after == before, "touched a file outside the output directory"
    return code


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Holds a fresh directory per example (Hypothesis reuses function-scoped fixtures)."""
    return tmp_path_factory.mktemp("fuzz")


# ---- study configs ----------------------------------------------------------------------

HOSTILE = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12),
    st.sampled_from([0, -1, 2**31, 2**63, 10**9, 10**18, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.booleans(),
    st.none(),
    st.lists(st.integers(-3, 3), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
PATHS = [
    ("name",),
    ("seeds",),
    ("seeds", 0),
    ("train",),
    ("train", "episodes"),
    ("train", "batch_episodes"),
    ("train", "epochs"),
    ("train", "max_turns"),
    ("ensemble",),
    ("ensemble", "members_per_family"),
    ("ensemble", "seed"),
    ("ensemble", "train"),
    ("eval", "bootstrap"),
    ("eval", "episodes_per_member"),
    ("conditions",),
    ("conditions", 0, "sampler"),
    ("conditions", 0, "name"),
    ("conditions", 0, "episodes"),
    ("conditions", 0, "sampler_args"),
    ("conditions", 0, "perturb"),
    ("quick",),
    ("llm",),
    ("unknown_key",),
]


def _set(cfg: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        if isinstance(cfg, dict):
            cfg = cfg.setdefault(key, {})
        elif isinstance(cfg, list) and isinstance(key, int) and key < len(cfg):
            cfg = cfg[key]
        else:
            return
    fits = isinstance(cfg, list) and isinstance(path[-1], int) and path[-1] < len(cfg)
    if isinstance(cfg, dict) or fits:
        cfg[path[-1]] = value


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    cfg = json.loads(json.dumps({**TINY, "seeds": [0]}))
    for _ in range(draw(st.integers(0, 3))):
        _set(cfg, draw(st.sampled_from(PATHS)), draw(HOSTILE))
    if draw(st.booleans()):
        cfg["seeds"] = draw(st.lists(st.integers(-2, 3), min_size=0, max_size=4))
    return cfg


@settings(SETTINGS, max_examples=60)
@given(cfg=configs())
def test_hostile_config_values(
    cfg: dict[str, Any], fuzz_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case_dir = Path(tempfile.mkdtemp(dir=fuzz_root))
    path = case_dir / "study.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = case_dir / "out"
    _run(capsys, ["study", str(path), "--out", str(out), "--check"], case_dir, None, "config")
    assert not out.exists()


def _laughs(depth: int, width: int) -> str:
    lines = ["l0: &l0 [" + ",".join(['"lol"'] * width) + "]"]
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * width) + "]" for i in range(1, depth)]
    return "\n".join(lines) + "\n"


TEXT_ATTACKS = st.one_of(
    st.builds(lambda n: "a: " + "[" * n + "]" * n + "\n", st.integers(10, 3000)),
    st.builds(
        lambda n: "a:\n" + "".join(f"{' ' * (2 * i)}- x:\n" for i in range(n)), st.integers(10, 400)
    ),
    st.builds(_laughs, st.integers(2, 10), st.integers(2, 12)),
    st.just("a: &a [*a]\n"),
    st.just("a: &a {b: *a}\n"),
    st.builds(lambda k: f"{k}: 1\n{k}: 2\n", st.sampled_from(["name", "seeds", "x"])),
    st.text(max_size=200),
    st.just("*undefined\n"),
    st.just("!!python/object/apply:os.system ['echo hacked']\n"),
    st.just("%YAML 9.9\n---\na: 1\n"),
    st.just("--- 1\n--- 2\n"),
)


@settings(SETTINGS, max_examples=40)
@given(
    text=TEXT_ATTACKS,
    prefix=st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\x00", b"\x80"]),
    encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]),
    cut=st.none() | st.integers(0, 400),
)
def test_hostile_config_text(
    text: str,
    prefix: bytes,
    encoding: str,
    cut: int | None,
    fuzz_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case_dir = Path(tempfile.mkdtemp(dir=fuzz_root))
    data = prefix + text.encode(encoding, errors="replace")
    path = case_dir / "study.yaml"
    path.write_bytes(data if cut is None else data[:cut])
    argv = ["study", str(path), "--out", str(case_dir / "out"), "--check"]
    assert _run(capsys, argv, case_dir, None, "config text") == 2  # none is a valid study


# ---- run directories ----------------------------------------------------------------------

FILES = [
    "study.json",
    "config.yaml",
    "config.json",
    "summary.json",
    "members.json",
    "episodes.jsonl",
    "metrics.jsonl",
    "checkpoint.pt",
]
SHAPES = [
    "missing",
    "valid",
    "garbage",
    "list",
    "empty",
    "directory",
    "fifo",
    "deep",
    "duplicate",
    "latin1",
]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sub_run(tmp_path_factory.mktemp("planted") / "sub", exploit=False, per_member=2)


def _shape(path: Path, shape: str, valid: Path) -> None:
    if shape == "missing":
        return
    if shape == "valid":
        if valid.exists():
            shutil.copy(valid, path)
        elif path.name == "config.yaml":
            path.write_text(yaml.safe_dump(TINY))
        return
    if shape == "directory":
        path.mkdir()
    elif shape == "fifo" and hasattr(os, "mkfifo"):
        os.mkfifo(path)
    elif shape == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    elif shape == "duplicate" and valid.exists():
        lines = valid.read_text().splitlines()
        path.write_text("\n".join([*lines, *lines[:1]]) + "\n")
    else:
        data = {
            "garbage": b"\x00\xffnot json {",
            "list": b"[1, 2, 3]\n",
            "empty": b"",
            "latin1": "caf\xe9".encode("latin-1"),
            "duplicate": b"{}\n",
        }
        path.write_bytes(data.get(shape, b"x"))


@settings(SETTINGS, max_examples=20)
@given(
    shapes=st.fixed_dictionaries({f: st.sampled_from(SHAPES) for f in FILES}),
    study_layout=st.booleans(),
    command=st.sampled_from(["diagnose", "stress", "resume"]),
)
def test_hostile_run_directories(
    shapes: dict[str, str],
    study_layout: bool,
    command: str,
    planted: Path,
    fuzz_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case_dir = Path(tempfile.mkdtemp(dir=fuzz_root))
    run = case_dir / "run"
    sub = run / "conditions" / "ensemble-uniform" / "seed-0" if study_layout else run
    sub.mkdir(parents=True)
    for name, shape in shapes.items():
        top = name in ("study.json", "config.yaml")
        _shape((run if top else sub) / name, shape, planted / name)
    config = case_dir / "study.yaml"
    config.write_text(yaml.safe_dump({**TINY, "seeds": [0]}))
    argv = {
        "diagnose": ["diagnose", str(run)],
        # checkpoints here are never real ones: stress must stop before any work
        "stress": ["stress", str(run), "--no-search", "--workers", "1"],
        "resume": ["study", str(config), "--out", str(run), "--resume", "--workers", "1"],
    }[command]
    if command == "resume" and shapes["config.yaml"] == "valid":
        (run / "config.yaml").write_text("name: a-different-study\n")  # never trains here
    ok = (0, 2) if command == "diagnose" else (2,)
    _run(capsys, argv, case_dir, run, f"run dir ({command})", ok)


# ---- command lines -------------------------------------------------------------------------

BAD_NUMBERS = st.sampled_from(["-1", "0", "70000", "1e9", "nan", "", "x", "99999999999999999999"])


@st.composite
def command_lines(draw: st.DrawFn, paths: dict[str, str]) -> list[str]:
    """A command with at least one bad argument, so that none of them does real work."""
    hostile_path = draw(
        st.sampled_from(
            [paths[k] for k in ("missing", "dir", "fifo", "device", "garbage", "bad_yaml")]
        )
    )
    command = draw(
        st.sampled_from(
            ["study", "stress", "report", "diagnose", "eval-agent", "serve", "demo", "unknown"]
        )
    )
    options = {
        "study": ["--out", "--workers", "--quick", "--resume", "--check"],
        "stress": [
            "--out",
            "--grid",
            "--episodes-per-member",
            "--threshold",
            "--workers",
            "--search-on",
            "--conditions",
            "--perturbations",
        ],
        "report": ["--condition"],
        "diagnose": ["--condition", "--max-gap", "--max-drop", "--max-loss"],
        "eval-agent": ["--split", "--episodes", "--system-prompt", "--out", "--base-url"],
        "serve": ["--port", "--parallel", "--threads"],
        "demo": ["--workers"],
        "unknown": [],
    }[command]
    argv = {"serve": ["model", "serve"], "demo": ["demo"]}.get(command, [command])
    if command in ("study", "stress", "report", "diagnose", "eval-agent", "unknown"):
        argv.append(hostile_path)
    flags = ("--quick", "--resume", "--check")
    chosen = draw(st.lists(st.sampled_from(options), max_size=3, unique=True)) if options else []
    for opt in chosen:
        value = draw(
            st.one_of(BAD_NUMBERS, st.sampled_from(list(paths.values())), st.text(max_size=8))
        )
        argv += [opt] if opt in flags else [opt, value]
    if command == "serve":
        argv += ["--port", draw(BAD_NUMBERS)]
    if command == "demo":
        argv += ["--workers", draw(st.sampled_from(["0", "-3", "x", "100000"]))]
    return argv


@pytest.fixture(scope="module")
def hostile_paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("paths")
    (root / "dir").mkdir()
    (root / "garbage").write_bytes(b"\x00\xff\xfe garbage")
    (root / "bad_yaml").write_text("name: [unclosed\n")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "fifo")
    return {
        "missing": str(root / "missing"),
        "dir": str(root / "dir"),
        "fifo": str(root / "fifo"),
        "device": "/dev/null" if sys.platform != "win32" else str(root / "missing"),
        "garbage": str(root / "garbage"),
        "bad_yaml": str(root / "bad_yaml"),
    }


@settings(SETTINGS, max_examples=50)
@given(data=st.data())
def test_hostile_command_lines(
    data: st.DataObject,
    hostile_paths: dict[str, str],
    fuzz_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case_dir = Path(tempfile.mkdtemp(dir=fuzz_root))
    argv = data.draw(command_lines(hostile_paths))
    cwd = Path.cwd()
    os.chdir(case_dir)  # a default output directory would land here, and must not appear
    try:
        _run(capsys, argv, case_dir, None, "command line", (2,))
    finally:
        os.chdir(cwd)


@settings(SETTINGS, max_examples=15)
@given(
    quick=st.booleans(),
    workers=st.none() | st.integers(1, 8),
    seeds=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=5, unique=True),
)
def test_valid_command_lines_pass(
    quick: bool,
    workers: int | None,
    seeds: list[int],
    fuzz_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case_dir = Path(tempfile.mkdtemp(dir=fuzz_root))
    path = case_dir / "study.yaml"
    path.write_text(yaml.safe_dump({**TINY, "seeds": seeds}))
    argv = ["study", str(path), "--out", str(case_dir / "out"), "--check"]
    argv += ["--quick"] * quick + (["--workers", str(workers)] if workers else [])
    assert _run(capsys, argv, case_dir, None, "valid command line", (0,)) == 0
