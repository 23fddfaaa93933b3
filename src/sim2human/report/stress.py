"""The stress report: ``stress.html`` plus one PNG per perturbation (agents overlaid, 95% CI
bands) and the findings (``stress_findings.py``), from ``stress.json`` alone; ``stress.md``
beside it (``stress_markdown.py``).
``stress_section`` returns the same content as an HTML fragment, for the main study report to
embed.

matplotlib draws the plots (Agg, no display needed); jinja2 renders the page with autoescaping,
since transcripts hold arbitrary user text.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from sim2human import outputs
from sim2human.report.format import pct
from sim2human.report.stress_findings import episodes_per_member, findings, fmt
from sim2human.report.stress_markdown import stress_markdown
from sim2human.store.layout import STRESS_HTML, STRESS_MD, STRESS_PLOTS

PLOTS = STRESS_PLOTS

_SECTION = jinja2.Template(
    """
<section class="stress">
<h2>Stress: gold success under perturbation (held-out members)</h2>
<p>Each perturbation is layered onto every held-out member's own noise at severities
{{ grid }}; {{ per }}, the same hidden profiles at every point.
Robustness = area under the gold-success curve (per unit of severity) divided by the clean
success; 1 = unaffected. Percentages; 95% CIs by bootstrap over training seeds, then episodes.</p>
<table>
<tr><th>agent</th><th>seeds</th><th>clean gold</th><th>overall robustness</th>
<th>overall AUC</th>{% for p in perts %}<th>{{ p }}</th>{% endfor %}</tr>
{% for name, a in agents.items() %}
<tr><td>{{ name }}</td><td>{{ a.seeds|length }}</td><td>{{ fmt(a.clean) }}</td>
<td>{{ fmt(a.overall) }}</td><td>{{ fmt(a.overall_auc) }}</td>
{% for p in perts %}<td>{{ fmt(a.per_perturbation[p]) }}</td>{% endfor %}</tr>
{% endfor %}
</table>
<h3>Findings</h3>
<ul>{% for f in findings %}<li>{{ f.removeprefix("- ") }}</li>{% endfor %}</ul>
{% for p in perts %}
<figure><img src="{{ plots }}/{{ p }}.png" alt="gold success vs {{ p }} severity">
<figcaption>{{ p }}: {{ describe[p] }}</figcaption></figure>
{% endfor %}
{% if searches %}
<h3>Adversarial search: cheapest breaking mix ({{ search_members }} members)</h3>
<p>Broken = gold success below {{ threshold }} x the agent's clean success, by a one-sided
Wilson bound; the cheapest breaking mixes are re-played on fresh seeds to confirm.</p>
<table><tr><th>agent</th><th>status</th><th>clean</th><th>target</th><th>mix</th>
<th>total severity</th><th>success (search)</th><th>success (fresh seeds)</th><th>episodes</th></tr>
{% for name, s in searches.items() %}
<tr><td>{{ name }}</td><td>{{ s.status }}</td><td>{{ pct(s.clean) }}</td>
<td>&lt; {{ pct(s.target) }}</td>
<td>{{ mixfmt(s.mix) }}</td>
<td>{{ '%.2f'|format(s.total_severity) if s.total_severity is not none else '' }}</td>
<td>{{ pct(s.success) }}</td><td>{{ fmt(s.confirm) if s.confirm else '' }}</td>
<td>{{ s.episodes }}</td></tr>
{% endfor %}
</table>
{% for name, s in searches.items() if s.failing %}
<details><summary>{{ name }}: {{ s.failing|length }} failing transcripts under its mix</summary>
{% for e in s.failing %}
<p><b>{{ e.simulator }}</b>, {{ e.termination }}, wrong: {{ e.fields_wrong|join(', ') }}</p>
<ol>{% for t in e.turns %}<li><i>{{ t.speaker }}</i>: {{ t.text }}</li>{% endfor %}</ol>
{% endfor %}
</details>
{% endfor %}
{% endif %}
</section>
""",
    autoescape=True,
)

_PAGE = jinja2.Template(
    """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Stress: {{ study }}</title>
<style>body{font-family:sans-serif;max-width:75em;margin:auto}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}td:first-child{text-align:left}
figure{display:inline-block;margin:.5em}img{width:30em}</style></head>
<body><h1>Stress test of study <code>{{ study }}</code></h1>
<p>Wall time {{ wall }} s.</p>
{{ section }}
</body></html>
""",
    autoescape=True,
)


def mixfmt(mix: dict[str, float] | None) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in (mix or {}).items())


def plot_curves(stress: dict[str, Any], folder: Path, inside: Path | None = None) -> list[Path]:
    """One PNG per perturbation: gold success vs severity, every agent overlaid with its CI;
    each written atomically, never through a link, and with ``inside`` never outside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for p in stress["perturbations"]:
        fig, ax = plt.subplots(figsize=(5, 3.4))
        for name, a in stress["agents"].items():
            pts = a["curves"][p]
            x = [q["severity"] for q in pts]
            y = [100 * q["mean"] for q in pts]
            lo = [100 * q["ci"][0] for q in pts]
            hi = [100 * q["ci"][1] for q in pts]
            (line,) = ax.plot(x, y, marker="o", markersize=3, label=name)
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.15)
        ax.set(title=p, xlabel="severity", ylabel="held-out gold success (%)", ylim=(-2, 102))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = folder / f"{p}.png"
        try:
            outputs.write_with(path, partial(fig.savefig, dpi=100, format="png"), inside=inside)
        finally:
            plt.close(fig)
        paths.append(path)
    return paths


def stress_section(stress: dict[str, Any], out: Path, plots: str = PLOTS) -> str:
    """The stress results as an HTML fragment; draws its PNGs into ``out / plots``."""
    from sim2human.perturb import PERTURBATIONS

    plot_curves(stress, out / plots, inside=out)
    html: str = _SECTION.render(
        grid=", ".join(f"{s:g}" for s in stress["grid"]),
        per=episodes_per_member(stress),
        perts=stress["perturbations"],
        agents=stress["agents"],
        findings=findings(stress),
        searches=stress.get("adversarial", {}),
        describe={p: PERTURBATIONS[p].description for p in stress["perturbations"]},
        plots=plots,
        fmt=fmt,
        pct=pct,
        mixfmt=mixfmt,
        search_members=stress.get("adversarial_members") or "held-out",
        threshold=(stress.get("search_config") or {}).get("threshold", ""),
    )
    return html


def stress_page(stress: dict[str, Any], out: Path) -> str:
    """The whole ``stress.html`` page; draws its PNGs into ``out/stress-plots``."""
    section = stress_section(stress, out)
    page: str = _PAGE.render(
        study=stress.get("study", ""),
        wall=stress.get("wall_seconds", ""),
        section=Markup(section),
    )
    return page


def write_stress_html(stress: dict[str, Any], out: Path) -> Path:
    """``out/stress.html`` and ``out/stress-plots/*.png``."""
    path = out / STRESS_HTML
    outputs.check_target(path, inside=out)
    outputs.write_text(path, stress_page(stress, out), inside=out)
    return path


def write_stress_reports(stress: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """``out/stress.html`` (with its plots) and ``out/stress.md``, written together
    (``outputs.write_all``): a full disk leaves both old ones whole."""
    html, md = out / STRESS_HTML, out / STRESS_MD
    for target in (html, md):
        outputs.check_target(target, inside=out)
    outputs.write_all([(html, stress_page(stress, out)), (md, stress_markdown(stress))], inside=out)
    return html, md
