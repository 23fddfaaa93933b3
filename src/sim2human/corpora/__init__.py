"""Human dialogue corpora read into typed transcripts (never copied into the package).

Each corpus module reads its own folder under one data root: ``$SIM2HUMAN_DATA`` (the root, or
the corpus folder itself), else ``../shared/data`` beside the repository (``corpus_dir``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

ENV: Final = "SIM2HUMAN_DATA"
"""The environment variable naming the data root (worker processes inherit it)."""


def corpus_dir(folder: str) -> Path | None:
    """``$SIM2HUMAN_DATA`` (root or the folder itself), else ``../shared/data/<folder>`` beside
    the repository when it exists, else None."""
    env = os.environ.get(ENV)
    if env:
        root = Path(env)
        return root / folder if (root / folder).is_dir() else root
    beside = Path(__file__).resolve().parents[3].parent / "shared" / "data" / folder
    return beside if beside.is_dir() else None
