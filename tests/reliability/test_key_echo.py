"""An endpoint that echoes the caller's ``Authorization`` header, against every way a key could
leave the server: a study, ``eval-agent`` and ``human serve``. Every file each one writes, its
stdout and stderr, the pages a participant gets and the server's log are searched for the key.

The echo comes in two forms. An error body (HTTP 500 whose message quotes the header) is
redacted wherever it is quoted. A 200 completion whose *content* quotes the header is the
model's output: it is kept as the model wrote it, except that the configured key's exact value is
removed (patterns are not applied to a model's text: they could alter a legitimate answer, and
the key itself is the one thing a model cannot know unless the endpoint leaks it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from sim2human.cli.app import main
from sim2human.store.rundir import read_episodes
from sim2human.testing import FakeOpenAI, Reply, completion

KEY = "sk-test-KEYECHO-123456789abcdef"
ENV = "S2H_KEYECHO_TEST_KEY"
TESTS = Path(__file__).resolve().parents[1]


class Echo:
    """A script for ``FakeOpenAI``: answers the probe (a one-token request), then every
    ``every``-th request with a 500 quoting the request's Authorization header; the others with
    an answer, one in ``leak`` of which also quotes the header in its content."""

    def __init__(self, every: int = 1, leak: int = 0, probe: bool = True) -> None:
        self.every, self.leak, self.probe = every, leak, probe
        self.fake = FakeOpenAI(self)

    def __call__(self, n: int, body: dict[str, Any]) -> Reply:
        auth = self.fake.seen[n].headers.get("authorization", "")
        if body.get("max_tokens") == 1 and self.probe:
            return Reply(body=completion("ok"))
        if n % self.every == 0:
            return Reply(status=500, body={"error": {"message": f"boom, you sent {auth}"}})
        last = str(body["messages"][-1]["content"])
        said = "7" if "How satisfied" in last else "Hello, it is about my headache."
        if self.leak and n % self.leak == 0:
            said += f" You sent {auth}."
        return Reply(body=completion(said))

    def __enter__(self) -> Echo:
        self.fake.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.__exit__(*exc)


@pytest.fixture()
def key_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(ENV, KEY)
    yield


def leaks(root: Path) -> list[Path]:
    """Every file under ``root`` that holds the key (as bytes, in any file type)."""
    return [p for p in root.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]


def study_config(base_url: str, cache: Path) -> dict[str, Any]:
    members = {"members": 1, "endpoint": "echo", "max_tokens": 8}
    return {
        "name": "key-echo",
        "seeds": [0],
        "train": {"episodes": 16, "batch_episodes": 8, "epochs": 1, "max_turns": 3},
        "ensemble": {
            "train": ["cooperative"],
            "heldout": ["terse-guarded"],
            "members_per_family": 1,
            "llm": {
                "train": {"families": ["chatty"], "prompts": ["plain"], **members},
                "heldout": {"families": ["noisy-line"], "prompts": ["story"], **members},
            },
        },
        "eval": {"episodes_per_member": 2, "llm_episodes_per_member": 2, "bootstrap": 100},
        "llm": {
            "endpoints": {
                "echo": {
                    "base_url": base_url,
                    "model": "secret-model",
                    "api_key_env": ENV,
                    "timeout_s": 5,
                    "max_retries": 0,
                    "backoff_s": 0.01,
                }
            },
            "cache": str(cache),
            "conversations": 4,
        },
        "conditions": [
            {
                "name": "frozen-llm",
                "sampler": "fixed",
                "simulator": {
                    "family": "standard",
                    "temperature": 0,
                    "llm": {"endpoint": "echo", "judge": "llm", "max_tokens": 8},
                },
            }
        ],
    }


@pytest.mark.slow
def test_a_study_writes_the_key_nowhere(
    tmp_path: Path, key_env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    out, cache = tmp_path / "run", tmp_path / "llm-cache.sqlite"
    with Echo(every=3, leak=4) as echo:
        config = tmp_path / "study.yaml"
        config.write_text(yaml.safe_dump(study_config(echo.fake.base_url, cache)))
        code = main(["study", str(config), "--out", str(out), "--workers", "1"])
        seen = list(echo.fake.seen)
    printed = capfd.readouterr()
    assert code == 0, printed.err
    assert all(s.headers["authorization"] == f"Bearer {KEY}" for s in seen)
    episodes = read_episodes(out / "conditions" / "frozen-llm" / "seed-0" / "episodes.jsonl")
    errors = [e.error for e in episodes if e.error is not None]
    # The echo was exercised: failed episodes quote the upstream body, with the key scrubbed.
    assert errors and all("boom, you sent Bearer [redacted]" in e for e in errors), errors[:2]
    said = [t.text for e in episodes for t in e.turns]
    assert any("You sent Bearer [redacted]." in t for t in said)  # the 200 echo, key removed
    assert leaks(out) == [] and leaks(tmp_path) == []  # the LLM cache included
    assert KEY not in printed.out and KEY not in printed.err


def eval_agent_argv(study: Path, base_url: str, out: Path) -> list[str]:
    return [
        "eval-agent",
        str(study),
        "--base-url",
        base_url,
        "--model",
        "secret-model",
        "--api-key-env",
        ENV,
        "--episodes",
        "1",
        "--timeout-s",
        "5",
        "--out",
        str(out),
    ]


def test_eval_agent_writes_and_prints_the_key_nowhere(
    tmp_path: Path, key_env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ea"
    with Echo(every=1) as echo:  # the probe passes, then every request is an echoing 500
        study = tmp_path / "study.yaml"
        study.write_text(
            yaml.safe_dump(study_config(echo.fake.base_url, tmp_path / "llm-cache.sqlite"))
        )
        code = main(eval_agent_argv(study, echo.fake.base_url, out))
    printed = capfd.readouterr()
    assert code == 0, printed.err
    errors = [e.error for e in read_episodes(out / "episodes.jsonl") if e.error is not None]
    assert len(errors) == 2 and all("Bearer [redacted]" in e for e in errors), errors
    assert leaks(tmp_path) == []
    assert KEY not in printed.out and KEY not in printed.err


def test_eval_agent_error_line_holds_no_key(
    tmp_path: Path, key_env: None, capfd: pytest.CaptureFixture[str]
) -> None:
    """The probe itself gets the echoing 500: the command fails with one line, key scrubbed."""
    out = tmp_path / "ea"
    with Echo(every=1, probe=False) as echo:
        study = tmp_path / "study.yaml"
        study.write_text(
            yaml.safe_dump(study_config(echo.fake.base_url, tmp_path / "llm-cache.sqlite"))
        )
        code = main(eval_agent_argv(study, echo.fake.base_url, out))
    printed = capfd.readouterr()
    # An endpoint that fails its first probe is a usage error (exit 2; docs/reference/cli.md).
    assert code == 2 and "Traceback" not in printed.err
    assert "error:" in printed.err and "Bearer [redacted]" in printed.err, printed.err
    assert KEY not in printed.out and KEY not in printed.err
    assert leaks(tmp_path) == []


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(run: Path, db: Path, base_url: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The real ``sim2human human serve --agents llm`` in its own process, output to ``log``."""
    port = _free_port()
    argv = [
        sys.executable,
        "-m",
        "sim2human.cli",
        "human",
        "serve",
        str(run),
        "--agents",
        "llm",
        "--llm-base-url",
        base_url,
        "--llm-model",
        "secret-model",
        "--llm-api-key-env",
        ENV,
        "--db",
        str(db),
        "--port",
        str(port),
    ]
    with log.open("ab") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=sink, env=dict(os.environ))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()}")
        try:
            if httpx.get(url + "/healthz", timeout=1.0).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise TimeoutError("server did not start")


@pytest.mark.slow
def test_human_serve_shows_the_participant_nothing_and_logs_no_key(
    tmp_path: Path, key_env: None
) -> None:
    sys.path.insert(0, str(TESTS / "webapp"))
    from webapp_helpers import make_run

    run, db, log = make_run(tmp_path / "run", conditions=0), tmp_path / "d.sqlite", tmp_path / "log"
    pages: list[str] = []
    with Echo(every=1) as echo:
        proc, url = _serve(run, db, echo.fake.base_url, log)
        try:
            with httpx.Client(base_url=url, timeout=60, follow_redirects=True) as client:
                pages.append(client.get("/").text)
                start = client.post("/start", data={"consent": "yes", "mode": "card"})
                token = str(start.url).rsplit("/call/", 1)[1]
                pages.append(start.text)
                pages.append(client.post(f"/call/{token}/begin").text)
                said = client.post(f"/call/{token}/say", data={"seen": "0", "text": "Hello."})
                pages.append(said.text)
                pages.append(client.get(f"/call/{token}").text)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        assert len(echo.fake.seen) >= 2  # the message reached the endpoint, and was echoed
    assert said.status_code == 409
    assert "the agent could not answer just now; please send again" in said.text
    for page in pages:  # nothing about the endpoint, the model or the key on any page
        assert KEY not in page and "secret-model" not in page and echo.fake.base_url not in page
    server_log = log.read_text()
    assert re.search(r"could not answer: .*Bearer \[redacted\]", server_log), server_log
    assert KEY not in server_log
    assert leaks(tmp_path) == []  # the call database, the run directory, the log


def test_the_call_page_waits_for_the_agent_at_most_its_deadline(tmp_path: Path) -> None:
    """An agent endpoint that hangs: the participant gets the fixed message after the web
    agent's deadline (1 s here; 25 s by default), not after five 30-second attempts."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    sys.path.insert(0, str(TESTS / "webapp"))
    from webapp_helpers import make_run

    from sim2human.agents.endpoint_agent import EndpointAgent
    from sim2human.store.calls import HumanStore
    from sim2human.webapp.agents import AgentPool
    from sim2human.webapp.app import create_app
    from sim2human.webapp.calls import AGENT_DOWN, Calls

    assert EndpointAgent("u", "m").deadline_s <= 30  # the default bound
    run = make_run(tmp_path / "run", conditions=0)
    with FakeOpenAI(lambda n, b: Reply(delay_s=10.0)) as fake:
        settings = EndpointAgent(fake.base_url, "secret-model", timeout_s=5.0, deadline_s=1.0)
        pool = AgentPool.from_run(run, ["llm"], settings)
        assert pool._llm().client.config.deadline_s == 1.0
        calls = Calls(HumanStore(tmp_path / "d.sqlite"), pool)
        with TestClient(create_app(calls)) as client:
            r = client.post("/start", data={"consent": "yes", "mode": "card"})
            token = str(r.url).rsplit("/call/", 1)[1]
            client.post(f"/call/{token}/begin")
            began = time.perf_counter()
            said = client.post(f"/call/{token}/say", data={"seen": "0", "text": "Hello."})
            waited = time.perf_counter() - began
    assert said.status_code == 409 and AGENT_DOWN in said.text
    assert waited < 4.0, waited
    assert "secret-model" not in said.text and fake.base_url not in said.text
