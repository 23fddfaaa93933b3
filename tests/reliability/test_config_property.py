"""Property-based: whole study configs with hostile numbers, through the real loader and the
real worker entry (not ``--check`` alone).

Each example starts from a config that sets every numeric knob of a study (one condition per
sampler, ensemble judging, a fixed simulator, perturbations with a ramp, endpoints of both kinds,
``quick`` overrides), puts hostile numbers (NaN, +-inf, 1e30, negatives, huge integers, and
ordinary ones) at one to three of its numeric paths, writes it as YAML and loads it with
``load_study``. The property: either the loader refuses with one ``ConfigError`` line (and
``study --check`` exits 2), or ``study --check`` exits 0 and the worker path runs without an
exception: the round trip a worker does (``model_dump_json`` -> ``model_validate_json``), then
``runner._work``, the function a worker process calls, on a sub-run of the conditions involved,
in-process with a tiny budget. (Configs with ``llm`` members stop short of playing: they need
an endpoint; their members are drawn as a worker would draw them.)

Valid but huge sizes are capped for the run only (``CAPS``): bounding them is the loader's job,
checked above; running them is not this test's.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sim2human.cli.app import main
from sim2human.errors import ConfigError
from sim2human.experiments.study.config import StudyConfig, _merge, load_study, parse_study
from sim2human.experiments.study.runner import _work
from sim2human.experiments.study.world import StudyWorld

RUNNABLE: dict[str, Any] = {
    "name": "prop",
    "seeds": [0],
    "train": {
        "episodes": 8,
        "batch_episodes": 4,
        "epochs": 1,
        "minibatch": 64,
        "lr": 1e-3,
        "gamma": 1.0,
        "gae_lambda": 0.95,
        "clip": 0.2,
        "ent_coef": 0.01,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "max_turns": 12,
        "eval_every": 1,
    },
    "ensemble": {"members_per_family": 1, "seed": 0, "members": {"chatty": 1}},
    "eval": {
        "episodes_per_member": 1,
        "llm_episodes_per_member": 1,
        "bootstrap": 100,
        "curve_episodes_per_member": 1,
    },
    "conditions": [
        {"name": "uniform", "sampler": "uniform", "episodes": 8, "batch_episodes": 4},
        {
            "name": "must",
            "sampler": "must",
            "sampler_args": {
                "warmup_episodes": 4,
                "every_episodes": 4,
                "window": 8,
                "tau": 0.75,
                "min_share": 0.1,
            },
        },
        {
            "name": "plr",
            "sampler": "plr",
            "sampler_args": {
                "beta": 0.1,
                "rho": 0.1,
                "replay_prob": 0.5,
                "buffer": 8,
                "min_levels": 2,
            },
        },
        {
            "name": "evolve",
            "sampler": "evolve",
            "sampler_args": {
                "every_updates": 1,
                "window": 4,
                "min_episodes": 2,
                "judges": 2,
                "exploit_threshold": 0.15,
                "narrowing_weight": 0.25,
                "mastered_threshold": 0.2,
                "max_members": 4,
                "min_members": 2,
                "spawn_per_round": 1,
                "retire_per_round": 1,
                "mutation_scale": 0.12,
                "snapshot_share": 0.2,
                "max_snapshots": 2,
                "solvable_episodes": 2,
                "min_solvable": 0.25,
                "tries": 2,
            },
        },
        {"name": "judged", "sampler": "uniform", "judging": {"k": 2, "lam": 1.0}},
        {
            "name": "fixed",
            "sampler": "fixed",
            "simulator": {"family": "cooperative", "seed": 3, "capacity": 0.5, "temperature": 1.0},
        },
        {
            "name": "perturbed",
            "sampler": "randomized",
            "perturb": {"typos": [0.0, 0.3]},
            "perturb_ramp": 0.5,
        },
    ],
    "llm": {
        "endpoints": {
            "local": {"embedded": True, "parallel": 2, "threads": 1, "ctx_per_slot": 1024},
        },
        "cache": None,
        "conversations": 4,
    },
    "quick": {"train": {"episodes": 8, "lr": 2e-3}, "eval": {"episodes_per_member": 1}},
}
"""Every condition here runs without an endpoint: the embedded one is configured only (an
endpoint no member uses is refused: ``remote`` is ``WITH_LLM``'s)."""
REMOTE: dict[str, Any] = {
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "timeout_s": 5.0,
    "max_retries": 1,
    "max_concurrency": 2,
    "backoff_s": 0.1,
    "backoff_max_s": 1.0,
}

WITH_LLM: dict[str, Any] = {
    **copy.deepcopy(RUNNABLE),
    "conditions": [
        {
            "name": "llm-fixed",
            "sampler": "fixed",
            "simulator": {
                "family": "chatty",
                "temperature": 0.5,
                "llm": {
                    "endpoint": "remote",
                    "top_p": 0.9,
                    "max_tokens": 24,
                    "guard_retries": 1,
                    "history": 2,
                    "cards": 4,
                },
            },
        },
        {"name": "mixed", "sampler": "uniform", "llm_share": 0.25, "llm_block": 2},
    ],
}
WITH_LLM["llm"]["endpoints"]["remote"] = copy.deepcopy(REMOTE)
WITH_LLM["ensemble"] = {
    **RUNNABLE["ensemble"],
    "llm": {
        "train": {
            "families": ["cooperative"],
            "members": 2,
            "temperature": [0.0, 0.7],
            "top_p": [0.9, 1.0],
            "max_tokens": 24,
            "endpoint": "remote",
            "guard_retries": 1,
            "history": 1,
        },
        "heldout": {
            "families": ["terse-guarded"],
            "prompts": ["story"],
            "members": 1,
            "temperature": [0.2, 0.2],
        },
    },
}

CAPS: dict[str, int] = {
    "train.episodes": 8,
    "train.batch_episodes": 4,
    "train.epochs": 2,
    "train.minibatch": 64,
    "train.max_turns": 12,
    "ensemble.members_per_family": 1,
    "ensemble.members.chatty": 1,
    "eval.episodes_per_member": 1,
    "eval.curve_episodes_per_member": 1,
    "eval.bootstrap": 100,
    "episodes": 8,
    "batch_episodes": 4,
    "judges": 2,
    "k": 2,
    "solvable_episodes": 2,
    "tries": 2,
    "spawn_per_round": 1,
    "max_members": 4,
}
"""Sizes the run is capped at (dotted paths, or a key under a condition or its settings)."""


Path_ = tuple[Any, ...]
"""Keys and indices from the top of a config to one value."""
Case = tuple[str, dict[str, Any], list[Path_], int]
"""(base name, hostile config, the paths changed, the condition to run if none was)."""


def numeric_paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path to a number (not a bool) in ``node``."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in numeric_paths(v, (*prefix, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in numeric_paths(v, (*prefix, i))]
    return [prefix] if isinstance(node, int | float) and not isinstance(node, bool) else []


def _get(cfg: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        cfg = cfg[key]
    return cfg


def _set(cfg: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


BASES = {"runnable": RUNNABLE, "llm": WITH_LLM}
PATHS = {name: numeric_paths(base) for name, base in BASES.items()}
FLOATS = {
    name: [p for p in paths if isinstance(_get(BASES[name], p), float)]
    for name, paths in PATHS.items()
}
INTS = {name: [p for p in paths if p not in FLOATS[name]] for name, paths in PATHS.items()}
HOSTILE = st.one_of(
    st.just(math.inf),
    st.just(math.nan),
    st.just(-math.inf),
    st.sampled_from([1e30, -1e30, 1e308, -1, -1.0, 0, 0.0, -0.0, 5e-324, 1e-300]),
    st.sampled_from([2**63, 10**30, -(2**63), 2**31, 10**9, 10**7 + 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0.0, max_value=2.0),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.integers(min_value=0, max_value=20),
    st.integers(min_value=1, max_value=4),
)
"""Non-finite numbers often (the crash they caused needs one at a float knob), ordinary ones
as often, so that many examples get past the loader to the worker."""


@st.composite
def hostile_configs(draw: st.DrawFn) -> Case:
    base = draw(st.sampled_from(["runnable", "runnable", "llm"]))  # failures shrink to a run
    cfg = copy.deepcopy(BASES[base])
    paths = []
    for _ in range(draw(st.integers(1, 2))):
        path = draw(st.sampled_from(FLOATS[base]) | st.sampled_from(INTS[base]))
        _set(cfg, path, draw(HOSTILE))
        paths.append(path)
    return base, cfg, paths, draw(st.integers(0, len(cfg["conditions"]) - 1))


def _capped(node: Any, prefix: str = "") -> Any:
    """``node`` with every size in ``CAPS`` cut down to its cap (NaN and other junk kept)."""
    if isinstance(node, dict):
        return {k: _capped(v, f"{prefix}{k}.") for k, v in node.items()}
    if isinstance(node, list):
        return [_capped(v, f"{prefix}{i}.") for i, v in enumerate(node)]
    path = prefix.rstrip(".")
    cap = CAPS.get(path, CAPS.get(path.rsplit(".", 1)[-1]) if "conditions" in path else None)
    if cap is not None and isinstance(node, int | float) and not isinstance(node, bool):
        return cap if node > cap else node  # 1e6 is an integer to pydantic too; NaN stays
    return node


def _conditions_to_run(cfg: StudyConfig, paths: list[Path_], pick: int) -> list[str]:
    """The conditions a hostile value sits in (two at most), else the one drawn."""
    touched = sorted({p[1] for p in paths if p[0] == "conditions" and len(p) > 2})
    return [cfg.conditions[i].name for i in (touched[:2] or [pick])]


@pytest.fixture(scope="module")
def work_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("config-property")


def _refused(err: ConfigError, path: Path, quick: bool, capsys: pytest.CaptureFixture[str]) -> None:
    message = str(err)
    assert "\n" not in message and message.startswith(str(path)), message
    assert "pydantic" not in message, message
    capsys.readouterr()
    assert main(["study", str(path), "--check"] + ["--quick"] * quick) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, errors


def _worker_path(base: str, raw: dict[str, Any], cfg: StudyConfig, case: Case, out: Path) -> None:
    """What a worker does with ``cfg``: re-validate its JSON, then run sub-runs through
    ``runner._work`` (or, with ``llm`` members, draw the world and each condition's sampler)."""
    if base == "llm":
        again = StudyConfig.model_validate_json(cfg.model_dump_json())
        assert again == cfg
        world = StudyWorld.build(again)
        for c in again.conditions:
            world.sampler(c, 0, episodes=8)
        return
    small = parse_study(_capped(raw), "capped")  # the hostile numbers kept, the sizes cut
    config_json = small.model_dump_json()
    for i, name in enumerate(_conditions_to_run(small, case[2], case[3])):
        _work(config_json, "condition", name, 0, str(out / f"sub-{i}"))
    assert StudyConfig.model_validate_json(config_json) == small  # what --resume compares


@settings(
    max_examples=100,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=hostile_configs(), quick=st.booleans())
def test_loader_refuses_or_the_worker_runs(
    case: Case,
    quick: bool,
    work_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, raw = case[0], case[1]
    case_dir = Path(tempfile.mkdtemp(dir=work_root))
    path = case_dir / "study.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    try:
        cfg = load_study(path, quick=quick)
    except ConfigError as err:
        event("refused by the loader")
        _refused(err, path, quick, capsys)
        return
    event(f"accepted: {base} worker path")
    capsys.readouterr()
    assert main(["study", str(path), "--check"] + ["--quick"] * quick) == 0, capsys.readouterr()
    effective = _merge(raw, raw["quick"]) if quick else raw
    _worker_path(base, effective, cfg, case, case_dir / "run")


def test_the_bases_run() -> None:
    """Both starting configs load as they are (else every example would only be refused)."""
    for base in BASES.values():
        parse_study(json.loads(json.dumps(base)), "base")
