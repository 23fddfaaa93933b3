"""A copying drill before the warm start, for a model that has never learned to copy.

A language-model agent records what the caller said by copying a run of their words into a
``record`` call. A pretrained model copies already; the ``tiny`` model, trained from scratch on
a few hundred reference calls, does not learn to: it writes the values it saw most (a caller's
"neck pain" recorded as "lower back pain"), because every value comes from the scenario's short
lists and the likeliest one lowers the loss nearly as well. The drill makes copying the only way
to lower it: short exchanges of the callers' words (in a random order, or a caller's own turn
as said: ``SENTENCES``), each answered by a ``record`` call of a random run of those words into
a random field, and a caller saying several answers at once, recorded as the reference recorded
them (``JOINED``). Nothing in it is an agent's spoken line, so it privileges no phrasing before RL
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
rate left to the seed whether it arrived in time. Run until it copies (``COPIES``, at a held
learning rate), the drill took 700, 1,700 and 1,400 steps on seeds 0 to 2, every warm start then
continued 92-93% of its values past their first token, and over the three seeds' 216 calls
complete calls rose from 8% to 16% at temperature 0 (+7.9 points [+1.8, +14.0]); seed 1 lost
13 points of fields right at 0.7, to fields never asked rather than to copying. Joined answers
(``JOINED``) took the booking desk's seed 0 quick warm start from 62% to 88% of 72 training
calls complete at temperature 0 (+25.0 [+8.3, +41.7], paired), fields right 78% to 94%, at 1.85
times its time (2,030 s to 3,765 s on one thread; the drill 1,100 to 1,400 steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from sim2human import seeding
from sim2human.agents.lm_policy import LMPolicy, Trace
from sim2human.scenarios.tools import RECORD
from sim2human.train.config import WarmStartConfig
from sim2human.train.grpo import padded
from sim2human.train.warm_start import Progress, supervised_step, written_value
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

JOINED = 0.25
"""The share of drill exchanges in which the caller says several answers at once: 2 to 7
consecutive caller turns of one reference call that the reference recorded (``JOINED_TURNS``),
joined into one turn and answered by the reference's own ``record`` calls for them, in order.
A caller who says everything in one turn (a frozen caller on hearing its trigger: "Here's
everything: ...", or a person) leaves the model to find which words answer which field among
many; the words-in-a-random-order and own-sentence exchanges record one random run into a
random field, so they teach copying but not that choice, and 22 of the 400 reference calls of
the booking desk's quick warm start hold a turn of four records or more. Its words and records
are the warm start's own calls'."""
JOINED_TURNS = (2, 8)
"""How many recorded caller turns a joined exchange joins (at least, fewer than)."""
Answers = list[tuple[str, tuple[ToolCall, ...]]]
"""A call's caller turns that the agent's next turn recorded, each with those ``record`` calls."""


WARMUP = 100
"""Drill steps over which the learning rate rises to the warm start's; it stays there after."""
CHECK = 100
"""Drill steps between two readings of whether the model copies."""
CHECK_SEQUENCES = 64
"""Fresh drill sequences (words in a random order) each reading is taken on."""
COPIES = 0.9
"""The share of copied tokens (those after a value's first) the model must find most likely, on
words in a random order, for the drill to stop before its last step. The circuit arrives
suddenly and at a step that depends on the seed: at a constant learning rate one seed's share
went 68%, 85%, 91%, 93% at steps 500 to 800, while another's, under the old annealed rate, had
not arrived by step 1,000 (``docs/results/lm-agents.md``, "A drill that copies")."""
VALUE_BOUNDS = ('", "value": "', '"}}')
"""A ``record`` value's bounds: one token each in the tiny tokenizer (``lm_models.TOOL_PIECES``).
A tokenizer without them (a pretrained model's) is drilled its whole ``copy_drill`` steps,
unread."""


def drill_shape() -> dict[str, object]:
    """What makes the drill's exchanges and when it stops, for a warm start's cache key: a
    changed drill must not reuse a warm start made with another."""
    return {
        "batch": BATCH,
        "exchanges": EXCHANGES,
        "words": WORDS,
        "run": RUN,
        "sentences": SENTENCES,
        "joined": {"share": JOINED, "turns": JOINED_TURNS},
        "until": {"warmup": WARMUP, "check": CHECK, "sequences": CHECK_SEQUENCES, "copies": COPIES},
    }


def drill_calls(
    calls: Sequence[Episode],
    fields: Sequence[str],
    n: int,
    seed: int,
    sentences: float = SENTENCES,
    draw: tuple[int | str, ...] = (),
    joined: float = JOINED,
) -> list[SimpleNamespace]:
    """``n`` drill sequences drawn from the words the callers of ``calls`` said, ``sentences``
    of their exchanges a caller's own turn and ``joined`` several of a call's recorded answers
    at once; ``draw`` names which of the seed's draws."""
    said = [t.text.split() for e in calls for t in e.turns if t.speaker != "agent"]
    said = [words for words in said if words]
    vocab = sorted({w for words in said for w in words})
    if not vocab or not fields:
        return []
    answers = [a for e in calls if len(a := recorded_answers(e)) >= JOINED_TURNS[0]]
    source = _Source(said, vocab, fields, answers, sentences, joined if answers else 0.0)
    rng = seeding.stream(seed, "copy-drill", *draw)
    return [SimpleNamespace(turns=_exchanges(source, rng)) for _ in range(n)]


def recorded_answers(call: Episode) -> Answers:
    """Each caller turn of ``call`` the agent's next turn recorded, with those ``record``
    calls."""
    out = []
    for heard, answer in zip(call.turns, call.turns[1:], strict=False):
        records = tuple(c for c in answer.tool_calls if c.name == RECORD)
        if heard.speaker != "agent" and answer.speaker == "agent" and records and heard.text:
            out.append((heard.text, records))
    return out


@dataclass(frozen=True)
class _Source:
    """What drill exchanges are drawn from."""

    said: list[list[str]]
    vocab: list[str]
    fields: Sequence[str]
    answers: list[Answers]
    sentences: float
    joined: float


def _exchanges(source: _Source, rng: np.random.Generator) -> list[Turn]:
    turns = []
    for _ in range(EXCHANGES):
        if source.joined and rng.random() < source.joined:  # no draw without: old drills hold
            text, records = _joined(source.answers, rng)
            turns.append(Turn(speaker="user", text=text))
            turns.append(Turn(speaker="agent", text="", tool_calls=records))
            continue
        if rng.random() < source.sentences:
            words = source.said[int(rng.integers(len(source.said)))]
        else:
            picks = rng.integers(len(source.vocab), size=int(rng.integers(*WORDS)))
            words = [source.vocab[int(i)] for i in picks]
        size = min(int(rng.integers(*RUN)), len(words))
        start = int(rng.integers(len(words) - size + 1))
        field = source.fields[int(rng.integers(len(source.fields)))]
        value = written_value(" ".join(words[start : start + size]))
        record = ToolCall(name=RECORD, arguments={"field": field, "value": value})
        turns.append(Turn(speaker="user", text=" ".join(words)))
        turns.append(Turn(speaker="agent", text="", tool_calls=(record,)))
    return turns


def _joined(answers: list[Answers], rng: np.random.Generator) -> tuple[str, tuple[ToolCall, ...]]:
    """A run of one call's recorded caller turns said as one, and its records in order."""
    call = answers[int(rng.integers(len(answers)))]
    size = min(int(rng.integers(*JOINED_TURNS)), len(call))
    start = int(rng.integers(len(call) - size + 1))
    run = call[start : start + size]
    return " ".join(text for text, _ in run), tuple(c for _, records in run for c in records)


@dataclass(frozen=True)
class Copies:
    """How a model reads the ``record`` values it is shown, teacher forced: for each value,
    whether the token it finds most likely is the one written."""

    values: int = 0
    first: int = 0
    """Values whose first token it predicts (in a call, a choice of which words answer the
    field; in the drill, a random start: chance)."""
    continued: int = 0
    """Values whose every token after the first it predicts (the copying itself; a one-token
    value counts)."""
    later: int = 0
    """Tokens after a value's first."""
    later_right: int = 0

    @property
    def later_share(self) -> float:
        """The share of tokens after a value's first that the model predicts."""
        return self.later_right / max(1, self.later)


def value_bounds(tok: Any) -> tuple[int, int] | None:
    """The ids of a ``record`` value's bounds, where ``tok`` writes each as one token."""
    vocab = tok.get_vocab()
    opens, closes = VALUE_BOUNDS
    return (vocab[opens], vocab[closes]) if opens in vocab and closes in vocab else None


def drill_traces(policy: LMPolicy, drills: Sequence[Any]) -> list[Trace]:
    """Drill sequences as ``policy`` trains on them: the exchanges alone, without the system
    message (which the drill does not need and which would be most of each sequence) and
    without tool results (whose words would be all that differed between drill values)."""
    return [policy.written_trace(d.turns, system=False, results=False) for d in drills]


def read_copies(policy: LMPolicy, traces: Sequence[Trace], bounds: tuple[int, int]) -> Copies:
    """How ``policy`` reads the values of ``traces`` (calls or drill sequences, as it holds
    them), teacher forced, 16 at a time; the model is left in eval mode."""
    opens, closes = bounds
    device = next(policy.model.parameters()).device
    counts = [0, 0, 0, 0, 0]
    policy.model.eval()
    for i in range(0, len(traces), 16):
        part = traces[i : i + 16]
        ids, attn, _ = (x.to(device) for x in padded(part, policy.pad))
        with torch.no_grad():
            guesses = policy.model(input_ids=ids, attention_mask=attn).logits.argmax(-1).tolist()
        for trace, guess in zip(part, guesses, strict=True):
            _count(trace.ids, guess, opens, closes, counts)
    return Copies(*counts)


def _count(ids: list[int], guess: list[int], opens: int, closes: int, counts: list[int]) -> None:
    """Add one trace's values to ``counts`` (values, first, continued, later, later right)."""
    for i, token in enumerate(ids):
        if token != opens or closes not in ids[i + 1 :]:
            continue
        end = ids.index(closes, i + 1)
        right = [guess[k - 1] == ids[k] for k in range(i + 2, end)]
        counts[0] += 1
        counts[1] += i + 1 < end and guess[i] == ids[i + 1]
        counts[2] += all(right)
        counts[3] += len(right)
        counts[4] += sum(right)


@dataclass
class DrillLog:
    """What the drill did: its steps, its mean loss and (where read) the share of copied
    tokens the model predicted, after every ``CHECK`` steps."""

    steps: int = 0
    loss: list[float] = field(default_factory=list)
    copied: list[float] = field(default_factory=list)


def copy_drill(
    policy: LMPolicy,
    calls: Sequence[Episode],
    fields: Sequence[str],
    cfg: WarmStartConfig,
    seed: int,
    progress: Progress | None = None,
) -> DrillLog:
    """The drill on ``policy`` (its agent tokens only, in ``drill_traces``) until it copies: at most
    ``cfg.copy_drill`` gradient steps, the learning rate warmed up over ``WARMUP`` and then held
    at the warm start's (annealing it left to the seed whether copying arrived in time), stopping
    after the first ``CHECK`` steps at whose end the model predicts ``COPIES`` of the copied tokens
    of fresh drill sequences. The readings are taken on drill sequences only, never a call."""
    log = DrillLog()
    if not cfg.copy_drill:
        return log
    bounds = value_bounds(policy.tok)
    held = drill_traces(
        policy,
        drill_calls(calls, fields, CHECK_SEQUENCES, seed, sentences=0.0, draw=("check",), joined=0),
    )
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda step: min(1.0, (step + 1) / WARMUP))
    while log.steps < cfg.copy_drill:
        n = min(CHECK, cfg.copy_drill - log.steps)
        drills = drill_calls(calls, fields, n * BATCH, seed, draw=(log.steps // CHECK,))
        if not drills:  # no caller words or no fields: nothing to copy
            break
        traces = drill_traces(policy, drills)
        policy.model.train()
        loss = 0.0
        for i in range(0, len(traces), BATCH):
            loss += supervised_step(policy, traces[i : i + BATCH], optim, BATCH)
            sched.step()
            if progress is not None:
                progress(BATCH)
        log.steps += n
        log.loss.append(loss / n)
        if bounds is not None:
            log.copied.append(read_copies(policy, held, bounds).later_share)
            if log.copied[-1] >= COPIES:
                break
    policy.model.eval()
    return log
