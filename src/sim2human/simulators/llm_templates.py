"""A user's own persona prompt for ``llm`` members: a Jinja template file with the profile as
variables, so the frozen condition can be the simulated user a team actually trained against.

A study names the file where it names a prompt style (``prompts: [plain, users/angry.j2]`` for
drawn members, ``llm: {prompt: users/angry.j2}`` for a fixed one), relative to the study file.
The file is read once, when the study loads, and its text travels in the member's spec
(``LLMParams.template``): a resumed run or a remote worker never reads it again, and an edit of
the file after a run started cannot change that run's users.

Templates render in Jinja's sandbox with ``StrictUndefined``; the variables are ``VARIABLES``.
Loading checks the syntax (file:line) and that no other variable is named; a profile key that
the scenario does not have (``profile.no_such``) fails the first call with the same kind of line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Final

import jinja2
from jinja2 import meta
from jinja2.sandbox import SandboxedEnvironment

from sim2human.errors import ConfigError
from sim2human.store.loading import read_text

SUFFIXES: Final = (".j2", ".jinja", ".jinja2", ".txt", ".md")
"""A prompt entry ending so (or holding a path separator) names a template file."""
VARIABLES: Final[Mapping[str, str]] = {
    "name": "the user's first name (drawn by the member's seed)",
    "scenario": "the scenario's name",
    "agent_name": "how the agent is labelled in the transcript (Nurse, Agent)",
    "facts": "every profile value, one '- label: value' line each, in the scenario's words "
    "(then one '- ' line per rule)",
    "profile": "field -> the value in the scenario's words (profile.dob)",
    "values": "field -> the raw value (a number stays a number)",
    "rules": "how to speak the task's moves, one per line (a negotiation's offer, accept, walk "
    "away; empty for slot filling)",
    "manner": "how this user talks, from their traits, in the scenario's words",
    "traits": "the member's traits (traits.patience, traits.verbosity, traits.emotion, ...)",
}
MAX_BYTES: Final = 64 * 1024


def is_template_ref(prompt: str) -> bool:
    """Does this prompt entry name a template file rather than a built-in style?"""
    return prompt.endswith(SUFFIXES) or "/" in prompt or "\\" in prompt


def template_name(path: str) -> str:
    """The name a template's members carry in their ids and reports: the file's stem."""
    return Path(path).stem


def read_template(path: str) -> str:
    """The template text of ``path``, checked (else one UsageError naming the file). Read as
    every input file is (``store.loading``): a regular file, size-capped, UTF-8, never a FIFO."""
    file = Path(path).expanduser()
    text = read_text(file, "prompt template", MAX_BYTES)
    check_template(text, str(file))
    return text


def check_template(text: str, where: str) -> None:
    """Syntax and variables of a template (``where`` names it in the error)."""
    try:
        parsed = _env().parse(text)
    except jinja2.TemplateSyntaxError as err:
        message = " ".join(str(err.message).split())  # Jinja's can run over several lines
        raise ConfigError(f"{where}:{err.lineno}: {message}") from None
    unknown = sorted(meta.find_undeclared_variables(parsed) - VARIABLES.keys())
    if unknown:
        line = _first_line(text, unknown[0])
        raise ConfigError(
            f"{where}:{line}: unknown variable {unknown[0]!r} (known: {', '.join(VARIABLES)})"
        )
    if not text.strip():
        raise ConfigError(f"{where}: the template is empty")


def read_entries(
    prompts: Sequence[object], templates: Mapping[str, str] | None, styles: Sequence[str]
) -> tuple[list[object], dict[str, str]]:
    """A study's ``prompts`` with each template file read: (its names in place of the paths,
    name -> text). A file whose stem is a style's or another file's name is refused."""
    named, texts = [], dict(templates or {})
    for prompt in prompts:
        if isinstance(prompt, str) and is_template_ref(prompt):
            name = template_name(prompt)
            if name in texts or name in styles:
                raise ConfigError(f"prompt template {prompt}: the name {name!r} is taken")
            texts[name] = read_template(prompt)
            prompt = name
        named.append(prompt)
    return named, texts


def check_entries(
    prompts: Sequence[str], templates: Mapping[str, str], styles: Sequence[str]
) -> None:
    """Every prompt a style or a template read, and every template's text sound."""
    known = (*styles, *templates)
    for name in prompts:
        if name not in known:
            raise ConfigError(
                f"unknown prompt {name!r} (known: {', '.join(known)}; or a template file)"
            )
    for name, text in templates.items():
        check_template(text, f"prompt template {name}")


def render(text: str, name: str, variables: Mapping[str, object]) -> str:
    """The system prompt ``text`` makes for one call (``name``: the template's, for errors)."""
    try:
        return _compiled(text).render(**variables).strip()
    except jinja2.TemplateError as err:
        line = _error_line(err)
        message = " ".join(str(err).split())
        raise ConfigError(f"prompt template {name}{line}: {message}") from None


def _first_line(text: str, word: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if word in line:
            return number
    return 1


def _error_line(err: jinja2.TemplateError) -> str:
    lineno = getattr(err, "lineno", None)
    return f":{lineno}" if lineno else ""


@lru_cache(maxsize=1)
def _env() -> SandboxedEnvironment:
    return SandboxedEnvironment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
    )


@lru_cache(maxsize=64)
def _compiled(text: str) -> jinja2.Template:
    return _env().from_string(text)
