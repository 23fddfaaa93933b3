"""Which rule a gold number was scored under, in one line for every table that shows one.

Gold grades a record, and there are two (``types.RecordSource``): what the call made heard (an
act-level agent asked for a field and the caller said it) and what the agent itself submitted
through tools (an agent that writes its own words: words alone record nothing). The two are
not the same measure (a refusing agent scores fields under the first, none under the second),
so a table of gold says which one it is, read from the episodes it was computed from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from sim2human.types import Episode

SUBMITTED = "Gold scored on what the agent submitted through tools (or its JSON summary)."
HEARD = "Gold scored on what the call made heard (act-level agent: the fields it asked for)."


def record_rule_line(episodes: Iterable[Episode]) -> str:
    """The line for ``episodes`` (empty for none): one rule, or both with their counts."""
    counts = Counter(e.record_source for e in episodes)
    if not counts:
        return ""
    if set(counts) == {"submitted"}:
        return SUBMITTED
    if set(counts) == {"heard"}:
        return HEARD
    return (
        f"Gold scored under both rules (mixed): {counts['submitted']} episode(s) on what the "
        f"agent submitted through tools, {counts['heard']} on what the call made heard "
        "(act-level agent)."
    )
