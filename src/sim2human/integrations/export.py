"""``sim2human export``: stored episodes in the formats other trainers read.

- ``openai-chat``: JSONL, one episode a line: ``messages`` (system, then the caller as ``user``
  and the agent as ``assistant``) with proxy, gold, member, family, kind, split ... for SFT and
  DPO pipelines.
- ``art``: JSONL of ``art.Trajectory`` records (``messages_and_choices``, ``reward`` = proxy,
  ``metrics`` with gold, ``metadata``); ``art.Trajectory.model_validate`` reads each line.
- ``sb3-buffer``: an ``.npz`` of transitions for Stable-Baselines3's replay buffers
  (``observations``, ``actions``, ``rewards``, ``next_observations``, ``dones``, plus
  ``episode`` indices): act-level episodes only, observations rebuilt by replaying each
  transcript through the scenario's extractor and the policy featuriser; the reward is the proxy
  on the last step, so every episode's return is its proxy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from sim2human import outputs
from sim2human.agents.base import AgentTurn
from sim2human.agents.features import Featuriser
from sim2human.errors import RunDirError, UsageError
from sim2human.integrations.chat import chat_row, labels
from sim2human.rollout.conversation import MAX_TURNS, Conversation, Job
from sim2human.scenarios.base import Scenario
from sim2human.scenarios.catalog import get_scenario
from sim2human.simulators.base import UserTurn
from sim2human.store.layout import CONFIG, EPISODES, export_name
from sim2human.store.rundir import read_episodes
from sim2human.types import Episode

Format = Literal["openai-chat", "art", "sb3-buffer"]
FORMATS: tuple[Format, ...] = ("openai-chat", "art", "sb3-buffer")
SUFFIX = {"openai-chat": ".jsonl", "art": ".jsonl", "sb3-buffer": ".npz"}


def load(run_dir: Path, split: str = "all", min_gold: float | None = None) -> list[Episode]:
    """Every episode under ``run_dir`` (a study or a sub-run), filtered."""
    return [e for e, _ in load_with_limits(run_dir, split, min_gold)]


def turn_limit(sub_run: Path) -> int:
    """The turn limit a sub-run played with (its ``config.json``), which observations show."""
    try:
        cfg = json.loads((sub_run / CONFIG).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return MAX_TURNS
    limit = cfg.get("max_turns") or (cfg.get("train") or {}).get("max_turns")
    return int(limit) if isinstance(limit, int) else MAX_TURNS


def load_with_limits(
    run_dir: Path, split: str = "all", min_gold: float | None = None
) -> list[tuple[Episode, int]]:
    """(episode, its turn limit) for every episode under ``run_dir``, filtered."""
    if split not in ("all", "train", "heldout"):
        raise UsageError(f"--split must be all, train or heldout, not {split!r}")
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: no such run directory")
    files = sorted(run_dir.rglob(EPISODES))
    if not files:
        raise RunDirError(f"{run_dir}: no {EPISODES} in it or below it")
    episodes = [(e, turn_limit(f.parent)) for f in files for e in read_episodes(f)]
    return [
        (e, n)
        for e, n in episodes
        if split in ("all", e.split) and (min_gold is None or float(e.gold.success) >= min_gold)
    ]


def art_row(e: Episode) -> dict[str, Any]:
    row = chat_row(e)
    info = labels(e)
    return {
        "messages_and_choices": row["messages"],
        "reward": e.proxy,
        "metrics": {
            "proxy": e.proxy,
            "gold": info["gold"],
            "gold_fields": info["gold_fields"],
            "turns": e.n_turns,
        },
        "metadata": {
            k: info[k]
            for k in (
                "id",
                "member",
                "family",
                "kind",
                "split",
                "seed",
                "condition",
                "phase",
                "termination",
            )
        },
    }


def write_jsonl(rows: Iterable[dict[str, Any]], out: Path, *, inside: Path | None = None) -> int:
    """Stream ``rows`` into ``out`` as JSONL, atomically (``outputs.atomic_open``): the file
    appears whole when the last row is written, and an error half-way leaves the old one."""
    n = 0
    with outputs.atomic_open(out, inside=inside) as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    return n


def _rows(fmt: str, limited: Sequence[tuple[Episode, int]], system: str | None) -> Iterator[Any]:
    """The JSONL records of ``fmt`` (``openai-chat`` or ``art``)."""
    for e, _ in limited:
        yield chat_row(e, system) if fmt == "openai-chat" else art_row(e)


def transitions(
    episodes: Sequence[tuple[Episode, int]], scenario: Scenario
) -> dict[str, np.ndarray]:
    """(s, a, r, s', done) of every act-level episode, replayed through the featuriser."""
    featurise = Featuriser(scenario)
    index = {a.id: i for i, a in enumerate(scenario.acts)}
    obs: list[np.ndarray] = []
    nxt: list[np.ndarray] = []
    acts: list[int] = []
    rewards: list[float] = []
    dones: list[bool] = []
    owner: list[int] = []
    for k, (e, limit) in enumerate(episodes):
        if not e.turns or any(t.act not in index for t in e.agent_turns):
            raise UsageError(
                f"episode {e.id}: not act-level (sb3-buffer needs an act id per agent "
                "turn; export free-text agents as openai-chat)"
            )
        job = Job(cast(Any, None), e.seed, e.split, e.condition, e.phase, e.step)
        conv = Conversation(job, scenario, cast(Any, None), e.profile, limit)
        turns, i, seen = e.turns, 0, 0
        while i < len(turns):
            t = turns[i]
            i += 1
            if t.speaker == "user":
                conv.hear(UserTurn(text=t.text, tags=t.tags))
                continue
            obs.append(featurise([conv.observe()])[0])
            act = scenario.acts[index[str(t.act)]]
            field = act.about_in(conv.state)
            conv.say(AgentTurn(text=t.text, act=act.id, field=field))
            while i < len(turns) and turns[i].speaker == "user":  # the answer to this turn
                conv.hear(UserTurn(text=turns[i].text, tags=turns[i].tags))
                i += 1
            seen += 1
            nxt.append(featurise([conv.observe()])[0])
            acts.append(index[act.id])
            rewards.append(e.proxy if seen == e.n_turns else 0.0)
            dones.append(seen == e.n_turns)
            owner.append(k)
    return {
        "observations": np.asarray(obs, np.float32),
        "actions": np.asarray(acts, np.int64),
        "rewards": np.asarray(rewards, np.float32),
        "next_observations": np.asarray(nxt, np.float32),
        "dones": np.asarray(dones),
        "episode": np.asarray(owner, np.int64),
    }


def export(
    run_dir: Path,
    fmt: str,
    out: Path | None = None,
    *,
    split: str = "all",
    min_gold: float | None = None,
    system: str | None = None,
) -> tuple[Path, int]:
    """Write the run's episodes as ``fmt``; returns (file, records written).

    ``out`` (default ``RUN_DIR/export-<fmt>.<ext>``) is a file, replaced atomically (a symlink
    there is replaced, never written through). A directory, a FIFO or a device there
    (``/dev/null``, ``/dev/stdout``: a rename cannot replace them, and a FIFO with no reader
    would block the write forever) is refused before any episode is read. The default file
    inside the run must not lead outside it through a symlinked folder."""
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    target = out or run_dir / export_name(fmt, SUFFIX[fmt])
    inside = None if out is not None else run_dir
    outputs.check_target(target, inside=inside)  # a directory or a FIFO: before any reading
    limited = load_with_limits(run_dir, split, min_gold)
    if fmt != "sb3-buffer":
        return target, write_jsonl(_rows(fmt, limited, system), target, inside=inside)
    episodes = [e for e, _ in limited]
    names = sorted({e.scenario for e in episodes})
    if len(names) > 1:
        raise UsageError(f"sb3-buffer replays one scenario's episodes, not {', '.join(names)}")
    scenario = get_scenario(names[0] if names else "intake")
    data = transitions(limited, scenario)
    outputs.write_with(target, lambda f: cast(Any, np.savez_compressed)(f, **data), inside=inside)
    return target, len(data["actions"])
