"""The adaptive-ensemble section of a study report: plots and a markdown/HTML fragment.

Reads only files in the run directory: ``study.json`` rows (held-out curve, worst decile,
episodes to the baseline's final gold) and each sub-run's ``sampler.jsonl`` (member shares per
update, and ``evolve``'s events with their reasons). Writes PNGs under ``adaptive/`` and the
fragment as ``adaptive/adaptive.html``; its markdown goes into ``report.md``.

Each ``candidate`` condition is judged against its ``compare_to``, else the study's first
``baseline`` (``StudyResult.reference_of``); ``frozen`` and ``baseline`` conditions are shown in
the table but not judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from sim2human import outputs
from sim2human.experiments.study.results import ConditionRow, StudyResult
from sim2human.metrics.outcomes import Estimate
from sim2human.report.format import est, md
from sim2human.store.layout import ADAPTIVE, ADAPTIVE_HTML, SAMPLER_LOG, RunLayout
from sim2human.store.rundir import iter_jsonl

DIR = ADAPTIVE
MARGIN = 0.05
"""Worst-decile gold a candidate must add over its baseline (the issue's bar: 5 points)."""
SPEED = 0.7
"""Share of the baseline's episodes within which its final held-out gold must be reached."""


def fmt(e: Estimate | None) -> str:
    return est(e, missing="–")


def sampler_rows(root: Path, condition: str, seed: int) -> list[dict[str, Any]]:
    path = RunLayout(root).sub_run(condition, seed) / SAMPLER_LOG
    return [r for _, r in iter_jsonl(path)] if path.exists() else []


def _judged(study: StudyResult) -> list[tuple[ConditionRow, ConditionRow]]:
    """(candidate, what it is judged against), for candidates with worst-decile results."""
    pairs = []
    for r in study.with_role("candidate"):
        base = study.reference_of(r)
        if base is not None and r.heldout_worst_decile and base.heldout_worst_decile:
            pairs.append((r, base))
    return pairs


def _speed_counts(base: ConditionRow) -> bool:
    """If the baseline reached its own final level within 70% of its budget, the speed test
    cannot tell anything apart (a flat or early-plateau curve): only the worst-decile test
    counts."""
    own = base.episodes_to_uniform_final
    return own is not None and own > SPEED * base.episodes_trained


def verdicts(study: StudyResult) -> list[str]:
    """Does any candidate beat its baseline on the tail, or reach the baseline's gold faster?"""
    pairs = _judged(study)
    if not pairs:
        return ["- No candidate condition with a baseline to compare against."]
    out, met = [], False
    for r, base in pairs:
        w, wb = r.heldout_worst_decile, base.heldout_worst_decile
        assert w is not None and wb is not None
        budget = base.episodes_trained
        lift = w.mean - wb.mean
        apart = w.ci[0] > wb.ci[1]
        # episodes_to_uniform_final is measured against the study's baseline only
        to = r.episodes_to_uniform_final if base is study.baseline else None
        fast = _speed_counts(base) and to is not None and to <= SPEED * budget
        met |= (lift >= MARGIN and apart) or fast
        out.append(
            f"- `{r.name}`: worst-decile held-out gold {fmt(w)} vs `{base.name}` {fmt(wb)} "
            f"({100 * lift:+.0f} points; CIs {'apart' if apart else 'overlap'}); reached "
            f"`{base.name}`'s final held-out gold "
            + (
                f"after {to} of {budget} episodes ({to / budget:.0%})."
                if to is not None
                else "never within the budget."
                if base is study.baseline
                else "(not measured: only against the study's first baseline)."
            )
        )
    bases = list({b.name: b for _, b in pairs}.values())
    for base in bases:
        if base is study.baseline and not _speed_counts(base):
            out.append(
                f"- `{base.name}`'s own curve reached its final level after "
                f"{base.episodes_to_uniform_final} of {base.episodes_trained} episodes, so the "
                "70%-of-episodes test cannot separate conditions here."
            )
    names = ", ".join(f"`{b.name}`" for b in bases)
    out.append(
        f"- **Supported**: at least one candidate beats its baseline ({names}) on worst-decile "
        "held-out gold by >= 5 points with separated CIs, or reaches the baseline's final "
        "held-out gold within 70% of its episodes."
        if met
        else f"- **Not supported**: no candidate beats its baseline ({names}) on worst-decile "
        f"held-out gold by >= 5 points with separated 95% CIs ({len(study.seeds)} seeds), nor "
        "reaches the baseline's final held-out gold within 70% of its episodes."
    )
    return out


def timeline(root: Path, study: StudyResult) -> list[dict[str, Any]]:
    """Every evolve event of the first seed of each condition that has any (a snapshot is shown
    on the retirement it follows)."""
    seed = study.seeds[0]
    events: list[dict[str, Any]] = []
    for r in study.conditions:
        for row in sampler_rows(root, r.name, seed):
            for e in row.get("events") or []:
                kind = e.get("kind")
                if kind == "snapshot" and events and events[-1]["member"] == e.get("member"):
                    events[-1]["reason"] += "; kept as a frozen snapshot"
                elif kind in ("retire", "spawn", "drop", "reject"):
                    events.append({"condition": r.name, **e})
    return events


def plot_curves(study: StudyResult, path: Path, inside: Path | None = None) -> Path | None:
    rows = [r for r in study.conditions if r.heldout_curve]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for r in rows:
        xs, ys = zip(*r.heldout_curve, strict=True)
        ax.plot(xs, [100 * y for y in ys], marker=".", label=r.name)
    ax.set(
        xlabel="training episodes",
        ylabel="held-out gold success (%)",
        title="Held-out gold during training (seed mean, curve subset)",
    )
    ax.legend(fontsize=7)
    return _save(fig, path, inside)


def _with_worst(study: StudyResult) -> list[tuple[ConditionRow, Estimate]]:
    return [(r, r.heldout_worst_decile) for r in study.conditions if r.heldout_worst_decile]


def plot_worst_decile(study: StudyResult, path: Path, inside: Path | None = None) -> Path | None:
    rows = _with_worst(study)
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.5))
    means = [100 * w.mean for _, w in rows]
    lo = [m - 100 * w.ci[0] for m, (_, w) in zip(means, rows, strict=True)]
    hi = [100 * w.ci[1] - m for m, (_, w) in zip(means, rows, strict=True)]
    ax.bar(range(len(rows)), means, yerr=[lo, hi], capsize=3, color="tab:blue")
    ax.set_xticks(range(len(rows)), [r.name for r, _ in rows], rotation=30, ha="right", fontsize=7)
    ax.set(
        ylabel="worst-decile held-out gold (%)", title="Worst decile of held-out members, 95% CI"
    )
    return _save(fig, path, inside)


def plot_shares(
    rows: Sequence[dict[str, Any]], title: str, path: Path, inside: Path | None = None
) -> Path | None:
    rows = [r for r in rows if r.get("shares")]
    if not rows:
        return None
    members = sorted({m for r in rows for m in r["shares"]})
    xs = [r["episodes_seen"] for r in rows]
    ys = [[r["shares"].get(m, 0.0) for r in rows] for m in members]
    fig, ax = plt.subplots(figsize=(7, 4))
    colours = [plt.get_cmap("tab20")(i % 20) for i in range(len(members))]
    ax.stackplot(xs, ys, labels=members, colors=colours)
    ax.set(xlabel="training episodes", ylabel="sampling share", title=title, ylim=(0, 1))
    if len(members) <= 24:
        ax.legend(fontsize=5, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, path, inside)


def _save(fig: Any, path: Path, inside: Path | None) -> Path:
    """Save ``fig`` as the PNG ``path``, atomically and never through a link (``outputs``)."""
    try:
        fig.tight_layout()
        outputs.write_with(path, lambda f: fig.savefig(f, dpi=110, format="png"), inside=inside)
    finally:
        plt.close(fig)
    return path


def fragment(study: StudyResult, root: Path, out: Path | None = None) -> list[str]:
    """Write the plots (into ``out``, default ``root``: the run read); return the markdown lines
    of the section (links relative to ``out``)."""
    out = out or root
    d = out / DIR
    seed = study.seeds[0]
    images = [
        plot_curves(study, d / "heldout_gold_vs_episodes.png", out),
        plot_worst_decile(study, d / "worst_decile.png", out),
    ]
    for r in study.conditions:
        rows = sampler_rows(root, r.name, seed)
        images.append(
            plot_shares(
                rows,
                f"{r.name}: sampling share per member (seed {seed})",
                d / f"sampling_share_{r.name}.png",
                out,
            )
        )
    lines = [
        "## Adaptive ensembles",
        "",
        "| condition | role | gold, held-out families | worst-decile held-out gold "
        "| episodes to the baseline's final | n held-out |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r, w in _with_worst(study):
        to = r.episodes_to_uniform_final
        reach = "never" if to is None else str(to)
        lines.append(
            f"| {md(r.name)} | {md(r.role)} | {fmt(r.heldout_gold)} | {fmt(w)} | {reach} | "
            f"{r.heldout_gold.n} |"
        )
    lines += [
        "",
        *(md(v) for v in verdicts(study)),
        "",
        "Worst decile: per held-out member its gold success rate, then the mean of the worst "
        "10% of members (at least one), averaged over seeds; CI by bootstrap over seeds and "
        "episodes. Episodes to the baseline's final: first checkpoint of the seed-mean held-out "
        "curve (a fixed subset of the evaluation seeds, logged every `train.eval_every` "
        "updates, never used for training) at or above the last checkpoint of the study's "
        "first baseline. A candidate is judged against its `compare_to`, else that baseline.",
        "",
    ]
    lines += _timeline_lines(timeline(root, study), seed)
    lines += [f"![{md(p.stem)}]({_link(p, out)})" for p in images if p is not None]
    return [*lines, ""]


def _timeline_lines(events: list[dict[str, Any]], seed: int) -> list[str]:
    """The evolving ensemble's changes as a table (none when nothing evolved)."""
    if not events:
        return []
    return [
        f"### Evolve timeline (seed {seed})",
        "",
        "| condition | update | episodes | change | member | reason |",
        "|---|---:|---:|---|---|---|",
        *(
            f"| {md(e['condition'])} | {md(e['update'])} | {md(e['episodes_seen'])} | "
            f"{md(e['kind'])} | {md(e['member'])} | {md(e['reason'])} |"
            for e in events
        ),
        "",
    ]


HTML = jinja2.Template(
    """<section id="adaptive"><h2>Adaptive ensembles</h2>
<table><tr><th>condition</th><th>role</th><th>held-out gold</th><th>worst decile</th><th>episodes to the baseline's final</th></tr>
{% for r in rows %}<tr><td>{{ r.name }}</td><td>{{ r.role }}</td><td>{{ fmt(r.heldout_gold) }}</td><td>{{ fmt(r.heldout_worst_decile) }}</td><td>{{ r.episodes_to_uniform_final if r.episodes_to_uniform_final is not none else "never" }}</td></tr>
{% endfor %}</table>
<ul>{% for v in verdicts %}<li>{{ v[2:] }}</li>{% endfor %}</ul>
{% if events %}<h3>Evolve timeline</h3><table><tr><th>condition</th><th>update</th><th>change</th><th>member</th><th>reason</th></tr>
{% for e in events %}<tr><td>{{ e.condition }}</td><td>{{ e.update }}</td><td>{{ e.kind }}</td><td>{{ e.member }}</td><td>{{ e.reason }}</td></tr>
{% endfor %}</table>{% endif %}
{% for p in images %}<img src="{{ p }}" alt="{{ p }}">{% endfor %}</section>
""",  # noqa: E501
    autoescape=True,
)


def adaptive_section(study: StudyResult, root: Path, out: Path | None = None) -> list[str]:
    """Write the section's plots and ``adaptive/adaptive.html`` (into ``out``, default the run
    ``root``); return its markdown lines for report.md. Empty when the study has no
    worst-decile columns or no ``baseline`` condition (the section is the comparison with one)."""
    if study.baseline is None or not _with_worst(study):
        return []
    out = out or root
    lines = fragment(study, root, out)
    d = out / DIR
    images = sorted(p.relative_to(out).as_posix() for p in d.glob("*.png"))
    html = HTML.render(
        rows=[r for r, _ in _with_worst(study)],
        fmt=fmt,
        verdicts=verdicts(study),
        images=images,
        events=timeline(root, study),
    )
    outputs.write_text(d / ADAPTIVE_HTML, html, inside=out)
    return lines


def _link(path: Path, out: Path) -> str:
    """``path`` relative to ``out`` as a Markdown link target (percent-encoded)."""
    return quote(path.relative_to(out).as_posix())
