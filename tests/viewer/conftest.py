"""The viewer's fixtures (``viewer_helpers``) and the headless Chromium driver's folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))  # headless_chromium
sys.path.insert(0, str(Path(__file__).resolve().parent))  # viewer_helpers

from viewer_helpers import make_study


@pytest.fixture(scope="session")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return make_study(tmp_path_factory.mktemp("viewer-study"))
