"""Fixtures for the call page: a small run directory with policy checkpoints."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))  # headless_chromium
pytest.importorskip("fastapi")


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from webapp_helpers import make_run

    return make_run(tmp_path_factory.mktemp("run"))


@pytest.fixture()
def db(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "calls.sqlite"
