"""``corpora.multiwoz``: MultiWOZ 2.1 read in place; a missing or broken split is one line."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from sim2human.corpora import multiwoz
from sim2human.errors import UsageError

DIALOGUE = {
    "goal": {
        "restaurant": {
            "info": {"area": "north", "food": "indian", "pricerange": "cheap"},
            "book": {"day": "monday", "people": "2", "time": "19:30"},
            "fail_info": {},
            "fail_book": {},
        },
        "hotel": {},
    },
    "log": [
        {
            "text": "I want a cheap restaurant in the north .",
            "dialog_act": {"Restaurant-Inform": []},
        },
        {"text": "What type of food ?", "dialog_act": {"Restaurant-Request": []}},
        {"text": "Indian , please . I 'd like it .", "dialog_act": {}},
    ],
}


def write_split(folder: Path, split: str, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / f"{split}.json.zip", "w") as z:
        z.writestr(f"{split}.json", json.dumps(data))
    return folder


def test_a_split_reads_into_dialogues(tmp_path: Path) -> None:
    folder = write_split(tmp_path / multiwoz.FOLDER, "test", {"PMUL0001": DIALOGUE})
    [d] = multiwoz.load("test", tmp_path)  # the data root or the folder itself
    assert multiwoz.load("test", folder) == (d,)
    assert d.dialogue_id == "PMUL0001" and set(d.goals) == {"restaurant"}
    assert d.goals["restaurant"].book["time"] == "19:30" and not d.goals["restaurant"].changes
    assert [t.speaker for t in d.turns] == ["user", "system", "user"]
    assert d.turns[0].domains == frozenset({"restaurant"}) and d.turns[2].domains == frozenset()
    assert d.turns[2].text == "Indian, please. I'd like it."


def test_a_missing_corpus_is_one_line_naming_where(tmp_path: Path) -> None:
    why = multiwoz.missing(tmp_path)
    assert why is not None and str(tmp_path) in why and "\n" not in why
    with pytest.raises(UsageError, match=r"MultiWOZ 2\.1 corpus"):
        multiwoz.load("val", tmp_path)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"not a zip", "not a MultiWOZ split file"),
        ([1, 2], "expected an object of dialogues"),
        ({"X": {"goal": {}}}, "dialogue 'X' is not a MultiWOZ dialogue"),
    ],
)
def test_a_broken_split_is_one_line(tmp_path: Path, content: object, match: str) -> None:
    if isinstance(content, bytes):
        tmp_path.joinpath("val.json.zip").write_bytes(content)
    else:
        write_split(tmp_path, "val", content)
    with pytest.raises(UsageError, match=match) as err:
        multiwoz.load("val", tmp_path)
    assert "\n" not in str(err.value)
