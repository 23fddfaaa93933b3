"""Every hostile input the issue lists, one named regression test each: exit code 2, one line
naming the file and the problem, no traceback, nothing built or trained."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from reliability_helpers import TINY, assert_one_clear_error, run_cli

from planted_runs import write_sub_run

Cap = pytest.CaptureFixture[str]


def _study(tmp_path: Path, cfg: dict[str, Any] | str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg))
    return path


def _check(capsys: Cap, path: Path, *needles: str) -> None:
    out = path.parent / "out"
    code, err = run_cli(capsys, "study", str(path), "--out", str(out))
    assert_one_clear_error(code, err, *needles)
    assert not out.exists()


def test_duplicate_seeds(tmp_path: Path, capsys: Cap) -> None:
    _check(capsys, _study(tmp_path, {**TINY, "seeds": [0, 0]}), "seeds must be distinct", "[0]")


def test_duplicate_yaml_keys(tmp_path: Path, capsys: Cap) -> None:
    text = yaml.safe_dump(TINY) + "name: again\n"
    _check(capsys, _study(tmp_path, text), "duplicate key 'name'", "line")


def test_non_utf8_config(tmp_path: Path, capsys: Cap) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(yaml.safe_dump(TINY).encode() + b"# caf\xe9\n")
    _check(capsys, path, str(path), "not UTF-8", "0xe9")


def test_utf16_config(tmp_path: Path, capsys: Cap) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(yaml.safe_dump(TINY).encode("utf-16"))
    _check(capsys, path, "UTF-16")


def test_deeply_nested_yaml(tmp_path: Path, capsys: Cap) -> None:
    _check(capsys, _study(tmp_path, "a: " + "[" * 5000 + "]" * 5000 + "\n"), "nested deeper")


def test_billion_laughs(tmp_path: Path, capsys: Cap) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    _check(capsys, _study(tmp_path, "\n".join(lines) + "\n"), "expands", "limit of 100000")


def test_recursive_alias(tmp_path: Path, capsys: Cap) -> None:
    _check(capsys, _study(tmp_path, "a: &a [*a]\n"), "refers to itself")


@pytest.mark.parametrize(
    ("patch", "needles"),
    [
        ({"seeds": [-1]}, ("seeds.0", "greater than or equal to 0")),
        ({"ensemble": {"seed": -3}}, ("ensemble.seed", "greater than or equal to 0")),
        (
            {
                "conditions": [
                    {
                        "name": "f",
                        "sampler": "fixed",
                        "simulator": {"family": "standard", "seed": -1},
                    }
                ]
            },
            ("conditions.0.simulator.seed",),
        ),
        ({"eval": {"bootstrap": 1_000_000_000}}, ("eval.bootstrap", "100000")),
        ({"ensemble": {"members_per_family": 1_000_000_000}}, ("members_per_family", "100")),
        (
            {"train": {"episodes": 1_000_000_000}},
            ("train.episodes", "less than or equal to 10000000"),
        ),
        ({"eval": {"episodes_per_member": 10**7}}, ("eval.episodes_per_member", "10000")),
        ({"seeds": list(range(1001))}, ("seeds", "1000")),
        (
            {"conditions": [{"name": "p", "sampler": "plr", "sampler_args": {"buffer": 10**12}}]},
            ("conditions.0", "sampler_args.buffer", "less than or equal to 100000"),
        ),
    ],
)
def test_bad_values_are_named_with_their_limit(
    tmp_path: Path, capsys: Cap, patch: dict[str, Any], needles: tuple[str, ...]
) -> None:
    _check(capsys, _study(tmp_path, {**TINY, **patch}), *needles)


def test_directory_instead_of_config(tmp_path: Path, capsys: Cap) -> None:
    (tmp_path / "d.yaml").mkdir()
    _check(capsys, tmp_path / "d.yaml", "is a directory")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_config_does_not_hang(tmp_path: Path, capsys: Cap) -> None:
    os.mkfifo(tmp_path / "f.yaml")
    _check(capsys, tmp_path / "f.yaml", "FIFO")


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_device_config(capsys: Cap) -> None:
    code, err = run_cli(capsys, "study", "/dev/null", "--check")
    assert_one_clear_error(code, err, "is a device")


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_config(tmp_path: Path, capsys: Cap) -> None:
    path = _study(tmp_path, TINY)
    path.chmod(0)
    _check(capsys, path, "permission denied")


def test_out_is_a_file(tmp_path: Path, capsys: Cap) -> None:
    (tmp_path / "taken").write_text("mine")
    code, err = run_cli(
        capsys, "study", str(_study(tmp_path, TINY)), "--out", str(tmp_path / "taken")
    )
    assert_one_clear_error(code, err, "expected a run directory")
    assert (tmp_path / "taken").read_text() == "mine"


def test_check_validates_and_runs_nothing(tmp_path: Path, capsys: Cap) -> None:
    code, err = run_cli(
        capsys, "study", str(_study(tmp_path, TINY)), "--out", str(tmp_path / "o"), "--check"
    )
    assert code == 0 and "valid" in err
    assert not (tmp_path / "o").exists()


def _planted_study(root: Path) -> Path:
    write_sub_run(root / "conditions" / "frozen-trigger" / "seed-0", exploit=True, per_member=2)
    write_sub_run(root / "conditions" / "scripted-like" / "seed-0", exploit=False, per_member=2)
    return root


@pytest.mark.parametrize("payload", [[1, 2], "text", 3, None])
def test_study_json_that_is_not_an_object(tmp_path: Path, capsys: Cap, payload: Any) -> None:
    root = _planted_study(tmp_path / "run")
    (root / "study.json").write_text(json.dumps(payload))
    code, err = run_cli(capsys, "diagnose", str(root))
    assert code == 0 and "Traceback" not in err
    assert "must be a JSON object" in err


def test_config_json_that_is_not_an_object(tmp_path: Path, capsys: Cap) -> None:
    sub = write_sub_run(tmp_path / "sub", exploit=False, per_member=2)
    (sub / "config.json").write_text("[1, 2, 3]")
    code, err = run_cli(capsys, "diagnose", str(sub))
    assert code == 0 and "Traceback" not in err and "must be a JSON object" in err


def test_summary_json_that_is_a_directory(tmp_path: Path, capsys: Cap) -> None:
    sub = write_sub_run(tmp_path / "sub", exploit=False, per_member=2)
    (sub / "summary.json").unlink()
    (sub / "summary.json").mkdir()
    code, err = run_cli(capsys, "diagnose", str(sub))
    assert "Traceback" not in err and code in (0, 2)


def test_run_dir_that_is_a_file(tmp_path: Path, capsys: Cap) -> None:
    (tmp_path / "f").write_text("x")
    for command in ("report", "diagnose", "stress"):
        code, err = run_cli(capsys, command, str(tmp_path / "f"))
        assert_one_clear_error(code, err, str(tmp_path / "f"))


def test_garbage_checkpoint_given_to_stress(tmp_path: Path, capsys: Cap) -> None:
    from sim2human.experiments.study.config import parse_study

    run = tmp_path / "run"
    sub = run / "conditions" / "ensemble-uniform"
    cfg = parse_study({**TINY, "seeds": [0]})
    for seed in cfg.seeds:
        (sub / f"seed-{seed}").mkdir(parents=True)
        (sub / f"seed-{seed}" / "checkpoint.pt").write_bytes(b"garbage, not a checkpoint")
    (run / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    code, err = run_cli(capsys, "stress", str(run), "--no-search", "--workers", "1")
    assert_one_clear_error(code, err, "checkpoint.pt", "not a sim2human checkpoint")
    assert not (run / "stress.json").exists()


def test_stored_config_with_duplicate_keys_given_to_stress(tmp_path: Path, capsys: Cap) -> None:
    (tmp_path / "config.yaml").write_text("name: a\nname: b\n")
    code, err = run_cli(capsys, "stress", str(tmp_path))
    assert_one_clear_error(code, err, "duplicate key 'name'")


def test_model_serve_port_out_of_range(capsys: Cap) -> None:
    for port in ("70000", "0", "-1"):
        code, err = run_cli(capsys, "model", "serve", "--port", port)
        assert code == 2 and "Traceback" not in err and "--port" in err


def test_eval_agent_refuses_an_out_that_already_holds_episodes(tmp_path: Path, capsys: Cap) -> None:
    out = tmp_path / "eval"
    out.mkdir()
    (out / "episodes.jsonl").write_text('{"id": "x"}\n')
    code, err = run_cli(
        capsys,
        "eval-agent",
        str(_study(tmp_path, TINY)),
        "--out",
        str(out),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    )
    assert_one_clear_error(code, err, "already holds an evaluation")
    assert (out / "episodes.jsonl").read_text() == '{"id": "x"}\n'


def test_eval_agent_system_prompt_that_is_a_directory(tmp_path: Path, capsys: Cap) -> None:
    code, err = run_cli(
        capsys, "eval-agent", str(_study(tmp_path, TINY)), "--system-prompt", str(tmp_path)
    )
    assert_one_clear_error(code, err, "is a directory", "system prompt")


def test_report_for_one_condition_is_written_beside_the_full_one(
    tmp_path: Path, capsys: Cap
) -> None:
    root = _planted_study(tmp_path / "run")
    full = {n: f"the full {n}" for n in ("report.html", "report.md", "report.json")}
    for name, text in full.items():
        (root / name).write_text(text)
    assert run_cli(capsys, "report", str(root), "--condition", "scripted-like")[0] == 0
    assert {n: (root / n).read_text() for n in full} == full  # untouched
    for ext in ("html", "md", "json"):
        assert (root / f"report.scripted-like.{ext}").exists()
    one = json.loads((root / "report.scripted-like.json").read_text())
    assert [c["name"] for c in one["conditions"]] == ["scripted-like"]
