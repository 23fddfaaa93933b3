"""``report.md``, composed here and written once: the study's table and findings (``study.json``),
the adaptive section, then the stored diagnosis (verdicts, exploits, overoptimisation fit,
simulator diversity) and fidelity to human speech.

Conditions are told apart by their ``role`` (``frozen``, ``baseline``, ``candidate``) and
``compare_to``, never by their names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sim2human import outputs
from sim2human.diagnostics.analyse import Diagnosis
from sim2human.experiments.study.diversity import DiversityRow
from sim2human.experiments.study.results import ConditionRow, StudyResult
from sim2human.metrics.outcomes import Estimate
from sim2human.report.by_family import diversity_rows, quirk_cell
from sim2human.report.format import est, md, md_code, num, pct
from sim2human.report.llm import llm_section
from sim2human.report.real import real_section
from sim2human.report.summary import Summary, summarise
from sim2human.report.tables import Table


def md_table(t: Table) -> list[str]:
    """A shared table (``report.tables``) as Markdown: its title, its rows, its note."""
    lines = [
        f"## {md(t.title)}",
        "",
        "| " + " | ".join(md(c) for c in t.columns) + " |",
        "|---|" + "---:|" * (len(t.columns) - 1),
        *("| " + " | ".join(md(c) for c in row) + " |" for row in t.rows),
    ]
    return [*lines, *(["", md(t.note)] if t.note else []), ""]


def _held(r: ConditionRow, study: StudyResult) -> Estimate:
    """``r``'s held-out gold as the study leads with it (success, or the mean score)."""
    return r.gold("heldout", study.gold_metric) or r.heldout_gold


def _apart(a: ConditionRow, b: ConditionRow, study: StudyResult) -> bool:
    """Whether ``a``'s held-out gold CI lies wholly above ``b``'s."""
    return _held(a, study).ci[0] > _held(b, study).ci[1]


def _frozen_against(row: ConditionRow, study: StudyResult, first: ConditionRow) -> ConditionRow:
    """The frozen condition ``row`` is measured against: its ``compare_to`` when that is a
    frozen one, else the study's first frozen condition."""
    named = study.row(row.compare_to)
    return named if named is not None and named.role == "frozen" else first


def findings(study: StudyResult) -> list[str]:
    """Claims the numbers support, each stated from the data (and said so when they do not).
    Gold is what the scenario leads with (``study.gold_metric``): success, or the mean score."""
    out: list[str] = []
    m = study.gold_metric
    word = "score" if m == "score" else "gold"
    frozen = study.with_role("frozen")
    ensembles = [r for r in study.conditions if r.role != "frozen"]

    def held(r: ConditionRow) -> float:
        return _held(r, study).mean

    for r in frozen:
        train = (r.gold("train", m) or r.train_gold).mean
        gap = train - held(r)
        out.append(
            f"- {md_code(r.name)}: train proxy {pct(r.train_proxy.mean)}, train {word} "
            f"{pct(train)}, held-out {word} {pct(held(r))}: "
            f"held-out is {pct(abs(gap))} points {'below' if gap >= 0 else 'above'} its own "
            f"training {word}."
        )
    if frozen and ensembles:
        best = max(ensembles, key=held)
        small = _frozen_against(best, study, frozen[0])
        lift = held(best) - held(small)
        out.append(
            f"- Best ensemble condition {md_code(best.name)}: held-out {word} "
            f"{pct(held(best))}, {pct(lift)} points above {md_code(small.name)}"
            + (
                " (the 95% CIs do not overlap)."
                if _apart(best, small, study)
                else " (the 95% CIs overlap: not a supported difference)."
            )
        )
    ens_best = max((held(r) for r in ensembles), default=0.0)
    for other in frozen[1:]:
        base = _frozen_against(other, study, frozen[0])
        better = _apart(other, base, study)
        verdict = (
            f"holds: {md_code(other.name)}'s agent does not transfer better than "
            f"{md_code(base.name)}'s"
            if not better
            else f"does not hold: {md_code(other.name)}'s agent transfers measurably better than "
            f"{md_code(base.name)}'s"
        )
        out.append(
            f"- 'Another frozen simulator does not save you' {verdict} "
            f"(held-out {word} {pct(held(other))} vs {pct(held(base))}"
            f" for {md(base.name)} and {pct(ens_best)} for the best ensemble)."
        )
    for r in study.reference:
        if by_family := r.gold_by_family("train", m):
            cells = ", ".join(f"{md(f)} {pct(v)}" for f, v in by_family.items())
            out.append(
                f"- Reference {md_code(r.name)} agent, {word} on the training families: {cells}."
            )
    return out


def study_head(study: StudyResult) -> list[str]:
    seeds = ", ".join(str(s) for s in study.seeds)
    return [
        f"# Study {md_code(study.study)} ({md(study.scenario)})",
        "",
        f"Seeds: {seeds}. Wall time: {study.wall_seconds} s. Percentages; 95% CIs by cluster "
        "bootstrap over seeds and episodes. Proxy = the simulator's satisfaction (what training "
        "sees); gold = `grade()` on the hidden profile (never seen by training).",
        "",
        *(
            [
                "Quirks shared on purpose: the scenario file sets `quirks.shared`, so held-out "
                "members draw their liked, disliked and trigger phrasings from the training "
                "and frozen members' pool (a held-out score may reward a shared blind spot).",
                "",
            ]
            if study.quirks_shared
            else []
        ),
    ]


def summary_lines(s: Summary, keys: Sequence[str] = ("gold", "handle_time", "spread")) -> list[str]:
    """The shared tables ``keys`` as Markdown, in order, and the rule gold was scored under."""
    tables = [line for k in keys if (t := s.table(k)) is not None for line in md_table(t)]
    return [*tables, *([md(s.record_rule), ""] if s.record_rule else [])]


def study_lines(study: StudyResult, s: Summary | None = None) -> list[str]:
    """The study's tables (``s``: its summary, default the study's alone), findings, LLM and
    real-patient sections."""
    s = s or summarise(None, None, study)
    return [
        *study_head(study),
        *summary_lines(s, ("gold", "handle_time", "spread", "families")),
        "## Findings",
        "",
        *findings(study),
        "",
        "Held-out members are never used for training, tuning or early stopping.",
        "",
        *llm_section(study),
        *real_section(study, s.table("real")),
    ]


def diagnosis_lines(d: Diagnosis, diversity: list[DiversityRow]) -> list[str]:
    """Verdicts, problems, the exploit finder, the overoptimisation fit and diversity (long
    member lists by family: ``by_family``)."""
    diversity = diversity_rows(diversity)
    lines = ["", "## Verdict", "", *(f"- {md(c.verdict.headline)}" for c in d.conditions), ""]
    if d.problems:
        lines += ["## Incomplete run directory", "", *(f"- {md_code(p)}" for p in d.problems), ""]
    lines += [
        "## Exploit finder",
        "",
        f"| {d.unit} | phrasing | share | proxy lift (train) | raises on | gold lift (held-out) "
        "| unearned | exploit | recorded quirk |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for c in d.conditions:
        for r in c.exploits:
            lines.append(
                f"| {md(c.name)} | {md(r.text)} | {pct(r.share)}% | {est(r.proxy_lift_train)} | "
                f"{r.members_raised}/{r.members_total} | {est(r.gold_lift_heldout)} | "
                f"{est(r.unearned)} | {'yes' if r.exploit else ''} | "
                f"{md(quirk_cell(c.quirks.get(r.phrasing, [])))} |"
            )
    lines += overfit_lines(d)
    if diversity:
        lines += [
            "",
            "## Simulator diversity",
            "",
            f"Embedder: {md_code(diversity[0].summary.embedder)}.",
            "",
            "| simulator | kind | distinct-1 | distinct-2 | self-BLEU | Vendi |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for row in diversity:
            s = row.summary
            lines.append(
                f"| {md(row.name)} | {md(row.kind)} | {num(s.distinct_1, 3)} | "
                f"{num(s.distinct_2, 3)} | {num(s.self_bleu, 3)} | {num(s.vendi)} |"
            )
    return lines


def overfit_lines(d: Diagnosis) -> list[str]:
    """The overoptimisation fit's table (the cells report.html shows under the same labels);
    none for an evaluation, which trained nothing to fit."""
    if d.kind == "evaluation":
        return []
    lines = [
        "",
        "## Overoptimisation fit",
        "",
        "| condition | points | alpha | beta | d* | gold at d* | stop at |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in d.conditions:
        f = c.overfit
        if f is None:
            lines.append(f"| {md(c.name)} | 0 | | | | | no held-out evaluations during training |")
            continue
        stops = "; ".join(
            f"{md(run)}: update {u}"
            + (f" ({md(c.checkpoints[run])})" if run in c.checkpoints else "")
            for run, u in f.stop.items()
        )
        d_star = num(f.d_star) if f.d_star is not None else "no peak"
        d_star += " (inside the run)" if f.peak_observed else ""
        gold = pct(f.gold_at_peak) if f.gold_at_peak is not None else ""
        lines.append(
            f"| {md(c.name)} | {f.n_points} | {num(f.alpha)} | {num(f.beta)} | {d_star} | {gold} "
            f"| {stops} |"
        )
    return lines


def markdown_text(*sections: list[str]) -> str:
    """The report's sections (lists of lines) as one Markdown text."""
    return "\n".join(line for s in sections for line in s) + "\n"


def write_markdown(path: Path, *sections: list[str], inside: Path | None = None) -> Path:
    """Write the report's sections as one file, once and atomically (``outputs``)."""
    outputs.write_text(path, markdown_text(*sections), inside=inside)
    return path
