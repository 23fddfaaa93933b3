"""A copying drill before the warm start, for a model that has never learned to copy.

A language-model agent records what the caller said by copying a run of their words into a
``record`` call. A pretrained model copies already; the ``tiny`` model, trained from scratch on
a few hundred reference calls, does not learn to: it writes the values it saw most (a caller's
"neck pain" recorded as "lower back pain"), because every value comes from the scenario's short
lists and the likeliest one lowers the loss nearly as well. The drill makes copying the only way
to lower it: short exchanges of the callers' words (in a random order, or a caller's own turn
as said: ``SENTENCES``), each answered by a ``record`` call of a random run of those words into
a random field. Nothing in it is an agent's spoken line, so it privileges no phrasing before RL
(the warm start's rule), and it reads no held-out caller: its words are the warm start's own
calls'.

Measured (``docs/results/lm-agents.md``): at intake's quick warm start, 1,000 drill steps took
the tiny model from 39% to 64% of fields right at temperature 0 (24 calls each); on support no
gain showed, where most calls are lost to a missing ``submit`` instead. Half the exchanges a
caller's own turn, against none, added 12 and 5 points of fields right at temperature 0 on two
warm-start seeds (72 calls each, paired; the second seed's interval reaches 0), 12 and 7 at 0.7,
at no measured cost in time; a caller's own turn only, 5 and 9. Runs of 2 to 8 words (``RUN``)
where they were 1 to 4: 69% -> 79% of fields right at temperature 0 and 1 -> 12 of 72 calls
complete (intake's quick warm start, seed 0, the same calls; +9.5 [+3.6, +16.1] points, paired);
on seed 1 67% -> 71% (+3.8 [-3.1, +10.2]), 2 -> 4 calls, its copying not formed by the drill's
end (``scripts/copy_probe.py``): the circuit arrives suddenly, and the drill's annealed learning
rate leaves to the seed whether it arrives in time.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np

from sim2human import seeding
from sim2human.agents.lm_policy import LMPolicy
from sim2human.scenarios.tools import RECORD
from sim2human.train.config import WarmStartConfig
from sim2human.train.warm_start import Progress, fine_tune, written_value
from sim2human.types import Episode, ToolCall, Turn

BATCH = 32
"""Drill exchanges per gradient step."""
EXCHANGES = 4
"""Caller turns, each with its ``record`` call, in one drill sequence."""
WORDS = (6, 16)
"""How many words a drill caller says (at least, fewer than)."""
RUN = (2, 9)
"""How many of them the ``record`` call copies (at least, fewer than). Only the words after a
run's first are copying (the first is a choice, the end a guess), so short runs teach little of
it: at a constant learning rate, with runs of 1 to 4 words of 4 to 15, 1,000 steps left the
tiny model copying 69% of those tokens right from a random order of words (teacher forced, per
token); with runs of 2 to 8 of 6 to 15, it copied 93% after 800 steps, where the short runs had
64-68% at 600-800 (``docs/results/lm-agents.md``, "A drill that copies")."""
SENTENCES = 0.5
"""The share of drill exchanges in which the caller says one of the callers' own turns, word for
word, rather than their words in a random order. Words in a random order teach the mechanics
(nothing but the caller's turn predicts the next word); a caller's own sentence teaches copying
where the model's own guess competes: after "4" in "for 4 months now" a model that has read
"4 weeks" and "4 days" in its warm start guesses the unit, and must copy it instead."""


def drill_shape() -> dict[str, object]:
    """What makes the drill's exchanges, for a warm start's cache key: a changed drill must not
    reuse a warm start made with another."""
    return {
        "batch": BATCH,
        "exchanges": EXCHANGES,
        "words": WORDS,
        "run": RUN,
        "sentences": SENTENCES,
    }


def drill_calls(
    calls: Sequence[Episode],
    fields: Sequence[str],
    n: int,
    seed: int,
    sentences: float = SENTENCES,
) -> list[SimpleNamespace]:
    """``n`` drill sequences drawn from the words the callers of ``calls`` said, ``sentences``
    of their exchanges a caller's own turn."""
    said = [t.text.split() for e in calls for t in e.turns if t.speaker != "agent"]
    said = [words for words in said if words]
    vocab = sorted({w for words in said for w in words})
    if not vocab or not fields:
        return []
    rng = seeding.stream(seed, "copy-drill")
    return [
        SimpleNamespace(turns=_exchanges(said, vocab, fields, rng, sentences)) for _ in range(n)
    ]


def _exchanges(
    said: list[list[str]],
    vocab: list[str],
    fields: Sequence[str],
    rng: np.random.Generator,
    sentences: float,
) -> list[Turn]:
    turns = []
    for _ in range(EXCHANGES):
        if rng.random() < sentences:
            words = said[int(rng.integers(len(said)))]
        else:
            words = [
                vocab[int(i)] for i in rng.integers(len(vocab), size=int(rng.integers(*WORDS)))
            ]
        size = min(int(rng.integers(*RUN)), len(words))
        start = int(rng.integers(len(words) - size + 1))
        field = fields[int(rng.integers(len(fields)))]
        value = written_value(" ".join(words[start : start + size]))
        record = ToolCall(name=RECORD, arguments={"field": field, "value": value})
        turns.append(Turn(speaker="user", text=" ".join(words)))
        turns.append(Turn(speaker="agent", text="", tool_calls=(record,)))
    return turns


def copy_drill(
    policy: LMPolicy,
    calls: Sequence[Episode],
    fields: Sequence[str],
    cfg: WarmStartConfig,
    seed: int,
    progress: Progress | None = None,
) -> list[float]:
    """``cfg.copy_drill`` gradient steps of the drill on ``policy`` (its agent tokens only, at
    the warm start's learning rate), without the system prompt, which the drill does not need
    and which would be most of each sequence; the loss of the one pass."""
    drills = drill_calls(calls, fields, cfg.copy_drill * BATCH, seed)
    if not drills:
        return []
    prompt, policy.system_prompt = policy.system_prompt, ""
    try:
        once = WarmStartConfig(episodes=len(drills), epochs=1, lr=cfg.lr, batch=BATCH)
        return fine_tune(policy, drills, once, seed, progress)  # type: ignore[arg-type]
    finally:
        policy.system_prompt = prompt
