"""Long member lists shown by family: a randomized population draws a fresh member per
episode, so a report would otherwise list thousands of one-off ids (``chatty-262019903875559``)
in its diversity table and hundreds of them in one "recorded quirk" cell.

Above ``MAX_MEMBERS`` member rows, each (group, family) becomes one row: the mean of its
members' measures, named ``<family> (N members)``; a quirk list is cut to its first few
entries and a count."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sim2human.experiments.study.diversity import DiversityRow

MAX_MEMBERS = 40
"""Member rows shown one by one; more are summarised by family."""
MAX_QUIRKS = 3
"""Recorded quirks named in one cell; the rest are counted."""


def family_of(member_id: str) -> str:
    """A member id is ``<family>-<seed>`` (``simulators.base``)."""
    return member_id.rsplit("-", 1)[0] if "-" in member_id else member_id


def diversity_rows(rows: Sequence[DiversityRow]) -> list[DiversityRow]:
    """``rows`` as shown: member rows by family when there are more than ``MAX_MEMBERS``."""
    if sum(r.kind == "member" for r in rows) <= MAX_MEMBERS:
        return list(rows)
    out: list[DiversityRow] = []
    pending: dict[tuple[str, str], list[DiversityRow]] = {}
    for r in rows:
        if r.kind != "member":
            out += [_family_row(k, v) for k, v in pending.items()]
            pending = {}
            out.append(r)
        else:
            pending.setdefault((r.group, family_of(r.name)), []).append(r)
    return out + [_family_row(k, v) for k, v in pending.items()]


def _family_row(key: tuple[str, str], members: list[DiversityRow]) -> DiversityRow:
    group, family = key
    first = members[0].summary
    mean = {
        f: float(np.mean([getattr(m.summary, f) for m in members]))
        for f in ("distinct_1", "distinct_2", "self_bleu", "vendi")
    }
    summary = first.model_copy(update={**mean, "n_texts": sum(m.summary.n_texts for m in members)})
    name = f"{family} ({len(members)} members, mean)"
    return DiversityRow(name=name, kind="family", group=group, summary=summary)


def quirk_cell(quirks: Sequence[str]) -> str:
    """At most ``MAX_QUIRKS`` quirks, then ``+N more``."""
    shown = "; ".join(quirks[:MAX_QUIRKS])
    return shown + (f"; +{len(quirks) - MAX_QUIRKS} more" if len(quirks) > MAX_QUIRKS else "")
