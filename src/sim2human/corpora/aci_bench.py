"""ACI-Bench (doctor-patient visits, CC BY 4.0) read into typed transcripts.

The corpus is never copied into the package: it is read from a directory the user gives, or
``$SIM2HUMAN_DATA`` (the data root holding ``aci-bench/``, or that folder itself), or
``../shared/data/aci-bench`` beside the repository when present. Format: ``<split>.csv`` with
``dataset, encounter_id, dialogue, note`` (one ``[doctor]``/``[patient]``/``[patient_guest]`` turn
per line) and ``<split>_metadata.csv`` joined on ``encounter_id``.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Final, Literal

from sim2human.corpora import ENV, corpus_dir
from sim2human.errors import UsageError

Speaker = Literal["doctor", "patient", "patient_guest"]
Split = Literal["train", "valid", "test"]

SPLIT_FILES: Final[dict[str, Split]] = {
    "train": "train",
    "valid": "valid",
    "clinicalnlp_taskB_test1": "test",
    "clinicalnlp_taskC_test2": "test",
    "clef_taskC_test3": "test",
}
"""File stem -> the corpus split it belongs to (three test sets, one ``test`` split here)."""
DIALOGUE_COLUMNS: Final = ("dataset", "encounter_id", "dialogue", "note")
METADATA_COLUMNS: Final = (
    "encounter_id",
    "patient_gender",
    "patient_age",
    "patient_firstname",
    "cc",
    "2nd_complaints",
)
FOLDER: Final = "aci-bench"
_TURN = re.compile(r"^\[(doctor|patient|patient_guest)\]\s?(.*)$")
_MONTHS = re.compile(r"^(\d+)[- ]?months?$")
_CLITIC = re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m)\b")
_PUNCT = re.compile(r" ([,.?!;:])")
csv.field_size_limit(10_000_000)  # a dialogue is one CSV field of up to ~40 kB


@dataclass(frozen=True)
class Turn:
    speaker: Speaker
    text: str


@dataclass(frozen=True)
class Metadata:
    gender: str
    age: int | None
    first_name: str
    cc: str
    """The chief complaint, as the corpus's annotators wrote it."""
    secondary: tuple[str, ...]
    """``2nd_complaints``, split on ``;``."""


@dataclass(frozen=True)
class Transcript:
    """One encounter: its turns in order, the reference clinical note and the metadata."""

    encounter_id: str
    dataset: str
    """Subset: ``aci``, ``virtassist`` or ``virtscribe``."""
    split: Split
    source: str
    """The file stem it came from (``train``, ``clef_taskC_test3`` ...)."""
    turns: tuple[Turn, ...]
    note: str
    meta: Metadata

    @property
    def patient_turns(self) -> tuple[str, ...]:
        return tuple(t.text for t in self.turns if t.speaker == "patient")


def detokenize(text: str) -> str:
    """Undo the corpus's space-tokenisation: "i do n't know , maybe ." -> "i don't know, maybe."."""
    text = _CLITIC.sub(r"\1", text)
    return _PUNCT.sub(r"\1", text).strip()


def default_dir() -> Path | None:
    """This corpus's folder under the data root (``corpora.corpus_dir``), or None."""
    return corpus_dir(FOLDER)


def resolve_dir(path: Path | str | None = None) -> Path:
    """The corpus folder: ``path`` if given, else ``default_dir()``; a clear error otherwise."""
    if path is not None:
        p = Path(path)
        chosen = p / FOLDER if (p / FOLDER).is_dir() else p
    else:
        found = default_dir()
        if found is None:
            raise UsageError(
                f"ACI-Bench corpus not found: pass --data DIR or set {ENV} to the folder holding "
                f"'{FOLDER}/' (https://github.com/wyim/aci-bench, data/challenge_data/)"
            )
        chosen = found
    if not chosen.is_dir():
        raise UsageError(f"ACI-Bench corpus: {chosen} is not a directory")
    return chosen


def missing(path: Path | str | None = None) -> str | None:
    """Why the corpus cannot be found (no folder, or a folder without any split file), or None
    when it is there. Files that are present but malformed are ``load``'s to report."""
    try:
        folder = resolve_dir(path)
    except UsageError as err:
        return str(err)
    if not any((folder / f"{s}.csv").exists() for s in SPLIT_FILES):
        return (
            f"ACI-Bench corpus not found: {folder} holds none of its files; pass --data DIR or "
            f"set {ENV} to the folder holding '{FOLDER}/'"
        )
    return None


def load(path: Path | str | None = None) -> tuple[Transcript, ...]:
    """Every encounter of every split found in the corpus folder, in file order."""
    return _load(resolve_dir(path).resolve())


def split_of(transcripts: tuple[Transcript, ...], *splits: Split) -> tuple[Transcript, ...]:
    return tuple(t for t in transcripts if t.split in splits)


@lru_cache(maxsize=8)
def _load(folder: Path) -> tuple[Transcript, ...]:
    stems = [s for s in SPLIT_FILES if (folder / f"{s}.csv").exists()]
    if not stems:
        names = ", ".join(f"{s}.csv" for s in SPLIT_FILES)
        raise UsageError(f"ACI-Bench corpus: {folder} holds none of {names}")
    out: list[Transcript] = []
    for stem in stems:
        meta = _read_metadata(folder / f"{stem}_metadata.csv")
        for row, line in _rows(folder / f"{stem}.csv", DIALOGUE_COLUMNS):
            eid = row["encounter_id"]
            where = f"{folder / (stem + '.csv')}, line {line}"
            if eid not in meta:
                raise UsageError(f"{where}: encounter {eid!r} is not in {stem}_metadata.csv")
            turns = _turns(row["dialogue"], where)
            out.append(
                Transcript(
                    eid, row["dataset"], SPLIT_FILES[stem], stem, turns, row["note"], meta[eid]
                )
            )
    return tuple(out)


def _rows(path: Path, columns: tuple[str, ...]) -> list[tuple[dict[str, str], int]]:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in columns if c not in (reader.fieldnames or ())]
            if missing:
                raise UsageError(f"{path}: missing column(s) {', '.join(missing)}")
            rows = []
            for row in reader:
                if None in row or any(row.get(c) is None for c in columns):
                    raise UsageError(f"{path}, line {reader.line_num}: wrong number of columns")
                rows.append((row, reader.line_num))
            return rows
    except FileNotFoundError:
        raise UsageError(f"ACI-Bench corpus: {path} is missing") from None
    except (UnicodeDecodeError, csv.Error) as err:
        raise UsageError(f"{path}: not a readable CSV file ({err})") from None


def _read_metadata(path: Path) -> dict[str, Metadata]:
    out: dict[str, Metadata] = {}
    for row, line in _rows(path, METADATA_COLUMNS):
        out[row["encounter_id"]] = Metadata(
            gender=row["patient_gender"].strip(),
            age=_age(row["patient_age"], f"{path}, line {line}"),
            first_name=row["patient_firstname"].strip(),
            cc=row["cc"].strip().lower(),
            secondary=tuple(
                s.strip().lower() for s in row["2nd_complaints"].split(";") if s.strip()
            ),
        )
    return out


def _age(raw: str, where: str) -> int | None:
    """Whole years: ``57``, ``57.0``, ``9-month`` (0 years); empty is unknown."""
    text = raw.strip().lower()
    if not text:
        return None
    if m := _MONTHS.match(text):
        return int(m.group(1)) // 12
    try:
        years = float(text)
    except ValueError:
        raise UsageError(f"{where}: patient_age {raw!r} is not an age") from None
    if not 0 <= years < 130:
        raise UsageError(f"{where}: patient_age {raw!r} is not an age")
    return int(years)


def _turns(dialogue: str, where: str) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    for raw in dialogue.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _TURN.match(line)
        if m is None:  # an untagged line continues the turn above it (11 in the corpus);
            if not turns:  # one before any tag cannot be attributed and is left out (1)
                continue
            turns[-1] = Turn(turns[-1].speaker, f"{turns[-1].text} {line}")
            continue
        speaker: Speaker = m.group(1)  # type: ignore[assignment]
        turns.append(Turn(speaker, m.group(2).strip()))
    if not turns:
        raise UsageError(f"{where}: the dialogue has no [doctor]/[patient] turn")
    return tuple(turns)
