"""``sim2human scenario check`` refuses the silent mistakes of a scenario file (issue 37, item
3): each one line naming file, line and what to do, exit 2. Each file is the skeleton with one
mistake made on purpose."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from sim2human.cli.app import main

SKELETON = resources.files("sim2human.scenarios").joinpath("skeleton")
TEXT = SKELETON.joinpath("scenario.yaml").read_text(encoding="utf-8").replace("__NAME__", "booking")
AREAS = SKELETON.joinpath("areas.txt").read_text(encoding="utf-8")
SAY_PARTY = (
    '    say: ["For {v} people.", "A table for {v} people, please.", "We\'ll be {v} people."]'
)
SAY_AREA = (
    '    say: ["Somewhere in the {v}.", "The {v}, please.", "I\'d like the {v} if possible."]'
)
DIET = '    vocabulary: ["vegetarian|veggie", "vegan", "gluten free|coeliac", "nut allergy|nuts"]'

# (what is wrong, old text, new text, areas.txt, the line's anchor, words the message holds)
BAD: list[tuple[str, str, str, str, str, str]] = [
    (
        "none as a list item",
        DIET,
        DIET.replace('"vegan"', '"vegan", "none"'),
        AREAS,
        'vocabulary: ["vegetarian',
        "fields.diet.vocabulary: 'none' is a list item",
    ),
    (
        "a range written as one item",
        "",
        "",
        "centre\nnorth ... west\n",
        "vocabulary: areas.txt",
        "fields.area.vocabulary: 'north ... west' is a range written as one item",
    ),
    (
        "an alias that is another item",
        "aliases: {downtown: centre}",
        "aliases: {north: centre}",
        AREAS,
        "aliases: {north: centre}",
        "fields.area.aliases.north: 'north' already names 'north'",
    ),
    (
        "an alias that is another item's alias",
        "aliases: {downtown: centre}",
        "aliases: {north side: centre}",
        AREAS,
        "aliases: {north side: centre}",
        "fields.area.aliases.north side: 'north side' already names 'north'",
    ),
    (
        "an inline alias that is another item",
        DIET,
        DIET.replace('"vegan"', '"vegan|vegetarian"'),
        AREAS,
        'vocabulary: ["vegetarian',
        "fields.diet.vocabulary: 'vegetarian' is an alias of 'vegan' and an item of its own",
    ),
    (
        "a unit absent from the templates",
        SAY_PARTY,
        '    say: ["For {v}.", "A table for {v}, please."]',
        AREAS,
        "unit: people",
        "fields.party_size.unit: unit 'people' is in none of the 'say' templates",
    ),
    (
        "a later number template that is not heard",
        SAY_PARTY,
        SAY_PARTY.replace("We'll be {v} people.", "Two of us and {v} kids."),
        AREAS,
        SAY_PARTY.replace("We'll be {v} people.", "Two of us and {v} kids."),
        "fields.party_size.say.2: said as 'Two of us and 3 kids.', the field hears 2",
    ),
    (
        "a later category template that is not heard",
        SAY_AREA,
        SAY_AREA.replace("I'd like the {v} if possible.", "Near the north, in the {v}."),
        AREAS,
        SAY_AREA.replace("I'd like the {v} if possible.", "Near the north, in the {v}."),
        "fields.area.say.2: said as 'Near the north, in the centre.', the field hears 'north'",
    ),
    (
        "a tab",
        "  party_size:\n",
        "  party_size:\n\t\n",
        AREAS,
        "\t",
        "not valid YAML: found character '\\t' that cannot start any token (column 1); "
        "indent with spaces, not tabs",
    ),
    (
        "a key out of line",
        "    range: [1, 8]\n",
        "   range: [1, 8]\n",
        AREAS,
        "   range: [1, 8]",
        "not valid YAML: expected <block end>, but found '<block mapping start>' (column 4); "
        "line this key up with the keys of its mapping (same indent)",
    ),
]


def _line(text: str, anchor: str) -> int:
    lines = text.splitlines()
    return next(i for i, ln in enumerate(lines, 1) if anchor in ln and not ln.startswith("#"))


@pytest.mark.parametrize(
    ("old", "new", "areas", "anchor", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_scenario_check_refuses_a_silent_mistake_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    areas: str,
    anchor: str,
    message: str,
) -> None:
    assert old in TEXT, old
    text = TEXT.replace(old, new, 1)
    path = tmp_path / "booking.yaml"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "areas.txt").write_text(areas, encoding="utf-8")
    assert main(["scenario", "check", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"error: {path}:{_line(text, anchor)}: "), err[0]
    assert message in err[0], err[0]


def test_ten_silent_mistakes_are_checked() -> None:
    assert len(BAD) >= 10
