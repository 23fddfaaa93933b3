"""A file scenario's words (``scenarios.voice.Voice``): the persona lines as written, and for LLM
users and agents the prompts written from its user side, field labels and agent name.

The four prompt styles every scenario gives (``simulators.llm_prompts.PROMPT_STYLES``) differ in
form, not in content: each says who the caller is (``user.persona``), why they call
(``user.reason``), what they know and what they keep back unless asked (``user.withholds``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from sim2human.scenarios.files.schema import FieldSpec, ScenarioFile
from sim2human.scenarios.voice import (
    AgentVoice,
    CardWords,
    MannerLines,
    PromptTemplate,
    PromptWords,
    RoleGuard,
    RolePlay,
    UserLines,
    Voice,
    standard_prompts,
)
from sim2human.types import Value

USER_LABELS = ("caller", "customer", "user", "me")


def build_voice(
    spec: ScenarioFile,
    labels: Mapping[str, str],
    fact: Callable[[str, Value], str],
    show: Callable[[str, Value], str],
) -> Voice:
    """The file's words; ``fact`` says a value to an LLM user (or that they do not know it),
    ``show`` to a person on the call page (every value: the card is theirs to play)."""
    p = spec.persona
    user = UserLines(
        opening=p.opening,
        opening_field=p.opening_field,
        closing=p.closing,
        hang_up=p.hang_up,
        confused=p.confusions,
        evasive=p.evasions,
        small_talk=p.small_talk,
        tangents=p.tangents,
        read_back_right=p.read_back_right,
        read_back_wrong=p.read_back_wrong,
        trigger=p.trigger,
        canned=p.canned,
    )
    card = CardWords(
        labels={f: label[:1].upper() + label[1:] for f, label in labels.items()},
        show=show,
        intro=f"You are {_lower_first(spec.user.persona)}. {spec.user.reason}",
        heading=f"Talk to {spec.agent.name}, a phone assistant",
        setting=f"as if you were phoning them ({_lower_first(spec.description)})",
        place=spec.agent.name,
    )
    return Voice(
        user=user,
        role_play=_role_play(spec, labels, fact),
        agent=_agent(spec, labels),
        card=card,
    )


def _lower_first(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _agent_labels(spec: ScenarioFile) -> tuple[str, ...]:
    return tuple(dict.fromkeys((spec.agent.name.lower(), "agent", "assistant")))


def _wanted(labels: Mapping[str, str], name: str, f: FieldSpec) -> str:
    """A field as the LLM agent is told to collect it ("stay (only when booking is hotel)")."""
    if not f.when:
        return labels[name]
    cond = " and ".join(
        f"{labels.get(c, c)} is {v if isinstance(v, str) else ' or '.join(v)}"
        for c, v in f.when.items()
    )
    return f"{labels[name]} (only when {cond})"


def _agent(spec: ScenarioFile, labels: Mapping[str, str]) -> AgentVoice:
    wanted = ", ".join(_wanted(labels, n, f) for n, f in spec.fields.items())
    prompt = spec.agent.system_prompt or (
        f"You are {spec.agent.name}, answering a phone line. {spec.description} "
        f"Collect from the caller: {wanted}. Ask one short, plain question at a time. When you "
        "have everything, read it back, then thank them and say goodbye."
    )
    return AgentVoice(
        system_prompt=" ".join(prompt.split()),
        own_labels=_agent_labels(spec),
        user_labels=USER_LABELS[:3],
    )


def _manner(agent: str) -> MannerLines:
    return MannerLines(
        brief="Answer in one short sentence.",
        chatty="Answer in one or two sentences; you like to chat.",
        anxious="You are worried and want reassurance.",
        irritated="You are busy and short-tempered.",
        guarded="You are guarded and do not like giving details.",
        jargon=f"If the {agent.lower()} uses words you do not know, say you do not understand.",
        tangents="Sometimes you mention something unrelated.",
        one_at_a_time=f"Only answer what the {agent.lower()} asks; do not list everything at once.",
    )


def _prompts(spec: ScenarioFile, labels: Mapping[str, str]) -> dict[str, PromptTemplate]:
    u, agent = spec.user, spec.agent.name
    kept = ", ".join(labels[f] for f in u.withholds)
    keep = f" Do not mention your {kept} unless you are asked." if kept else ""
    who = f"{u.persona.rstrip('.')}, calling because {u.reason.rstrip('.')}."

    return standard_prompts(
        PromptWords(
            who=f"{who} The {agent.lower()} asks you questions.",
            other=agent.lower(),
            known="What you know about yourself",
            character=who,
            story=f"is {who}",
            details="details",
            role=("", f", {who}"),
            is_plain="the caller",
            is_rules="the caller",
            keep=keep,
        )
    )


def _guard(spec: ScenarioFile) -> RoleGuard:
    asks = [re.escape(t.lower().rstrip("?.!")) for f in spec.fields.values() for t in f.ask.plain]
    agent = "|".join(re.escape(a) for a in _agent_labels(spec))
    return RoleGuard(
        agent_labels=tuple(re.escape(a) for a in _agent_labels(spec)),
        user_labels=USER_LABELS,
        agent_lines=r"\bhow can i (?:help|assist)\b|\bi'?m here to (?:help|assist)\b|"
        + "|".join(asks),
        narration=rf"\((?:the )?(?:{agent}|caller|customer|he|she|they)\b[^)]*\)"
        r"|\b(?:the|a) (?:caller|customer) (?:says|said|is|was|asks|asked|replies|answers)\b",
        leaks=r"\bwhat you know about yourself\b|\bcharacter:|\brules?:\s*1\)|\bwrite only\b"
        r"|\breply with exactly\b|\bspeak in the first person\b|\bunless you are asked\b",
    )


def _role_play(
    spec: ScenarioFile, labels: Mapping[str, str], fact: Callable[[str, Value], str]
) -> RolePlay:
    agent = spec.agent.name
    return RolePlay(
        names=spec.user.names,
        labels=dict(labels),
        fact=fact,
        manner=_manner(agent),
        prompts=_prompts(spec, labels),
        agent_name=agent,
        opening_cue="(picks up the phone) Hello?",
        guard=_guard(spec),
        judge_system="You read phone calls and rate them honestly.",
        judge_call=(
            f"A {agent.lower()} spoke with {{name}}, a caller. The call:\n{{call}}\n\n"
            "How satisfied would {name} be with this call, from 0 (not at all) to 10 "
            "(completely)? Answer with one number."
        ),
        judge_turn=(
            f"A {agent.lower()} is on the phone with {{name}}, a caller.\n"
            f"{agent}: {{agent}}\n{{name}}: {{reply}}\n\n"
            f"How satisfied is {{name}} with what the {agent.lower()} just said, from 0 (not at "
            "all) to 10 (completely)? Answer with one number."
        ),
    )
