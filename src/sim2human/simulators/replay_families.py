"""The replay families and their corpora: which real people's dialogues a ``replay`` family
plays (``REPLAY_FAMILIES``: a corpus and some of its splits), the corpora by name (``CORPORA``:
one ``replay_corpus.Corpus`` row each), and what a study asks of them before it plays: which
corpus is a scenario's human reference, which families can play it here, whether the corpus a
family reads is on this machine. The simulators that play a member are ``replay`` (the
slot-filling replay) and a corpus's own (negotiation's ``ReplayCamper``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from sim2human.scenarios.core import AnyScenario
from sim2human.scenarios.intake.replay import ACI_BENCH
from sim2human.scenarios.negotiation.replay import CASINO
from sim2human.scenarios.support.replay import MULTIWOZ
from sim2human.simulators.base import Family, QuirkPool, Quirks, SimulatorSpec, Traits
from sim2human.simulators.replay_corpus import Corpus
from sim2human.simulators.restyled import RESTYLED

CORPORA: Final[dict[str, Corpus]] = {c.name: c for c in (ACI_BENCH, MULTIWOZ, CASINO)}
"""The corpora the package ships, by name: each a ``Corpus`` row in the folder of the scenario
its people play. Registering a corpus is its row here; its families come with it."""


class ReplayFamily(Family):
    """Dialogues of some splits of a corpus; member ``seed`` picks dialogue ``seed mod n``."""

    splits: tuple[str, ...]
    corpus: str = "aci-bench"

    def size(self) -> int:
        """Its dialogues: members ``base + k`` for ``k < size()`` are each of them once."""
        return len(CORPORA[self.corpus].ids(self.splits))

    def sample(self, seed: int, pool: QuirkPool, **override: float) -> SimulatorSpec:
        ids = CORPORA[self.corpus].ids(self.splits)
        traits = Traits(
            temperature=override.get("temperature", 1.0),
            capacity=override.get("capacity", 1.0),
            quirks=Quirks(over_rewarded=(), bonus=0.0, trigger=None, leniency=0.0),
        )
        eid = ids[seed % len(ids)]
        return SimulatorSpec(
            id=f"{self.name}-{eid}", family=self.name, kind="replay", traits=traits, seed=seed
        )


REPLAY_FAMILIES: Final[dict[str, ReplayFamily]] = {
    f.name: ReplayFamily(
        name=f.name,
        splits=f.splits,
        corpus=corpus.name,
        trigger_prob=0.0,
        description=f.description,
    )
    for corpus in CORPORA.values()
    for f in corpus.families
}
"""Every registered corpus's families, in the order registered (no family has a planted
trigger: a real person's blind spots are their own)."""


def human_corpus(scenario: AnyScenario) -> Corpus | None:
    """The corpus whose dialogues are ``scenario``'s task (its human reference), or None when
    no replay corpus is declared for it (found on disk or not)."""
    return next((c for c in CORPORA.values() if c.wrong_task(scenario) is None), None)


def corpus_of(family: str) -> Corpus:
    return CORPORA[REPLAY_FAMILIES[family].corpus]


def playable_families(scenario: AnyScenario) -> list[ReplayFamily]:
    """The replay families whose corpus plays ``scenario`` here."""
    return [f for f in REPLAY_FAMILIES.values() if CORPORA[f.corpus].unplayable(scenario) is None]


def unplayable(scenario: AnyScenario) -> str | None:
    """Why no replay member can play ``scenario`` here (each corpus's reason), or None when
    one corpus can."""
    reasons = [c.unplayable(scenario) for c in CORPORA.values()]
    if any(r is None for r in reasons):
        return None
    return "; ".join(dict.fromkeys(r for r in reasons if r is not None))


def reads_corpus(family: str) -> str | None:
    """The corpus family ``family`` reads in place: a replay family's, or a restyled family's
    whose cache points into one (``retrieved-aci``); None for the others."""
    if family in REPLAY_FAMILIES:
        return REPLAY_FAMILIES[family].corpus
    restyled = RESTYLED.get(family)
    return restyled.corpus if restyled is not None else None


def corpus_missing(families: Iterable[str]) -> str | None:
    """Why the corpus one of ``families`` reads (``reads_corpus``) is not found, or None."""
    for name in families:
        corpus = reads_corpus(name)
        if corpus is not None and (why := CORPORA[corpus].missing()) is not None:
            return why
    return None
