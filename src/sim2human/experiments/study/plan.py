"""A study resolved once, where it starts: ``StudyPlan``.

What a study plays on this machine used to be worked out wherever it was needed: which corpora
are here by the command (to say so, and to let ``--check`` refuse before any directory is made)
and again by ``run_study`` (for a library caller); which endpoints its ``llm`` members play on by
the endpoint probe, the unused-endpoint check, the runner and the Ray fallback, each asking a
world. A plan is that work done once, in the driver: the study as this machine plays it (its
scenario reference already canonical: ``config.load_study`` stores a file's path absolute), what
was left out and why, and the endpoints. Its ``config`` is what ``config.yaml`` holds and what
crosses to the workers, as JSON; a worker builds its world from it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sim2human.errors import UsageError
from sim2human.experiments.study.config import StudyConfig
from sim2human.experiments.study.playable import without_missing_corpus
from sim2human.experiments.study.world import StudyWorld
from sim2human.llm.runtime import Embedded
from sim2human.scenarios.capabilities import slot_kit
from sim2human.train.config import PolicyAgentConfig


@dataclass(frozen=True)
class StudyPlan:
    """A study as this machine plays it (``StudyPlan.of``)."""

    config: StudyConfig
    """The study without the families whose corpus is not found here (``playable``)."""
    left_out: str | None
    """What was left out and why, in one line (said once, by whoever resolved the plan); None
    when nothing was."""
    endpoints: frozenset[str]
    """The endpoints its ``llm`` members (training and held-out) play on."""

    @classmethod
    def of(cls, cfg: StudyConfig) -> StudyPlan:
        """``cfg`` resolved: its corpora decided, its world built (this process keeps it), its
        endpoints listed. A UsageError when what is left cannot run."""
        played, left_out = without_missing_corpus(cfg)
        world = StudyWorld.build(played)
        agent = played.agent
        if (
            isinstance(agent, PolicyAgentConfig)
            and agent.ask_once
            and slot_kit(world.scenario) is None
        ):
            raise UsageError(
                f"agent.ask_once: scenario {world.scenario.name!r} has no fields to ask for "
                "(its view is its own); leave ask_once out"
            )
        return cls(played, left_out, frozenset(world.endpoints(played.conditions)))

    def model_takes_every_core(self) -> bool:
        """Whether an embedded model the study serves was given every core of this machine
        (``threads``).

        Sub-runs then go one at a time: a worker training beside the model's threads makes them
        wait on each other (measured: decode 133 -> 36 tokens/s, ``llm/local.py``), and the work
        of a study that asks for this is mostly the model's.
        """
        cores = os.cpu_count() or 1
        entries = [self.config.llm.entry(name) for name in self.endpoints]
        return any(isinstance(e, Embedded) and (e.threads or 0) >= cores for e in entries)
