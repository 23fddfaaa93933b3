"""The "Why real people fail" section of report.md and report.html (``diagnostics.failures``)."""

from __future__ import annotations

from sim2human.diagnostics.failures import ENDINGS, RealFailures
from sim2human.report.format import md, md_code

TITLE = "Why real people fail"


def _share(k: int, n: int) -> str:
    return f"{k} ({100 * k / n:.0f}%)" if n else "0"


def failures_section(f: RealFailures | None) -> list[str]:
    """The breakdown as Markdown; empty when no agent played a real person."""
    if f is None:
        return []
    lines = [
        f"## {TITLE}",
        "",
        f"Every agent's held-out calls with replayed real people ({f.visits} recorded "
        "dialogues), seeds pooled, from the run's episodes.",
        "",
        *_endings(f),
        *_fields(f),
        *_hard(f),
    ]
    return [*lines, ""]


def _endings(f: RealFailures) -> list[str]:
    kinds = sorted({k for a in f.agents for k in a.endings}, key=list(ENDINGS).index)
    head = ["agent", "calls", "failed", *(ENDINGS.get(k, k) for k in kinds)]
    lines = [
        "How the failed calls ended (share of the agent's failed calls):",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for a in f.agents:
        cells = [md(a.agent), str(a.calls), _share(a.failed, a.calls)]
        cells += [_share(a.endings.get(k, 0), a.failed) for k in kinds]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _fields(f: RealFailures) -> list[str]:
    names = list(dict.fromkeys(n for a in f.agents for n in a.missing))
    if not names:
        return []
    shown = [a for a in f.agents if not a.frozen] or f.agents
    lines = [
        "Per field, the share of the agent's calls that ended with it missing (never recorded) "
        "/ recorded wrong:",
        "",
        "| field | " + " | ".join(md(a.agent) for a in shown) + " |",
        "|---|" + "---:|" * len(shown),
    ]
    for name in names:
        cells = [
            f"{100 * a.missing.get(name, 0) / a.calls:.0f} / "
            f"{100 * a.wrong.get(name, 0) / a.calls:.0f}"
            for a in shown
        ]
        lines.append(f"| {md(name)} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _hard(f: RealFailures) -> list[str]:
    judges = ", ".join(md_code(a) for a in f.judged_by)
    if not f.hard:
        return [f"No dialogue failed most calls of every agent ({judges}).", ""]
    never = [v for v in f.hard if v.won == 0]
    ids = ", ".join(md_code(v.visit) + ("" if v.won == 0 else f" ({v.won} won)") for v in f.hard)
    lines = [
        f"{len(f.hard)} of {f.visits} dialogues failed more than half the calls of every agent "
        f"({judges}), {len(never)} of them every call: {ids}.",
        "",
    ]
    for v in f.hard:
        if v.example is None:
            continue
        x = v.example
        failed = sorted(v.fields.items(), key=lambda kv: -kv[1])
        worst = ", ".join(f"{md(k)} {n}" for k, n in failed if n)
        lines += [
            f"- {md_code(v.visit)} ({v.won} of {v.calls} calls won; fields failed: {worst}). "
            f"{md(x.agent)}, {md(f'{x.field} {x.how}' if x.field else f'ended: {x.how}')}:",
            f"  agent: \u201c{md(x.asked)}\u201d person: \u201c{md(x.reply)}\u201d",
        ]
    return [*lines, ""]
