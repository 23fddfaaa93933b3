"""``sim2human fit-family``: fit a persona family to ACI-Bench train patients' behaviour.

Writes the family as a YAML list of one entry (what ``simulators/data/fitted-aci.yaml`` is),
with the command that made it and each round's distances in its comments; the search is
``scenarios.intake.grounding.fit_family`` (train split only: a fit part and a validation part). With
``--voice`` (a restyled family's name or a restyle cache file) every candidate says that cache's
lines, and the file written is a restyle cache: the fitted family (kind ``restyled``) and the
cache's lines as they were written (a pointer cache's pointers: what
``simulators/data/refitted-aci.yaml`` is).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:
    from sim2human.scenarios.intake.grounding.fit_family import FitResult, Round
    from sim2human.scenarios.intake.grounding.fit_voice import Lines

OutArg = Annotated[Path, typer.Option("--out", help="The family file to write (YAML).")]
DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="ACI-Bench folder (default: $SIM2HUMAN_DATA, ../shared/data)."),
]


# long: one parameter per command-line option (typer), then the checks and the call
def fit_family(
    out: OutArg,
    name: Annotated[str, typer.Option("--name", help="The family's name.")] = "fitted-aci",
    seed: Annotated[
        int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the search and calls.")
    ] = 0,
    rounds: Annotated[
        int, typer.Option("--rounds", min=1, max=200, help="Cross-entropy rounds.")
    ] = 12,
    population: Annotated[
        int, typer.Option("--population", min=2, max=500, help="Candidates per round.")
    ] = 16,
    members: Annotated[
        int, typer.Option("--members", min=1, max=200, help="Members drawn per candidate.")
    ] = 6,
    per_member: Annotated[
        int, typer.Option("--per-member", min=1, max=100, help="Calls per member.")
    ] = 3,
    width: Annotated[
        float,
        typer.Option("--width", min=0.0, max=0.5, help="Each range's half-width (box share)."),
    ] = 0.1,
    voice: Annotated[
        str | None,
        typer.Option(
            "--voice",
            help="Candidates say this restyle cache's lines: a restyled family or a cache file.",
        ),
    ] = None,
    data: DataOpt = None,
) -> None:
    """Fit a persona family's trait ranges to real patients' behaviour (ACI-Bench train split).

    Cross-entropy search over the trait box on calls with the scripted reference agent; the
    round kept is the one closest to the train split's validation part. The held-out splits
    are never read."""
    from sim2human.errors import UsageError
    from sim2human.outputs import write_text
    from sim2human.scenarios.intake.grounding.fit_family import fit
    from sim2human.scenarios.intake.grounding.fit_voice import lines_of
    from sim2human.simulators.families import FAMILIES

    if name in FAMILIES and not _fitted(name, voice is not None):
        raise UsageError(f"--name {name!r}: a built-in family has that name")
    lines = None if voice is None else lines_of(voice, str(data) if data is not None else None)
    err = Console(stderr=True)

    def progress(r: Round) -> None:
        err.print(
            f"round {r.round}: fit {r.fit.distance:.1f} (AUC {r.fit.auc:.2f}), "
            f"validation {r.validation.distance:.1f} (AUC {r.validation.auc:.2f})",
            highlight=False,
        )

    result = fit(
        name=name,
        seed=seed,
        rounds=rounds,
        population=population,
        members=members,
        per_member=per_member,
        width=width,
        data=str(data) if data is not None else None,
        progress=progress,
        voice=lines,
    )
    command = _command(result, out)
    text = family_yaml(result, command) if lines is None else cache_yaml(result, command, lines)
    write_text(out, text)
    Console().print(f"written: {out} (round {result.kept} kept)", highlight=False)


def _fitted(name: str, restyled: bool = False) -> bool:
    """Is ``name`` a fitted family's (a restyled one's, with ``--voice``): one to remake?"""
    from sim2human.simulators.families import FITTED
    from sim2human.simulators.restyled import RESTYLED

    return name in FITTED or (restyled and name in RESTYLED)


def _command(r: FitResult, out: Path) -> str:
    args = [
        "sim2human", "fit-family", "--out", str(out), "--name", r.name, "--seed", str(r.seed),
        "--rounds", str(r.rounds), "--population", str(r.population), "--members",
        str(r.members), "--per-member", str(r.per_member), "--width", str(r.width),
    ]  # fmt: skip
    if r.voice is not None:
        args += ["--voice", r.voice]
    return shlex.join(args)


def family_yaml(r: FitResult, command: str) -> str:
    """The family file: comments (how it was made, each round), then the one entry."""
    import yaml

    body = yaml.safe_dump([r.family], sort_keys=False, allow_unicode=True)
    return "\n".join(_header(r, command)) + "\n" + body


def _header(r: FitResult, command: str) -> list[str]:
    """How the fit was made, each round's distances, the kept round's statistics."""
    from sim2human.scenarios.intake.grounding.fit_family import STATS

    said = "" if r.voice is None else f", each candidate saying {r.voice}'s lines"
    return [
        f"# {r.name}: a persona family fitted to ACI-Bench *train* patients' behaviour{said}",
        "# (scenarios/intake/grounding/fit_family.py). Made by:",
        f"#   {command}",
        "# with $SIM2HUMAN_DATA pointing at the corpus. The held-out visits (valid + test)",
        "# were never read. Distance: behaviour statistics' gaps in units plus",
        "# 50 x (lexical AUC - 0.5).",
        f"# round kept: {r.kept}, the lowest validation distance.",
        "# round  fit-distance  fit-AUC  validation-distance  validation-AUC",
        *(
            f"# {h.round:5d}  {h.fit.distance:12.2f}  {h.fit.auc:7.3f}  "
            f"{h.validation.distance:19.2f}  {h.validation.auc:14.3f}"
            for h in r.history
        ),
        "# statistic: train validation part / this family on validation calls",
        *(
            f"#   {k}: {getattr(r.human_validation, k):.3f} / "
            f"{getattr(r.history[r.kept].validation.behaviour, k):.3f}"
            for k in (*STATS, "call_turns")
        ),
    ]


def cache_yaml(r: FitResult, command: str, lines: Lines) -> str:
    """A ``--voice`` fit's file: a restyle cache of the fitted family (kind ``restyled``) and
    the lines of the cache it said, as written there (pointers stay pointers: no words of the
    corpus)."""

    from sim2human.cli.retrieve_family import CITATION, pointer_yaml

    entries = [
        {"line": x.line, "field": x.field, "rewrites": list(x.rewrites)} for x in lines.lines
    ]
    header = _header(r, command)
    if lines.corpus is not None:
        header += [
            f"# Its lines are {lines.source}'s: pointers into {lines.corpus} (train encounters'",
            "# patient turns, read in place when a member is built; no words of the corpus here).",
            f"# ACI-Bench: {CITATION}.",
        ]
    dumped = pointer_yaml({"family": r.family, "lines": entries})
    return "\n".join(header) + "\n" + dumped
