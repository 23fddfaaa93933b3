"""CaSiNo (Chawla et al., NAACL 2021; CC BY 4.0) read into typed campsite negotiations.

The corpus is never copied into the package: it is read from a directory the user gives, or
``$SIM2HUMAN_DATA`` (the data root holding ``casino/``, or that folder itself), or
``../shared/data/casino`` beside the repository when present (``corpora.corpus_dir``). Format:
``casino_{train,valid,test}.json``, each a JSON list of dialogues with ``dialogue_id``,
``chat_logs`` (``{text, task_data, id}``, ``id`` is ``mturk_agent_1``/``_2``; the deal events
``Submit-Deal``, ``Accept-Deal``, ``Reject-Deal``, ``Walk-Away`` are not utterances) and
``participant_info`` (each side's ``value2issue``, ``value2reason``, ``personality.svo``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final, Literal

from sim2human.corpora import ENV, corpus_dir
from sim2human.errors import UsageError

Split = Literal["train", "valid", "test"]
SPLITS: Final[tuple[Split, ...]] = ("train", "valid", "test")
FOLDER: Final = "casino"
SOURCE: Final = "https://github.com/kushalchawla/CaSiNo (data/split/), CC BY 4.0"
SIDES: Final = ("mturk_agent_1", "mturk_agent_2")
EVENTS: Final = frozenset({"Submit-Deal", "Accept-Deal", "Reject-Deal", "Walk-Away"})
"""Chat-log entries that are deal actions, not utterances."""
MAX_FILE_BYTES: Final = 16 * 1024 * 1024
"""The train split is ~3.8 MB; anything far larger is not this corpus."""


@dataclass(frozen=True)
class Participant:
    """One side of a dialogue: its priorities, its own reasons, its social value orientation."""

    priorities: dict[str, str]
    """Issue (``food``, ``water``, ``firewood``) -> ``high`` / ``medium`` / ``low``."""
    reasons: dict[str, str]
    """Priority level -> the participant's own written reason for it."""
    svo: str
    """``prosocial``, ``proself`` or ``unclassified`` (as the corpus records it)."""


@dataclass(frozen=True)
class Dialogue:
    dialogue_id: str
    split: Split
    utterances: tuple[tuple[str, str], ...]
    """(side, text) in chat order, deal events left out."""
    participants: dict[str, Participant]
    """Side (``mturk_agent_1``/``_2``) -> its participant."""


def default_dir() -> Path | None:
    return corpus_dir(FOLDER)


def _folder(path: Path | str | None) -> Path | None:
    folder = Path(path) if path is not None else default_dir()
    if folder is not None and (folder / FOLDER).is_dir():
        folder = folder / FOLDER
    return folder


def missing(path: Path | str | None = None) -> str | None:
    """Why the corpus cannot be found, or None when a split file is there."""
    folder = _folder(path)
    if folder is None or not any((folder / f"casino_{s}.json").is_file() for s in SPLITS):
        where = f"{folder} holds no casino_{{train,valid,test}}.json" if folder else "not found"
        return f"CaSiNo corpus: {where}; set {ENV} to the folder holding '{FOLDER}/' ({SOURCE})"
    return None


def load(split: Split, path: Path | str | None = None) -> tuple[Dialogue, ...]:
    """Every dialogue of ``split``, in file order."""
    if (why := missing(path)) is not None:
        raise UsageError(why)
    folder = _folder(path)
    assert folder is not None
    return _load(folder.resolve(), split)


@lru_cache(maxsize=4)
def _load(folder: Path, split: Split) -> tuple[Dialogue, ...]:
    file = folder / f"casino_{split}.json"
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            raise UsageError(f"{file}: {file.stat().st_size} bytes, not a CaSiNo split file")
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"CaSiNo corpus: {file} is missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UsageError(f"{file}: not a CaSiNo split file ({err})") from None
    if not isinstance(data, list):
        raise UsageError(f"{file}: expected a list of dialogues")
    return tuple(_dialogue(raw, split, file) for raw in data)


def _dialogue(raw: object, split: Split, where: Path) -> Dialogue:
    did = raw.get("dialogue_id", "?") if isinstance(raw, dict) else "?"
    try:
        assert isinstance(raw, dict)
        utterances = tuple(
            (str(c["id"]), str(c["text"]).strip())
            for c in raw["chat_logs"]
            if str(c["text"]) not in EVENTS and str(c["id"]) in SIDES
        )
        participants = {side: _participant(raw["participant_info"][side]) for side in SIDES}
    except (AssertionError, KeyError, TypeError, AttributeError, ValueError) as err:
        raise UsageError(f"{where}: dialogue {did!r} is not a CaSiNo dialogue ({err})") from None
    return Dialogue(str(raw["dialogue_id"]), split, utterances, participants)


def _participant(raw: dict[str, object]) -> Participant:
    value2issue = raw["value2issue"]
    value2reason = raw["value2reason"]
    assert isinstance(value2issue, dict) and isinstance(value2reason, dict)
    priorities = {str(issue).lower(): str(level).lower() for level, issue in value2issue.items()}
    if sorted(priorities) != ["firewood", "food", "water"] or sorted(priorities.values()) != [
        "high",
        "low",
        "medium",
    ]:
        raise ValueError(f"value2issue {value2issue!r} is not one level per issue")
    reasons = {str(level).lower(): " ".join(str(r).split()) for level, r in value2reason.items()}
    personality = raw.get("personality")
    svo = str(personality.get("svo", "")) if isinstance(personality, dict) else ""
    return Participant(priorities, reasons, svo or "unclassified")
