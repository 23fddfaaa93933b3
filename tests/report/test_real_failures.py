"""Why real people fail (``diagnostics.failures``, ``report.failures``), on hand-made episodes:
missing versus wrong fields, how failed calls ended, and the visits no agent got right."""

from __future__ import annotations

from sim2human.diagnostics.failures import real_failures
from sim2human.report.failures import failures_section
from sim2human.types import Episode, Outcome, Turn

PROFILE = {"complaint": "fever", "onset": "3 weeks"}


def call(
    visit: str,
    record: dict[str, str | None],
    *,
    ended: str = "completed",
    family: str = "aci-heldout",
    kind: str = "replay",
    n: int = 0,
) -> Episode:
    fields = {f: record.get(f) == v for f, v in PROFILE.items()}
    turns = (
        Turn(speaker="agent", text="When did it start?", act="ask.onset.plain"),
        Turn(speaker="user", text="my sister called me", tags=("fallback",)),
        Turn(speaker="agent", text="Goodbye.", act="close.plain"),
    )
    success = all(fields.values()) and ended == "completed"
    return Episode(
        id=f"{visit}/{n}/{ended}/{sorted(record.items())}",
        scenario="intake",
        simulator_id=visit,
        family=family,
        kind=kind,
        split="heldout",
        seed=n,
        turns=turns,
        proxy=0.5,
        gold=Outcome(success=success, fields=fields, completed=ended == "completed", dropped=False),
        termination=ended,
        profile=PROFILE,
        record=record,
        phase="eval",
    )


RIGHT = {"complaint": "fever", "onset": "3 weeks"}


def test_missing_and_wrong_fields_and_endings_are_counted_per_agent() -> None:
    a = [
        call("v1", RIGHT),
        call("v2", {"complaint": "fever", "onset": None}),  # onset missing
        call("v3", {"complaint": "cough", "onset": "3 weeks"}, ended="max_turns"),  # wrong
        call("x", RIGHT, family="cooperative", kind="persona"),  # not a real person: left out
    ]
    f = real_failures({"a": a})
    assert f is not None and f.visits == 3
    (agent,) = f.agents
    assert (agent.calls, agent.failed) == (3, 2)
    assert agent.endings == {"completed": 1, "max_turns": 1}
    assert agent.missing == {"complaint": 0, "onset": 1}
    assert agent.wrong == {"complaint": 1, "onset": 0}


def test_a_visit_fails_for_every_agent_when_each_lost_most_of_its_calls_there() -> None:
    hard = {"complaint": "fever", "onset": None}
    groups = {
        "good": [call("v1", RIGHT), call("v2", hard), call("v3", hard, n=1), call("v4", hard)],
        "bad": [call("v1", hard), call("v2", hard), call("v3", RIGHT), call("v4", hard)],
        "frozen": [call("v1", hard), call("v2", hard), call("v3", hard), call("v4", hard)],
    }
    # v4: "bad" won one call of three, fewer than half: it still fails there
    groups["bad"] += [call("v4", RIGHT, n=1), call("v4", hard, n=2)]
    f = real_failures(groups, frozen={"frozen"})
    assert f is not None and f.judged_by == ["good", "bad"]
    assert [v.visit for v in f.hard] == ["v2", "v4"]  # never won first; v1, v3 won by someone
    v2, v4 = f.hard
    assert (v2.calls, v2.won, v4.calls, v4.won) == (2, 0, 4, 1)
    assert v2.fields == {"complaint": 0, "onset": 2}
    x = v2.example
    assert x is not None and x.agent == "bad"  # the agent with the most successes (2)
    assert (x.field, x.how, x.asked, x.reply) == (
        "onset",
        "missing",
        "When did it start?",
        "my sister called me",
    )
    text = "\n".join(failures_section(f))
    assert "2 of 4 dialogues failed more than half the calls of every agent" in text
    assert "1 of them every call: `v2`, `v4` (1 won)" in text
    assert "my sister called me" in text and "turn limit" not in text
    assert "| onset | 75 / 0 | 67 / 0 |" in text  # frozen agents are not in the field table


def test_no_real_people_no_section() -> None:
    persona = [call("x", RIGHT, family="cooperative", kind="persona")]
    assert real_failures({"a": persona}) is None
    assert failures_section(None) == []


def test_fields_graded_in_some_calls_only_are_counted_and_shown_for_every_agent() -> None:
    """With `when:` fields, calls grade different fields: every agent's counts and the report
    cover every field any call graded, whichever call came first."""
    other = {"complaint": "fever", "onset": "3 weeks", "stay": "2"}

    def with_stay(visit: str, record: dict[str, str | None]) -> Episode:
        e = call(visit, record)
        fields = {**e.gold.fields, "stay": record.get("stay") == "2"}
        gold = e.gold.model_copy(update={"fields": fields, "success": all(fields.values())})
        return e.model_copy(update={"gold": gold, "profile": other})

    groups = {
        "a": [call("v1", RIGHT), with_stay("v2", {**RIGHT, "stay": None})],
        "b": [with_stay("v2", {**RIGHT, "stay": "3"}), call("v1", RIGHT)],
    }
    f = real_failures(groups)
    assert f is not None
    assert [(x.missing["stay"], x.wrong["stay"]) for x in f.agents] == [(1, 0), (0, 1)]
    assert any(line.startswith("| stay |") for line in failures_section(f))
