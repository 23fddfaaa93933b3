"""MultiWOZ 2.1 (ConvLab-2 release; MIT / Apache-2.0, data CC BY 4.0) read into typed dialogues.

The corpus is never copied into the package: it is read from a directory the user gives, or
``$SIM2HUMAN_DATA`` (the data root holding ``multiwoz21-convlab2/``, or that folder itself), or
``../shared/data/multiwoz21-convlab2`` beside the repository when present. Format: ``val.json.zip``
and ``test.json.zip``, each one JSON object ``{dialogue_id: {"goal": ..., "log": [...]}}`` whose
``log`` alternates user (even index) and system (odd index) turns, each with ``text`` and
``dialog_act`` (``{"Restaurant-Inform": [["Area", "east"]], ...}``).

Only what the ``support`` scenario plays is typed here: each dialogue's restaurant goal and its
turns with the domains their acts name (so a multi-domain call's hotel turns can be told apart).
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Final, Literal

from sim2human.corpora import ENV, corpus_dir
from sim2human.errors import UsageError

Split = Literal["val", "test"]
SPLITS: Final[tuple[Split, ...]] = ("val", "test")
FOLDER: Final = "multiwoz21-convlab2"
SOURCE: Final = "https://github.com/thu-coai/ConvLab-2 (data/multiwoz/), MultiWOZ 2.1"
_SPACE_PUNCT = re.compile(r" ([,.?!;:])")
_CLITIC = re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m)\b")
MAX_ZIP_BYTES: Final = 64 * 1024 * 1024
"""A split's unzipped JSON is ~27 MB; anything far larger is not this corpus."""


@dataclass(frozen=True)
class Turn:
    speaker: Literal["user", "system"]
    text: str
    domains: frozenset[str]
    """The lower-case domains its acts name (``restaurant``, ``booking``, ``general``...)."""


@dataclass(frozen=True)
class Goal:
    """One domain's part of a dialogue's goal: constraints, booking slots, and whether the
    user's first constraints or booking were meant to fail (then they change them mid-call)."""

    info: dict[str, str]
    book: dict[str, str]
    changes: bool
    fail_book: dict[str, str] = field(default_factory=dict)
    """The booking slots the user asked for first, which failed (then ``book`` holds what they
    changed them to): MultiWOZ's ``fail_book``, e.g. ``{"time": "18:30"}``."""
    fail_info: bool = False
    """Whether the user's first constraints were meant to fail too (``fail_info``)."""


@dataclass(frozen=True)
class Dialogue:
    dialogue_id: str
    split: Split
    goals: dict[str, Goal]
    """Domain -> its goal, for the domains the goal names."""
    turns: tuple[Turn, ...]


def detokenize(text: str) -> str:
    """Undo the corpus's tokenisation: "I 'd like it , please ." -> "I'd like it, please."."""
    return _SPACE_PUNCT.sub(r"\1", _CLITIC.sub(r"\1", " ".join(text.split()))).strip()


def default_dir() -> Path | None:
    """This corpus's folder under the data root (``corpora.corpus_dir``), or None."""
    return corpus_dir(FOLDER)


def missing(path: Path | str | None = None) -> str | None:
    """Why the corpus cannot be found, or None when a split file is there."""
    folder = Path(path) if path is not None else default_dir()
    if folder is not None and (folder / FOLDER).is_dir():
        folder = folder / FOLDER
    if folder is None or not any((folder / f"{s}.json.zip").is_file() for s in SPLITS):
        where = f"{folder} holds neither val.json.zip nor test.json.zip" if folder else "not found"
        return (
            f"MultiWOZ 2.1 corpus: {where}; set {ENV} to the folder holding '{FOLDER}/' ({SOURCE})"
        )
    return None


def resolve_dir(path: Path | str | None = None) -> Path:
    if (why := missing(path)) is not None:
        raise UsageError(why)
    folder = Path(path) if path is not None else default_dir()
    assert folder is not None
    return folder / FOLDER if (folder / FOLDER).is_dir() else folder


def load(split: Split, path: Path | str | None = None) -> tuple[Dialogue, ...]:
    """Every dialogue of ``split``, in file order."""
    return _load(resolve_dir(path).resolve(), split)


@lru_cache(maxsize=4)
def _load(folder: Path, split: Split) -> tuple[Dialogue, ...]:
    zpath = folder / f"{split}.json.zip"
    try:
        with zipfile.ZipFile(zpath) as z:
            info = z.getinfo(f"{split}.json")
            if info.file_size > MAX_ZIP_BYTES:
                raise UsageError(f"{zpath}: {split}.json is {info.file_size} bytes, not MultiWOZ")
            data = json.loads(z.read(info))
    except FileNotFoundError:
        raise UsageError(f"MultiWOZ 2.1 corpus: {zpath} is missing") from None
    except (KeyError, zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UsageError(f"{zpath}: not a MultiWOZ split file ({err})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{zpath}: expected an object of dialogues")
    return tuple(_dialogue(str(k), split, v, zpath) for k, v in data.items())


def _dialogue(did: str, split: Split, raw: object, where: Path) -> Dialogue:
    try:
        assert isinstance(raw, dict)
        goals = {
            dom: Goal(
                info={str(k): str(v) for k, v in g.get("info", {}).items()},
                book={str(k): str(v) for k, v in g.get("book", {}).items()},
                changes=bool(g.get("fail_info") or g.get("fail_book")),
                fail_book={str(k): str(v) for k, v in (g.get("fail_book") or {}).items()},
                fail_info=bool(g.get("fail_info")),
            )
            for dom, g in raw["goal"].items()
            if isinstance(g, dict) and (g.get("info") or g.get("book"))
        }
        turns = tuple(
            Turn(
                "user" if i % 2 == 0 else "system",
                detokenize(str(t["text"])),
                frozenset(a.split("-")[0].lower() for a in t.get("dialog_act", {})),
            )
            for i, t in enumerate(raw["log"])
        )
    except (AssertionError, KeyError, TypeError, AttributeError) as err:
        raise UsageError(f"{where}: dialogue {did!r} is not a MultiWOZ dialogue ({err})") from None
    return Dialogue(did, split, goals, turns)
