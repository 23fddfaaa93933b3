"""What of a study this machine can play: every corpus family it names fits its scenario
(``corpus_unfit``), and the families whose corpus is not found here are left out, with what
depends on them (``without_missing_corpus``).

A study's own driver decides this once, in its plan (``plan.StudyPlan``); a world build decides
it again (``world.StudyWorld``), because a run directory is also opened by reports, the web app
and trainer adapters on machines that never ran the driver and may lack the data.
"""

from __future__ import annotations

from sim2human.errors import UsageError
from sim2human.experiments.study.config import StudyConfig
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.replay_families import (
    REPLAY_FAMILIES,
    corpus_missing,
    corpus_of,
    reads_corpus,
)


def corpus_unfit(cfg: StudyConfig, scenario: AnyScenario) -> str | None:
    """Why a corpus family the study names cannot play its scenario (MultiWOZ's bookings for
    ``intake``), or None: said before any training, not when its first call is played."""
    mixed = [c.mix.family for c in cfg.conditions if c.mix is not None]
    for name in (*cfg.ensemble.train, *cfg.ensemble.heldout, *mixed):
        if name in REPLAY_FAMILIES and (why := corpus_of(name).wrong_task(scenario)):
            return (
                f"ensemble family {name!r} does not fit scenario {cfg.scenario!r}: {why}; "
                "name a family of this scenario's corpus, or none"
            )
    return None


def without_missing_corpus(cfg: StudyConfig) -> tuple[StudyConfig, str | None]:
    """``cfg`` without the families that read a corpus in place (``replay`` families, and
    ``retrieved-aci``: ``replay_families.reads_corpus``) when it is not found (a fresh install
    without the data), nor their ``eval.per_family`` counts, nor the conditions that ``mix`` one in
    or ``select`` on one, and the one line that says so; ``cfg`` itself otherwise. What is left is
    validated again here: the workers validate the study they are sent, and a study that only
    the driver accepted would fail in every worker at its first call."""
    lines: list[str] = []
    names = [*cfg.ensemble.train, *cfg.ensemble.heldout]
    real = [n for n in names if reads_corpus(n) is not None]
    if real and (why := corpus_missing(real)) is not None:
        cfg = _without_families(cfg, set(real), why)
        lines.append(f"real patients ({', '.join(real)}) left out: {why}")
    gone = {
        c.name: why
        for c in cfg.conditions
        for of in (c.mix, c.select)
        if of is not None and (why := corpus_missing([of.family])) is not None
    }
    if gone:
        kept = tuple(
            c.model_copy(update={"compare_to": None}) if c.compare_to in gone else c
            for c in cfg.conditions
            if c.name not in gone
        )
        first = next(iter(gone.values()))
        if not kept:
            raise UsageError(f"{first} (every condition mixes in or selects on real people)")
        cfg = cfg.model_copy(update={"conditions": kept})
        lines.append(f"condition(s) {', '.join(gone)} left out: {first}")
    if not lines:
        return cfg, None
    return StudyConfig.model_validate_json(cfg.model_dump_json()), "; ".join(lines)


def _without_families(cfg: StudyConfig, dropped: set[str], why: str) -> StudyConfig:
    """``cfg``'s ensemble without the families ``dropped``, their member and episode counts
    with them; a UsageError saying ``why`` when no training or held-out family is left."""
    keep = {
        k: tuple(n for n in getattr(cfg.ensemble, k) if n not in dropped)
        for k in ("train", "heldout")
    }
    if not all(keep.values()):
        raise UsageError(f"{why} (the study's ensemble has no family without it)")
    members = {k: v for k, v in cfg.ensemble.members.items() if k not in dropped}
    ensemble = cfg.ensemble.model_copy(update={**keep, "members": members})
    per_family = {k: v for k, v in cfg.eval.per_family.items() if k not in dropped}
    evaluation = cfg.eval.model_copy(update={"per_family": per_family})
    return cfg.model_copy(update={"ensemble": ensemble, "eval": evaluation})
