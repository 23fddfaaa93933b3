"""The adaptive report section: plots, table, verdicts and the evolve timeline, from files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim2human.experiments.study.results import StudyResult
from sim2human.report.adaptive import adaptive_section, verdicts


def est(mean: float, half: float = 0.05) -> dict[str, Any]:
    return {"mean": mean, "ci": [mean - half, mean + half], "n": 96}


def row(
    name: str, role: str, worst: float, to: int | None, curve: list[list[float]]
) -> dict[str, Any]:
    return {
        "name": name,
        "role": role,
        "episodes_trained": 1000,
        "train_proxy": est(0.5),
        "train_gold": est(0.4),
        "heldout_proxy": est(0.4),
        "heldout_member_std": 0.1,
        "exploit_rate": 0.0,
        "heldout_gold": est(0.3),
        "heldout_worst_decile": est(worst),
        "episodes_to_uniform_final": to,
        "heldout_curve": curve,
    }


def study(evolve_worst: float, evolve_to: int | None, uniform_to: int = 1000) -> StudyResult:
    rising = [[250, 0.1], [500, 0.2], [750, 0.25], [1000, 0.3]]
    return StudyResult.model_validate(
        {
            "study": "t",
            "scenario": "intake",
            "seeds": [0],
            "wall_seconds": 1.0,
            "conditions": [
                row("plain", "baseline", 0.1, uniform_to, rising),
                row("ensemble-evolve", "candidate", evolve_worst, evolve_to, rising),
            ],
        }
    )


def test_verdicts_state_support_and_its_absence() -> None:
    assert "**Not supported**" in verdicts(study(0.12, None))[-1]
    assert "**Supported**" in verdicts(study(0.3, None))[-1]  # +20 points, CIs apart
    assert "**Supported**" in verdicts(study(0.1, 500))[-1]  # 50% of uniform's episodes
    early = verdicts(study(0.1, 500, uniform_to=250))  # uniform itself plateaued at 25%
    assert "**Not supported**" in early[-1] and any("cannot separate" in v for v in early)


def test_section_files_from_a_run_directory(tmp_path: Path) -> None:
    s = study(0.12, None)
    sub = tmp_path / "conditions" / "ensemble-evolve" / "seed-0"
    sub.mkdir(parents=True)
    events = [
        {
            "kind": "retire",
            "member": "b",
            "update": 1,
            "episodes_seen": 64,
            "reason": "exploited: planted",
        },
        {"kind": "spawn", "member": "c", "update": 1, "episodes_seen": 64, "reason": "mutation"},
    ]
    lines = [
        {"update": 0, "episodes_seen": 32, "shares": {"a": 0.5, "b": 0.5}, "events": []},
        {"update": 1, "episodes_seen": 64, "shares": {"a": 0.2, "c": 0.8}, "events": events},
    ]
    (sub / "sampler.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    text = "\n".join(adaptive_section(s, tmp_path))
    assert "| ensemble-evolve |" in text and "exploited: planted" in text
    for png in ("heldout_gold_vs_episodes", "worst_decile", "sampling_share_ensemble-evolve"):
        assert (tmp_path / "adaptive" / f"{png}.png").stat().st_size > 1000
        assert f"adaptive/{png}.png" in text
    html = (tmp_path / "adaptive" / "adaptive.html").read_text()
    assert "<table>" in html and "exploited: planted" in html


def test_no_section_without_adaptive_columns(tmp_path: Path) -> None:
    plain = study(0.12, None)
    no_baseline = plain.model_copy(
        update={
            "conditions": [c.model_copy(update={"role": "candidate"}) for c in plain.conditions]
        }
    )
    assert adaptive_section(no_baseline, tmp_path) == []  # nothing to compare with
    no_columns = plain.model_copy(
        update={
            "conditions": [
                c.model_copy(update={"heldout_worst_decile": None}) for c in plain.conditions
            ]
        }
    )
    assert adaptive_section(no_columns, tmp_path) == []


def test_candidates_are_judged_against_their_compare_to() -> None:
    s = study(0.3, None)
    third = s.conditions[0].model_copy(update={"name": "other", "role": "baseline"})
    evolve = s.conditions[1].model_copy(update={"compare_to": "other"})
    s = s.model_copy(update={"conditions": [s.conditions[0], third, evolve]})
    lines = verdicts(s)
    assert any("vs `other`" in x for x in lines) and not any("vs `plain`" in x for x in lines)
