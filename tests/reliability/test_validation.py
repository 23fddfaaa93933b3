"""Validation that means it: the audit's cases of a number or a setting that passed the schema
and ``--check`` and then crashed or hung a run (``reliability-audit.md`` finding 3, C27, C59,
C65, the ``--check`` misses and the embedded-endpoint error), each refused at load with one line
naming where, by ``study --check`` and by the real run alike (which then writes nothing)."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from reliability_helpers import TINY, assert_one_clear_error, run_cli

Cap = pytest.CaptureFixture[str]

ENDPOINT = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
KNOBS: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("train.lr", {"train": {"lr": None}}, ("train", "lr")),
    ("train.clip", {"train": {"clip": None}}, ("train", "clip")),
    ("train.ent_coef", {"train": {"ent_coef": None}}, ("train", "ent_coef")),
    ("train.vf_coef", {"train": {"vf_coef": None}}, ("train", "vf_coef")),
    ("train.max_grad_norm", {"train": {"max_grad_norm": None}}, ("train", "max_grad_norm")),
    (
        "must.min_share",
        {"conditions": [{"name": "m", "sampler": "must", "sampler_args": {"min_share": None}}]},
        ("conditions", 0, "sampler_args", "min_share"),
    ),
    (
        "plr.beta",
        {"conditions": [{"name": "p", "sampler": "plr", "sampler_args": {"beta": None}}]},
        ("conditions", 0, "sampler_args", "beta"),
    ),
    (
        "evolve.mutation_scale",
        {
            "conditions": [
                {"name": "e", "sampler": "evolve", "sampler_args": {"mutation_scale": None}}
            ]
        },
        ("conditions", 0, "sampler_args", "mutation_scale"),
    ),
    (
        "judging.lam",
        {"conditions": [{"name": "j", "sampler": "uniform", "judging": {"lam": None}}]},
        ("conditions", 0, "judging", "lam"),
    ),
    (
        "endpoint backoff_s",
        {"llm": {"endpoints": {"e": {**ENDPOINT, "backoff_s": None}}}},
        ("llm", "endpoints", "e", "backoff_s"),
    ),
    (
        "endpoint timeout_s",
        {"llm": {"endpoints": {"e": {**ENDPOINT, "timeout_s": None}}}},
        ("llm", "endpoints", "e", "timeout_s"),
    ),
]
"""The eleven knobs whose infinity crashed a worker (audit §1a, §2 item 3)."""


def _one_flag_error(code: int, err: str, *needles: str) -> None:
    """typer's usage error: exit 2, one ``Error:`` line naming the flag, no traceback."""
    assert code == 2, err
    assert "Traceback" not in err, err
    assert len([line for line in err.splitlines() if line.lower().startswith("error:")]) == 1
    for needle in needles:
        assert needle in err, (needle, err)


def _config(patch: dict[str, Any]) -> dict[str, Any]:
    cfg = copy.deepcopy({**TINY, "seeds": [0]})
    for key, value in patch.items():
        cfg[key] = {**cfg[key], **value} if isinstance(value, dict) and key in cfg else value
    return cfg


def _put(cfg: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _write(tmp_path: Path, cfg: dict[str, Any] | str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg, sort_keys=False))
    return path


def _refused_twice(capsys: Cap, path: Path, *needles: str) -> None:
    """``--check`` and the real run both refuse ``path`` in one line; the run writes nothing."""
    out = path.parent / "out"
    code, err = run_cli(capsys, "study", str(path), "--check")
    assert_one_clear_error(code, err, *needles)
    code, err = run_cli(capsys, "study", str(path), "--out", str(out), "--workers", "1")
    assert_one_clear_error(code, err, *needles)
    assert not out.exists()


@pytest.mark.parametrize("value", [math.inf, math.nan, -math.inf], ids=["inf", "nan", "-inf"])
@pytest.mark.parametrize(("knob", "patch", "where"), KNOBS, ids=[k[0] for k in KNOBS])
def test_non_finite_knobs_are_refused_at_load(
    tmp_path: Path,
    capsys: Cap,
    knob: str,
    patch: dict[str, Any],
    where: tuple[Any, ...],
    value: float,
) -> None:
    cfg = _config(patch)
    _put(cfg, where, value)
    _refused_twice(capsys, _write(tmp_path, cfg), str(where[-1]))


@pytest.mark.parametrize(
    ("knob", "patch", "where", "needle"),
    [
        ("train.lr 1e30", {}, ("train", "lr"), "less than or equal to 1"),
        ("timeout_s 1e30", KNOBS[-1][1], KNOBS[-1][2], "less than or equal to 3600"),
        ("backoff_s 1e30", KNOBS[-2][1], KNOBS[-2][2], "less than or equal to 600"),
        ("plr.beta 1e30", KNOBS[6][1], KNOBS[6][2], "less than or equal to 100"),
        ("clip 1e30", {}, ("train", "clip"), "less than or equal to 10"),
    ],
    ids=["lr", "timeout_s", "backoff_s", "plr.beta", "clip"],
)
def test_huge_knobs_are_refused_at_load(
    tmp_path: Path,
    capsys: Cap,
    knob: str,
    patch: dict[str, Any],
    where: tuple[Any, ...],
    needle: str,
) -> None:
    """``lr: 1e30`` made NaN mid-update; ``timeout_s: 1e30`` waited for ever."""
    cfg = _config(patch)
    _put(cfg, where, 1e30)
    _refused_twice(capsys, _write(tmp_path, cfg), needle)


def test_heldout_families_that_are_trained_on_fail_check(tmp_path: Path, capsys: Cap) -> None:
    """C27: passed ``--check`` and was refused only once the run had started."""
    cfg = _config({"ensemble": {"train": ["cooperative", "chatty"], "heldout": ["chatty"]}})
    _refused_twice(capsys, _write(tmp_path, cfg), "['chatty']", "both train and held-out")


def test_a_300_character_condition_name_fails_check(tmp_path: Path, capsys: Cap) -> None:
    """C59: a worker died with ``OSError: File name too long``."""
    cfg = _config({"conditions": [{"name": "c" * 300, "sampler": "uniform"}]})
    _refused_twice(capsys, _write(tmp_path, cfg), "conditions.0.name", "at most 100 characters")


def test_a_300_character_study_name_fails_check(tmp_path: Path, capsys: Cap) -> None:
    _refused_twice(capsys, _write(tmp_path, _config({"name": "s" * 300})), "name", "at most 100")


def test_a_directory_as_the_llm_cache_fails_check(tmp_path: Path, capsys: Cap) -> None:
    """C65: SQLite raised ``OperationalError`` from a worker."""
    (tmp_path / "cache").mkdir()
    cfg = _config({"llm": {"cache": str(tmp_path / "cache")}})
    _refused_twice(capsys, _write(tmp_path, cfg), "llm.cache", "is a directory")


def test_a_symlink_loop_as_out_fails_check(tmp_path: Path, capsys: Cap) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    path = _write(tmp_path, _config({}))
    code, err = run_cli(capsys, "study", str(path), "--out", str(loop), "--check")
    assert_one_clear_error(code, err, "loop", "symbolic links")


@pytest.mark.parametrize(
    ("entry", "needles"),
    [
        ({"embedded": True, "parallel": 100}, ("llm.endpoints.local.parallel", "64")),
        ({"embedded": True, "threads": 10**30}, ("llm.endpoints.local.threads",)),
        ({"embedded": True, "ctx_per_slot": 10**6}, ("llm.endpoints.local.ctx_per_slot",)),
        ({"embedded": True, "base_url": "x"}, ("llm.endpoints.local.base_url", "unknown key")),
        ({"model": "m"}, ("llm.endpoints.local.base_url", "Field required")),
        ("just text", ("llm.endpoints.local", "an endpoint is a mapping")),
    ],
)
def test_endpoint_errors_name_the_field_not_the_union(
    tmp_path: Path, capsys: Cap, entry: Any, needles: tuple[str, ...]
) -> None:
    """The error named ``EndpointConfig.base_url: Field required`` for an embedded entry."""
    path = _write(tmp_path, _config({"llm": {"endpoints": {"local": entry}}}))
    code, err = run_cli(capsys, "study", str(path), "--check")
    assert_one_clear_error(code, err, *needles)
    assert "EndpointConfig" not in err and "Embedded" not in err


def test_must_floor_above_what_members_can_share_fails_check(tmp_path: Path, capsys: Cap) -> None:
    """0.5 x 3 training members: the sampler refused it only in the worker."""
    must = {"name": "m", "sampler": "must", "sampler_args": {"min_share": 0.5}}
    _refused_twice(capsys, _write(tmp_path, _config({"conditions": [must]})), "min_share 0.5")


def test_evolve_min_above_max_members_fails_check(tmp_path: Path, capsys: Cap) -> None:
    evolve = {
        "name": "e",
        "sampler": "evolve",
        "sampler_args": {"min_members": 9, "max_members": 4},
    }
    cfg = _config({"conditions": [evolve]})
    _refused_twice(capsys, _write(tmp_path, cfg), "min_members 9 is above max_members 4")


def test_quick_overrides_are_validated_without_quick(tmp_path: Path, capsys: Cap) -> None:
    """A NaN there was stored, read back by the worker as null: the configs then differed."""
    cfg = _config({"quick": {"train": {"lr": math.nan}}})
    _refused_twice(capsys, _write(tmp_path, cfg), "quick overrides", "train.lr", "finite")


def test_the_audit_repro_is_one_line(tmp_path: Path, capsys: Cap) -> None:
    """Finding 3's repro, as written: 'valid', then a traceback from the worker."""
    text = (
        "name: t\nseeds: [0]\ntrain: {episodes: 64, lr: .inf}\n"
        "conditions: [{name: u, sampler: uniform}]\n"
    )
    _refused_twice(capsys, _write(tmp_path, text), "train.lr", "finite number")


FLAGS = [
    ("eval-agent", "--timeout-s"),
    ("eval-agent", "--temperature"),
    ("diagnose", "--max-gap"),
    ("diagnose", "--max-drop"),
    ("diagnose", "--max-loss"),
    ("export", "--min-gold"),
]


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e30"])
@pytest.mark.parametrize(("command", "flag"), FLAGS, ids=[f for _, f in FLAGS])
def test_float_flags_refuse_non_finite_and_huge_values(
    tmp_path: Path, capsys: Cap, command: str, flag: str, value: str
) -> None:
    """``eval-agent --timeout-s inf`` never returned against a hanging endpoint."""
    target = _write(tmp_path, _config({})) if command == "eval-agent" else tmp_path
    code, err = run_cli(capsys, command, str(target), flag, value)
    _one_flag_error(code, err, flag)
    assert ("not a finite number" if value != "1e30" else "is outside") in err


@pytest.mark.parametrize(
    "argv",
    [
        ["model", "serve", "--parallel", "100000"],
        ["model", "serve", "--threads", "100000"],
        ["model", "bench", "--max-tokens", "10000000"],
        ["human", "serve", "RUN", "--per-minute", "10000000000"],
        ["human", "play", "RUN", "--agent", "scripted", "--seed", "-1"],
        ["fidelity", "RUN", "--cap", "10000000000"],
        ["eval-agent", "CFG", "--max-tokens", "10000000"],
    ],
)
def test_size_flags_have_an_upper_bound(tmp_path: Path, capsys: Cap, argv: list[str]) -> None:
    """``model serve --parallel 100000`` killed the process from inside llama.cpp."""
    cfg = _write(tmp_path, _config({}))
    argv = [str(tmp_path) if a == "RUN" else str(cfg) if a == "CFG" else a for a in argv]
    code, err = run_cli(capsys, *argv)
    _one_flag_error(code, err, argv[-2])


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e30"])
def test_stress_threshold_refuses_non_finite_values(
    tmp_path: Path, capsys: Cap, value: str
) -> None:
    """Checked by ``SearchConfig`` before any work (``0 < threshold <= 1``, false for NaN)."""
    code, err = run_cli(capsys, "stress", str(tmp_path), "--threshold", value)
    assert_one_clear_error(code, err, "threshold must be in (0, 1]")
