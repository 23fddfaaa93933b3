"""A task of a new shape, written outside the package, runs every verb (issue 40's first bullet).

``external/sealed_bid.py`` is a sealed-bid sale (neither slot filling nor negotiation) in under
150 lines that declares only the core, its users' moves, a card and a reference rule. A study
names it as ``sealed_bid:SealedBidSale``; study, report, diagnose, stress, view, export and the
call page's card run on it with its folder on ``--scenario-path``, and no edit of the package.
A scenario class that lacks a core member is refused in one line naming what it lacks, and a
one-line subclass of the package's own ``NegotiationScenario`` is accepted.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from sim2human.cli.app import main
from sim2human.scenarios.catalog import get_scenario, known_scenario
from sim2human.scenarios.refs import allowing
from sim2human.webapp.card import card_lines
from tiny_study import TINY

EXTERNAL = Path(__file__).parent / "external"
REF = "sealed_bid:SealedBidSale"
SMALL: dict[str, Any] = {
    **TINY,
    "train": {"episodes": 32, "batch_episodes": 32, "epochs": 1},
    "eval": {"episodes_per_member": 1, "bootstrap": 100},
}


@pytest.fixture
def fresh_modules() -> Iterator[None]:
    """The user's modules are imported anew by each test (and forgotten after)."""
    yield
    for name in ("sealed_bid", "my_tasks"):
        sys.modules.pop(name, None)


def test_the_module_is_a_small_task_of_its_own_shape() -> None:
    source = (EXTERNAL / "sealed_bid.py").read_text()
    assert len(source.splitlines()) < 150
    assert "scenarios.slots" not in source and "scenarios.negotiation" not in source


@pytest.mark.slow
def test_a_new_shape_runs_every_verb(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fresh_modules: None,
) -> None:
    monkeypatch.chdir(tmp_path)  # not the module's folder: --scenario-path names it
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({**SMALL, "scenario": REF}))
    where = ["--scenario-path", str(EXTERNAL)]
    run = tmp_path / "run"
    assert main(["study", str(path), "--out", str(run), "--workers", "1", *where]) == 0
    summary = json.loads((run / "study.json").read_text())
    assert summary["scenario"] == REF and summary["gold_metric"] == "score"
    scripted = {r["name"]: r for r in summary["reference"]}["scripted"]
    assert 0.4 < scripted["heldout_score"]["mean"] < 1.0  # sold, at a shaded bid
    assert scripted["heldout_gold"]["mean"] == 1.0  # every sale above the seller's cost
    assert main(["report", str(run), *where]) == 0
    assert f"# Study `tiny` ({REF})" in (run / "report.md").read_text()
    assert main(["diagnose", str(run), *where]) == 0
    stress = ["stress", str(run), "--out", str(tmp_path / "stress"), "--workers", "1"]
    stress += ["--grid", "1", "--perturbations", "typos", "--episodes-per-member", "1"]
    assert main([*stress, *where]) == 0
    assert "scripted" in json.loads((tmp_path / "stress" / "stress.json").read_text())["agents"]
    assert main(["view", str(run), "--out", str(tmp_path / "view.html"), *where]) == 0
    assert "Sold, at your bid." in (tmp_path / "view.html").read_text()
    chat = tmp_path / "chat.jsonl"
    assert main(["export", str(run), "--format", "openai-chat", "--out", str(chat), *where]) == 0
    first = json.loads(chat.read_text().splitlines()[0])["messages"][0]
    assert first == {"role": "system", "content": get_scenario_in(REF).voice.agent.system_prompt}
    buffer = tmp_path / "buffer.npz"
    assert main(["export", str(run), "--format", "sb3-buffer", "--out", str(buffer), *where]) == 0
    with np.load(buffer) as data:
        assert data["dones"].sum() > 0 and data["observations"].shape[1] == 2 * 3 + 2
    capsys.readouterr()
    card_page(run, tmp_path / "calls.sqlite")


def card_page(run: Path, db: Path) -> None:
    """The call page shows a person the bidder's card: its value and temper, not the cost."""
    from fastapi.testclient import TestClient

    from sim2human.store.calls import HumanStore
    from sim2human.webapp.agents import AgentPool
    from sim2human.webapp.app import create_app
    from sim2human.webapp.calls import Calls

    with allowing(EXTERNAL):
        calls = Calls(HumanStore(db), AgentPool.from_run(run, None))
        client = TestClient(create_app(calls, admin_token="test-admin-token-7f3a9c"))
        assert calls.scenario.name == REF
        r = client.post("/start", data={"consent": "yes", "mode": "card"}, follow_redirects=False)
        token = r.headers["location"].removeprefix("/call/")
        page = client.get(f"/call/{token}").text
        s = calls.store.by_token(token)
        assert s is not None and s.profile is not None
        lines = dict(card_lines(calls.scenario, s.profile))
    assert lines == {
        "The lamp is worth to you ($)": str(s.profile["value"]),
        "How you bid": s.profile["temper"],
    }
    assert "The lamp is worth to you ($)" in page and "cost" not in page.lower()
    r = client.post("/start", data={"consent": "yes", "mode": "self"}, follow_redirects=False)
    assert r.status_code == 400 and "played from a card only" in r.text


def get_scenario_in(ref: str) -> Any:
    with allowing(EXTERNAL):
        return get_scenario(ref)


MODULE = """
from sim2human.scenarios.negotiation.scenario import NegotiationScenario
from sim2human.scenarios.voice import Voice


class Auction(NegotiationScenario): pass


class NoEnding:
    name, acts, voice = "x", (), None
    def sample_profile(self, rng): ...
    def initial_state(self, profile): ...
    def hear_user(self, state, text): ...
    def hear_agent(self, state, turn): ...
    def observe(self, state): ...
    def record(self, state): ...
    def grade(self, profile, record, termination): ...
"""


@pytest.fixture
def my_tasks(tmp_path: Path, fresh_modules: None) -> Path:
    (tmp_path / "my_tasks.py").write_text(MODULE)
    return tmp_path


def test_a_one_line_subclass_of_negotiation_is_a_scenario(my_tasks: Path) -> None:
    """It was refused: ``refs`` required the slot kit's fields, extract and say."""
    with allowing(my_tasks):
        assert known_scenario("my_tasks:Auction") == "my_tasks:Auction"
        auction = get_scenario("my_tasks:Auction")
    assert auction.name == "my_tasks:Auction"
    profile = auction.sample_profile(np.random.default_rng(0))
    assert auction.record(auction.initial_state(profile))["agreed"] is False


def test_a_class_without_a_core_member_is_one_line_naming_it(
    my_tasks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = my_tasks / "study.yaml"
    path.write_text(yaml.safe_dump({**SMALL, "scenario": "my_tasks:NoEnding"}))
    assert main(["study", str(path), "--check", "--scenario-path", str(my_tasks)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "NoEnding is not a scenario class (it has no ending;" in err
    assert "sim2human.scenarios.core.Scenario" in err


def test_what_a_new_shape_lacks_is_refused_in_one_line(fresh_modules: None) -> None:
    """What a consumer needs beyond the core is named, not an AttributeError in a worker."""
    from sim2human.agents.scripted import reference_agent
    from sim2human.scenarios.capabilities import Lacks
    from sim2human.simulators.base import SimulatorSpec, Traits
    from sim2human.simulators.persona import PersonaSimulator

    with allowing(EXTERNAL):
        sale = get_scenario(REF)

    class Bare:  # the core alone: no users' moves, no reference rule, no card
        name, acts = "bare", sale.acts
        voice = type(sale.voice)(user=sale.voice.user)

    with pytest.raises(Lacks, match=r"^scenario 'bare' has no reference agent: give it"):
        reference_agent(Bare())
    with pytest.raises(Lacks, match=r"^scenario 'bare' has no users' moves: give it user_moves"):
        PersonaSimulator(SimulatorSpec(id="p", family="standard", traits=Traits(), seed=0), Bare())  # type: ignore[arg-type]
    with pytest.raises(Lacks, match=r"^scenario 'bare' has no card for a person: give its"):
        card_lines(Bare(), {"value": 50})  # type: ignore[arg-type]
    # a replayed visit is read with the slot kit's reader; a restyled member, whose rewrites
    # are checked with that reader, says a task of another shape's lines as its persona does
    from sim2human.simulators.replay import build_replay
    from sim2human.simulators.restyled import build_restyled

    visit = SimulatorSpec(
        id="aci-heldout-D2N001", family="aci-heldout", kind="replay", traits=Traits(), seed=0
    )
    with pytest.raises(Lacks, match=r"^scenario '.*sealed_bid:SealedBidSale' has no slot-filling"):
        build_replay(visit, sale)
    restyled = SimulatorSpec(
        id="r", family="restyled-aci", kind="restyled", traits=Traits(), seed=0
    )
    persona = SimulatorSpec(id="r", family="standard", kind="persona", traits=Traits(), seed=0)
    said = []
    for sim in (build_restyled(restyled, sale), PersonaSimulator(persona, sale)):
        rng = np.random.default_rng(0)
        said.append([sim.start(sale.sample_profile(rng), rng).text, sim.reply("Your bid?").text])
    assert said[0] == said[1]


def test_a_scenario_declares_kinds_of_act_the_core_does_not_have(fresh_modules: None) -> None:
    """``ActKind`` is open: the sale's acts reserve, sell and decline, kinds it declares; an act
    of a kind nobody declared is one line naming it."""
    from dataclasses import replace

    from sim2human.checks.scenario import check_scenario
    from sim2human.scenarios.capabilities import act_kinds
    from sim2human.scenarios.core import CORE_ACT_KINDS

    with allowing(EXTERNAL):
        sale = get_scenario(REF)
    assert act_kinds(sale)[len(CORE_ACT_KINDS) :] == ("reserve", "sell", "decline")
    assert "unknown kinds" not in str(check_scenario(sale))
    odd = type(sale)()
    odd.acts = (*sale.acts, replace(sale.acts[0], id="haggle", kind="haggle"))
    report = str(check_scenario(odd))
    assert "unknown kinds on acts ['haggle']" in report
