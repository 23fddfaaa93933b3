"""A worker job for the orphan tests, importing nothing heavy (workers start in a second)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def mark_and_sleep(marker: str, seconds: float) -> None:
    """Say this call started, then wait."""
    Path(marker).write_text(str(os.getpid()))
    time.sleep(seconds)
