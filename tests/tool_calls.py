"""Tool calls as the tests write them, and what intake's desk says back to the first of them."""

from __future__ import annotations

from sim2human.types import ToolCall

SEVERITY_RECORDED = (
    "recorded severity = 7; still empty: complaint, onset, medications, allergies, history,"
    " red_flag, dob"
)
"""What intake's desk says of a first record call: the value as read and the boxes still empty."""


def record(field: str, value: str) -> ToolCall:
    """A ``record(field, value)`` call."""
    return ToolCall(name="record", arguments={"field": field, "value": value})
