"""``check_scenario``: the scenario core (``scenarios.core``) on any scenario, and the slot kit's
members (``scenarios.slots``) on a slot-filling one.

The core checks play a call on the state alone (no simulator): every ``hear_*`` returns a new
state and leaves the one it was given as it was, the agent's view has a brief, every end is a
``Termination`` (never none once the user left), and every grade scores in [0, 1].
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeGuard

import numpy as np

from sim2human.checks.report import CheckReport, expect
from sim2human.scenarios.capabilities import CORE_MEMBERS, SLOT_MEMBERS, act_kinds, is_slot_kit
from sim2human.scenarios.core import Act
from sim2human.scenarios.core import Scenario as CoreScenario
from sim2human.scenarios.slots import AgentIntent, SlotScenario, UserSignals, applicable_fields
from sim2human.scenarios.voice import Voice
from sim2human.simulators.llm_prompts import PROMPT_STYLES
from sim2human.types import Outcome, Profile, Termination

PROFILES = 8
"""Profiles (seeds) each check draws: enough to meet every field's values, small enough to run
in a second."""

CORE = ("name", *CORE_MEMBERS)
SLOT = SLOT_MEMBERS

Core = CoreScenario[Any]
Check = Callable[[Any], str | None]


def check_scenario(scenario: Core) -> CheckReport:
    """The core protocol; on a scenario with the slot members, the kit's checks too."""
    report = CheckReport(getattr(scenario, "name", type(scenario).__name__), "scenario")
    checks: list[tuple[str, Check]] = [
        ("has every member of the scenario core", _members),
        ("name is a non-empty string", _name),
        ("acts: unique ids, known kinds, asks name a field, one closes", _acts),
        ("sample_profile: deterministic by seed", _profiles),
        ("hear_user, hear_agent: a new state, the given one untouched", _state),
        ("observe: a view with a text brief", _observe),
        ("ending: a Termination or None, never None once the user left", _ending),
        ("grade: an Outcome scoring in [0, 1], for every ending", _score),
        ("voice: user lines said, every llm prompt style written", _voice),
    ]
    if is_slot(scenario):
        checks += [
            ("fields are unique, non-empty strings", _fields),
            ("sample_profile: every field", _profile_fields),
            ("empty_record: every field, all None", _empty),
            ("extract: a new record, input untouched", _extract),
            ("say then extract: the scenario hears its own users", _hears),
            ("interpret: rendered asks ask their field, closes close", _interpret),
            ("signals: a UserSignals", _signals),
            ("grade: the true record succeeds, an empty one fails", _grade),
        ]
    for name, check in checks:
        report.run(name, partial(check, scenario))
    return report


def is_slot(scenario: object) -> TypeGuard[SlotScenario]:
    """Whether ``scenario`` has the slot kit's members (so the kit's checks apply)."""
    return is_slot_kit(scenario)


@dataclass(frozen=True)
class Move:
    """An agent's turn for the checks to say (``scenarios.core.AgentMove``)."""

    text: str
    act: str | None = None
    field: str | None = None


# ------------------------------------------------------------------------------------ core


def _members(s: Core) -> str | None:
    missing = [m for m in CORE if not hasattr(s, m)]
    hint = " (a slot-filling scenario subclasses scenarios.slots.SlotFilling)"
    return expect(not missing, f"missing {', '.join(missing)}{hint}")


def _name(s: Core) -> str | None:
    return expect(isinstance(s.name, str) and s.name, f"name is {s.name!r}")


def _acts(s: Core) -> str | None:
    acts, kinds = s.acts, set(act_kinds(s))
    ids = [a.id for a in acts]
    if not acts or len(set(ids)) != len(ids):
        return "acts must be non-empty with unique ids"
    if bad := [a.id for a in acts if a.kind not in kinds]:
        return f"unknown kinds on acts {bad} (known: {sorted(kinds)})"
    fields = getattr(s, "fields", ())
    asks = [a for a in acts if a.kind == "ask" and (is_slot(s) or a.field is not None)]
    if bad := [a.id for a in asks if a.field not in fields]:
        return f"ask acts {bad} name no field of the scenario"
    return expect(any(a.kind == "close" for a in acts), "no act closes the call")


def _profiles(s: Core) -> str | None:
    for seed in range(PROFILES):
        a = s.sample_profile(np.random.default_rng(seed))
        if a != s.sample_profile(np.random.default_rng(seed)):
            return f"seed {seed}: two draws with the same seed differ"
    return None


def _said(s: Core, act: Act) -> Move:
    """``act`` as an agent says it (rendered, on a scenario that renders its acts)."""
    if is_slot(s):
        return Move(s.render_act(act, None, s.empty_record()), act.id, act.field)
    return Move(act.text, act.id, act.field)


def _steps(s: Core, profile: Profile, seed: int) -> list[Callable[[Any], Any]]:
    """A call's turns, each a function of the state before it: the user's opening, then each
    act (answered with the profile's value, on a scenario whose users say values)."""
    steps: list[Callable[[Any], Any]] = [partial(_user_says, s, s.voice.user.opening)]
    for act in s.acts:
        steps.append(partial(_agent_says, s, act))
        if act.field is not None and act.field in profile and is_slot(s):
            said = s.say(act.field, profile[act.field], 1.0, np.random.default_rng(seed))
            steps.append(partial(_user_says, s, said))
    return steps


def _user_says(s: Core, text: str, state: Any) -> Any:
    return s.hear_user(state, text)


def _agent_says(s: Core, act: Act, state: Any) -> Any:
    return s.hear_agent(state, _said(s, act))


def _call(s: Core, seed: int) -> list[Any]:
    """Every state of a call played on the state alone (no simulator)."""
    profile = s.sample_profile(np.random.default_rng(seed))
    states = [s.initial_state(profile)]
    for step in _steps(s, profile, seed):
        states.append(step(states[-1]))
    return states


def _state(s: Core) -> str | None:
    profile = s.sample_profile(np.random.default_rng(0))
    if s.initial_state(profile) != s.initial_state(profile):
        return "initial_state() differs for the same profile"
    state = s.initial_state(profile)
    for k, step in enumerate(_steps(s, profile, 0)):
        kept = copy.deepcopy(state)
        after = step(state)
        if state != kept:
            return f"turn {k}: hearing it changed the state it was given"
        state = after
    return None


def _observe(s: Core) -> str | None:
    for state in _call(s, 0):
        brief = getattr(s.observe(state), "brief", None)
        if not isinstance(brief, str):
            return f"observe() gave a view whose brief is {brief!r}"
    return None


def _ending(s: Core) -> str | None:
    for k, state in enumerate(_call(s, 0)):
        left, stays = s.ending(state, True), s.ending(state, False)
        if not isinstance(left, Termination):
            return f"state {k}: the user left, and ending() gave {left!r}"
        if stays is not None and not isinstance(stays, Termination):
            return f"state {k}: ending() gave {stays!r}"
    return None


def _score(s: Core) -> str | None:
    for seed in range(2):
        profile = s.sample_profile(np.random.default_rng(seed))
        for state in _call(s, seed)[::3]:
            for end in Termination:
                out = s.grade(profile, s.record(state), end)
                if not isinstance(out, Outcome) or not 0.0 <= out.score <= 1.0:
                    return f"grade(..., {end.value}) gave {out!r}"
    return None


def _voice(s: Core) -> str | None:
    v = s.voice
    if not isinstance(v, Voice):
        return f"voice is a {type(v).__name__}, not a scenarios.voice.Voice"
    if v.user.opening_field not in (None, *getattr(s, "fields", ())):
        return f"opening_field {v.user.opening_field!r} is not a field"
    said = {k: (x,) if isinstance(x, str) else x for k, x in vars(v.user).items() if x is not None}
    if empty := [k for k, lines in said.items() if not lines or not all(lines)]:
        return f"empty user lines: {empty}"
    missing = [p for p in PROMPT_STYLES if v.role_play and p not in v.role_play.prompts]
    return expect(not missing, f"role_play has no prompt for styles {missing}")


# ------------------------------------------------------------------------------- slot kit


def _fields(s: SlotScenario) -> str | None:
    f = s.fields
    if not f or not all(isinstance(x, str) and x for x in f):
        return f"fields must be non-empty strings, got {f!r}"
    return expect(len(set(f)) == len(f), f"repeated field names in {f!r}")


def _profile_fields(s: SlotScenario) -> str | None:
    for seed in range(PROFILES):
        a = s.sample_profile(np.random.default_rng(seed))
        if set(a) != set(applicable_fields(s, a)):  # every field, unless some are conditional
            return f"seed {seed}: profile keys {sorted(a)} are not the fields that apply to it"
    return None


def _empty(s: SlotScenario) -> str | None:
    record = s.empty_record()
    return expect(record == dict.fromkeys(s.fields), f"got {record!r}")


def _signals(s: SlotScenario) -> str | None:
    got = s.signals("...", s.empty_record(), s.empty_record())
    return expect(isinstance(got, UserSignals), f"signals() returned {type(got).__name__}")


def _extract(s: SlotScenario) -> str | None:
    record = s.empty_record()
    kept = copy.deepcopy(record)
    profile = s.sample_profile(np.random.default_rng(0))
    field0 = applicable_fields(s, profile)[0]
    out = s.extract(s.say(field0, profile[field0], 1.0, np.random.default_rng(0)), record, field0)
    if record != kept:
        return "extract() changed the record it was given"
    return expect(set(out) == set(s.fields), f"extract() returned keys {sorted(out)}")


def _hears(s: SlotScenario) -> str | None:
    misses = []
    for seed in range(PROFILES):
        profile = s.sample_profile(np.random.default_rng(seed))
        for f in applicable_fields(s, profile):
            text = s.say(f, profile[f], 0.0, np.random.default_rng(seed))
            heard = s.extract(text, s.empty_record(), f)[f]
            if heard != profile[f]:
                misses.append(f"{f}: said {text!r}, heard {heard!r}, meant {profile[f]!r}")
    return f"{len(misses)} misses, e.g. {misses[0]}" if misses else None


def _interpret(s: SlotScenario) -> str | None:
    record = s.empty_record()
    for act in s.acts:
        intent = s.interpret(s.render_act(act, None, record))
        if not isinstance(intent, AgentIntent):
            return f"interpret() of act {act.id!r} returned {type(intent).__name__}"
        if act.kind == "ask" and act.field not in intent.asks:
            return f"act {act.id!r} asks {act.field!r} but reads as asking {intent.asks}"
        if act.kind == "close" and not intent.close:
            return f"act {act.id!r} closes the call but does not read as a close"
    return None


def _grade(s: SlotScenario) -> str | None:
    profile = s.sample_profile(np.random.default_rng(0))
    right = s.grade(profile, dict(profile), Termination.COMPLETED)
    empty = s.grade(profile, s.empty_record(), Termination.COMPLETED)
    if not isinstance(right, Outcome) or not right.success:
        return f"the true record, call closed, does not succeed: {right!r}"
    return expect(not empty.success, "an empty record succeeds")
