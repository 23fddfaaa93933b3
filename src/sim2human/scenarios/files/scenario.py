"""``FileScenario``: a slot-filling scenario built from a checked scenario file, on the kit
(``scenarios.slots``): the file gives the fields, words and gold rule; the kit the state and ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from functools import cached_property
from typing import Any, cast

import numpy as np

from sim2human.scenarios import readers
from sim2human.scenarios.core import Act, GoldMetric
from sim2human.scenarios.files.checks import canonical_value
from sim2human.scenarios.files.markers import marks
from sim2human.scenarios.files.reading import FieldReader
from sim2human.scenarios.files.schema import (
    CategoryField,
    DateField,
    FieldSpec,
    ListField,
    NumberField,
    ScenarioFile,
)
from sim2human.scenarios.files.voice import build_voice
from sim2human.scenarios.files.when import Conditions, applicable, applies, conditions, draw_order
from sim2human.scenarios.slots import AgentIntent, SlotFilling, UserSignals
from sim2human.scenarios.vocab import Vocab
from sim2human.scenarios.voice import Voice
from sim2human.types import Outcome, Profile, Record, Termination, Value


class FileScenario(SlotFilling):
    """A scenario file, loaded (``scenarios.files.load.load_scenario_file``)."""

    def __init__(self, spec: ScenarioFile, vocabs: dict[str, Vocab], name: str) -> None:
        self.spec = spec
        self._name = name
        kinds = [type(f) for f in spec.fields.values()]
        marked = marks(spec.fields, {n: frozenset(v.canonical) for n, v in vocabs.items()})
        units = {n: _units(f) for n, f in spec.fields.items()}
        self.readers = {
            n: FieldReader(
                n,
                f,
                vocabs.get(n),
                _label(n, f),
                kinds.count(type(f)) == 1,
                marked,
                tuple(u for other, us in units.items() if other != n for u in us),
            )
            for n, f in spec.fields.items()
        }
        # Reading is a pure function of the text (and the field asked): users and agents repeat
        # their lines, so both readers keep what they read (most of a rollout's time, unkept).
        self._read: dict[tuple[str, str | None], tuple[tuple[str, Value], ...]] = {}
        self._intents: dict[str, AgentIntent] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(self.spec.fields)

    @cached_property
    def _conds(self) -> Conditions:
        return conditions(self.spec.fields)

    @property
    def conditional(self) -> bool:
        """Some fields apply only to some profiles (a ``when:``; ``slots.AppliesFields``)."""
        return bool(self._conds)

    def applicable(self, values: Mapping[str, object]) -> tuple[str, ...]:
        """The fields that apply given ``values`` (a profile, or a record so far): those a
        ``when:`` leaves out, and those whose condition is still unknown, do not."""
        if not self._conds:
            return self.fields
        return applicable(self.fields, self._conds, values)

    @property
    def gold_metric(self) -> GoldMetric:
        """The file's ``gold.headline`` (``scenarios.core.DeclaresGold``)."""
        return self.spec.gold.headline

    @cached_property
    def acts(self) -> tuple[Act, ...]:
        """The declared acts, with each field's asks (``ask.<field>.plain``, ``.plain2``...,
        ``.jargon``...) after the greetings."""
        asks = [
            Act(f"ask.{n}.{style}{i + 1 if i else ''}", "ask", text, n, style)
            for n, f in self.spec.fields.items()
            for style in ("plain", "jargon")
            for i, text in enumerate(getattr(f.ask, style))
        ]
        declared = [Act(a.id, a.kind, a.text, None, a.style) for a in self.spec.acts]
        greets = [a for a in declared if a.kind == "greet"]
        return (*greets, *asks, *(a for a in declared if a.kind != "greet"))

    @cached_property
    def voice(self) -> Voice:
        labels = {n: r.label for n, r in self.readers.items()}
        return build_voice(self.spec, labels, self.fact, lambda f, v: self.readers[f].plain(v))

    @property
    def reference_plan(self) -> dict[str, str]:
        """The reference agent's acts the file names (``reference``: role -> act id)."""
        return {str(role): act for role, act in self.spec.reference.items()}

    @cached_property
    def quirk_pool(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(taste, trigger) phrasings for members' quirks: the texts of ``quirks``' acts."""
        text = {a.id: a.text for a in self.spec.acts}
        q = self.spec.quirks
        return tuple(text[i] for i in q.tastes), tuple(text[i] for i in q.triggers)

    @property
    def quirks_shared(self) -> bool:
        """The file's ``quirks.shared``: held-out families draw the training members' quirks."""
        return self.spec.quirks.shared

    @cached_property
    def _rows(self) -> tuple[Profile, ...]:
        rows = self.spec.profiles.rows if self.spec.profiles is not None else ()
        fields = self.spec.fields
        return tuple(
            {n: canonical_value(fields[n], row[n]) for n in fields if n in row} for row in rows
        )

    def fact(self, field: str, value: Value) -> str:
        """One profile value in plain words, for an LLM user (an unknown field: not known)."""
        if self.spec.user.knows is not None and field not in self.spec.user.knows:
            return "you do not know"
        return self.readers[field].plain(value)

    # -- the hidden profile -------------------------------------------------------------------

    def sample_profile(self, rng: np.random.Generator) -> Profile:
        if self._rows:
            return dict(self._rows[int(rng.integers(len(self._rows)))])
        fields = self.spec.fields
        if not self._conds:
            return {n: _draw(f, self.readers[n].vocab, rng) for n, f in fields.items()}
        drawn: Profile = {}
        for n in draw_order(self.fields, self._conds):  # a field after those it depends on
            if applies(self._conds, n, drawn):
                drawn[n] = _draw(fields[n], self.readers[n].vocab, rng)
        return {n: drawn[n] for n in self.fields if n in drawn}

    # -- reading the user ---------------------------------------------------------------------

    def extract(self, user_text: str, record: Record, expecting: str | None) -> Record:
        key = (user_text, expecting)
        found = self._read.get(key)
        if found is None:
            found = tuple(
                (n, value)
                for n, reader in self.readers.items()
                if (value := reader.read(user_text, expecting == n, expecting)) is not None
            )
            _keep(self._read, key, found)
        out = {**record, **dict(found)}
        if expecting is None:  # "not Cambridge: Ely" after a read-back corrects Cambridge's field
            out.update(self._taken_back(user_text, record))
        return out

    def _taken_back(self, user_text: str, record: Record) -> Record:
        """Fields whose recorded value the caller takes back ("no, not Cambridge, Ely"), each
        with the value said in its place, read as that field's answer: after a read-back a bare
        station belongs to no field, but the one it replaces names it."""
        out: Record = {}
        if "not" not in user_text.lower():
            return out
        for n, value in record.items():
            reader = self.readers[n]
            if value is None or not reader.takes_back(user_text, value):
                continue
            said = reader.read(user_text, True, n)
            if said is not None and said != value:
                out[n] = said
        return out

    def signals(self, user_text: str, before: Record, after: Record) -> UserSignals:
        text = user_text.lower()
        changed = [f for f in self.fields if after[f] != before[f]]
        return UserSignals(
            silent=readers.silent(text),
            confused=any(c.lower() in text for c in self.spec.cues.confused),
            new_fields=sum(before[f] is None for f in changed),
            corrected=any(before[f] is not None for f in changed),
        )

    # -- reading the agent --------------------------------------------------------------------

    @cached_property
    def _jargon(self) -> tuple[str, ...]:
        own = [t for f in self.spec.fields.values() for t in f.ask.jargon]
        return tuple(j.lower() for j in (*self.spec.cues.jargon, *own))

    @cached_property
    def _cues(self) -> dict[str, tuple[str, ...]]:
        """The agent cues, lower-cased once: by kind, and each field's as ``field:NAME``."""
        c = self.spec.cues
        out = {
            kind: tuple(x.lower() for x in getattr(c, kind))
            for kind in ("confirm", "greet", "close", "empathy", "clarify")
        }
        out.update(
            {f"field:{n}": tuple(x.lower() for x in f.cues) for n, f in self.spec.fields.items()}
        )
        return out

    def interpret(self, agent_text: str) -> AgentIntent:
        intent = self._intents.get(agent_text)
        if intent is None:
            intent = self._interpret(agent_text)
            _keep(self._intents, agent_text, intent)
        return intent

    def _interpret(self, agent_text: str) -> AgentIntent:
        t, c = agent_text.lower(), self._cues
        confirm = _has(t, c["confirm"])
        asks = () if confirm else tuple(n for n in self.spec.fields if _has(t, c[f"field:{n}"]))
        return AgentIntent(
            asks=asks,
            jargon=_has(t, self._jargon),
            greet=t.startswith(c["greet"]),
            close=_has(t, c["close"]),
            empathy=_has(t, c["empathy"]),
            confirm=confirm,
            clarify=t.startswith(c["clarify"]),
        )

    def render_act(self, act: Act, last_field: str | None, record: Record) -> str:
        if "{" not in act.text:
            return act.text
        plain = self.spec.fields[last_field].ask.plain[0] if last_field else None
        shown = set(self.applicable(record))  # a field that does not apply is not read back
        said = [
            f"{self.readers[f].label}: {self.readers[f].plain(v)}"
            for f, v in record.items()
            if v is not None and f in shown
        ]
        return act.text.format(
            last_question=plain or "How can I help you today?",
            readback="; ".join(said) or "nothing yet",
        )

    def say(self, field: str, value: Value, capacity: float, rng: np.random.Generator) -> str:
        return self.readers[field].say(value, capacity, rng)

    # -- gold ---------------------------------------------------------------------------------

    def grade(self, profile: Profile, record: Record, termination: Termination) -> Outcome:
        """The file's gold rule: its ``gold.fields`` right and, with ``gold.closed``, the call
        closed by the agent, of the fields that apply to ``profile``. Score: that success."""
        gold = self.spec.gold
        graded = gold.fields or self.fields
        if self._conds:
            graded = tuple(f for f in graded if f in profile)
        right = {f: record.get(f) == profile[f] for f in graded}
        completed = termination == Termination.COMPLETED
        success = (completed or not gold.closed) and all(right.values())
        return Outcome(
            success=success,
            fields=right,
            completed=completed,
            dropped=termination == Termination.HUNG_UP,
            score=float(success),
            detail={"fields_right": sum(right.values()) / len(right), "closed": float(completed)},
        )


def _label(name: str, f: FieldSpec) -> str:
    return f.label or name.replace("_", " ")


def _units(f: FieldSpec) -> tuple[str, ...]:
    """The words that make a number ``f``'s (none unless a number field with a unit)."""
    if not isinstance(f, NumberField):
        return ()
    return tuple(u for u in (f.unit, *f.more_units) if u)


def _has(text: str, cues: tuple[str, ...]) -> bool:
    """Whether ``text`` (lower-case) holds one of ``cues`` (lower-case)."""
    return any(c in text for c in cues)


_KEPT = 50_000
"""Texts a reader keeps; past that it starts afresh (bounded memory on long runs)."""


def _keep(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= _KEPT:
        memo.clear()
    memo[key] = value


def _draw(f: FieldSpec, vocab: Vocab | None, rng: np.random.Generator) -> Value:
    """One value from the field's own distribution."""
    if isinstance(f, CategoryField | NumberField) and f.weights:
        weights: dict[Any, float] = dict(f.weights)
        keys = list(weights)
        p = np.array([weights[k] for k in keys], dtype=np.float64)
        return cast(Value, keys[int(rng.choice(len(keys), p=p / p.sum()))])
    if isinstance(f, NumberField):
        return int(rng.integers(f.range[0], f.range[1] + 1))
    if isinstance(f, DateField):
        lo, hi = (d.toordinal() for d in f.range)
        return date.fromordinal(lo + int(rng.integers(0, hi - lo + 1))).isoformat()
    if isinstance(f, CategoryField | ListField):
        assert vocab is not None
        items = vocab.canonical
        if isinstance(f, CategoryField):
            return items[int(rng.integers(len(items)))]
        k = int(rng.integers(f.size[0], f.size[1] + 1))
        return tuple(sorted(items[i] for i in rng.choice(len(items), size=k, replace=False)))
    return bool(rng.random() < f.p_yes)
