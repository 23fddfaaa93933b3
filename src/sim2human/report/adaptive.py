"""The adaptive-ensemble section of a study report: plots and a markdown/HTML fragment.

Reads only files in the run directory: ``study.json`` rows (held-out curve, worst decile,
episodes to uniform's final gold) and each sub-run's ``sampler.jsonl`` (member shares per update,
and ``evolve``'s events with their reasons). Writes PNGs under ``adaptive/`` and the fragment as
``adaptive/adaptive.md`` and ``adaptive/adaptive.html``, to be embedded in the main report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from sim2human.store import iter_jsonl

DIR = "adaptive"
UNIFORM = "ensemble-uniform"
NON_ADAPTIVE = (UNIFORM, "ensemble-randomized")
MARGIN = 0.05
"""Worst-decile gold an adaptive condition must add over uniform (the issue's bar: 5 points)."""
SPEED = 0.7
"""Share of uniform's episodes within which uniform's final held-out gold must be reached."""


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}"


def fmt(est: dict[str, Any]) -> str:
    return f"{pct(est['mean'])} [{pct(est['ci'][0])}, {pct(est['ci'][1])}]"


def sampler_rows(root: Path, condition: str, seed: int) -> list[dict[str, Any]]:
    path = root / "conditions" / condition / f"seed-{seed}" / "sampler.jsonl"
    return [r for _, r in iter_jsonl(path)] if path.exists() else []


def verdicts(study: dict[str, Any]) -> list[str]:
    """Does any adaptive condition beat uniform on the tail, or reach its gold faster?"""
    rows = {r["name"]: r for r in study["conditions"]}
    uni = rows.get(UNIFORM)
    if uni is None:
        return ["- No `ensemble-uniform` condition: nothing to compare against."]
    budget = uni["episodes_trained"]
    own = uni.get("episodes_to_uniform_final")
    # If uniform itself reached its final level within 70% of its budget, the speed test cannot
    # tell anything apart (a flat or early-plateau curve): only the worst-decile test counts.
    speed_counts = own is not None and own > SPEED * budget
    out, met = [], False
    for name, r in rows.items():
        if name in NON_ADAPTIVE or "heldout_worst_decile" not in r:
            continue
        w, wu = r["heldout_worst_decile"], uni["heldout_worst_decile"]
        lift = w["mean"] - wu["mean"]
        apart = w["ci"][0] > wu["ci"][1]
        to = r.get("episodes_to_uniform_final")
        fast = speed_counts and to is not None and to <= SPEED * budget
        met |= (lift >= MARGIN and apart) or fast
        out.append(
            f"- `{name}`: worst-decile held-out gold {fmt(w)} vs uniform {fmt(wu)} "
            f"({100 * lift:+.0f} points; CIs {'apart' if apart else 'overlap'}); reached "
            f"uniform's final held-out gold "
            + (
                f"after {to} of {budget} episodes ({to / budget:.0%})."
                if to is not None
                else "never within the budget."
            )
        )
    seeds = len(study["seeds"])
    if not speed_counts:
        out.append(
            f"- Uniform's own curve reached its final level after {own} of {budget} "
            "episodes, so the 70%-of-episodes test cannot separate conditions here."
        )
    out.append(
        "- **Supported**: at least one adaptive condition beats `ensemble-uniform` on worst-decile "
        "held-out gold by >= 5 points with separated CIs, or reaches its final held-out gold "
        "within 70% of its episodes."
        if met
        else "- **Not supported**: no adaptive condition beats `ensemble-uniform` on worst-decile "
        f"held-out gold by >= 5 points with separated 95% CIs ({seeds} seeds), nor reaches its "
        "final held-out gold within 70% of its episodes."
    )
    return out


def timeline(root: Path, study: dict[str, Any]) -> list[dict[str, Any]]:
    """Every evolve event of the first seed of each condition that has any (a snapshot is shown
    on the retirement it follows)."""
    seed = study["seeds"][0]
    events: list[dict[str, Any]] = []
    for r in study["conditions"]:
        for row in sampler_rows(root, r["name"], seed):
            for e in row.get("events") or []:
                kind = e.get("kind")
                if kind == "snapshot" and events and events[-1]["member"] == e.get("member"):
                    events[-1]["reason"] += "; kept as a frozen snapshot"
                elif kind in ("retire", "spawn", "drop", "reject"):
                    events.append({"condition": r["name"], **e})
    return events


def plot_curves(study: dict[str, Any], path: Path) -> Path | None:
    rows = [r for r in study["conditions"] if r.get("heldout_curve")]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for r in rows:
        xs, ys = zip(*r["heldout_curve"], strict=True)
        ax.plot(xs, [100 * y for y in ys], marker=".", label=r["name"])
    ax.set(
        xlabel="training episodes",
        ylabel="held-out gold success (%)",
        title="Held-out gold during training (seed mean, curve subset)",
    )
    ax.legend(fontsize=7)
    return _save(fig, path)


def plot_worst_decile(study: dict[str, Any], path: Path) -> Path | None:
    rows = [r for r in study["conditions"] if "heldout_worst_decile" in r]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.5))
    means = [100 * r["heldout_worst_decile"]["mean"] for r in rows]
    lo = [m - 100 * r["heldout_worst_decile"]["ci"][0] for m, r in zip(means, rows, strict=True)]
    hi = [100 * r["heldout_worst_decile"]["ci"][1] - m for m, r in zip(means, rows, strict=True)]
    ax.bar(range(len(rows)), means, yerr=[lo, hi], capsize=3, color="tab:blue")
    ax.set_xticks(range(len(rows)), [r["name"] for r in rows], rotation=30, ha="right", fontsize=7)
    ax.set(
        ylabel="worst-decile held-out gold (%)", title="Worst decile of held-out members, 95% CI"
    )
    return _save(fig, path)


def plot_shares(rows: Sequence[dict[str, Any]], title: str, path: Path) -> Path | None:
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
    return _save(fig, path)


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def fragment(study: dict[str, Any], root: Path) -> list[str]:
    """Write the plots; return the markdown lines of the section (links relative to ``root``)."""
    d = root / DIR
    seed = study["seeds"][0]
    images = [
        plot_curves(study, d / "heldout_gold_vs_episodes.png"),
        plot_worst_decile(study, d / "worst_decile.png"),
    ]
    for r in study["conditions"]:
        rows = sampler_rows(root, r["name"], seed)
        images.append(
            plot_shares(
                rows,
                f"{r['name']}: sampling share per member (seed {seed})",
                d / f"sampling_share_{r['name']}.png",
            )
        )
    lines = [
        "## Adaptive ensembles",
        "",
        "| condition | held-out gold | worst-decile held-out gold | episodes to uniform's final "
        "| n held-out |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in study["conditions"]:
        if "heldout_worst_decile" in r:
            to = r.get("episodes_to_uniform_final")
            reach = "never" if to is None else str(to)
            lines.append(
                f"| {r['name']} | {fmt(r['heldout_gold'])} | "
                f"{fmt(r['heldout_worst_decile'])} | {reach} | {r['heldout_gold'].get('n', '')} |"
            )
    lines += [
        "",
        *verdicts(study),
        "",
        "Worst decile: per held-out member its gold success rate, then the mean of the worst "
        "10% of members (at least one), averaged over seeds; CI by bootstrap over seeds and "
        "episodes. Episodes to uniform's final: first checkpoint of the seed-mean held-out "
        "curve (a fixed subset of the evaluation seeds, logged every `train.eval_every` "
        "updates, never used for training) at or above uniform's last checkpoint.",
        "",
    ]
    events = timeline(root, study)
    if events:
        lines += [
            f"### Evolve timeline (seed {seed})",
            "",
            "| condition | update | episodes | change | member | reason |",
            "|---|---:|---:|---|---|---|",
        ]
        lines += [
            f"| {e['condition']} | {e['update']} | {e['episodes_seen']} | {e['kind']} | "
            f"{e['member']} | {e['reason']} |"
            for e in events
        ]
        lines.append("")
    lines += [f"![{p.stem}]({p.relative_to(root).as_posix()})" for p in images if p is not None]
    return [*lines, ""]


HTML = jinja2.Template(
    """<section id="adaptive"><h2>Adaptive ensembles</h2>
<table><tr><th>condition</th><th>held-out gold</th><th>worst decile</th><th>episodes to uniform's final</th></tr>
{% for r in rows %}<tr><td>{{ r.name }}</td><td>{{ fmt(r.heldout_gold) }}</td><td>{{ fmt(r.heldout_worst_decile) }}</td><td>{{ r.episodes_to_uniform_final if r.episodes_to_uniform_final is not none else "never" }}</td></tr>
{% endfor %}</table>
<ul>{% for v in verdicts %}<li>{{ v[2:] }}</li>{% endfor %}</ul>
{% if events %}<h3>Evolve timeline</h3><table><tr><th>condition</th><th>update</th><th>change</th><th>member</th><th>reason</th></tr>
{% for e in events %}<tr><td>{{ e.condition }}</td><td>{{ e.update }}</td><td>{{ e.kind }}</td><td>{{ e.member }}</td><td>{{ e.reason }}</td></tr>
{% endfor %}</table>{% endif %}
{% for p in images %}<img src="{{ p }}" alt="{{ p }}">{% endfor %}</section>
""",  # noqa: E501
    autoescape=True,
)


def write_adaptive(study: dict[str, Any], root: Path) -> Path | None:
    """Write the section's files; None when the study has no adaptive columns or no
    ``ensemble-uniform`` condition to compare with (the section is that comparison)."""
    names = {r["name"] for r in study["conditions"]}
    if UNIFORM not in names or not any("heldout_worst_decile" in r for r in study["conditions"]):
        return None
    lines = fragment(study, root)
    d = root / DIR
    (d / "adaptive.md").write_text("\n".join(lines), encoding="utf-8")
    images = sorted(p.relative_to(root).as_posix() for p in d.glob("*.png"))
    rows = [r for r in study["conditions"] if "heldout_worst_decile" in r]
    html = HTML.render(
        rows=rows, fmt=fmt, verdicts=verdicts(study), images=images, events=timeline(root, study)
    )
    (d / "adaptive.html").write_text(html, encoding="utf-8")
    return d / "adaptive.md"
