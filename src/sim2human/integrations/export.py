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

Every sub-run is checked as the other readers check it (``experiments.study.wholeness``) before any
of its episodes is written: one whose log falls short of what its ``summary.json`` records
(cut, or edited after it finished), whose log has a damaged line, or whose episodes are of
another scenario than the run's is left out with a warning (``warn``; without one, it is an
error), as ``diagnose`` leaves a torn sub-run's evaluation out. Before, a half-cut sub-run, 5
foreign lines and another scenario's sub-run were each exported without a word.

An exported record's ``id`` names its training run: ``<condition>/seed-<k>/<phase>/...``
(the stored id with the sub-run's folder after the condition). The stored ids leave the seed
out (they are unique within their sub-run, and old runs keep them), so two seeds' evaluations
of one member and profile shared an id, and a consumer that deduplicates by id (HF
``datasets``, TRL) kept one seed's. Ids are unique across the export, or it is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from sim2human import outputs
from sim2human.agents.base import AgentTurn
from sim2human.agents.features import Featuriser
from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.wholeness import foreign, shortfall
from sim2human.integrations.chat import chat_row, labels
from sim2human.rollout.conversation import MAX_TURNS, Conversation, Job
from sim2human.scenarios.catalog import DEFAULT_SCENARIO, get_scenario
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import UserTurn
from sim2human.store.layout import CONFIG, CONFIG_YAML, EPISODES, STUDY_JSON, SUMMARY, export_name
from sim2human.store.loading import read_json_object, read_yaml
from sim2human.store.rundir import read_episodes
from sim2human.types import Episode

Format = Literal["openai-chat", "art", "sb3-buffer"]
FORMATS: tuple[Format, ...] = ("openai-chat", "art", "sb3-buffer")
SUFFIX = {"openai-chat": ".jsonl", "art": ".jsonl", "sb3-buffer": ".npz"}
Warn = Callable[[str], None]
"""Where a left-out sub-run is reported (the command's warning line)."""


def load(
    run_dir: Path, split: str = "all", min_gold: float | None = None, warn: Warn | None = None
) -> list[Episode]:
    """Every episode under ``run_dir`` (a study or a sub-run), filtered; a sub-run that is not
    whole is left out through ``warn``, or raised without one."""
    return [e for e, _ in load_with_limits(run_dir, split, min_gold, warn)]


def turn_limit(sub_run: Path) -> int:
    """The turn limit a sub-run played with (its ``config.json``), which observations show."""
    try:
        cfg = json.loads((sub_run / CONFIG).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return MAX_TURNS
    limit = cfg.get("max_turns") or (cfg.get("train") or {}).get("max_turns")
    return int(limit) if isinstance(limit, int) else MAX_TURNS


def load_with_limits(
    run_dir: Path, split: str = "all", min_gold: float | None = None, warn: Warn | None = None
) -> list[tuple[Episode, int]]:
    """(episode, its turn limit) for every episode of the whole sub-runs under ``run_dir``,
    filtered, each with its exported id (the module docstring)."""
    if split not in ("all", "train", "heldout"):
        raise UsageError(f"--split must be all, train or heldout, not {split!r}")
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: no such run directory")
    files = sorted(run_dir.rglob(EPISODES))
    if not files:
        raise RunDirError(f"{run_dir}: no {EPISODES} in it or below it")
    scenario, whose = run_scenario(run_dir, files)
    episodes: list[tuple[Episode, int]] = []
    for f in files:
        try:
            kept = whole_sub_run(f, scenario, whose)
        except RunDirError as err:
            if warn is None:
                raise
            warn(f"{err}; left out of the export")
            continue
        episodes += [(exported(e, f.parent.name), turn_limit(f.parent)) for e in kept]
    _unique([e for e, _ in episodes], run_dir)
    return [
        (e, n)
        for e, n in episodes
        if split in ("all", e.split) and (min_gold is None or float(e.gold.success) >= min_gold)
    ]


def run_scenario(run_dir: Path, files: Sequence[Path]) -> tuple[str, str]:
    """The run's scenario and where it comes from, as the other readers find it: its stored
    study config, else its ``study.json``, else its first log's first episode."""
    for name, what in ((CONFIG_YAML, "stored study config"), (STUDY_JSON, "study result")):
        path = run_dir / name
        try:
            raw = (read_yaml if name == CONFIG_YAML else read_json_object)(path, what)
        except UsageError:
            continue
        if isinstance(raw, dict) and isinstance(raw.get("scenario"), str):
            return raw["scenario"], f"the scenario of {path}"
    for f in files:
        try:
            first = read_episodes(f)[:1]
        except RunDirError:
            continue
        if first:
            return first[0].scenario, f"that of the first log read ({f})"
    return DEFAULT_SCENARIO, "the default scenario"


def whole_sub_run(log: Path, scenario: str, whose: str) -> list[Episode]:
    """The episodes of ``log``'s sub-run, proven whole (``experiments.study.wholeness``): a damaged
    line, another scenario's episode, or a log that falls short of what its ``summary.json``
    records is a ``RunDirError``."""
    if not log.is_file():
        raise RunDirError(f"{log}: not a regular file")
    episodes = read_episodes(log)
    if wrong := foreign(episodes, scenario, log, whose):
        raise wrong
    summary = log.parent / SUMMARY
    if summary.exists() or summary.is_symlink():
        try:
            recorded = read_json_object(summary, "sub-run summary")
        except UsageError as err:
            raise RunDirError(f"{log.parent}: finished, but unreadable ({err})") from None
        if torn := shortfall(recorded, episodes):
            raise RunDirError(f"{log.parent}: torn: its {torn}")
    return episodes


def exported(e: Episode, run: str) -> Episode:
    """``e`` with its exported id: the sub-run's folder (``seed-<k>``) after its condition."""
    head = f"{e.condition}/"
    rest = e.id[len(head) :] if e.id.startswith(head) else e.id
    return e.model_copy(update={"id": f"{head if rest != e.id else ''}{run}/{rest}"})


def _unique(episodes: Sequence[Episode], run_dir: Path) -> None:
    seen: set[str] = set()
    for e in episodes:
        if e.id in seen:
            raise RunDirError(f"{run_dir}: two episodes would be exported as {e.id!r}")
        seen.add(e.id)


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


def agent_prompt(run_dir: Path) -> str | None:
    """The system prompt an ``eval-agent`` run's agent ran with (its ``config.json``'s
    ``agent``), so an export shows what the agent saw, not the scenario's default; ``None``
    for other runs (then the scenario's default)."""
    path = run_dir / CONFIG
    if not path.is_file():
        return None
    try:
        agent = read_json_object(path, "run config").get("agent")
    except UsageError:  # unreadable: the scenario's default, as for any other run
        return None
    prompt = agent.get("system_prompt") if isinstance(agent, dict) else None
    return prompt if isinstance(prompt, str) else None


def _rows(fmt: str, limited: Sequence[tuple[Episode, int]], system: str | None) -> Iterator[Any]:
    """The JSONL records of ``fmt`` (``openai-chat`` or ``art``)."""
    for e, _ in limited:
        yield chat_row(e, system) if fmt == "openai-chat" else art_row(e)


class _StoredUser:
    """The user of a stored call, replayed: its lines are the stored ones (``conv.hear``) and the
    reward is the stored proxy, so it has nothing to feel when an agent's turn ends the call (a
    sale, an accepted deal)."""

    def satisfaction(self) -> float:
        return 0.0


def transitions(
    episodes: Sequence[tuple[Episode, int]], scenario: AnyScenario
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
        conv = Conversation(job, scenario, cast(Any, _StoredUser()), e.profile, limit)
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
    warn: Warn | None = None,
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
    limited = load_with_limits(run_dir, split, min_gold, warn)
    system = system if system is not None else agent_prompt(run_dir)
    if fmt != "sb3-buffer" and system is None and warn is not None:
        _say_if_no_prompt(sorted({e.scenario for e, _ in limited}), warn)
    if fmt != "sb3-buffer":
        return target, write_jsonl(_rows(fmt, limited, system), target, inside=inside)
    episodes = [e for e, _ in limited]
    names = sorted({e.scenario for e in episodes})
    if len(names) > 1:
        raise UsageError(f"sb3-buffer replays one scenario's episodes, not {', '.join(names)}")
    scenario = get_scenario(names[0] if names else DEFAULT_SCENARIO)
    data = transitions(limited, scenario)
    outputs.write_with(target, lambda f: cast(Any, np.savez_compressed)(f, **data), inside=inside)
    return target, len(data["actions"])


def _say_if_no_prompt(scenarios: Sequence[str], warn: Warn) -> None:
    """One line for a scenario that cannot be resolved (a ``module:Name`` not installed and not
    on ``--scenario-path``): its records go out without the agent's system prompt."""
    for name in scenarios:
        try:
            get_scenario(name)
        except UsageError as err:
            warn(f"{err}; its records carry no system prompt")
