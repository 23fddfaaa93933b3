"""``eval-agent``: per-endpoint caps honoured across the agent's and the users' clients of one
server, ``--max-concurrency``, per-member units, and ``--executor ray`` giving the local
episodes with the endpoint key kept out of the run directory and Ray's logs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim2human.cli.app import main
from sim2human.experiments.research.member_units import member_units
from sim2human.experiments.study.config import parse_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.testing import FakeOpenAI, Reply, completion

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))  # the tiny LLM study and its caller
from test_llm_study import caller, tiny


def _tiny(base_url: str, cap: int = 8) -> dict[str, Any]:
    raw = tiny(base_url)
    raw["llm"]["endpoints"]["fake"]["max_concurrency"] = cap
    return raw


def _slow_caller(n: int, body: dict[str, Any]) -> Reply:
    """The LLM study's caller, slower, and scoring satisfaction the same whatever the order
    requests arrive in (its own scores by the request's number)."""
    if "How satisfied" in body["messages"][-1]["content"]:
        return Reply(body=completion("7"), delay_s=0.03)
    return Reply(body=caller(n, body).body, delay_s=0.03)


def _eval(study: Path, base_url: str, out: Path, *extra: str) -> int:
    args = ["eval-agent", str(study), "--base-url", base_url, "--model", "fake"]
    return main([*args, "--episodes", "4", "--out", str(out), *extra])


def test_the_study_file_s_cap_holds_for_the_agent_and_the_users_together(tmp_path: Path) -> None:
    """The agent (``--base-url``, cap 8 by default) and the users (``fake``, capped at 1 in the
    study file) talk to one server: it never holds more than 1 request."""
    study = tmp_path / "study.yaml"
    with FakeOpenAI(_slow_caller) as fake:
        study.write_text(yaml.safe_dump(_tiny(fake.base_url, cap=1)))
        assert _eval(study, fake.base_url, tmp_path / "eval") == 0
        assert fake.max_in_flight == 1 and len(fake.seen) > 8


def test_max_concurrency_caps_every_endpoint(tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    with FakeOpenAI(_slow_caller) as fake:
        study.write_text(yaml.safe_dump(_tiny(fake.base_url)))
        assert _eval(study, fake.base_url, tmp_path / "eval", "--max-concurrency", "2") == 0
        assert fake.max_in_flight == 2


def test_study_max_concurrency_caps_every_endpoint_and_resumes_under_another(
    tmp_path: Path,
) -> None:
    """``study --max-concurrency 1``: the endpoint the study file caps at 8 never holds more
    than 1 request (4 conversations in flight would put up to 4 there); the cap is not part of
    the study, so config.yaml keeps the file's 8 and the study resumes under another cap."""
    study, out = tmp_path / "study.yaml", tmp_path / "run"
    with FakeOpenAI(_slow_caller) as fake:
        raw = _tiny(fake.base_url)
        raw["conditions"] = raw["conditions"][:1]  # frozen-llm: every training episode an LLM's
        raw["reference_agents"] = []
        study.write_text(yaml.safe_dump(raw))
        args = ["study", str(study), "--out", str(out), "--workers", "1", "--quiet"]
        assert main([*args, "--max-concurrency", "1"]) == 0
        assert fake.max_in_flight == 1 and len(fake.seen) > 8
        stored = yaml.safe_load((out / "config.yaml").read_text())
        assert stored["llm"]["endpoints"]["fake"]["max_concurrency"] == 8
        assert main([*args, "--resume", "--max-concurrency", "2"]) == 0  # nothing to rerun


def test_units_are_one_per_member_in_the_order_evaluation_plays_them() -> None:
    cfg = parse_study(_tiny("http://127.0.0.1:9/v1"))
    world = StudyWorld.build(cfg)
    groups = [
        ("train", world.ensemble.train + world.llm_train),
        ("heldout", world.ensemble.heldout),
    ]
    units = member_units(groups, 2)
    assert [u.id for u in units] == [u.id for u in member_units(groups, 2)]  # deterministic
    held = [u for u in units if u.id.startswith("heldout/")]
    kinds = [next(s for s in world.ensemble.heldout if s.id == u.args[1]).kind for u in held]
    assert kinds == sorted(kinds, key=lambda k: k == "llm") and "llm" in kinds  # persona first
    assert (
        len({u.id for u in units})
        == len(units)
        == len(world.ensemble.train) + len(world.llm_train) + len(world.ensemble.heldout)
    )


@pytest.mark.slow
def test_ray_gives_the_local_episodes_and_never_shows_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--executor ray`` on a local cluster (started by the command): the same episodes and
    numbers as in-process; the key reaches the workers (the fake endpoint sees it) but appears
    in no file of the run directory and none of Ray's session logs."""
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install ray)")
    secret = "sk-ray2-" + os.urandom(8).hex()
    monkeypatch.setenv("RAY2_TEST_KEY", secret)
    raw_key = ["--api-key-env", "RAY2_TEST_KEY"]
    study = tmp_path / "study.yaml"
    with FakeOpenAI(_slow_caller) as fake:
        raw = _tiny(fake.base_url)
        raw["llm"]["endpoints"]["fake"]["api_key_env"] = "RAY2_TEST_KEY"
        study.write_text(yaml.safe_dump(raw))
        assert _eval(study, fake.base_url, tmp_path / "local", *raw_key) == 0
        ray_args = ["--executor", "ray", "--workers", "2", *raw_key]
        assert _eval(study, fake.base_url, tmp_path / "ray", *ray_args) == 0
        assert all(s.headers.get("authorization") == f"Bearer {secret}" for s in fake.seen)
    local, remote = tmp_path / "local", tmp_path / "ray"
    assert _lines(remote) == _lines(local)  # byte for byte; locally in the order they finish
    rows = [yaml.safe_load((d / "summary.json").read_text())["rows"] for d in (local, remote)]
    assert rows[0] == rows[1]
    shown = [p for p in remote.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    logs = Path("/tmp/ray/session_latest")
    if logs.exists():
        shown += [p for p in logs.rglob("*") if p.is_file() and secret.encode() in _bytes(p)]
    assert shown == []


def _lines(run: Path) -> list[bytes]:
    return sorted((run / "episodes.jsonl").read_bytes().splitlines())


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
