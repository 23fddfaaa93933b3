"""Scenario files: every bad one is one line naming file, line and key path (exit 2, no
traceback); the skeleton of ``scenario new`` loads, passes ``scenario check`` and hears itself."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from sim2human.agents.scripted import Plan
from sim2human.cli.app import main
from sim2human.errors import ConfigError
from sim2human.scenarios.core import headline_metric
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.simulators.base import Traits
from sim2human.simulators.llm_prompts import PROMPT_STYLES, role_play, system_prompt
from sim2human.types import Termination

SKELETON = resources.files("sim2human.scenarios").joinpath("skeleton")
TEXT = SKELETON.joinpath("scenario.yaml").read_text(encoding="utf-8").replace("__NAME__", "booking")
AREAS = SKELETON.joinpath("areas.txt").read_text(encoding="utf-8")
ROWS = (
    "profiles:\n  rows:\n"
    "    - {area: north, party_size: 2, day: 2027-02-14, outside: no, diet: []}\n"
)


def write(tmp_path: Path, text: str, areas: str = AREAS) -> Path:
    path = tmp_path / "booking.yaml"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "areas.txt").write_text(areas, encoding="utf-8")
    return path


def line_of(text: str, anchor: str) -> int:
    """The first line holding ``anchor`` (comment lines only for an anchor that is one;
    ``^anchor``: a line that starts with it)."""
    lines = list(enumerate(text.splitlines(), 1))
    if anchor.startswith("^"):
        return next(i for i, ln in lines if ln.startswith(anchor[1:]))
    comment = anchor.startswith("#")
    return next(i for i, ln in lines if anchor in ln and (comment or not ln.startswith("#")))


# (what is wrong, old text, new text, the line's anchor (default: new's first line), message)
BAD: list[tuple[str, str, str, str | None, str]] = [
    (
        "missing field kind",
        "    kind: category                 # one name from a vocabulary\n",
        "",
        "  area:",
        "fields.area: missing key 'kind' (one of: category, number, date, yesno, list)",
    ),
    (
        "unknown field kind",
        "kind: category ",
        "kind: colour ",
        None,
        "fields.area.kind: unknown kind 'colour' (one of: category, number, date, yesno, list)",
    ),
    (
        "unknown vocabulary file",
        "vocabulary: areas.txt",
        "vocabulary: zones.txt",
        None,
        "fields.area.vocabulary: file 'zones.txt' not found (next to booking.yaml)",
    ),
    (
        "gold names an unknown field",
        "  fields: [area, party_size, day, outside, diet]",
        "  fields: [area, party_size, day, outside, dessert]",
        None,
        "gold.fields.4: unknown field 'dessert' (fields: area, party_size, day, outside, diet)",
    ),
    (
        "profile value outside its range",
        "# The gold rule",
        ROWS.replace("party_size: 2", "party_size: 12") + "# The gold rule",
        "    - {area",
        "profiles.rows.0.party_size: 12 is outside the range [1, 8]",
    ),
    (
        "duplicate act ids",
        "id: greet.short",
        "id: greet.plain",
        "Hi, restaurant bookings.",
        "acts.1.id: duplicate act id 'greet.plain' (first at acts.0)",
    ),
    (
        "unknown key",
        "    label: part of town",
        "    colour: blue\n    label: part of town",
        "colour: blue",
        "fields.area.colour: unknown key",
    ),
    (
        "wrong schema_version",
        "schema_version: 1 ",
        "schema_version: 2 ",
        None,
        "schema_version: 2 is not supported (this sim2human reads 1)",
    ),
    (
        "no schema_version",
        "schema_version: 1 ",
        "# version: 1 ",
        "name: booking",
        "schema_version: missing (this sim2human reads 1)",
    ),
    (
        "a reversed number range",
        "range: [1, 8]",
        "range: [8, 1]",
        None,
        "fields.party_size.range: low end 8 is above high end 1",
    ),
    (
        "a trigger naming an unknown act",
        "triggers: [style.delight, style.vip]",
        "triggers: [style.delight,\n             style.wink]",
        "style.wink",
        "quirks.triggers.1: unknown act 'style.wink' (acts: greet.plain, greet.short, "
        "clarify.simple, clarify.repeat, confirm.readback, empathise.sorry, prompt.silence, "
        "close.plain, style.delight, style.vip)",
    ),
    (
        "a trigger that is no style act",
        "triggers: [style.delight, style.vip]",
        "triggers: [greet.plain]",
        None,
        "quirks.triggers.0: act 'greet.plain' is a 'greet', not 'style'",
    ),
    (
        "an ask wording the scenario cannot hear",
        '"How many people is the table for?"',
        '"What\'s the headcount?"',
        None,
        "fields.party_size.ask.plain.0: \"What's the headcount?\" holds none of the field's cues",
    ),
    (
        "a say template without its value",
        '"For {v} people."',
        '"For some people."',
        None,
        "fields.party_size.say.0: a 'say' template needs {v} (where the value goes)",
    ),
    (
        "an alias of no item",
        "aliases: {downtown: centre}",
        "aliases: {downtown: middle}",
        None,
        "fields.area.aliases.downtown: 'middle' is not in the vocabulary",
    ),
    (
        "a close act the scenario does not read as a close",
        "Your table is booked. Thank you, goodbye!",
        "Your table is booked. Thanks!",
        None,
        "acts.7.text: a close act must hold one of cues.close",
    ),
    (
        "an unknown opening field",
        "opening_field: area ",
        "opening_field: zone ",
        None,
        "persona.opening_field: unknown field 'zone' (fields: area, party_size, day, outside, "
        "diet)",
    ),
    (
        "a profile row without a field",
        "# The gold rule",
        "profiles:\n  rows:\n    - {area: north}\n# The gold rule",
        "    - {area",
        "profiles.rows.0: missing field 'party_size'",
    ),
    (
        "a profile date outside its range",
        "# The gold rule",
        ROWS.replace("2027-02-14", "2030-01-01") + "# The gold rule",
        "    - {area",
        "profiles.rows.0.day: 2030-01-01 is outside the range [2027-01-01, 2027-12-31]",
    ),
    (
        "a profile item not in the vocabulary",
        "# The gold rule",
        ROWS.replace("diet: []", "diet: [halal]") + "# The gold rule",
        "    - {area",
        "profiles.rows.0.diet: 'halal' is not in the vocabulary (e.g. vegetarian, vegan, "
        "gluten free)",
    ),
    (
        "an unknown placeholder in an act",
        "{readback}. Is that correct?",
        "{record}. Is that correct?",
        None,
        "acts.4.text: unknown placeholder {record}",
    ),
    (
        "gold on a field the caller does not know",
        "  withholds: [diet]",
        "  withholds: [diet]\n  knows: [area]",
        "  fields: [area, party_size",
        "gold.fields.1: 'party_size' is not in user.knows: no caller could tell it",
    ),
    (
        "a share that is not a number",
        "p_yes: 0.3 ",
        "p_yes: lots ",
        None,
        "fields.outside.p_yes: Input should be a valid number, unable to parse string as a number",
    ),
    (
        "a missing required key",
        '  hang_up: "This is taking too long. Goodbye."\n',
        "",
        "^persona:",
        "persona: missing key 'hang_up'",
    ),
    (
        "a placeholder with a format spec",
        '"For {v} people."',
        '"For {v:>999999999} people."',
        None,
        "fields.party_size.say.0: unknown placeholder {v:>999999999}",
    ),
    (
        "a number range beyond what can be drawn",
        "range: [1, 8]",
        "range: [1, 100000000000000000000]",
        None,
        "fields.party_size.range.1: Input should be less than or equal to 1000000000",
    ),
    (
        "a vocabulary item with no letters",
        '"nut allergy|nuts"]',
        '"nut allergy|nuts", "!!!"]',
        None,
        "fields.diet.vocabulary: an item or alias has no letters or digits",
    ),
    (
        "a reference act of the wrong kind",
        "  name: Host\n",
        "  name: Host\nreference: {close: greet.plain}\n",
        "reference:",
        "reference.close: act 'greet.plain' is a 'greet', not 'close'",
    ),
    (
        "a when naming an unknown field",
        "    kind: yesno                    # yes or no\n",
        "    kind: yesno                    # yes or no\n    when: {zone: north}\n",
        "    when: {zone: north}",
        "fields.outside.when.zone: unknown field 'zone' "
        "(fields: area, party_size, day, outside, diet)",
    ),
    (
        "a when value outside that field's vocabulary",
        "    kind: yesno                    # yes or no\n",
        "    kind: yesno                    # yes or no\n    when: {area: atlantis}\n",
        "    when: {area: atlantis}",
        "fields.outside.when.area: 'atlantis' is not in area's vocabulary "
        "(e.g. centre, north, south)",
    ),
    (
        "a when naming a field that is not a category",
        "    kind: yesno                    # yes or no\n",
        "    kind: yesno                    # yes or no\n    when: {diet: vegan}\n",
        "    when: {diet: vegan}",
        "fields.outside.when.diet: 'diet' is a list field; 'when' names category fields",
    ),
    (
        "fields whose whens make a cycle",
        "  party_size:\n",
        "    when: {seating: garden}\n"
        "  seating:\n"
        "    kind: category\n"
        "    vocabulary: [garden, window]\n"
        "    when: {area: north}\n"
        '    ask: {plain: ["Which seating would you like?"]}\n'
        "    cues: [seating]\n"
        '    say: ["The {v} seating, please."]\n'
        "  party_size:\n",
        "    when: {seating: garden}",
        "fields.area.when: a cycle: area -> seating -> area",
    ),
    (
        "markers with neither before nor after",
        "    aliases: {downtown: centre}",
        "    markers: {}\n    aliases: {downtown: centre}",
        None,
        "fields.area.markers: give 'before' or 'after' (the words around this field's values)",
    ),
    (
        "a say wording that carries none of its field's markers",
        "    aliases: {downtown: centre}",
        "    markers: {before: [in the]}\n    aliases: {downtown: centre}",
        '    say: ["Somewhere in the {v}."',
        "fields.area.say.1: 'The {v}, please.' carries none of the field's markers, "
        "so a caller saying it unasked would not be heard",
    ),
    (
        "a marker two fields share",
        "  party_size:\n",
        "    markers: {before: [the]}\n"
        "  seating:\n"
        "    kind: category\n"
        "    vocabulary: [garden, window]\n"
        "    markers: {before: [the], after: [seating]}\n"
        '    ask: {plain: ["Which seating would you like?"]}\n'
        "    cues: [seating]\n"
        '    say: ["In the {v}, please."]\n'
        "  party_size:\n",
        "    markers: {before: [the], after: [seating]}",
        "fields.seating.markers.before.0: 'the' is also a marker of area (before): "
        "a value after it could be either's",
    ),
    (
        "markers on a number field",
        "    unit: people ",
        "    markers: {before: [for]}\n    unit: people ",
        None,
        "fields.party_size.markers: unknown key",
    ),
    (
        "no act closes the call",
        '  - {id: close.plain, kind: close, text: "Your table is booked. Thank you, goodbye!"}\n',
        "",
        "acts:",
        "acts: no act of kind 'close' (a slot-filling call needs one)",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "anchor", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_a_bad_scenario_file_is_one_line_naming_file_line_and_key(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    anchor: str | None,
    message: str,
) -> None:
    assert old in TEXT, old
    text = TEXT.replace(old, new, 1)
    path = write(tmp_path, text)
    line = line_of(text, anchor or new.splitlines()[0])
    assert main(["scenario", "check", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"error: {path}:{line}: {message}"]
    assert "Traceback" not in captured.err + captured.out


def test_an_empty_vocabulary_file_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, TEXT, areas="# nothing yet\n")
    line = line_of(TEXT, "vocabulary: areas.txt")
    with pytest.raises(ConfigError) as err:
        load_scenario_file(path)
    assert str(err.value) == f"{path}:{line}: fields.area.vocabulary: the vocabulary has no items"


def test_at_least_fifteen_bad_files_are_checked() -> None:
    assert len(BAD) >= 15


def test_the_skeleton_hears_its_own_callers_and_grades_by_its_rule(tmp_path: Path) -> None:
    scenario = load_scenario_file(write(tmp_path, TEXT))
    assert scenario.name == "booking" and scenario.fields[0] == "area"
    profile = scenario.sample_profile(np.random.default_rng(3))
    assert profile == scenario.sample_profile(np.random.default_rng(3))
    record = scenario.empty_record()
    for f in scenario.fields:
        said = scenario.say(f, profile[f], 1.0, np.random.default_rng(7))
        record = scenario.extract(said, record, f)
    assert record == profile
    assert scenario.grade(profile, record, Termination.COMPLETED).success
    assert not scenario.grade(profile, record, Termination.HUNG_UP).success
    heard = scenario.extract(
        "A table for 4 people in the city centre.", scenario.empty_record(), None
    )
    assert heard["party_size"] == 4 and heard["area"] == "centre"


def test_listed_rows_are_the_profiles(tmp_path: Path) -> None:
    text = TEXT.replace("# The gold rule", ROWS + "# The gold rule", 1)
    scenario = load_scenario_file(write(tmp_path, text))
    row = {"area": "north", "party_size": 2, "day": "2027-02-14", "outside": False, "diet": ()}
    assert {str(scenario.sample_profile(np.random.default_rng(s))) for s in range(5)} == {str(row)}


def test_the_quirk_pool_is_the_files(tmp_path: Path) -> None:
    scenario = load_scenario_file(write(tmp_path, TEXT))
    liked, triggers = scenario.quirk_pool
    assert triggers == (
        "It's an absolute delight to help you today!",
        "You're one of our most valued guests.",
    )
    assert liked[0].startswith("Hello, thanks for calling")


def test_scenario_new_writes_a_skeleton_that_passes_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine"
    assert main(["scenario", "new", "repair-desk", "--out", str(out)]) == 0
    assert (out / "repair-desk.yaml").exists() and (out / "areas.txt").exists()
    assert main(["scenario", "check", str(out / "repair-desk.yaml")]) == 0
    printed = capsys.readouterr().out
    assert "scenario repair-desk: every check passed" in printed and "FAIL" not in printed
    assert "agent reference agent on repair-desk: every check passed" in printed
    assert main(["scenario", "new", "repair-desk", "--out", str(out)]) == 2
    assert "already exists; nothing written" in capsys.readouterr().err


def test_scenario_new_refuses_a_bad_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scenario", "new", "../up", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: '../up': a name is letters")
    assert not list(tmp_path.iterdir())


def test_check_fails_with_exit_1_on_a_contract_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the file loads (its lines are heard said with its first area, the centre), but its
    # callers of every other area say the centre first: it mishears its own users
    text = TEXT.replace('say: ["Somewhere in the {v}.",', 'say: ["Centre? No, the {v}.",')
    assert main(["scenario", "check", str(write(tmp_path, text))]) == 1
    out = capsys.readouterr().out
    assert "FAIL say then extract: the scenario hears its own users" in out


def test_llm_users_are_told_the_user_side_and_not_the_gold(tmp_path: Path) -> None:
    text = TEXT.replace(
        "  withholds: [diet]",
        "  withholds: [diet]\n  knows: [area, party_size, day, outside, diet]",
    )
    scenario = load_scenario_file(write(tmp_path, text))
    profile = scenario.sample_profile(np.random.default_rng(1))
    rp = role_play(scenario)
    for style in PROMPT_STYLES:
        prompt = system_prompt(rp, style, "Alex", profile, scenario.fields, Traits())
        assert "books for friends and family" in prompt and "want a table this year" in prompt
        assert "mention your dietary needs unless" in prompt or "their dietary needs" in prompt
        assert f"party size: {profile['party_size']} people" in prompt
        assert "gold" not in prompt
    readback = next(a for a in scenario.acts if a.kind == "confirm")
    said = scenario.render_act(readback, None, dict(profile))
    assert scenario.extract(said, scenario.empty_record(), None) == profile


def test_the_file_names_the_reference_agents_acts(tmp_path: Path) -> None:
    text = TEXT.replace("  name: Host\n", "  name: Host\nreference: {greet: greet.short}\n")
    scenario = load_scenario_file(write(tmp_path, text))
    assert Plan.of(scenario).greet == next(a for a in scenario.acts if a.id == "greet.short")
    assert Plan.of(load_scenario_file(write(tmp_path, TEXT))).greet.id == "greet.plain"


def test_a_time_is_said_and_read_back_as_its_file_writes_it(tmp_path: Path) -> None:
    """A vocabulary name keeps words and digits only ("19 30"), for reading; callers, read-backs
    and LLM prompts say the file's own spelling ("19:30", "7:30 pm")."""
    text = TEXT.replace("areas.txt", "times.txt").replace(
        "{downtown: centre}", "{half seven: '19:30'}"
    )
    path = write(tmp_path, text)
    (tmp_path / "times.txt").write_text("19:30|7:30 pm\n12:15|12:15 pm\n", encoding="utf-8")
    scenario = load_scenario_file(path)
    assert scenario.readers["area"].vocab is not None
    assert scenario.readers["area"].vocab.canonical == ("19 30", "12 15")
    said = {
        scenario.say("area", "19 30", c, np.random.default_rng(s))
        for c in (0.1, 1.0)
        for s in range(20)
    }
    assert any("19:30" in x for x in said) and any("7:30 pm" in x for x in said)
    assert not [x for x in said if "19 30" in x or "7 30" in x]
    for x in said:  # each form is still heard as the value
        assert scenario.extract(x, scenario.empty_record(), "area")["area"] == "19 30"
    confirm = next(a for a in scenario.acts if "{readback}" in a.text)
    words = scenario.render_act(confirm, None, {**scenario.empty_record(), "area": "19 30"})
    assert "19:30" in words and "19 30" not in words
    assert scenario.fact("area", "12 15") == "12:15"


def test_the_gold_rule_declares_the_headline(tmp_path: Path) -> None:
    assert headline_metric(load_scenario_file(write(tmp_path, TEXT))) == "success"
    scored = TEXT.replace("  # headline: success", "  headline: score", 1)
    assert headline_metric(load_scenario_file(write(tmp_path, scored))) == "score"
    wrong = TEXT.replace("  # headline: success", "  headline: points", 1)
    with pytest.raises(ConfigError) as err:
        load_scenario_file(write(tmp_path, wrong))
    line = line_of(wrong, "headline: points")
    assert str(err.value).startswith(f"{write(tmp_path, wrong)}:{line}: gold.headline: ")
