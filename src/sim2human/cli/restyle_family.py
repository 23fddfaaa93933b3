"""``sim2human restyle-family``: rewrite a persona family's lines in real patients' words.

Writes a restyle cache (what ``simulators/data/restyled-aci.yaml`` is): the family (a base
family's traits, kind ``restyled``) and, for each line the intake persona can say, the rewrites
a chat model made few-shot on ACI-Bench train patients' turns that passed the acceptance rule
(``scenarios.intake.grounding.restyle_family``). A CLI verb rather than a script because, like
``fit-family``, it writes a file the package ships and a user may regenerate with their own
model; members then play from the file, with no model at run time.
"""

from __future__ import annotations

import os
import shlex
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from sim2human.cli.options import finite
from sim2human.errors import UsageError

if TYPE_CHECKING:
    from sim2human.llm.client import EndpointConfig
    from sim2human.scenarios.intake.grounding.restyle_family import Generation, LineResult

OutArg = Annotated[Path, typer.Option("--out", help="The cache file to write (YAML).")]
DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="ACI-Bench folder (default: $SIM2HUMAN_DATA, ../shared/data)."),
]
BaseOpt = Annotated[str, typer.Option("--base", help="The persona family whose traits it keeps.")]
LinesOpt = Annotated[str, typer.Option("--lines", help="Lines to restyle: all, answers or others.")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, max=2**31 - 1, help="Seed.")]


def check_cache_options(name: str, which: str) -> None:
    """What every cache-writing verb refuses: ``--lines`` not all/answers/others, and a
    ``--name`` a built-in family that is not a restyled one already holds."""
    from sim2human.simulators.families import FAMILIES
    from sim2human.simulators.restyled import RESTYLED

    if which not in ("all", "answers", "others"):
        raise UsageError(f"--lines must be all, answers or others, not {which!r}")
    if name in FAMILIES and name not in RESTYLED:
        raise UsageError(f"--name {name!r}: a built-in family has that name")


# long: one parameter per command-line option (typer), then the checks and the call
def restyle_family(
    out: OutArg,
    name: Annotated[str, typer.Option("--name", help="The family's name.")] = "restyled-aci",
    base: BaseOpt = "fitted-aci",
    shots: Annotated[
        int, typer.Option("--shots", min=0, max=50, help="Train turns shown per request.")
    ] = 6,
    candidates: Annotated[
        int, typer.Option("--candidates", min=1, max=50, help="Requests per line.")
    ] = 6,
    temperature: Annotated[
        float,
        typer.Option(parser=finite(0.0, 2.0), metavar="FLOAT", help="Sampling temperature."),
    ] = 0.8,
    which: LinesOpt = "all",
    seed: SeedOpt = 0,
    base_url: Annotated[
        str | None,
        typer.Option(help="Chat endpoint, e.g. http://host:8000/v1 (default: the embedded model)."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name at that endpoint.")] = None,
    data: DataOpt = None,
) -> None:
    """Restyle a persona family's lines in ACI-Bench train patients' style (a cache file).

    Each line the intake persona says is rewritten by a chat model shown real train-split
    patient turns; a rewrite is kept only if the scenario reads the same values from it."""
    from sim2human.corpora import aci_bench
    from sim2human.outputs import write_text
    from sim2human.scenarios.intake.grounding.restyle_family import Settings, generate
    from sim2human.simulators.families import get_family

    check_cache_options(name, which)
    if (base_url is None) != (model is None):
        raise UsageError("--base-url and --model go together (neither: the embedded model)")
    family = get_family(base)
    check_writable(out)
    if (why := aci_bench.missing(data)) is not None:
        raise UsageError(why)
    settings = Settings.model_validate(
        {"shots": shots, "candidates": candidates, "temperature": temperature}
        | {"which": which, "seed": seed}
    )
    err = Console(stderr=True)

    def progress(r: LineResult) -> None:
        err.print(f"{len(r.rewrites)} kept: {r.line}", highlight=False)

    started = time.monotonic()
    with _endpoint(base_url, model) as endpoint:
        from sim2human.llm.client import ChatClient

        chat = ChatClient(endpoint)
        generation = generate(chat, settings, data=str(data) if data else None, progress=progress)
    minutes = (time.monotonic() - started) / 60
    entry = family.model_dump(mode="json", exclude_defaults=True)
    entry |= {"name": name, "description": f"{base}'s traits, lines restyled ({_what(base_url)})"}
    command = _command(out, name, base, settings, base_url, model)
    write_text(out, cache_yaml(generation, entry, command, minutes))
    kept = sum(bool(r.rewrites) for r in generation.results)
    Console().print(
        f"written: {out} ({kept} of {len(generation.results)} lines restyled)", highlight=False
    )


def check_writable(out: Path) -> None:
    """Refuse an output that cannot be written before any model is started (one line)."""
    from sim2human.outputs import check_target

    check_target(out)
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--out {out}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: cannot write in {folder}")


def _endpoint(base_url: str | None, model: str | None) -> AbstractContextManager[EndpointConfig]:
    from sim2human.llm.client import EndpointConfig
    from sim2human.llm.local import local_model

    if base_url is not None and model is not None:
        return nullcontext(EndpointConfig(base_url=base_url, model=model, api_key_env=None))
    return local_model(n_parallel=4, ctx_per_slot=1024)


def _what(base_url: str | None) -> str:
    return "embedded SmolLM2-135M-Instruct" if base_url is None else "a chat model"


def _command(
    out: Path, name: str, base: str, s: object, base_url: str | None, model: str | None
) -> str:
    from sim2human.scenarios.intake.grounding.restyle_family import Settings

    assert isinstance(s, Settings)
    args = [
        "sim2human", "restyle-family", "--out", str(out), "--name", name, "--base", base,
        "--shots", str(s.shots), "--candidates", str(s.candidates),
        "--temperature", str(s.temperature), "--lines", s.which, "--seed", str(s.seed),
    ]  # fmt: skip
    if base_url is not None and model is not None:
        args += ["--base-url", base_url, "--model", model]
    return shlex.join(args)


def cache_yaml(g: Generation, family: dict[str, object], command: str, minutes: float) -> str:
    """The cache file: how it was made and what the rule rejected, then family and lines."""
    import yaml

    reasons = ", ".join(f"{k} {v}" for k, v in sorted(g.reasons().items()))
    kept = sum(bool(r.rewrites) for r in g.results)
    lines = [
        f"# {family['name']}: persona lines restyled in ACI-Bench *train* patients' style",
        "# (scenarios/intake/grounding/restyle_family.py). Made by:",
        f"#   {command}",
        "# with $SIM2HUMAN_DATA pointing at the corpus; few-shot examples from the train split's",
        "# fit part only (the held-out visits were never read).",
        f"# {kept} of {len(g.results)} lines have a rewrite; {minutes:.1f} min to generate.",
        f"# candidates: {reasons}",
    ]
    body = {
        "family": family,
        "lines": [{"line": r.line, "field": r.field, "rewrites": r.rewrites} for r in g.results],
    }
    return "\n".join(lines) + "\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
