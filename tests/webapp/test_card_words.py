"""The call page speaks the scenario's words: intake's patient card as before, and a scenario
file's own labels, values, persona and setting (``Voice.card``), with nothing of intake left."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_call_page import client_for, start
from webapp_helpers import make_run

from sim2human.cli.app import main
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.webapp.card import card_lines, label, read_card


def test_intake_keeps_its_patient_card(run_dir: Path, db: Path) -> None:
    client, _ = client_for(run_dir, db)
    assert "Talk to a clinic&#39;s phone assistant" in client.get("/").text
    page = client.get(f"/call/{start(client)}").text
    assert "Your patient card" in page and "Date of birth" in page and "out of 10" in page
    profile = {"dob": "1980-05-02", "severity": 4, "medications": ()}
    scenario = IntakeScenario()
    sampled = scenario.sample_profile(np.random.default_rng(0))
    lines = dict(card_lines(scenario, {**sampled, **profile}))
    assert lines["Date of birth"] == "2 May 1980" and lines["Medicines you take"] == "none"


def test_a_scenario_file_brings_its_own_card(tmp_path: Path, db: Path) -> None:
    assert main(["scenario", "new", "tables", "--out", str(tmp_path / "tables")]) == 0
    file = str((tmp_path / "tables" / "tables.yaml").resolve())
    scenario = get_scenario(file)
    run = make_run(tmp_path / "run", scenario_ref=file)
    client, calls = client_for(run, db)
    assert calls.scenario.name == scenario.name
    front = client.get("/").text
    low = front.lower()
    assert "phone assistant" in front and "clinic" not in low and "health" not in low
    token = start(client)
    page = client.get(f"/call/{token}").text
    assert "Your caller card" in page and "patient" not in page
    assert "You are " in page and label(scenario, "party_size") == "Party size"
    assert "Party size" in page and "Table outside" in page
    s = calls.store.by_token(token)
    assert s is not None and s.profile is not None
    shown = dict(card_lines(scenario, s.profile))
    assert f"{s.profile['party_size']} people" == shown["Party size"]
    # What a person reads off the card reads back as the same profile (a confirmed card).
    typed = {
        f: value
        for f, (_, value) in zip(scenario.fields, card_lines(scenario, s.profile), strict=True)
    }
    profile, problems = read_card(scenario, typed)
    assert problems == {} and profile == s.profile


def test_human_play_names_its_own_flag_for_an_unknown_agent(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said ``--agents: nobody not in ...`` (the serve flag) for ``play --agent nobody``."""
    assert main(["human", "play", str(run_dir), "--agent", "nobody"]) == 2
    err = capsys.readouterr().err
    assert "--agent: nobody not in" in err and "--agents" not in err


def test_human_play_calls_an_llm_agent_behind_an_endpoint(
    run_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``human play --agent llm --llm-base-url ...``: the person talks to the endpoint agent."""
    import io

    from sim2human.testing import FakeOpenAI, Reply, completion

    said = ["What brings you in today?", "Thank you, that's everything. Goodbye."]

    def script(n: int, body: dict[str, object]) -> Reply:
        messages = body["messages"]
        assert isinstance(messages, list)
        agent_turns = sum(m["role"] == "assistant" for m in messages)
        return Reply(body=completion(said[min(agent_turns, 1)]))

    monkeypatch.setattr("sys.stdin", io.StringIO("Hello.\nA headache.\n"))
    with FakeOpenAI(script) as fake:
        argv = ["human", "play", str(run_dir), "--agent", "llm", "--seed", "3"]
        code = main([*argv, "--llm-base-url", fake.base_url, "--llm-model", "served"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "assistant: What brings you in today?" in out and "call ended (completed)" in out
    assert main(["human", "play", str(run_dir), "--agent", "llm"]) == 2  # no endpoint named
