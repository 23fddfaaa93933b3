"""``support``'s change calls, after MultiWOZ's ``fail_book``: a caller whose booking as first
asked (``old_time``, ``old_stay``) is changed to another value (``time``, ``stay``). Gold: the
request and the changed values recorded right, the booking as first made too, and the call
closed; the val goals that fail are profile rows, the test ones held-out replayed callers."""

from __future__ import annotations

import importlib.util
from collections import Counter

import pytest
import yaml
from test_support import FILE, MULTIWOZ, NO_POOL, SCRIPT, needs_multiwoz

from sim2human import corpora
from sim2human.agents.scripted import reference_agent
from sim2human.corpora import multiwoz
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.support import replay as support_replay
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family
from sim2human.simulators.replay import member_for
from sim2human.types import Termination

CHANGE = {
    "domain": "restaurant",
    "task": "time change",
    "area": "centre",
    "pricerange": "cheap",
    "food": "chinese",
    "day": "thursday",
    "people": 8,
    "old_time": "18 30",
    "time": "17 30",
}
"""MultiWOZ's MUL2499 (val) as a row: a table for 8 at 18:30 fails; the caller takes 17:30."""


def support() -> FileScenario:
    scenario = get_scenario("support")
    assert isinstance(scenario, FileScenario)
    return scenario


def heard(text: str, asked: str | None = None) -> dict[str, object]:
    s = support()
    return {f: v for f, v in s.extract(text, s.empty_record(), asked).items() if v is not None}


def test_a_change_call_is_right_when_the_changed_booking_is_recorded_and_closed() -> None:
    s = support()
    assert s.applicable(CHANGE) == tuple(CHANGE)
    record = {**s.empty_record(), **CHANGE}
    right = s.grade(CHANGE, record, Termination.COMPLETED)
    assert (
        right.success and right.score == 1.0 and {"task", "old_time", "time"} <= set(right.fields)
    )


@pytest.mark.parametrize(
    ("wrong", "field"),
    [
        ({"time": "18 30"}, "time"),  # the booking left as first asked: not changed
        ({"task": "new booking"}, "task"),  # booked anew, not changed
        ({"old_time": None}, "old_time"),  # which booking was changed, never recorded
    ],
)
def test_a_change_call_is_wrong_when_the_booking_is_not_changed(
    wrong: dict[str, object], field: str
) -> None:
    s = support()
    record = {**s.empty_record(), **CHANGE, **wrong}
    outcome = s.grade(CHANGE, record, Termination.COMPLETED)
    assert not outcome.success and outcome.score == 0.0 and outcome.fields[field] is False


def test_a_change_call_not_closed_is_wrong() -> None:
    s = support()
    record = {**s.empty_record(), **CHANGE}
    assert not s.grade(CHANGE, record, Termination.HUNG_UP).success


def test_the_rows_hold_the_val_goals_that_change_their_booking() -> None:
    rows = yaml.safe_load(FILE.read_text(encoding="utf-8"))["profiles"]["rows"]
    tasks = Counter((r["domain"], r["task"]) for r in rows)
    assert tasks[("restaurant", "time change")] >= 20 and tasks[("hotel", "stay change")] >= 5
    assert {t for _, t in tasks} == {"new booking", "time change", "stay change"}
    for r in rows:
        if r["task"] == "time change":
            assert r["old_time"] != r["time"] and "old_stay" not in r
        elif r["task"] == "stay change":
            assert r["old_stay"] != r["stay"] and "old_time" not in r
        else:
            assert "old_time" not in r and "old_stay" not in r
    assert support().applicable({"domain": "train", "task": "time change"})[-1] == "time"


def test_the_script_makes_a_failed_booking_a_change_row() -> None:
    spec = importlib.util.spec_from_file_location("multiwoz_support", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    vocab = {"area": {"centre"}, "pricerange": {"cheap"}, "food": {"chinese"}}
    vocab["time"] = {"17:30", "18:30"}
    goal = {"area": "centre", "pricerange": "cheap", "food": "chinese", "day": "thursday"}
    goal |= {"people": "8", "time": "17:30"}
    assert script.row("restaurant", goal, vocab, {"time": "18:30"}) == CHANGE
    assert script.row("restaurant", goal, vocab, {})["task"] == "new booking"
    assert script.row("restaurant", goal, vocab, {"day": "friday"}) is None  # no such change


def test_the_booking_as_first_made_is_told_from_the_new_value_by_its_markers() -> None:
    assert heard("I have a table booked for 18:30. How about 17:30?") == {
        "domain": "restaurant",
        "old_time": "18 30",
        "time": "17 30",
    }
    assert heard("Can you try 17:30 instead of 18:30?") == {"old_time": "18 30", "time": "17 30"}
    assert heard("How about 17:30 instead?", "time") == {"time": "17 30"}
    assert heard("It's booked for 18:30 right now.", "time") == {"old_time": "18 30"}
    assert heard("The booking I have now is for 3. For 2 nights, please.") == {
        "old_stay": 3,
        "stay": 2,
    }
    assert heard("I'm calling about a change of time.") == {"task": "time change"}
    # a bare time answering the old time is not the new one; a time said twice counts twice
    assert heard("At 16:30.", "old_time") == {"old_time": "16 30"}
    assert heard("At 16:30.", "time") == {"time": "16 30"}
    assert heard("original time: 16:30; time: 16:30") == {"old_time": "16 30", "time": "16 30"}


def test_the_reference_agent_changes_bookings_with_cooperative_callers() -> None:
    s = support()
    pool = QuirkPool(liked=s.quirk_pool[0], triggers=s.quirk_pool[1])
    specs = [get_family("cooperative").sample(k, pool) for k in range(2)]
    episodes = evaluate(reference_agent(s), specs, s, split="heldout", per_member=60, max_turns=20)
    changes = [e for e in episodes if e.profile["task"] != "new booking"]
    assert changes and sum(e.gold.success for e in changes) >= 0.7 * len(changes)
    for e in changes:  # the read-back names the booking as first made and the new value
        [readback] = [t.text for t in e.turns if t.act == "confirm.readback"][-1:]
        old = "original time: " if e.profile["task"] == "time change" else "nights booked now: "
        assert "request: " in readback and old in readback


@needs_multiwoz
def test_the_heldout_replay_family_holds_test_calls_that_change_their_booking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(corpora.ENV, str(MULTIWOZ.parent))
    test = {d.dialogue_id: d for d in multiwoz.load("test")}
    ids = support_replay.dialogue_ids(("test",))
    changed = [i for i in ids if test[i].goals[support_replay.goal_domain(test[i]) or ""].fail_book]
    assert len(changed) >= 10
    d = test[changed[0]]
    values = support_replay.goal_values(d)
    assert values is not None and values["task"] in ("time change", "stay change")
    k = ids.index(changed[0])
    spec = get_family("multiwoz-heldout").sample(k, NO_POOL, temperature=0.0)
    card = dict(member_for(spec, support()).card.values)
    assert card["task"] == values["task"] and ("old_time" in card or "old_stay" in card)
    assert card == {f: card[f] for f in support().applicable(card)}
