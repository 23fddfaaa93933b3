"""``report.md``: the study's table and findings (``markdown.py``), the adaptive section when the
study wrote one (``adaptive.py``), then the diagnostics."""

from __future__ import annotations

from pathlib import Path

from sim2human.diagnostics.analyse import Diagnosis
from sim2human.experiments.diversity import DiversityRow
from sim2human.report.adaptive import DIR as ADAPTIVE_DIR
from sim2human.report.format import est, num, pct
from sim2human.report.markdown import REPORT_MD
from sim2human.report.markdown import write_markdown as write_study_markdown


def write_markdown(
    d: Diagnosis, diversity: list[DiversityRow], out: Path, name: str = REPORT_MD
) -> Path:
    """The study's own report.md (table and findings) when study.json exists, plus diagnostics."""
    lines: list[str] = []
    if d.study is not None:
        lines = write_study_markdown(d.study, out, name).read_text(encoding="utf-8").splitlines()
        if (adaptive := out / ADAPTIVE_DIR / "adaptive.md").exists():  # the adaptive section
            lines += ["", *adaptive.read_text(encoding="utf-8").splitlines()]
    else:
        lines = [f"# {d.kind} `{d.name}`", ""]
    lines += ["", "## Verdict", "", *(f"- {c.verdict.headline}" for c in d.conditions), ""]
    if d.problems:
        lines += ["## Incomplete run directory", "", *(f"- `{p}`" for p in d.problems), ""]
    lines += [
        "## Exploit finder",
        "",
        "| condition | phrasing | share | proxy lift (train) | raises on | gold lift (held-out) "
        "| unearned | exploit | recorded quirk |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for c in d.conditions:
        for r in c.exploits:
            lines.append(
                f"| {c.name} | {r.text} | {pct(r.share)}% | {est(r.proxy_lift_train)} | "
                f"{r.members_raised}/{r.members_total} | {est(r.gold_lift_heldout)} | "
                f"{est(r.unearned)} | {'yes' if r.exploit else ''} | "
                f"{'; '.join(c.quirks.get(r.phrasing, []))} |"
            )
    lines += [
        "",
        "## Overoptimisation fit",
        "",
        "| condition | points | alpha | beta | d* | gold at d* | stop at |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in d.conditions:
        f = c.overfit
        if f is None:
            lines.append(f"| {c.name} | 0 | | | | | no held-out evaluations during training |")
            continue
        stops = ", ".join(f"{run}: update {u}" for run, u in f.stop.items())
        lines.append(
            f"| {c.name} | {f.n_points} | {num(f.alpha)} | {num(f.beta)} | "
            f"{num(f.d_star) if f.d_star is not None else 'no peak'} | {pct(f.gold_at_peak)} | "
            f"{stops} |"
        )
    if diversity:
        lines += [
            "",
            "## Simulator diversity",
            "",
            f"Embedder: `{diversity[0].summary.embedder}`.",
            "",
            "| simulator | kind | distinct-1 | distinct-2 | self-BLEU | Vendi |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for row in diversity:
            s = row.summary
            lines.append(
                f"| {row.name} | {row.kind} | {num(s.distinct_1, 3)} | {num(s.distinct_2, 3)} | "
                f"{num(s.self_bleu, 3)} | {num(s.vendi)} |"
            )
    path = out / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
