"""What a study file says is what runs, and the small silent ones (audit 2026-12 findings 4
and 10): an endpoint defined under ``llm.endpoints`` that no member uses is refused by
``study --check`` (its members used to play on the embedded model with 0 requests to it);
``llm`` blocks that default to ``local`` beside other endpoints are said; ``compare`` across
two scenarios says so; redaction leaves YAML's own "found" alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from reliability_helpers import assert_one_clear_error, run_cli

from planted_runs import write_sub_run
from sim2human.redact import REDACTED, redact
from sim2human.store.layout import EPISODES

ENDPOINT = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout_s": 1, "max_retries": 0}


def llm_study(train: dict[str, Any], heldout: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "wiring",
        "seeds": [0],
        "train": {"episodes": 8, "batch_episodes": 8, "epochs": 1, "max_turns": 4},
        "ensemble": {
            "train": ["cooperative"],
            "heldout": ["terse-guarded"],
            "members_per_family": 1,
            "llm": {
                "train": {"families": ["chatty"], "prompts": ["plain"], "members": 1, **train},
                "heldout": {
                    "families": ["noisy-line"],
                    "prompts": ["story"],
                    "members": 1,
                    **heldout,
                },
            },
        },
        "eval": {"episodes_per_member": 1, "llm_episodes_per_member": 1, "bootstrap": 100},
        "llm": {"endpoints": {"e": ENDPOINT}, "cache": None},
        "conditions": [{"name": "uniform", "sampler": "uniform", "llm_share": 0.5}],
    }


def test_an_endpoint_no_member_uses_is_refused_at_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump(llm_study({}, {})))
    code, err = run_cli(capsys, "study", str(study), "--check")
    assert_one_clear_error(code, err, "llm.endpoints.e: no member uses it", "play on local")


def test_members_defaulting_to_local_beside_another_endpoint_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump(llm_study({}, {"endpoint": "e"})))
    code, err = run_cli(capsys, "study", str(study), "--check")
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "ensemble.llm.train name no endpoint" in notes[0], err
    study.write_text(yaml.safe_dump(llm_study({"endpoint": "local"}, {"endpoint": "e"})))
    code, err = run_cli(capsys, "study", str(study), "--check")
    assert code == 0 and "note:" not in err  # said explicitly: meant


def test_compare_across_two_scenarios_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_sub_run(tmp_path / "a", exploit=False, per_member=2)
    b = write_sub_run(tmp_path / "b", exploit=False, per_member=2)
    log = b / EPISODES
    log.write_text(log.read_text().replace('"scenario":"intake"', '"scenario":"pizza"'))
    code, err = run_cli(capsys, "compare", str(a), str(b), "--out", str(tmp_path / "c.html"))
    out = capsys.readouterr().out + err
    assert code == 0
    assert "two scenarios" in out and "'intake'" in out and "'pizza'" in out
    assert "two scenarios" in (tmp_path / "c.html").read_text()


def test_redaction_leaves_yamls_own_found_alone() -> None:
    text = "while scanning for the next token: found character '\\t' that cannot start any token"
    assert redact(text) == text
    assert redact("token: found1234 password: hunter2") == f"token: {REDACTED} password: {REDACTED}"
