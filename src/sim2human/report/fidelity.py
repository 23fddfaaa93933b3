"""Fidelity to human speech: every simulator family of a run against real people's turns.

The human reference is the scenario's own human corpus (``replay.human_corpus``: the replay
corpus whose dialogues are its task): ACI-Bench's held-out visits (valid + test) for intake,
MultiWOZ 2.1's held-out (test) bookings for support. A scenario without one
(negotiation, until a CaSiNo replay corpus is declared) gets a section that says so. The
dialogues any ``replay`` member of the run played are left out (a replayed person must not be
compared with their own words); the rest is cut into two disjoint halves by dialogue: half A is
the reference every family is compared with, half B is the ``human (other half)`` row, what
"as human as humans" scores.

Each family contributes its user turns from the run's evaluation episodes, at most ``cap`` of
them (a seeded sample). ``sim2human report`` measures it with the lexical embedder (free), unless
``sim2human fidelity RUN_DIR`` has stored a MiniLM measurement (``fidelity.json``) in the run:
MiniLM costs ~40 s to load and ~15 texts/s on a busy 2-core machine (human turns are long), too
much to add to every demo.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, cast

import numpy as np
from pydantic import BaseModel

from sim2human.diagnostics.rundir import RunDir
from sim2human.errors import ModelUnavailableError, RunDirError, UsageError
from sim2human.metrics.embeddings import Embedder, embed
from sim2human.metrics.fidelity import FidelityRow, fidelity_row
from sim2human.report.format import md, md_code, num
from sim2human.scenarios.core import AnyScenario, ReadsUserContent
from sim2human.simulators.kinds import speaks_real_words
from sim2human.simulators.replay import reply_shares
from sim2human.simulators.replay_corpus import Corpus
from sim2human.simulators.replay_families import human_corpus
from sim2human.store.layout import FIDELITY_JSON
from sim2human.types import Episode

HUMAN = "human (other half)"
DEFAULT_CAP = 150
"""User turns per family (and per human half) in ``sim2human report``."""


class Fidelity(BaseModel):
    rows: list[FidelityRow]
    embedder: str
    cap: int
    human_encounters: int
    replay_shares: dict[str, dict[str, float]]
    """Replay family -> share of its replies that were verbatim / adapted / fallback."""
    note: str = ""
    reference: str = "held-out ACI-Bench patient turns"
    """The human corpus compared with, in words (a file stored before it was: ACI-Bench's)."""


def no_human_corpus(scenario: str) -> str:
    """The section's line for a scenario that declares no human corpus."""
    return (
        f"Fidelity to human speech not measured: no human corpus for the scenario "
        f"{scenario!r} (none of the replay corpora, ACI-Bench for intake and MultiWOZ 2.1 for "
        "support, holds its task)."
    )


def human_halves(
    corpus: Corpus, played: set[str], data: str | None = None
) -> tuple[list[str], list[str], int]:
    """The corpus's held-out user turns, in two halves by alternating dialogue, without the
    dialogues in ``played``."""
    held = [(d, turns) for d, turns in corpus.human_turns(data) if d not in played and turns]
    halves: tuple[list[str], list[str]] = ([], [])
    for i, (_, turns) in enumerate(held):
        halves[i % 2].extend(turns)
    return halves[0], halves[1], len(held)


def run_episodes(run: RunDir) -> list[Episode]:
    """Every evaluation episode of a run: its conditions' sub-runs and reference agents."""
    subs = [s for group in run.conditions.values() for s in group] + list(run.reference.values())
    return [e for s in subs for e in s.evals]


def family_turns(episodes: Sequence[Episode]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in episodes:
        out.setdefault(e.family, []).extend(t.text for t in e.turns if t.speaker == "user")
    return out


def measure(
    episodes: Sequence[Episode],
    scenario: AnyScenario,
    *,
    cap: int = DEFAULT_CAP,
    embedder: Embedder = "auto",
    data: str | None = None,
    seed: int = 0,
) -> Fidelity:
    """The fidelity table for the families of ``episodes`` of ``scenario`` against its human
    corpus (see the module docstring); a UsageError when it declares none or it is not found."""
    corpus = human_corpus(scenario)
    if corpus is None:
        raise UsageError(no_human_corpus(scenario.name))
    played = {e.simulator_id.removeprefix(f"{e.family}-") for e in episodes if speaks_real_words(e)}
    ref, other, n_enc = human_halves(corpus, played, data)
    rng = np.random.default_rng(seed)

    def sample(texts: Sequence[str]) -> list[str]:
        texts = [t for t in texts if t.strip()]
        if len(texts) <= cap:
            return list(texts)
        return [texts[i] for i in sorted(rng.choice(len(texts), cap, replace=False))]

    groups = {HUMAN: sample(other)} | {
        f: sample(v) for f, v in sorted(family_turns(episodes).items())
    }
    ref = sample(ref)
    if not isinstance(scenario, ReadsUserContent):
        raise UsageError(f"Fidelity: scenario {scenario.name!r} cannot tell a user's answer apart")
    reads_value = scenario.carries_content
    everything = ref + [t for g in groups.values() for t in g]
    matrix, name = embed(everything, embedder)
    matrix = np.nan_to_num(matrix)  # a text with no tokens ("...") can embed as NaN
    with _one_thread():
        ref_emb = matrix[: len(ref)]
        rows, at = [], len(ref)
        for family, texts in groups.items():
            emb = matrix[at : at + len(texts)]
            at += len(texts)
            rows.append(fidelity_row(family, texts, ref, emb, ref_emb, reads_value, seed))
    shares = {
        f: reply_shares([e for e in episodes if e.family == f])
        for f in sorted({e.family for e in episodes if speaks_real_words(e)})
    }
    return Fidelity(
        rows=rows,
        embedder=name,
        cap=cap,
        human_encounters=n_enc,
        replay_shares=shares,
        reference=corpus.title,
    )


def measure_or_note(episodes: Sequence[Episode], scenario: AnyScenario, **kw: Any) -> Fidelity:
    """``measure``, or an empty table whose note says why it could not be measured."""
    try:
        return measure(episodes, scenario, **kw)
    except (UsageError, ModelUnavailableError) as err:
        said = str(err)
        return Fidelity(
            rows=[],
            embedder="",
            cap=0,
            human_encounters=0,
            replay_shares={},
            note=said
            if said.startswith("Fidelity")
            else f"Fidelity to human speech not measured: {said}",
            reference="",
        )


def for_report(run_dir: Path, run: RunDir) -> Fidelity:
    """The stored ``sim2human fidelity`` measurement if the run has one, else a lexical one."""
    stored = run_dir / FIDELITY_JSON
    if stored.is_file():
        try:
            return Fidelity.model_validate_json(stored.read_text(encoding="utf-8"))
        except ValueError as err:
            raise RunDirError(f"{stored}: not a fidelity measurement ({err})") from None
    return measure_or_note(run_episodes(run), run.scenario, embedder="lexical")


def _one_thread() -> AbstractContextManager[Any]:
    """Small matrices: BLAS threads only fight each other (10x slower on a busy 2-core box)."""
    try:  # threadpoolctl comes with scikit-learn (the embeddings extra); untyped
        limits: Any = importlib.import_module("threadpoolctl").threadpool_limits
    except ImportError:  # pragma: no cover
        return nullcontext()
    return cast(AbstractContextManager[Any], limits(1))


COLUMNS = (
    ("family", "family"),
    ("turns", "n_turns"),
    ("words/turn", "mean_words"),
    ("length W1", "length_w1"),
    ("MATTR", "mattr"),
    ("disfl./100w", "disfluency"),
    ("hedge", "hedge"),
    ("answer", "answer"),
    ("ask", "ask"),
    ("wander", "wander"),
    ("Fréchet", "frechet"),
    ("AUC", "auc"),
)


def cells(row: FidelityRow) -> list[str]:
    out = []
    for _, key in COLUMNS:
        v = getattr(row, key)
        out.append(str(v) if isinstance(v, str | int) else "-" if v is None else num(v, 2))
    return out


def markdown(f: Fidelity, esc: Callable[[object], str] = md) -> list[str]:
    """The section's Markdown lines; ``esc`` escapes text from the run directory (family names,
    the note), ``str`` for ``html`` (which escapes for HTML itself)."""
    lines = ["## Fidelity to human speech", ""]
    if not f.rows:
        return [*lines, esc(f.note) if f.note else "No user turns to measure.", ""]
    lines += [
        f"Each simulator family's user turns (at most {f.cap} per family, from evaluation "
        f"episodes) against {esc(f.reference)} ({f.human_encounters} dialogues, "
        f"half A); `{HUMAN}` is half B against half A, the reference. Embeddings: "
        f"{esc(f.embedder)}. AUC: a logistic regression telling the family from humans on "
        "held-out folds (0.5 = indistinguishable, 1 = always told apart).",
        "",
        "| " + " | ".join(c for c, _ in COLUMNS) + " |",
        "|---|" + "---:|" * (len(COLUMNS) - 1),
        *("| " + " | ".join(esc(c) for c in cells(r)) + " |" for r in f.rows),
        "",
    ]
    for family, shares in f.replay_shares.items():
        said = ", ".join(f"{esc(k)} {100 * v:.0f}%" for k, v in shares.items())
        name = md_code(family) if esc is md else f"`{family}`"
        lines += [f"{name} replies: {said}.", ""]
    return lines


def html(f: Fidelity) -> str:
    """A plain section for report.html (escaped: family names come from the run directory)."""
    from html import escape

    body = "".join(
        f"<p>{escape(line)}</p>" for line in markdown(f, str)[2:] if not line.startswith("|")
    )
    if f.rows:
        head = "".join(f"<th>{escape(c)}</th>" for c, _ in COLUMNS)
        rows = "".join(
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells(r)) + "</tr>" for r in f.rows
        )
        body += f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    return f'<section id="fidelity"><h2>Fidelity to human speech</h2>{body}</section>'
