"""Paths a study file names, relative to the study file: scenario files and prompt templates.

A study file names them as its author sees them, next to it; a run stores them absolute, so a
worker, a resumed run and ``diagnose`` find the same files wherever they run from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim2human.scenarios.refs import is_path
from sim2human.simulators.llm_templates import is_template_ref


def beside_study(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """A scenario file or prompt template named by a relative path is the one next to the
    study file (in the study and in its ``quick`` overrides)."""
    out = _prompts_beside(raw, path.parent)
    assert isinstance(out, dict)
    ref = raw.get("scenario")
    if isinstance(ref, str) and is_path(ref) and not Path(ref).expanduser().is_absolute():
        out["scenario"] = str(path.parent / ref)
    if isinstance(quick := raw.get("quick"), dict):
        out["quick"] = beside_study(quick, path)
    return out


def _prompts_beside(value: Any, folder: Path) -> Any:
    """``value`` with every relative template path under a ``prompt`` / ``prompts`` key made
    absolute in ``folder`` (they sit in conditions' simulators and in ``ensemble.llm``)."""
    if isinstance(value, list):
        return [_prompts_beside(v, folder) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _prompts_beside(v, folder) for k, v in value.items()}
    if isinstance(prompt := value.get("prompt"), str):
        out["prompt"] = _beside(prompt, folder)
    if isinstance(prompts := value.get("prompts"), list):
        out["prompts"] = [_beside(p, folder) if isinstance(p, str) else p for p in prompts]
    return out


def _beside(prompt: str, folder: Path) -> str:
    if is_template_ref(prompt) and not Path(prompt).expanduser().is_absolute():
        return str(folder / prompt)
    return prompt
