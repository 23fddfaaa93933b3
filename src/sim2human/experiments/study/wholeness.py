"""A finished sub-run proves it is whole: its ``summary.json`` records how many episodes it
logged, and every reader checks the log against those counts before trusting it.

Without the check, a log cut short (or edited) after its sub-run finished read as a smaller
finished evaluation: ``--resume`` kept it and rewrote ``study.json`` with other numbers, without
a word. The counts: ``train.n`` and ``heldout.n`` (the evaluations per split, which every
summary has always held) and ``episodes_logged`` (every line of ``episodes.jsonl``, training
episodes included; summaries written before it existed are checked on the evaluations alone).

What each reader does with a torn sub-run: ``--resume`` reruns it whole (a note names it and the
counts); ``aggregate`` (writing ``study.json``) refuses it; the diagnostics list it among the
run's problems and leave its evaluation out, as for an unfinished sub-run. Episodes of another
scenario than the study's are refused by every reader, naming the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sim2human.errors import RunDirError
from sim2human.store.layout import EPISODES, SUMMARY
from sim2human.store.rundir import read_episodes, read_json
from sim2human.types import Episode

LOGGED = "episodes_logged"
"""The summary's count of every line its sub-run wrote to ``episodes.jsonl``."""
_SPLITS = {"train": "train-member evaluations", "heldout": "held-out evaluations"}


class TornSubRun(RunDirError):
    """A finished sub-run whose log does not hold what its summary records (or cannot be read
    whole): rerun it. ``why`` is the message without the path and the advice."""

    def __init__(self, sub: Path, why: str, rerun: str) -> None:
        super().__init__(f"{sub}: {why}; {rerun}")
        self.why = why


class ForeignEpisodes(RunDirError):
    """A sub-run's log holds episodes of another scenario than its study's."""


def counts(episodes: Sequence[Episode]) -> dict[str, int]:
    """What a log holds, in the summary's terms: evaluations per split, and every episode."""
    evals = [e for e in episodes if e.phase == "eval"]
    return {
        "train": sum(e.split == "train" for e in evals),
        "heldout": sum(e.split == "heldout" for e in evals),
        LOGGED: len(episodes),
    }


def recorded(summary: Mapping[str, Any]) -> dict[str, int]:
    """The counts a summary records (only those it has)."""
    out: dict[str, int] = {}
    for split in _SPLITS:
        group = summary.get(split)
        if isinstance(group, Mapping) and isinstance(group.get("n"), int):
            out[split] = group["n"]
    if isinstance(summary.get(LOGGED), int):
        out[LOGGED] = summary[LOGGED]
    return out


def shortfall(summary: Mapping[str, Any], episodes: Sequence[Episode], unreadable: int = 0) -> str:
    """How the log falls short of (or exceeds) what ``summary`` records, in words; ``""`` when
    it is whole. ``unreadable``: lines a tolerant reader skipped and already reported; a log
    short by no more than those is not torn (they are the missing episodes)."""
    want, have = recorded(summary), counts(episodes)
    missing = sum(max(0, want[k] - have[k]) for k in _SPLITS if k in want)
    extra = any(have[k] > want[k] for k in _SPLITS if k in want)
    lines_off = LOGGED in want and have[LOGGED] + unreadable != want[LOGGED]
    if not (extra or lines_off or missing > unreadable):
        return ""
    parts = [
        f"{have[k]} of the {want[k]} {_SPLITS.get(k, 'episodes')}"
        for k in [*_SPLITS, LOGGED]
        if k in want and have[k] != want[k]
    ]
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"{EPISODES} holds {listed} that {SUMMARY} records"


def foreign(
    episodes: Sequence[Episode], scenario: str, path: Path, whose: str = "the study's scenario"
) -> ForeignEpisodes | None:
    """The error for the first episode of another scenario than ``scenario`` (None if none);
    ``whose``: where ``scenario`` comes from, in words."""
    for number, e in enumerate(episodes, 1):
        if e.scenario != scenario:
            return ForeignEpisodes(
                f"{path}: episode {number} ({e.id!r}) is of scenario {e.scenario!r}, but "
                f"{whose} is {scenario!r}: it belongs to another study; refusing to read it "
                "as this one"
            )
    return None


def read_whole(sub: Path, scenario: str, rerun: str) -> tuple[dict[str, Any], list[Episode]]:
    """A finished sub-run's summary and episodes, proven whole against each other.

    Raises ``TornSubRun`` (its message ends with ``rerun``, what to do) when the summary or the
    log cannot be read, or they disagree; ``ForeignEpisodes`` for another scenario's episodes.
    """
    try:
        summary = read_json(sub / SUMMARY)
        if not isinstance(summary, dict):
            raise RunDirError(f"{sub / SUMMARY}: not a JSON object")
        episodes = read_episodes(sub / EPISODES)
    except RunDirError as err:
        raise TornSubRun(sub, f"finished, but unreadable ({err})", rerun) from None
    if wrong := foreign(episodes, scenario, sub / EPISODES):
        raise wrong
    if torn := shortfall(summary, episodes):
        raise TornSubRun(sub, f"torn: its {torn}", rerun)
    return summary, episodes
