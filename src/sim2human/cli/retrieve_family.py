"""``sim2human retrieve-family``: say a persona family's lines in real train patients' turns.

Writes a restyle cache (what ``simulators/data/retrieved-aci.yaml`` is) whose rewrites are ACI-Bench
train patients' turns that the scenario reads exactly as the persona's line
(``scenarios.intake.grounding.retrieve_family``), written as pointers into the corpus (no words of
it: members read the turns in place, ``simulators.restyle_entries.resolve``), instead of a chat
model's rewrites (``restyle-family``). A sibling verb rather than an option of ``restyle-family``
because it shares none of that one's model options and has its own (word limits, cap, ranking); it
needs no model and no network.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from sim2human.cli.restyle_family import (
    BaseOpt,
    DataOpt,
    LinesOpt,
    OutArg,
    SeedOpt,
    check_cache_options,
    check_writable,
)
from sim2human.errors import UsageError

if TYPE_CHECKING:
    from sim2human.scenarios.intake.grounding.retrieve_family import Retrieval, RetrieveSettings

CITATION = (
    "Yim et al., ACI-BENCH, Nature Scientific Data 2023, "
    "https://www.nature.com/articles/s41597-023-02487-3 (CC BY 4.0)"
)


# long: one parameter per command-line option (typer), then the checks and the call
def retrieve_family(
    out: OutArg,
    name: Annotated[str, typer.Option("--name", help="The family's name.")] = "retrieved-aci",
    base: BaseOpt = "fitted-aci",
    max_words: Annotated[
        int, typer.Option("--max-words", min=1, max=200, help="Longest turn kept (words).")
    ] = 20,
    per_line: Annotated[
        int, typer.Option("--per-line", min=1, max=500, help="Turns kept per line at most.")
    ] = 8,
    rank: Annotated[
        str,
        typer.Option(
            "--rank", help="Which turns a line keeps: minilm or lexical (nearest), or random."
        ),
    ] = "minilm",
    which: LinesOpt = "all",
    seed: SeedOpt = 0,
    data: DataOpt = None,
) -> None:
    """Say a persona family's lines in ACI-Bench train patients' own turns (a cache file).

    Each line the intake persona says gets the train split's fit-part patient turns that the
    scenario reads exactly as it (templates: the value's words become the slot); no model."""
    from sim2human.corpora import aci_bench
    from sim2human.metrics.embeddings import minilm_available
    from sim2human.outputs import write_text
    from sim2human.scenarios.intake.grounding.retrieve_family import (
        RetrieveSettings,
        embedder,
        pool_sources,
        retrieve,
    )
    from sim2human.simulators.families import get_family

    check_cache_options(name, which)
    if rank not in ("minilm", "lexical", "random"):
        raise UsageError(f"--rank must be minilm, lexical or random, not {rank!r}")
    family = get_family(base)
    check_writable(out)
    if (why := aci_bench.missing(data)) is not None:
        raise UsageError(why)
    if rank == "minilm" and not minilm_available():
        raise UsageError("--rank minilm needs the MiniLM extra (or use --rank lexical)")
    settings = RetrieveSettings.model_validate(
        {"max_words": max_words, "per_line": per_line, "rank": rank, "which": which, "seed": seed}
    )
    started = time.monotonic()
    found = retrieve(
        settings, data=str(data) if data else None, embed_texts=embedder(settings.rank)
    )
    seconds = time.monotonic() - started
    sources = pool_sources(str(data) if data else None)
    entry = family.model_dump(mode="json", exclude_defaults=True)
    entry |= {
        "name": name,
        "description": f"{base}'s traits, lines in train patients' turns (read in place)",
        "corpus": "aci-bench",
    }
    command = _command(out, name, base, settings)
    write_text(out, cache_yaml(found, sources, entry, command, seconds))
    kept = sum(bool(r.rewrites) for r in found.results)
    Console().print(
        f"written: {out} ({kept} of {len(found.results)} lines restyled, {seconds:.0f} s)",
        highlight=False,
    )


def _command(out: Path, name: str, base: str, s: RetrieveSettings) -> str:
    args = [
        "sim2human", "retrieve-family", "--out", str(out), "--name", name, "--base", base,
        "--max-words", str(s.max_words), "--per-line", str(s.per_line), "--rank", s.rank,
        "--lines", s.which, "--seed", str(s.seed),
    ]  # fmt: skip
    return shlex.join(args)


def cache_yaml(
    r: Retrieval,
    sources: dict[str, tuple[str, int]],
    family: dict[str, object],
    command: str,
    seconds: float,
) -> str:
    """The cache file: how it was made, what it points into, then family and lines (each
    rewrite a pointer: ``{encounter, turn, span, hash}``, no words of the corpus)."""

    kept = sum(bool(x.rewrites) for x in r.results)
    header = [
        f"# {family['name']}: persona lines said in ACI-Bench *train* patients' own turns",
        "# (scenarios/intake/grounding/retrieve_family.py). Made by:",
        f"#   {command}",
        "# with $SIM2HUMAN_DATA pointing at the corpus; turns from the train split's fit part",
        "# only (the validation part chose the settings; held-out visits were never read).",
        f"# {kept} of {len(r.results)} lines have a turn; {r.turns} turns in the pool; "
        f"{seconds:.0f} s to make.",
        "# No words of the corpus are here: each rewrite points at a train encounter's patient",
        "# turn (its index among them, as detokenised; for a template the characters [a, b)",
        "# that become {v}; a hash of the turn), read from ACI-Bench in place when a member is",
        f"# built. ACI-Bench: {CITATION}.",
    ]

    lines = [
        {"line": x.line, "field": x.field, "rewrites": list(x.rewrites)}
        for x in r.pointers(sources)
    ]
    dumped = pointer_yaml({"family": family, "lines": lines})
    return "\n".join(header) + "\n" + dumped


def pointer_yaml(body: dict[str, object]) -> str:
    """A restyle cache's ``family`` and ``lines`` as YAML, each pointer (a ``Pointer`` among a
    line's rewrites) on one line of its own; words stay words."""
    import yaml

    from sim2human.simulators.restyle_entries import Pointer

    class Flow(dict[str, object]):
        """A pointer: one line of the file."""

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(
        Flow, lambda d, m: d.represent_mapping("tag:yaml.org,2002:map", m, flow_style=True)
    )

    def plain(w: object) -> object:
        return Flow(w.model_dump(mode="json", exclude_none=True)) if isinstance(w, Pointer) else w

    lines = body["lines"]
    assert isinstance(lines, list)
    flowed = [{**x, "rewrites": [plain(w) for w in x["rewrites"]]} for x in lines]
    return yaml.dump(
        {**body, "lines": flowed}, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100
    )
