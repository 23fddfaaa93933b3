"""``report.html`` (self-contained: PNGs embedded, no network), ``report.md`` and ``report.json``.

``write_report(run_dir)`` renders what the run directory stores: ``study.json``, the diagnosis
(``diagnosis.json``, written once by ``sim2human study`` or ``sim2human diagnose``), the
simulators' diversity (``diversity.json``) and fidelity to human speech (``fidelity.json``, or
a lexical measure of the stored episodes). It replays and plays nothing; a run that was never
diagnosed gets a clear error saying to run ``sim2human diagnose`` first.
"""

from __future__ import annotations

import base64
import json
import math
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape
from rich.console import Console

from sim2human import outputs
from sim2human.diagnostics.analyse import Diagnosis
from sim2human.diagnostics.failures import run_failures
from sim2human.diagnostics.rundir import RunDir, load_run_dir
from sim2human.diagnostics.stored import (
    derived_dir,
    diagnosis_path,
    load_diagnosis,
    load_diversity,
)
from sim2human.errors import Sim2HumanError
from sim2human.experiments.study.agent_record import describe as describe_agent
from sim2human.experiments.study.diversity import DiversityRow
from sim2human.report import fidelity
from sim2human.report.adaptive import adaptive_section
from sim2human.report.against_start import against_start_section
from sim2human.report.by_family import diversity_rows, quirk_cell
from sim2human.report.failures import failures_section
from sim2human.report.format import est, md, md_code, num, pct
from sim2human.report.html_sections import html_table, md_to_html
from sim2human.report.llm import llm_section
from sim2human.report.markdown import (
    diagnosis_lines,
    findings,
    markdown_text,
    md_table,
    study_lines,
    summary_lines,
)
from sim2human.report.plots import all_plots
from sim2human.report.predictivity import markdown as predictivity_markdown
from sim2human.report.real import real_section
from sim2human.report.stress_markdown import stress_markdown
from sim2human.report.summary import KEY as SUMMARY_KEY
from sim2human.report.summary import Summary, summarise
from sim2human.report.templates_env import template_env
from sim2human.store.layout import (
    DIVERSITY_JSON,
    FIDELITY_JSON,
    PREDICTIVITY_JSON,
    STRESS_JSON,
    report_stem,
)
from sim2human.store.loading import existing_dir, read_json_object
from sim2human.store.lock import read_lock, run_lock

ALL_TABLES = ("gold", "handle_time", "spread", "families", "real")


@dataclass(frozen=True)
class Written:
    html: Path
    markdown: Path
    json: Path
    diagnosis: Diagnosis
    summary: Summary


def render_html(
    d: Diagnosis,
    diversity: list[DiversityRow],
    note: str,
    summary: Summary | None = None,
    sections: str = "",
    workers: int = 1,
) -> str:
    """The page; ``summary``'s tables and ``sections`` (the study's prose sections, as HTML
    from their Markdown: ``html_sections``) are what report.md shows too; its figures drawn in
    up to ``workers`` processes (``plots.all_plots``)."""
    summary = summary or summarise(d, None)
    env = template_env("sim2human.report")
    figures = all_plots(d.conditions, workers)
    plots = {k: base64.b64encode(v).decode("ascii") for k, v in figures.items()}
    texts = {r.phrasing: r.text for c in d.conditions for r in c.exploits}
    return env.get_template("report.html.j2").render(
        d=d,
        summary_html=Markup(
            "".join(html_table(t) for t in summary.tables if t.key != "real")
            + (f'<p class="note">{escape(summary.record_rule)}</p>' if summary.record_rule else "")
        ),
        sections_html=Markup(sections),
        short={v.condition: v for v in summary.verdicts},
        real=summary.table("real") is not None,
        plots=plots,
        diversity=diversity_rows(diversity),
        quirk_cell=quirk_cell,
        diversity_note=note,
        texts=texts,
        pct=pct,
        num=num,
        est=est,
    )


def _finite(x: Any) -> Any:
    """NaN (an estimate over no data) becomes null, so report.json is strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def write_report(
    run_dir: Path,
    *,
    condition: str | None = None,
    console: Console | None = None,
    run: RunDir | None = None,
    out_dir: Path | None = None,
    workers: int = 1,
) -> Written:
    """Render ``run_dir``'s stored results as report.html, report.md and report.json; for one
    ``condition``, ``report.<condition>.html`` (.md, .json) beside them, never over them.
    Holds the run directory's lock while it reads and writes. ``run``: ``run_dir`` as
    ``load_run_dir(run_dir, condition)`` read it, from a caller that holds the lock (a study's
    finish, which read it to diagnose it). ``out_dir`` (``report --out``): the files go there
    and the run is only read (``lock.read_lock``); a diagnosis, diversity or fidelity
    measurement stored there by an earlier ``--out`` is used when newer than the run's.
    ``workers``: processes the figures are drawn in (``plots.all_plots``)."""
    console = console or Console(stderr=True)
    stem = report_stem(condition)
    note = lambda msg: console.print(f"note: {run_dir}: {msg}", soft_wrap=True)  # noqa: E731
    existing_dir(run_dir)
    lock: AbstractContextManager[object] = (
        run_lock(run_dir, "report", note=note) if out_dir is None else read_lock(run_dir)
    )
    with lock:
        run = run or load_run_dir(run_dir, condition)
        return _write_report(run_dir, condition, stem, run, out_dir or run_dir, workers)


def _write_report(
    run_dir: Path, condition: str | None, stem: str, run: RunDir, out: Path, workers: int
) -> Written:
    """Compose the three files in memory, then write them together (``outputs.write_all``): a
    full disk or a bad target leaves the old report whole, all three files of it."""
    html, md, js = (out / f"{stem}.{ext}" for ext in ("html", "md", "json"))
    for target in (html, md, js):  # a directory or a FIFO there: refused before any work
        outputs.check_target(target, inside=out)
    src = None if out == run_dir else out
    folder = derived_dir(run_dir, src, *_diagnoses(condition))
    d = load_diagnosis(run_dir, condition, folder=folder, run=run)  # the run read once
    diversity = load_diversity(derived_dir(run_dir, src, DIVERSITY_JSON))
    fid = fidelity.for_report(derived_dir(run_dir, src, FIDELITY_JSON), run)
    summary = summarise(d, run)
    failing = run_failures(run)
    head, prose = _study_parts(d, summary, run, out, failures_section(failing))
    sections = md_to_html(prose, out)
    page = render_html(d, diversity.rows, diversity.note, summary, sections, workers)
    text = markdown_text(head, diagnosis_lines(d, diversity.rows), ["", *fidelity.markdown(fid)])
    payload: dict[str, Any] = {
        **d.model_dump(mode="json"),
        SUMMARY_KEY: summary.dump(),
        "diversity": [r.model_dump(mode="json") for r in diversity.rows],
        "fidelity": fid.model_dump(mode="json"),
        **({"real_failures": failing.dump()} if failing is not None else {}),
    }
    outputs.write_all(
        [
            (html, page.replace("</body>", fidelity.html(fid) + "</body>", 1)),
            (md, text),
            (js, json.dumps(_finite(payload), indent=1) + "\n"),
        ],
        inside=out,
    )
    return Written(html=html, markdown=md, json=js, diagnosis=d, summary=summary)


def _study_parts(
    d: Diagnosis, summary: Summary, run: RunDir, out: Path, failing: list[str]
) -> tuple[list[str], list[str]]:
    """report.md's head (title, shared tables, the study's sections) and the sections the HTML
    renders from Markdown (all but the title and the shared tables, which it draws itself);
    ``failing``: the "why real people fail" section, after the real people's."""
    if d.study is None:
        title = [f"# {d.kind} {md_code(d.name)}", ""]
        real = summary.table("real")
        agents = _agent_lines(run)
        shown = [*agents, *(md_table(real) if real else []), *failing]
        return [*title, *agents, *summary_lines(summary, ALL_TABLES), *failing], shown
    study, run_dir = d.study, run.root
    adaptive = [
        *against_start_section(d),
        *adaptive_section(study, run_dir, out),
        *_stress_lines(run_dir),
        *_predictivity_lines(run_dir),
    ]
    prose = ["## Findings", "", *findings(study), "", *llm_section(study)]
    prose += [*real_section(study, summary.table("real")), *failing, *adaptive]
    return [*study_lines(study, summary), *failing, *adaptive], prose


def _agent_lines(run: RunDir) -> list[str]:
    """What an evaluation evaluated: each agent as its run recorded it (``eval-agent``'s
    ``config.json``), and the population it met; none when no run records its agent."""
    lines = []
    for name, subs in run.conditions.items():
        for sub in subs:
            config = sub.config or {}
            said = describe_agent(config.get("agent"))
            if said is None:
                continue
            pop = config.get("population_hash")
            met = f" Population {md_code(pop)}." if isinstance(pop, str) else ""
            lines.append(f"- {md_code(name)}: {md(said)}{met}")
    return ["## Agent under test", "", *lines, ""] if lines else []


def _stress_lines(run_dir: Path) -> list[str]:
    """``sim2human stress``'s results (``stress.json``), when the run has them, as a section of
    report.md and report.html (its headings one level down); a file that cannot be read is
    left out with a line saying why."""
    path = run_dir / STRESS_JSON
    if not path.is_file():
        return []
    try:
        text = stress_markdown(read_json_object(path, "stress result"))
    except (Sim2HumanError, KeyError, TypeError, ValueError) as err:
        return ["## Stress", "", f"{md_code(STRESS_JSON)} could not be read: {md(str(err))}", ""]
    return [("#" + line if line.startswith("#") else line) for line in text.splitlines()] + [""]


def _predictivity_lines(run_dir: Path) -> list[str]:
    """``sim2human predictivity``'s table (``predictivity.json``), when the run has it, as a
    section; a file that cannot be read is left out with a line saying why."""
    path = run_dir / PREDICTIVITY_JSON
    if not path.is_file():
        return []
    try:
        return [*predictivity_markdown(read_json_object(path, "predictivity result"), 2), ""]
    except (Sim2HumanError, KeyError, TypeError, ValueError, IndexError) as err:
        why = f"{md_code(PREDICTIVITY_JSON)} could not be read: {md(str(err))}"
        return ["## Which simulators predict people", "", why, ""]


def _diagnoses(condition: str | None) -> list[str]:
    """The diagnosis files a report of ``condition`` reads (its own, else the whole run's)."""
    return [p.name for p in {diagnosis_path(Path(), condition), diagnosis_path(Path())}]
