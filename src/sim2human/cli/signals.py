"""SIGTERM handled as Ctrl-C is: what ``kill``, ``timeout``, systemd and container runtimes send
to stop a command. Without this a study stopped that way exited 143 without the
"interrupted ... --resume" lines Ctrl-C prints (its workers stopped by their watchdogs instead of
by the parent, no sub-run named).

Inside ``sigterm_as_interrupt`` the first SIGTERM raises ``KeyboardInterrupt`` in the main
thread, wherever it is, as the first Ctrl-C does; the command prints what it prints for Ctrl-C
and exits with ``interrupt_code()``: 143 (128 + SIGTERM) after a SIGTERM, 130 after a Ctrl-C.
Later SIGTERMs are ignored while the command cleans up (they would cut the clean-up short with a
traceback); SIGKILL still stops it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT)."""
TERMINATED = 143
"""Exit code after SIGTERM (128 + SIGTERM)."""


class _Received:
    """Whether the ``sigterm_as_interrupt`` block now open has had a SIGTERM."""

    term = False


def interrupt_code() -> int:
    """The exit code for an interrupted command: 143 if SIGTERM interrupted it, else 130."""
    return TERMINATED if _Received.term else INTERRUPTED


def _on_term(signum: int, frame: FrameType | None) -> None:
    if _Received.term:
        return
    _Received.term = True
    raise KeyboardInterrupt


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM interrupts as Ctrl-C does (in the main thread only: signal
    handlers can be set nowhere else; elsewhere the block changes nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _Received.term = False
    previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
