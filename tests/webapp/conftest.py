"""Fixtures for the call page: a small run directory with policy checkpoints, and a client."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))  # headless_chromium

pytest.importorskip("fastapi")

from sim2human.agents.policy import PolicyAgent  # noqa: E402
from sim2human.config import load_study  # noqa: E402
from sim2human.scenarios.intake import IntakeScenario  # noqa: E402
from sim2human.store import CHECKPOINT  # noqa: E402

ADMIN = "test-admin-token-7f3a9c"


def make_run(root: Path, conditions: int = 2) -> Path:
    """A study run directory as `study` leaves it: config.yaml and one checkpoint per
    condition and seed (untrained policies: these tests are about the page, not the agents)."""
    path = resources.files("sim2human").joinpath("examples", "collapse.yaml")
    with resources.as_file(path) as config:
        cfg = load_study(config, quick=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    scenario = IntakeScenario()
    for c in cfg.conditions[:conditions]:
        for seed in cfg.seeds:
            target = root / "conditions" / c.name / f"seed-{seed}" / CHECKPOINT
            target.parent.mkdir(parents=True, exist_ok=True)
            PolicyAgent(scenario, seed=seed).save(target)
    return root


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("run"))


@pytest.fixture()
def db(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "calls.sqlite"


def answer(profile: dict[str, object], field: str | None) -> str:
    """What a person reading their card types when asked for ``field``."""
    from sim2human.webapp.card import plain

    if field == "red_flag":
        return "Yes, some chest pain." if profile["red_flag"] else "No, none of that."
    if field is None or field not in profile:
        return "Yes, that is right."
    return plain(field, profile[field])  # type: ignore[arg-type]


def opening(profile: dict[str, object]) -> str:
    return f"Hello, I'm calling about my {profile['complaint']}."
