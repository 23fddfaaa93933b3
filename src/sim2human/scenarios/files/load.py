"""Loading a scenario file: read, check every key, load its vocabularies, build the scenario.

Every problem is one ``ConfigError`` line, ``FILE:LINE: key.path: what is wrong`` (exit 2 at
the command line), and the first one found is the one reported: the version first (a file of
another version would make every other message wrong), then each key (``scenarios.files.schema``),
then the vocabulary files, then what refers across keys (``scenarios.files.checks``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from sim2human.errors import UsageError
from sim2human.scenarios.files.checks import problems
from sim2human.scenarios.files.hearing import hearing_problems
from sim2human.scenarios.files.lines import Lines, raise_at, read_document
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.files.schema import FIELD_KINDS, SCHEMA_VERSION, ScenarioFile
from sim2human.scenarios.vocab import Vocab, words
from sim2human.store.loading import read_text

MAX_VOCABULARY = 100_000
"""Items in one vocabulary (far above any real one; each is looked up in every user line)."""


def load_scenario_file(path: Path, name: str | None = None) -> FileScenario:
    """The scenario in the file at ``path``, called ``name`` (default: the file's ``name``)."""
    data, lines = read_document(path)
    spec = parse_spec(data, lines)
    vocabs = load_vocabularies(spec, path, lines)
    raise_at(lines, list(problems(spec, vocabs))[:1])
    scenario = FileScenario(spec, vocabs, name or spec.name)
    raise_at(lines, list(hearing_problems(scenario))[:1])
    return scenario


def parse_spec(data: Any, lines: Lines) -> ScenarioFile:
    if not isinstance(data, dict):
        raise lines.error((), f"a scenario file is a mapping of keys, got {type(data).__name__}")
    version = data.get("schema_version")
    if version is None:
        raise lines.error((), f"schema_version: missing (this sim2human reads {SCHEMA_VERSION})")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise lines.error(
            ("schema_version",), f"{version!r} is not supported (this sim2human reads 1)"
        )
    try:
        return ScenarioFile.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = (*first["loc"], "kind") if first["type"] == "union_tag_invalid" else first["loc"]
        raise lines.error(loc, _message(first)) from None


def _message(e: ErrorDetails) -> str:
    """A pydantic problem in plain words."""
    kind = e["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return f"missing key {e['loc'][-1]!r}"
    if kind == "union_tag_not_found":
        return f"missing key 'kind' (one of: {', '.join(FIELD_KINDS)})"
    if kind == "union_tag_invalid":
        return f"unknown kind {e['input'].get('kind')!r} (one of: {', '.join(FIELD_KINDS)})"
    return str(e["msg"]).removeprefix("Value error, ")


def load_vocabularies(spec: ScenarioFile, path: Path, lines: Lines) -> dict[str, Vocab]:
    """Each category and list field's vocabulary (inline, or a file next to the YAML), with its
    ``aliases``; named by file and field, so the finder's caches keep scenarios apart."""
    out: dict[str, Vocab] = {}
    for name, f in spec.fields.items():
        given = getattr(f, "vocabulary", None)
        if given is None:
            continue
        at = ("fields", name, "vocabulary")
        if isinstance(given, str):
            text = _vocabulary_file(path.parent / given, given, lines, at)
        else:
            text = "\n".join(given)
        vocab = Vocab.parse(f"{path}#{name}", text)
        if (shadowed := _alias_of_another(text, set(vocab.canonical))) is not None:
            raise lines.error(at, shadowed)
        if not vocab.canonical:
            raise lines.error(at, "the vocabulary has no items")
        if len(vocab.canonical) > MAX_VOCABULARY:
            raise lines.error(at, f"{len(vocab.canonical)} items, above {MAX_VOCABULARY}")
        out[name] = _with_aliases(vocab, getattr(f, "aliases", {}))
        if "" in out[name].aliases:  # the finder looks names up by their first word
            raise lines.error(at, "an item or alias has no letters or digits")
    return out


def _alias_of_another(text: str, canonical: set[str]) -> str | None:
    """Why a vocabulary line names another line's item as its alias ("a|b" where "b" is an
    item too: the finder would read "b" as one of them only), or None."""
    for raw in text.splitlines():
        names = [" ".join(words(n)) for n in raw.split("#", 1)[0].split("|")]
        for alias in names[1:]:
            if alias != names[0] and alias in canonical:
                return (
                    f"{alias!r} is an alias of {names[0]!r} and an item of its own: "
                    "drop one of them"
                )
    return None


def _vocabulary_file(file: Path, given: str, lines: Lines, at: tuple[str, ...]) -> str:
    if not file.exists():
        raise lines.error(at, f"file {given!r} not found (next to {lines.path.name})")
    try:
        return read_text(file, "vocabulary file")
    except UsageError as err:
        raise lines.error(at, str(err)) from None


def _with_aliases(vocab: Vocab, aliases: dict[str, str]) -> Vocab:
    """``vocab`` with more names for its items (those naming no item are reported later)."""
    extra = "\n".join(f"{canonical}|{alias}" for alias, canonical in aliases.items())
    if not extra:
        return vocab
    more = Vocab.parse(vocab.name, extra)
    merged = dict(vocab.aliases)
    for alias, canonical in more.aliases.items():
        merged.setdefault(alias, canonical)
    return Vocab(vocab.name, vocab.canonical, merged, {**more.spelled, **vocab.spelled})
