"""Where the tests find ACI-Bench: ``../shared/data/aci-bench`` beside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

ACI = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci-bench"
needs_aci = pytest.mark.skipif(not ACI.is_dir(), reason=f"ACI-Bench corpus not at {ACI}")


@pytest.fixture()
def aci_env(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the package at the corpus the way a user would (``$SIM2HUMAN_DATA``)."""
    monkeypatch.setenv("SIM2HUMAN_DATA", str(ACI))
    return ACI
