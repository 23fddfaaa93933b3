"""The built-in persona families, by name.

Training and held-out families differ in trait ranges and noise kinds, not only in seeds, so that
held-out evaluation asks "does it transfer to users unlike the ones trained on?". ``standard`` is
the typical frozen simulator (one cooperative LLM-like user, always with a blind spot) used by the
single-simulator conditions.
"""

from __future__ import annotations

from sim2human.errors import UsageError
from sim2human.simulators.base import Family
from sim2human.simulators.replay import REPLAY_FAMILIES

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            name="standard",
            description="one cooperative, tidy user; every frozen simulator has a blind spot",
            cooperativeness=(0.95, 1.0),
            verbosity=(0.1, 0.2),
            jargon_confusion=(0.0, 0.05),
            tangent_rate=(0.0, 0.05),
            silence_rate=(0.0, 0.02),
            trigger_prob=1.0,
            leniency=(0.4, 0.6),
        ),
        # -- training families ------------------------------------------------------------------
        Family(
            name="cooperative",
            description="answers what is asked, some typos",
            cooperativeness=(0.85, 1.0),
            verbosity=(0.1, 0.4),
            jargon_confusion=(0.05, 0.25),
            silence_rate=(0.0, 0.08),
            noise={"typos": (0.0, 0.3)},
            trigger_prob=0.15,
        ),
        Family(
            name="chatty",
            description="volunteers a lot, wanders off on tangents",
            cooperativeness=(0.8, 1.0),
            verbosity=(0.4, 0.8),
            patience=(18, 26),
            jargon_confusion=(0.05, 0.2),
            tangent_rate=(0.2, 0.45),
            noise={"disfluency": (0.1, 0.4)},
            trigger_prob=0.15,
        ),
        Family(
            name="anxious",
            description="worried, needs reassurance, goes quiet and gets confused",
            cooperativeness=(0.7, 0.9),
            patience=(14, 20),
            jargon_confusion=(0.2, 0.45),
            silence_rate=(0.05, 0.15),
            emotions=("anxious",),
            noise={"typos": (0.1, 0.3)},
            trigger_prob=0.15,
        ),
        # -- held-out families ------------------------------------------------------------------
        Family(
            name="elderly-confused",
            description="slow, often confused by jargon, goes quiet, tells stories",
            cooperativeness=(0.8, 1.0),
            verbosity=(0.1, 0.4),
            patience=(20, 28),
            tolerance=(5, 8),
            jargon_confusion=(0.5, 0.8),
            tangent_rate=(0.15, 0.35),
            silence_rate=(0.08, 0.2),
            noise={"disfluency": (0.2, 0.5)},
            trigger_prob=0.1,
        ),
        Family(
            name="noisy-line",
            description="a bad phone line: speech-recognition confusions and drop-outs",
            cooperativeness=(0.85, 1.0),
            verbosity=(0.1, 0.3),
            jargon_confusion=(0.05, 0.2),
            silence_rate=(0.1, 0.2),
            noise={"asr": (0.2, 0.45), "typos": (0.0, 0.2)},
            trigger_prob=0.1,
        ),
        Family(
            name="terse-guarded",
            description="short answers, evasive at first, irritated by waffle",
            cooperativeness=(0.45, 0.7),
            verbosity=(0.0, 0.05),
            patience=(15, 20),
            tolerance=(3, 5),
            jargon_confusion=(0.1, 0.3),
            emotions=("irritated",),
            capacity=(0.3, 0.7),
            trigger_prob=0.1,
        ),
    )
}
FAMILIES.update(REPLAY_FAMILIES)  # real patients' words: aci-train, aci-heldout (replay.py)
TRAIN_FAMILIES = ("cooperative", "chatty", "anxious")
HELDOUT_FAMILIES = ("elderly-confused", "noisy-line", "terse-guarded")


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        known = ", ".join(FAMILIES)
        raise UsageError(f"unknown simulator family {name!r} (known: {known})") from None
