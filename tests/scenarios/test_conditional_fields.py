"""Fields that apply only to some profiles (``when:``): rows hold exactly the fields that apply,
gold grades only those, callers never need a value they lack, the reference agent asks only what
applies (the category first), and the policy's view gets an "applies" mask only on scenarios
that use the feature (intake's and pizza's views are unchanged)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from test_scenario_files import ROWS, TEXT, line_of, write

from sim2human.agents.base import Observation
from sim2human.agents.features import Featuriser
from sim2human.agents.scripted import reference_agent
from sim2human.cli.app import main
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.scenarios.slots import SlotState, applicable_fields, conditional
from sim2human.simulators.base import QuirkPool, Traits
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import build_simulator
from sim2human.simulators.llm_prompts import role_play, system_prompt
from sim2human.types import Termination, Value
from sim2human.webapp.card import card_lines, label, read_card

OUTSIDE = "    kind: yesno                    # yes or no\n"
WHEN = TEXT.replace(OUTSIDE, OUTSIDE + "    when: {area: north}\n", 1)
"""The skeleton with a table outside offered in the north only."""


def support() -> FileScenario:
    scenario = get_scenario("support")
    assert isinstance(scenario, FileScenario)
    return scenario


def observation(scenario: FileScenario, **record: Value) -> Observation:
    state = SlotState(record={**scenario.empty_record(), **record})
    return Observation(user_text="", turn=1, max_turns=20, history=(), view=state)


@pytest.mark.parametrize(
    ("row", "anchor", "message"),
    [
        (
            ROWS.replace("area: north", "area: south"),
            "^    - {area: south",
            "profiles.rows.0.outside: field 'outside' does not apply to this profile "
            "(when area is north)",
        ),
        (
            ROWS.replace(" outside: no,", ""),
            "^    - {area: north",
            "profiles.rows.0: missing field 'outside' (it applies: when area is north)",
        ),
    ],
    ids=["a field that does not apply", "missing a field that applies"],
)
def test_a_row_holds_exactly_the_fields_that_apply_to_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str, anchor: str, message: str
) -> None:
    text = WHEN.replace("# The gold rule", row + "# The gold rule", 1)
    path = write(tmp_path, text)
    assert main(["scenario", "check", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"error: {path}:{line_of(text, anchor)}: {message}"]
    assert "Traceback" not in captured.err + captured.out


def test_sampled_profiles_hold_the_fields_that_apply_and_gold_grades_those(
    tmp_path: Path,
) -> None:
    scenario = load_scenario_file(write(tmp_path, WHEN))
    assert scenario.conditional
    profiles = [scenario.sample_profile(np.random.default_rng(s)) for s in range(60)]
    north = [p for p in profiles if p["area"] == "north"]
    assert north and len(north) < len(profiles)
    assert all(("outside" in p) == (p["area"] == "north") for p in profiles)
    south = next(p for p in profiles if p["area"] != "north")
    record = {**scenario.empty_record(), **south, "outside": True}  # heard, but not graded
    outcome = scenario.grade(south, record, Termination.COMPLETED)
    assert outcome.success and "outside" not in outcome.fields
    wrong = scenario.grade(north[0], {**record, **north[0], "outside": None}, Termination.COMPLETED)
    assert not wrong.success and wrong.fields["outside"] is False


def test_support_rows_hold_their_domains_fields_only() -> None:
    s = support()
    domains: Counter[str] = Counter()
    for seed in range(300):
        profile = s.sample_profile(np.random.default_rng(seed))
        domains[str(profile["domain"])] += 1
        assert tuple(profile) == s.applicable(profile)
    assert set(domains) == {"restaurant", "hotel", "train"}
    hotel = s.applicable({"domain": "hotel"})
    assert hotel == ("domain", "task", "area", "pricerange", "day", "people", "stay")
    change = s.applicable({"domain": "hotel", "task": "stay change"})
    assert change == ("domain", "task", "area", "pricerange", "day", "people", "old_stay", "stay")
    train = ("domain", "task", "destination", "departure", "day", "people", "time")
    assert s.applicable({"domain": "train"}) == train
    assert s.applicable({}) == ("domain", "task", "day", "people")  # the domain still unknown


def test_the_view_gets_an_applies_mask_only_where_fields_are_conditional() -> None:
    intake, pizza, s = IntakeScenario(), get_scenario("pizza"), support()
    for plain in (intake, pizza):
        assert conditional(plain) is None
        nf = len(plain.fields)  # type: ignore[attr-defined]
        assert Featuriser(plain).size == 3 * nf + (nf + 1) + 4 + 5  # as before the feature
    nf = len(s.fields)
    f = Featuriser(s)
    assert f.size == 3 * nf + (nf + 1) + 4 + 5 + nf
    unknown, hotel = f([observation(s), observation(s, domain="hotel")])
    mask = {name: (unknown[-nf + k], hotel[-nf + k]) for k, name in enumerate(s.fields)}
    assert mask["domain"] == (1, 1) and mask["people"] == (1, 1)
    assert mask["stay"] == (0, 1) and mask["food"] == (0, 0)
    # "everything filled" counts the fields that apply: a hotel record with its five is full
    full = observation(
        s,
        domain="hotel",
        task="new booking",
        area="north",
        pricerange="cheap",
        day="monday",
        people=2,
        stay=3,
    )
    assert f([full])[0][3 * nf + nf + 1 + 4 + 4] == 1


def test_the_reference_agent_asks_only_what_applies_and_solves_every_domain() -> None:
    s = support()
    pool = QuirkPool(liked=s.quirk_pool[0], triggers=s.quirk_pool[1])
    specs = [get_family("terse-guarded").sample(k, pool) for k in range(3)]
    episodes = evaluate(reference_agent(s), specs, s, split="heldout", per_member=12, max_turns=20)
    by_domain: Counter[str] = Counter()
    for e in episodes:
        asked = [
            t.act.split(".")[1]
            for t in e.turns
            if t.speaker == "agent" and t.act and t.act.startswith("ask.")
        ]
        assert set(asked) <= set(e.profile), (e.profile, asked)
        if asked:
            assert asked[0] == "domain" or "domain" not in asked  # the category first
        by_domain[str(e.profile["domain"])] += e.gold.success
    assert set(by_domain) == {"restaurant", "hotel", "train"}
    assert sum(e.gold.success for e in episodes) >= 0.8 * len(episodes)


def test_a_caller_asked_what_does_not_apply_says_so_and_never_needs_a_value() -> None:
    s = support()
    spec = get_family("cooperative").sample(0, QuirkPool(liked=(), triggers=("x",)))
    sim = build_simulator(spec, s)
    profile = next(
        p
        for k in range(50)
        if (p := s.sample_profile(np.random.default_rng(k)))["domain"] == "train"
    )
    sim.start(profile, np.random.default_rng(0))
    replies = [sim.reply("How many nights will you be staying?") for _ in range(4)]  # a hotel's
    reply = next(r for r in replies if not {"silent", "confused"} & set(r.tags))
    assert "not-applicable" in reply.tags
    assert s.extract(reply.text, s.empty_record(), "stay")["stay"] is None
    assert 0 <= sim.satisfaction() <= 1
    assert applicable_fields(s, profile) == tuple(profile)


def test_the_llm_sides_and_the_call_card_name_only_what_applies() -> None:
    s = support()
    profile = {"domain": "hotel", "task": "new booking", "area": "north", "pricerange": "cheap"}
    profile |= {"day": "monday", "people": 2, "stay": 3}
    assert "stay (only when booking is hotel)" in s.voice.agent.system_prompt
    prompt = system_prompt(
        role_play(s), "plain", "Sam", profile, applicable_fields(s, profile), Traits()
    )
    assert "stay" in prompt.lower() and "food" not in prompt.lower()
    assert [line for line, _ in card_lines(s, profile)] == [
        label(s, f) for f in ("domain", "task", "area", "pricerange", "day", "people", "stay")
    ]
    typed = {"domain": "train", "task": "new booking", "destination": "ely", "day": "monday"}
    typed |= {"departure": "cambridge"}
    typed |= {"people": "2", "time": "9:15", "food": "indian"}  # one that does not apply: dropped
    read, problems = read_card(s, typed)
    assert problems == {}
    assert read == {
        "domain": "train",
        "task": "new booking",
        "destination": "ely",
        "departure": "cambridge",
        "day": "monday",
        "people": 2,
        "time": "9 15",
    }
    assert read_card(s, {"domain": "hotel"})[1].keys() == {
        "task",
        "area",
        "pricerange",
        "day",
        "people",
        "stay",
    }
