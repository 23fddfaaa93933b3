"""``restyled``: persona users whose lines are said in real patients' words, from a cache.

A restyled member is a ``persona`` (same traits, same behaviour draws: what it answers, when it
hesitates or wanders) whose surface forms are looked up in a cache of rewrites made offline by
``sim2human restyle-family`` (``scenarios.intake.grounding.restyle_family``: the embedded model,
few-shot on ACI-Bench train patients' turns). No model runs at play time, so a member is as fast as
a persona. (``retrieved-aci``'s cache says its lines in real train patients' turns instead:
``sim2human retrieve-family``, ``scenarios.intake.grounding.retrieve_family``. It holds no words of
the corpus, only pointers into it: the encounter, the patient turn's index, the span of a template's
value, a short hash of the turn; they are read from ACI-Bench in place, where the user keeps it, the
first time a member is built, like the replay families' ``aci-train``. ``refitted-aci`` says the
same pointers with traits refitted while its candidates said them: ``sim2human fit-family --voice
retrieved-aci``.) The cache is keyed by the original line: a fixed line (``"Hmm, I'm not sure."``)
or a value's template with its field (``"I've got {v}."`` for ``complaint``), whose rewrites keep
the ``{v}`` slot. A line not in the cache is said as it is.

Gold semantics stay intact: a rewrite is said only if the scenario reads from it exactly what it
reads from the original: the same field values with no field expected and with each field the
agent may expect at that point of the call (the fields it asked last, the one the caller still
owes), and the same signals (silence, confusion); otherwise the original is said. The generator
checks every value it can draw with the line's own field before a rewrite enters the cache; this
check repeats it at play time for the actual value and context (memoised: a dictionary look-up
after the first time). So "yeah, i've got {v}" is said after "what brings you in?", and the
plain line after "any chest pain?", where the extractor would read that "yeah" as a yes.

The words are drawn from a stream of their own (keyed by the member's seed and the state of the
call's generator, which it does not advance), so a member plays the same call as the persona
with its traits would, in other words.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
from pydantic import ValidationError

from sim2human import seeding
from sim2human.corpora import aci_bench
from sim2human.errors import ConfigError, UsageError, first_problem
from sim2human.scenarios.capabilities import slot_kit
from sim2human.scenarios.core import AnyScenario, UserMoves, UserTraits
from sim2human.scenarios.slot_caller import SlotCaller
from sim2human.scenarios.slots import SlotFilling, SlotScenario, SlotUsers, fields_of
from sim2human.scenarios.voice import UserLines
from sim2human.simulators.base import Family, QuirkPool, SimulatorSpec, UserTurn
from sim2human.simulators.persona import PersonaSimulator
from sim2human.simulators.restyle_entries import SLOT, PointedLine, Restyle, resolve
from sim2human.store.loading import parse_yaml
from sim2human.types import Profile

RESTYLED_FILES: Final = (
    "data/restyled-aci.yaml",
    "data/retrieved-aci.yaml",
    "data/refitted-aci.yaml",
)
"""The shipped caches (``sim2human restyle-family``, ``retrieve-family`` and ``fit-family
--voice`` write them; each header says how): one family each."""
SINGLE_LINES: Final = (
    "opening",
    "closing",
    "hang_up",
    "read_back_right",
    "read_back_wrong",
    "canned",
)
"""``UserLines`` fields that hold one line (the others are tuples, said through ``_pick``)."""


class RestyledFamily(Family):
    """A persona family whose members say the lines of a restyle cache (kind ``restyled``)."""

    corpus: Literal["aci-bench"] | None = None
    """The corpus its cache points into (read in place when a member is built); None: the cache
    holds its own words."""

    def sample(self, seed: int, pool: QuirkPool, **override: float) -> SimulatorSpec:
        spec = super().sample(seed, pool, **override)
        return spec.model_copy(update={"kind": "restyled"})


@dataclass
class Voice:
    """The rewrites of one cache, indexed for play: fixed lines by (field, text), templates by
    field (most literal text first, so ``"It's {v}."`` is tried before ``"{v}."``)."""

    fixed: dict[tuple[str | None, str], tuple[str, ...]]
    templates: dict[str, list[tuple[re.Pattern[str], str, tuple[str, ...]]]]
    _same: dict[tuple[str, ...], bool] = field(default_factory=dict)

    @classmethod
    def of(cls, lines: tuple[Restyle, ...]) -> Voice:
        fixed: dict[tuple[str | None, str], tuple[str, ...]] = {}
        templates: dict[str, list[tuple[re.Pattern[str], str, tuple[str, ...]]]] = {}
        for r in lines:
            if not r.rewrites:
                continue
            if SLOT in r.line and r.field is not None:
                templates.setdefault(r.field, []).append((_pattern(r.line), r.line, r.rewrites))
            else:
                fixed[(r.field, r.line)] = r.rewrites
        for entries in templates.values():
            entries.sort(key=lambda e: -len(e[1].replace(SLOT, "")))
        return cls(fixed=fixed, templates=templates)

    def restyle(
        self,
        text: str,
        field_name: str | None,
        rng: np.random.Generator,
        scenario: SlotScenario,
        expecting: tuple[str, ...] = (),
    ) -> str:
        """``text`` in one of its rewrites, or as it is (no rewrite, or one read differently
        with no field expected or with any field of ``expecting``: what the agent may expect
        at this point of the call)."""
        options = self.fixed.get((field_name, text))
        value: str | None = None
        if options is None and field_name is not None:
            for pattern, _, rewrites in self.templates.get(field_name, ()):
                if (m := pattern.fullmatch(text)) is not None:
                    options, value = rewrites, m.group("v")
                    break
        if not options:
            return text
        said = options[int(rng.integers(len(options)))]
        if value is not None:
            said = said.replace(SLOT, value)
        return said if self.same_reading(scenario, text, said, expecting) else text

    def same_reading(
        self, scenario: SlotScenario, original: str, said: str, expecting: tuple[str, ...]
    ) -> bool:
        key = (scenario.name, original, said, *expecting)
        if key not in self._same:
            self._same[key] = same_reading(scenario, original, said, expecting)
        return self._same[key]


def same_reading(
    scenario: SlotScenario, original: str, rewrite: str, expecting: tuple[str, ...] | None = None
) -> bool:
    """Does ``scenario`` read the same from ``rewrite`` as from ``original``: the same field
    values when it expects no field and when it expects each field of ``expecting`` (None:
    every field), and the same signals (silent, confused)?"""
    empty = scenario.empty_record()
    fields = scenario.fields if expecting is None else expecting
    for expecting_field in dict.fromkeys((None, *fields)):
        a = scenario.extract(original, empty, expecting_field)
        b = scenario.extract(rewrite, empty, expecting_field)
        if a != b:
            return False
        if expecting_field is None and scenario.signals(original, empty, a) != scenario.signals(
            rewrite, empty, b
        ):
            return False
    return True


def _pattern(template: str) -> re.Pattern[str]:
    before, _, after = template.partition(SLOT)
    return re.compile(re.escape(before) + r"(?P<v>.+?)" + re.escape(after))


class RestyledCaller(SlotCaller):
    """The slot kit's caller saying the rewrites of ``voice`` for its lines, each checked
    against what the agent may expect now: the fields it asked last and the one this caller
    still owes."""

    def __init__(
        self,
        slots: SlotScenario,
        profile: Profile,
        traits: UserTraits,
        rng: np.random.Generator,
        *,
        voice: Voice,
        words: np.random.Generator,
        lines: UserLines,
    ) -> None:
        super().__init__(slots, profile, fields_of(slots, profile), traits, rng)
        self.slots, self.voice, self.words, self.lines = slots, voice, words, lines
        self.may_expect: tuple[str, ...] = ()
        self.asked_last: tuple[str, ...] = ()

    def hear_ask(self, agent_text: str) -> None:
        """What the agent may expect after ``agent_text``: the fields it asks (or asked last,
        when it asks none) and the one this caller still owes."""
        asks = self.scenario.interpret(agent_text).asks or self.asked_last
        self.asked_last = asks
        owed = [self.pending] if self.pending else []
        self.may_expect = tuple(dict.fromkeys((*asks, *owed)))

    def _say(self, field: str) -> str:
        return self.restyle(super()._say(field), field)

    def _pick(self, options: tuple[str, ...]) -> str:
        return self.restyle(super()._pick(options), None)

    def restyle(self, text: str, field_name: str | None) -> str:
        return self.voice.restyle(text, field_name, self.words, self.slots, self.may_expect)


class RestyledPersona(PersonaSimulator):
    """A persona saying its lines in the rewrites of ``voice`` (see the module docstring): its
    own lines (closing, hanging up, confusion) and its slot caller's (``RestyledCaller``)."""

    def __init__(self, spec: SimulatorSpec, scenario: AnyScenario, voice: Voice) -> None:
        super().__init__(spec, scenario)
        self.kit = slot_kit(scenario)
        """What a rewrite is read with before it is said (it must read alike); None for a task
        off the slot kit, which no cache rewrites: its persona's lines are said as they are."""
        self.voice = voice
        self._plain_lines = self.lines
        self._words = np.random.default_rng(spec.seed)
        self._caller: RestyledCaller | None = None

    def start(self, profile: Profile, rng: np.random.Generator) -> UserTurn:
        state = zlib.crc32(repr(rng.bit_generator.state).encode())  # reads, does not draw
        self._words = seeding.stream(self.spec.seed, "restyle", state)
        if (kit := self.kit) is not None:
            plain = self._plain_lines
            said = {
                name: self.voice.restyle(getattr(plain, name), None, self._words, kit)
                for name in SINGLE_LINES
            }
            self.lines = replace(plain, **said)  # type: ignore[arg-type]  # str fields only
        return super().start(profile, rng)

    def _user_moves(self, profile: Profile, rng: np.random.Generator) -> UserMoves:
        kit = self.kit
        if kit is None or not isinstance(self._moves, (SlotFilling, SlotUsers)):
            return super()._user_moves(profile, rng)  # its own moves: said as is
        self._caller = RestyledCaller(
            kit,
            profile,
            self.spec.traits,
            rng,
            voice=self.voice,
            words=self._words,
            lines=self.lines,
        )
        return self._caller

    def reply(self, agent_text: str) -> UserTurn:
        if self._caller is not None:
            self._caller.hear_ask(agent_text)
        return super().reply(agent_text)

    def _pick(self, options: tuple[str, ...]) -> str:
        text = super()._pick(options)
        if self._caller is None:
            return text
        return self._caller.restyle(text, None)


def read_restyled(
    text: str, where: Path
) -> tuple[RestyledFamily, tuple[Restyle, ...] | tuple[PointedLine, ...]]:
    """A restyle cache as written: ``family`` (the persona family's fields) and ``lines``, each
    with its rewrites, or with pointers into the corpus when the family names one (nothing is
    read from the corpus here); a bad entry is one error naming the file and where in it."""
    data: Any = parse_yaml(text, where)
    if not isinstance(data, dict) or not {"family", "lines"} <= data.keys():
        raise ConfigError(f"{where}: expected a mapping with 'family' and 'lines'")
    try:
        family = RestyledFamily.model_validate(data["family"])
        entry = Restyle if family.corpus is None else PointedLine
        lines = tuple(entry.model_validate(e) for e in data["lines"] or ())
    except (ValidationError, TypeError) as err:
        if isinstance(err, TypeError):
            raise ConfigError(f"{where}: 'lines' must be a list") from None
        loc, msg = first_problem(err)
        raise ConfigError(f"{where}: {loc}{': ' * bool(loc)}{msg}") from None
    for r in lines:
        slots = [(SLOT in w) if isinstance(w, str) else (w.span is not None) for w in r.rewrites]
        if any(s != (SLOT in r.line) for s in slots):
            raise ConfigError(f"{where}: line {r.line!r}: a rewrite adds or drops {SLOT}")
    return family, lines  # type: ignore[return-value]  # all of one entry type


def load_restyled(
    text: str, where: Path, data: Path | str | None = None
) -> tuple[RestyledFamily, tuple[Restyle, ...]]:
    """A restyle cache with its rewrites' words: a pointer cache's read from the corpus
    (``data``, or where ``corpora.aci_bench`` finds it), each pointer checked against the turn
    it points to."""
    family, lines = read_restyled(text, where)
    return family, resolve(family.name, family.corpus, lines, where, data)


@dataclass(frozen=True)
class Cache:
    """A shipped cache as written (its pointers not yet read from the corpus)."""

    family: RestyledFamily
    lines: tuple[Restyle, ...] | tuple[PointedLine, ...]
    where: Path


def _builtin() -> dict[str, Cache]:
    caches: dict[str, Cache] = {}
    for file in RESTYLED_FILES:
        source = resources.files("sim2human.simulators").joinpath(file)
        where = Path(str(source))
        family, lines = read_restyled(source.read_text(encoding="utf-8"), where)
        if family.name in caches:  # pragma: no cover (a packaging mistake)
            raise ConfigError(f"{source}: family {family.name!r} is in two restyle caches")
        caches[family.name] = Cache(family, lines, where)
    return caches


CACHES: Final = _builtin()
"""The shipped restyle caches by family name, as written."""
RESTYLED: Final = {name: c.family for name, c in CACHES.items()}
"""The shipped restyled families by name."""
VOICES: dict[str, Voice] = {}
"""Voices registered by hand under a family name (``scripts/restyle_choices.py``'s variants),
looked up before the shipped caches."""


def voice_of(name: str, data: Path | str | None = None) -> Voice:
    """The voice of family ``name``: one registered in ``VOICES``, else its shipped cache's
    (a pointer cache's turns read from the corpus once per process and corpus folder)."""
    if name in VOICES:
        return VOICES[name]
    cache = CACHES.get(name)
    if cache is None:
        raise ConfigError(f"no restyle cache for family {name!r}")
    if cache.family.corpus is None:
        return _voice(name, None)
    if (why := aci_bench.missing(data)) is not None:
        raise UsageError(f"family {name!r} reads ACI-Bench in place: {why}")
    return _voice(name, aci_bench.resolve_dir(data).resolve())


@lru_cache(maxsize=16)
def _voice(name: str, folder: Path | None) -> Voice:
    cache = CACHES[name]
    c = cache.family
    return Voice.of(resolve(c.name, c.corpus, cache.lines, cache.where, folder))


def build_restyled(spec: SimulatorSpec, scenario: AnyScenario) -> RestyledPersona:
    """A member of a shipped restyled family (its voice looked up by the family's name)."""
    try:
        voice = voice_of(spec.family)
    except (ConfigError, UsageError) as err:
        raise type(err)(f"simulator {spec.id!r}: {err}") from None
    return RestyledPersona(spec, scenario, voice)
