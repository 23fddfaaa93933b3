"""The study's "real people" section: held-out gold on ``replay`` families (a corpus's people)
beside the programmatic held-out families (the shared ``real`` table of ``report.tables``)."""

from __future__ import annotations

from sim2human.experiments.study.results import StudyResult
from sim2human.report.format import md
from sim2human.report.tables import Table, numbers, real_table

INTRO = (
    "Held-out gold on replayed real people (their own words from a recorded conversation, "
    "a card derived from it) next to the programmatic held-out families. The scripted "
    "agent's score says how solvable the replayed calls are."
)


def real_section(study: StudyResult, table: Table | None = None) -> list[str]:
    """``table`` (the shared ``real`` table; default the study's) as Markdown with the replies
    each agent drew; empty when the study held out no ``replay`` family."""
    table = table or real_table(numbers(study, None))
    if table is None:
        return []
    lines = [
        f"## {table.title}",
        "",
        INTRO,
        "",
        "| " + " | ".join(md(c) for c in table.columns) + " |",
        "|---|" + "---:|" * (len(table.columns) - 1),
        *("| " + " | ".join(md(c) for c in row) + " |" for row in table.rows),
    ]
    # what a replayed patient could say verbatim depends on what the agent asked: per agent
    shared = [(r.name, r.real_reply_shares) for r in study.all_rows if r.real_reply_shares]
    if shared:
        lines += ["", "Replayed replies, by agent:", ""]
        for name, shares in shared:
            said = ", ".join(f"{md(k)} {100 * v:.0f}%" for k, v in shares.items())
            lines.append(f"- {md(name)}: {said}")
    return [*lines, *(["", md(table.note)] if table.note else []), ""]
