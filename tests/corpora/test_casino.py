"""``corpora.casino``: CaSiNo read in place; a missing or broken split is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim2human.corpora import casino
from sim2human.errors import UsageError


def participant(high: str, reason: str, svo: str = "prosocial") -> dict[str, object]:
    levels = ["Food", "Water", "Firewood"]
    levels.remove(high)
    return {
        "value2issue": {"High": high, "Medium": levels[0], "Low": levels[1]},
        "value2reason": {"High": f" {reason}  ", "Medium": "m", "Low": "l"},
        "personality": {"svo": svo},
    }


DIALOGUE = {
    "dialogue_id": 7,
    "chat_logs": [
        {"text": "Hello! I need water badly.", "task_data": {}, "id": "mturk_agent_1"},
        {"text": "Hi, we are short of food.", "task_data": {}, "id": "mturk_agent_2"},
        {"text": "Submit-Deal", "task_data": {"issue2youget": {}}, "id": "mturk_agent_1"},
        {"text": "Accept-Deal", "task_data": {"data": "accept_deal"}, "id": "mturk_agent_2"},
    ],
    "participant_info": {
        "mturk_agent_1": participant("Water", "We hike in the desert."),
        "mturk_agent_2": participant("Food", "My kids eat a lot.", "proself"),
    },
    "annotations": [],
}


def write_split(folder: Path, split: str, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"casino_{split}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_split_reads_into_dialogues_without_the_deal_events(tmp_path: Path) -> None:
    folder = write_split(tmp_path / casino.FOLDER, "test", [DIALOGUE])
    [d] = casino.load("test", tmp_path)  # the data root or the folder itself
    assert casino.load("test", folder) == (d,)
    assert d.dialogue_id == "7" and d.split == "test"
    assert [who for who, _ in d.utterances] == ["mturk_agent_1", "mturk_agent_2"]
    me = d.participants["mturk_agent_1"]
    assert me.priorities == {"water": "high", "food": "medium", "firewood": "low"}
    assert me.reasons["high"] == "We hike in the desert." and me.svo == "prosocial"
    assert d.participants["mturk_agent_2"].svo == "proself"


def test_a_missing_corpus_is_one_line_naming_where(tmp_path: Path) -> None:
    why = casino.missing(tmp_path)
    assert why is not None and str(tmp_path) in why and "\n" not in why
    with pytest.raises(UsageError, match=r"CaSiNo corpus"):
        casino.load("test", tmp_path)


@pytest.mark.parametrize(
    "data",
    [
        {"not": "a list"},
        [{"dialogue_id": 1}],
        [{**DIALOGUE, "participant_info": {"mturk_agent_1": {}}}],
        [
            {
                **DIALOGUE,
                "participant_info": {
                    "mturk_agent_1": participant("Water", "x"),
                    "mturk_agent_2": {
                        "value2issue": {"High": "Food", "Medium": "Food", "Low": "Water"},
                        "value2reason": {},
                    },
                },
            }
        ],
    ],
)
def test_a_broken_split_is_one_usage_error_naming_the_file(tmp_path: Path, data: object) -> None:
    write_split(tmp_path, "valid", data)
    with pytest.raises(UsageError, match=r"casino_valid\.json") as err:
        casino.load("valid", tmp_path)
    assert "\n" not in str(err.value)


def test_a_file_that_is_not_json_is_one_usage_error(tmp_path: Path) -> None:
    (tmp_path / "casino_train.json").write_text("[{", encoding="utf-8")
    with pytest.raises(UsageError, match="not a CaSiNo split file"):
        casino.load("train", tmp_path)
