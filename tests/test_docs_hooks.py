"""The study-file reference the docs build generates (``docs/hooks/study_fields.py``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from pydantic import BaseModel

from sim2human.experiments.study.config import Condition, StudyConfig

HOOK = Path(__file__).resolve().parent.parent / "docs" / "hooks" / "study_fields.py"


def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("study_fields", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def every_model(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[type[BaseModel]]:
    seen.add(model)
    for info in model.model_fields.values():
        for inner in hook()._models(info.annotation):
            if inner not in seen:
                every_model(inner, seen)
    return seen


def test_every_key_of_every_model_is_in_the_reference() -> None:
    text = hook().reference()
    models = every_model(StudyConfig, set())
    assert len(models) >= 6
    for model in models:
        section = text.split(f"### {model.__name__}\n")[1].split("\n### ")[0]
        for name, info in model.model_fields.items():
            assert f"| `{info.alias or name}` |" in section, (model.__name__, name)


def test_attribute_docstrings_and_bounds_are_read() -> None:
    text = hook().reference()
    row = next(ln for ln in text.splitlines() if ln.startswith("| `perturb_ramp` |"))
    assert ">= 0, <= 1" in row
    assert "over this share of the training episodes every range opens" in row
    assert "A name in ``samplers.build.SAMPLERS``." in text
    assert hook()._docstrings(Condition)["perturb_ramp"].startswith("A curriculum for")


def test_the_page_marker_is_replaced() -> None:
    out = hook().on_page_markdown("# Study files\n\n<!-- study-fields -->\n", page=None)
    assert "<!-- study-fields -->" not in out and "### StudyConfig" in out
    assert hook().on_page_markdown("no marker", page=None) == "no marker"
