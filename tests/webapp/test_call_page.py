"""The call page through its forms (in-process): a whole call, repeats, isolation, admin."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from webapp_helpers import ADMIN, FakeClock, answer, opening

from sim2human.store.calls import HumanStore
from sim2human.types import Episode, Termination
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.app import Limits, create_app
from sim2human.webapp.calls import Calls


def client_for(
    run_dir: Path,
    db: Path,
    agents: list[str] | None = None,
    limits: Limits | None = None,
    clock: FakeClock | None = None,
) -> tuple[TestClient, Calls]:
    limits = limits or Limits()
    calls = Calls(HumanStore(db), AgentPool.from_run(run_dir, agents))
    app = create_app(calls, limits, admin_token=ADMIN, clock=clock or FakeClock())
    return TestClient(app), calls


def start(client: TestClient, mode: str = "card") -> str:
    r = client.post("/start", data={"consent": "yes", "mode": mode}, follow_redirects=False)
    assert r.status_code == 303
    token = r.headers["location"].removeprefix("/call/")
    assert len(token) >= 30
    return token


def seen(html: str) -> int:
    m = re.search(r'name="seen" value="(\d+)"', html)
    assert m is not None
    return int(m.group(1))


def play_card_call(client: TestClient, calls: Calls, token: str) -> None:
    client.post(f"/call/{token}/begin")
    s = calls.store.by_token(token)
    assert s is not None and s.profile is not None
    profile = s.profile
    text = opening(profile)
    while True:
        page = client.get(f"/call/{token}").text
        if 'id="say"' not in page:
            return
        r = client.post(
            f"/call/{token}/say", data={"seen": seen(page), "text": text}, follow_redirects=False
        )
        assert r.status_code == 303, r.text
        s = calls.store.by_token(token)
        assert s is not None
        text = answer(profile, s.turns[-1].field)


def admin_client(client: TestClient) -> TestClient:
    r = client.post("/admin/login", data={"token": ADMIN}, follow_redirects=False)
    assert r.status_code == 303
    return client


def test_whole_call_then_admin_export_holds_the_gold(run_dir: Path, db: Path) -> None:
    client, calls = client_for(run_dir, db, ["scripted"])
    consent = client.get("/")
    assert "agree" in consent.text and consent.headers["content-security-policy"]
    token = start(client)
    card = client.get(f"/call/{token}").text
    assert 'id="card"' in card and "Date of birth" in card
    play_card_call(client, calls, token)
    assert "How was the call" in client.get(f"/call/{token}").text
    rating = {"rating": "4", "details": "yes", "comment": "fine"}
    r = client.post(f"/call/{token}/rate", data=rating, follow_redirects=False)
    assert r.status_code == 303
    assert "Thank you" in client.get(f"/call/{token}").text
    assert client.get("/admin/export.jsonl").status_code == 403  # not signed in
    lines = admin_client(client).get("/admin/export.jsonl").text.splitlines()
    (ep,) = [Episode.model_validate_json(line) for line in lines]
    s = calls.store.by_token(token)
    assert s is not None and s.profile is not None and s.record is not None
    assert ep.family == "human" and ep.split == "heldout" and ep.condition == "scripted"
    assert ep.gold == calls.scenario.grade(s.profile, s.record, Termination.COMPLETED)
    assert ep.gold.success and ep.proxy == 0.75 and ep.diagnostics["details_right"] == 1.0
    assert ep.n_turns >= 10
    admin = client.get("/admin").text
    assert "scripted" in admin and "100 [100, 100]" in admin and ADMIN not in admin


def test_repeated_or_stale_messages_are_not_new_turns(run_dir: Path, db: Path) -> None:
    # the scripted agent: an untrained policy (picked at random otherwise) may close the call at
    # its first turn, and then the later messages are refused for that reason instead
    client, calls = client_for(run_dir, db, ["scripted"])
    token = start(client)
    client.post(f"/call/{token}/begin")
    for _ in range(3):  # a double-click and a retry after a lost response
        client.post(f"/call/{token}/say", data={"seen": "0", "text": "hello"})
    s = calls.store.by_token(token)
    assert s is not None and [t.speaker for t in s.turns] == ["user", "agent"]
    client.post(f"/call/{token}/say", data={"seen": "2", "text": "my knee hurts"})
    client.post(f"/call/{token}/say", data={"seen": "2", "text": "my knee hurts"})
    s = calls.store.by_token(token)
    assert s is not None and len(s.turns) == 4


XSS = ['<script>alert("x")</script>', "<img src=x onerror=alert(1)>", '"><svg onload=alert(1)>']


def test_everything_people_write_is_escaped(run_dir: Path, db: Path) -> None:
    client, _calls = client_for(run_dir, db, ["scripted"])
    token = start(client)
    client.post(f"/call/{token}/begin")
    for i, payload in enumerate(XSS):
        client.post(f"/call/{token}/say", data={"seen": str(2 * i), "text": payload})
    page = client.get(f"/call/{token}")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp  # no script may run at all
    assert page.headers["x-content-type-options"] == "nosniff"
    html = page.text
    for payload in XSS:
        assert payload not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script" not in html and "<img" not in html and "<svg" not in html
    client.post(f"/call/{token}/hangup", data={"seen": str(2 * len(XSS))})
    client.post(f"/call/{token}/rate", data={"rating": "1", "details": "no", "comment": XSS[1]})
    admin = admin_client(client).get("/admin").text
    assert XSS[1] not in admin and "&lt;img src=x onerror=alert(1)&gt;" in admin


def test_size_limits(run_dir: Path, db: Path) -> None:
    client, calls = client_for(run_dir, db, limits=Limits(max_chars=200, max_body=4096))
    token = start(client)
    client.post(f"/call/{token}/begin")
    r = client.post(f"/call/{token}/say", data={"seen": "0", "text": "a" * 201})
    assert r.status_code == 413 and "at most 200 characters" in r.text
    r = client.post(f"/call/{token}/say", data={"seen": "0", "text": "b" * 5000})
    assert r.status_code == 413 and r.text == "request too large"

    def chunks() -> object:  # no Content-Length: counted as it streams
        yield b"seen=0&text="
        for _ in range(10):
            yield b"c" * 1000

    r = client.post(
        f"/call/{token}/say",
        content=chunks(),  # type: ignore[arg-type]
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 413
    s = calls.store.by_token(token)
    assert s is not None and s.turns == ()


def test_rate_limit_per_session(run_dir: Path, db: Path) -> None:
    client, _calls = client_for(run_dir, db, limits=Limits(per_minute=3))
    token, other = start(client), start(client)
    for t in (token, other):
        client.post(f"/call/{t}/begin")
    codes = [
        client.post(
            f"/call/{t}/say", data={"seen": "x", "text": "hi"}, follow_redirects=False
        ).status_code
        for t in (token,) * 4
    ]
    assert codes == [303, 303, 303, 429]
    assert (
        client.post(
            f"/call/{other}/say", data={"seen": "x", "text": "hi"}, follow_redirects=False
        ).status_code
        == 303
    )
    client, _ = client_for(run_dir, db, limits=Limits(starts_per_minute=2))
    start(client), start(client)
    assert client.post("/start", data={"consent": "yes"}).status_code == 429


def test_a_participant_sees_only_their_own_call(run_dir: Path, db: Path) -> None:
    client, calls = client_for(run_dir, db, ["scripted"])
    mine, theirs = start(client), start(client)
    client.post(f"/call/{theirs}/begin")
    client.post(f"/call/{theirs}/say", data={"seen": "0", "text": "my secret words"})
    assert "my secret words" not in client.get(f"/call/{mine}").text
    assert client.get("/call/" + "A" * 32).status_code == 404
    s = calls.store.by_token(theirs)
    assert s is not None
    assert client.get(f"/call/{s.id}").status_code == 404  # the public id opens nothing
    with sqlite3.connect(db) as con:  # the file holds no usable token
        dump = "\n".join(con.iterdump())
    assert theirs not in dump and mine not in dump


def test_admin_token_is_never_shown(run_dir: Path, db: Path) -> None:
    clock = FakeClock()
    client, _ = client_for(run_dir, db, clock=clock)
    assert client.post("/admin/login", data={"token": "wrong"}).status_code == 403
    clock.advance(1.0)  # the back-off after one wrong token
    r = client.post("/admin/login", data={"token": ADMIN}, follow_redirects=False)
    cookie = r.headers["set-cookie"]
    assert ADMIN not in cookie and "HttpOnly" in cookie
    page = client.get("/admin").text
    assert ADMIN not in page and "Sessions" in page


def test_answer_as_yourself_then_confirm_the_card(run_dir: Path, db: Path) -> None:
    client, calls = client_for(run_dir, db, ["scripted"])
    token = start(client, "self")
    me = {
        "complaint": "headache",
        "onset": "3 days",
        "severity": 6,
        "medications": (),
        "allergies": ("penicillin",),
        "history": (),
        "red_flag": False,
        "dob": "1980-05-02",
    }
    text = opening(me)
    for _ in range(5):  # leave some fields unsaid, then hang up
        s = calls.store.by_token(token)
        assert s is not None
        client.post(f"/call/{token}/say", data={"seen": str(len(s.turns)), "text": text})
        s = calls.store.by_token(token)
        assert s is not None
        text = answer(me, s.turns[-1].field)  # type: ignore[arg-type]
    s = calls.store.by_token(token)
    assert s is not None
    client.post(f"/call/{token}/hangup", data={"seen": str(len(s.turns))})
    page = client.get(f"/call/{token}").text
    assert "Check your details" in page and 'value="headache"' in page
    typed = {
        "complaint": "headache",
        "onset": "3 days ago",
        "severity": "6",
        "medications": "none",
        "allergies": "penicillin",
        "history": "",
        "red_flag": "no",
        "dob": "2 May 1980",
    }
    r = client.post(f"/call/{token}/confirm", data=typed)
    assert r.status_code == 400 and "please fill this in" in r.text
    typed["history"] = "none"
    client.post(f"/call/{token}/confirm", data=typed)
    client.post(f"/call/{token}/rate", data={"rating": "2", "details": "partly"})
    s = calls.store.by_token(token)
    assert s is not None and s.episode is not None and s.record is not None
    assert s.profile == me
    assert s.episode.termination == Termination.HUNG_UP and s.episode.gold.dropped
    assert s.episode.gold == calls.scenario.grade(me, s.record, Termination.HUNG_UP)


def test_blinded_assignment_is_balanced(run_dir: Path, db: Path) -> None:
    client, calls = client_for(run_dir, db)
    for _ in range(2 * len(calls.pool.names)):
        start(client)
    counts = calls.store.agent_counts()
    assert set(counts) == set(calls.pool.names) and set(counts.values()) == {2}
    page = client.get(f"/call/{start(client)}").text
    assert not any(name in page for name in calls.pool.names)  # the agent is never named


@pytest.mark.parametrize("agents", [["nope"]])
def test_unknown_agent_is_a_usage_error(run_dir: Path, db: Path, agents: list[str]) -> None:
    from sim2human.errors import UsageError

    with pytest.raises(UsageError, match="nope"):
        AgentPool.from_run(run_dir, agents)


def test_export_json_lines_are_episodes(run_dir: Path, db: Path) -> None:
    client, calls = client_for(run_dir, db, ["scripted"])
    token = start(client)
    play_card_call(client, calls, token)
    client.post(f"/call/{token}/rate", data={"rating": "5", "details": "yes"})
    client.post(f"/call/{token}/rate", data={"rating": "1", "details": "no"})  # a repeat
    text = admin_client(client).get("/admin/export.jsonl").text
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == 1 and rows[0]["proxy"] == 1.0


def test_cli_names_bad_input(tmp_path: Path) -> None:
    from sim2human.cli.app import main

    assert main(["human", "serve", str(tmp_path / "nope")]) == 2
    assert main(["human", "export", str(tmp_path / "none.sqlite"), "--out", str(tmp_path)]) == 2
    config = tmp_path / "s.yaml"
    config.write_text("name: s\nseeds: [0]\nconditions: [{name: u, sampler: uniform}]\n")
    assert main(["study", str(config), "--human", str(tmp_path / "none.sqlite")]) == 2


def test_an_llm_agent_takes_calls_too(run_dir: Path, db: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
    from sim2human.agents.endpoint_agent import EndpointAgent
    from sim2human.testing import FakeOpenAI, Reply, completion

    def script(n: int, body: dict[str, object]) -> Reply:
        said = "What brings you in today?" if n == 0 else "Thank you, that's everything. Goodbye."
        return Reply(body=completion(said))

    with FakeOpenAI(script) as fake:
        pool = AgentPool.from_run(run_dir, ["llm"], EndpointAgent(fake.base_url, "fake-model"))
        calls = Calls(HumanStore(db), pool)
        with TestClient(create_app(calls, admin_token=ADMIN)) as client:
            token = start(client)
            client.post(f"/call/{token}/begin")
            client.post(f"/call/{token}/say", data={"seen": "0", "text": "Hi there."})
            client.post(f"/call/{token}/say", data={"seen": "2", "text": "A headache."})
            s = calls.store.by_token(token)
        assert s is not None and s.agent == "llm" and s.status == "rating"
        assert [t.text for t in s.turns][1::2] == [
            "What brings you in today?",
            "Thank you, that's everything. Goodbye.",
        ]
        assert s.termination == Termination.COMPLETED and len(fake.seen) == 2


@pytest.mark.parametrize("step", ["begin", "say", "hangup", "confirm", "rate"])
def test_every_form_of_an_unknown_call_is_the_one_404_page(
    run_dir: Path, db: Path, step: str
) -> None:
    client, calls = client_for(run_dir, db, ["scripted"])
    before = len(calls.store.sessions())
    r = client.post(f"/call/{'B' * 32}/{step}", data={"seen": "0", "text": "hi", "rating": "5"})
    assert r.status_code == 404 and "No such call" in r.text
    assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert len(calls.store.sessions()) == before


def test_an_llm_agent_s_tool_calls_are_stored_and_its_record_is_what_it_submitted(
    run_dir: Path, db: Path
) -> None:
    """The call page grades a tool-using agent as the study does: on what it submitted, with its
    tool calls kept beside its turns, so a call rebuilt after a restart holds the same desk."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
    from sim2human.agents.endpoint_agent import EndpointAgent
    from sim2human.testing import FakeOpenAI, Reply, completion
    from sim2human.types import ToolCall

    record = ToolCall(name="record", arguments={"field": "complaint", "value": "a headache"})
    replies = [
        completion(None, tool_calls=[record]),
        completion("And your date of birth?"),
        completion(None, tool_calls=[ToolCall(name="submit")]),
        completion("Thank you, that's everything. Goodbye."),
    ]

    def script(n: int, body: dict[str, object]) -> Reply:
        assert body.get("tools"), "the agent is offered the desk's tools"
        return Reply(body=replies[n])

    with FakeOpenAI(script) as fake:
        pool = AgentPool.from_run(run_dir, ["llm"], EndpointAgent(fake.base_url, "fake-model"))
        calls = Calls(HumanStore(db), pool)
        with TestClient(create_app(calls, admin_token=ADMIN)) as client:
            token = start(client)
            client.post(f"/call/{token}/begin")
            client.post(f"/call/{token}/say", data={"seen": "0", "text": "I have a headache."})
            calls.forget()  # a restart: the next message rebuilds the call from the store
            client.post(f"/call/{token}/say", data={"seen": "2", "text": "March 3rd, 1980."})
            s = calls.store.by_token(token)
        assert s is not None and s.status == "rating" and len(fake.seen) == 4
        assert s.turns[1].tool_calls == (record,) and s.turns[3].tool_calls == (
            ToolCall(name="submit"),
        )
        assert s.turns[0].tool_calls is None  # the person's turn
        assert s.record is not None and s.record["complaint"] == "headache"
        assert s.record["dob"] is None  # said, but never recorded: gold does not hear it
        client2 = TestClient(create_app(calls, admin_token=ADMIN))
        client2.post(f"/call/{token}/rate", data={"rating": "4", "details": "yes"})
        done = calls.store.by_token(token)
        assert done is not None and done.episode is not None
        assert done.episode.record_source == "submitted"
        assert done.episode.turns[1].tool_calls == (record,)
