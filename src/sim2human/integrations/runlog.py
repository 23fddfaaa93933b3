"""Episodes from an external trainer, written as a sim2human run directory.

The layout is a study's sub-run (``config.json``, ``episodes.jsonl``, ``members.json``,
``summary.json``; see ``sim2human.store.rundir``), so ``sim2human report DIR`` and ``sim2human
diagnose DIR`` judge an agent trained in Stable-Baselines3, TRL, verl or ART exactly as they
judge one trained by ``sim2human study``: only ``phase == "eval"`` episodes are judged, split into
training and held-out members.
"""

from __future__ import annotations

import atexit
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sim2human.integrations.population import Population
from sim2human.metrics.outcomes import by, member_std, summarise
from sim2human.simulators.base import SimulatorSpec
from sim2human.store.layout import CONFIG, EPISODES, MEMBERS, METRICS, SUMMARY
from sim2human.store.rundir import JsonlWriter, write_json
from sim2human.types import Episode


class RunLog:
    """Appends episodes to ``DIR/episodes.jsonl``; ``close`` writes members and summary.

    A log nobody closes (verl builds its agent loops inside its workers and has no teardown
    hook for them) is closed when its process exits, so the run directory still reads as
    finished; closing twice is harmless.
    """

    def __init__(
        self,
        path: Path | str,
        pop: Population,
        *,
        trainer: str,
        heldout: Sequence[SimulatorSpec] = (),
    ) -> None:
        self.path = Path(path)
        self.heldout = (*pop.ensemble.heldout, *heldout)
        """The held-out members ``members.json`` lists: the population's, and any played beside
        them (a collapse check's replayed real callers)."""
        self.pop = pop
        self.trainer = trainer
        self._writer = JsonlWriter(self.path / EPISODES)
        JsonlWriter(self.path / METRICS).close()  # empty: the trainer logs its own metrics
        self._evals: list[Episode] = []
        self._ids: dict[str, int] = {}
        self._closed = False
        atexit.register(self.close)
        write_json(
            self.path / CONFIG,
            {
                "condition": {"name": pop.condition, "sampler": pop.sampler.name},
                "trainer": trainer,
                "scenario": pop.scenario.name,
                "max_turns": pop.max_turns,
            },
        )

    def write(self, episode: Episode) -> None:
        # the rollouts of one GRPO group play the same member and seed: number the repeats, so
        # the log holds each episode once (readers refuse a log with a repeated id)
        n = self._ids.get(episode.id, 0)
        self._ids[episode.id] = n + 1
        if n:
            episode = episode.model_copy(update={"id": f"{episode.id}#{n}"})
        self._writer.write(episode)
        if episode.phase == "eval":
            self._evals.append(episode)

    def write_all(self, episodes: Iterable[Episode]) -> None:
        for e in episodes:
            self.write(e)

    def close(self) -> None:
        """Write ``members.json`` and ``summary.json`` (a run without them reads as unfinished)."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self._writer.close()
        trained = {**{s.id: s for s in self.pop.ensemble.train}, **self.pop.trained_on}
        quirks = [s.traits.quirks for s in trained.values()]
        phrasings = sorted(
            {p for q in quirks for p in q.over_rewarded} | {q.trigger for q in quirks if q.trigger}
        )
        write_json(
            self.path / MEMBERS,
            {
                "trained_on": [s.model_dump(mode="json") for s in trained.values()],
                "heldout": [s.model_dump(mode="json") for s in self.heldout],
                "sampled_members": len(self.pop.trained_on),
                "trained_quirk_phrasings": phrasings,
            },
        )
        write_json(self.path / SUMMARY, summary(self._evals, self.trainer))

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def summary(evals: list[Episode], trainer: str) -> dict[str, Any]:
    train = [e for e in evals if e.split == "train"]
    held = [e for e in evals if e.split == "heldout"]
    return {
        "condition": trainer,
        "train": summarise(train).model_dump() if train else None,
        "heldout": summarise(held).model_dump() if held else None,
        "heldout_by_family": {k: v.model_dump() for k, v in by(held, lambda e: e.family).items()},
        "heldout_member_std": member_std(held) if held else 0.0,
    }
