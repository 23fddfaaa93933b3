"""The agent a finished sub-run trained, whatever its kind: the PPO policy's ``checkpoint.pt`` or
the language model's ``policy/`` folder (``experiments.study.lm_condition``).

One place decides how a sub-run's agent is found, checked and loaded, so ``stress``,
``predictivity`` and the call page play every study's agents alike, and say the same thing when
one is missing or unreadable. A saved agent also travels as bytes (``pack``/``unpack``: a tar of
the folder for a language model) to a worker that cannot see the run directory (``ray``).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from sim2human.agents.base import Agent
from sim2human.agents.llm import agent_setup
from sim2human.agents.lm_policy import LMPolicy
from sim2human.agents.policy import PolicyAgent
from sim2human.errors import RunDirError, UsageError
from sim2human.experiments.study.config import StudyConfig
from sim2human.scenarios.core import AnyScenario
from sim2human.store.layout import CHECKPOINT, POLICY
from sim2human.store.loading import load_checkpoint
from sim2human.train.config import LMAgentConfig

_LOAD_ERRORS = (ValueError, RuntimeError, OSError, KeyError, UsageError)


def saved_name(cfg: StudyConfig) -> str:
    """What a sub-run of this study saves its agent as (a file or a folder in the sub-run)."""
    return POLICY if isinstance(cfg.agent, LMAgentConfig) else CHECKPOINT


def lm_prompt(scenario: AnyScenario) -> str:
    """The language-model agent's system prompt: an endpoint agent's (the scenario's agent
    prompt and how to record; the tools follow it in the system message, ``agents.lm_chat``)."""
    return agent_setup(scenario, None, "tools").system_prompt


def saved_agent(sub: Path, cfg: StudyConfig) -> Path:
    """The agent ``sub`` saved; a clear error when the sub-run never finished."""
    path = sub / saved_name(cfg)
    if not path.exists():
        raise RunDirError(f"{path}: missing (did this sub-run finish?)")
    return path


def check_saved(path: Path, cfg: StudyConfig) -> None:
    """Read ``path`` once, so every agent is known readable before any work starts."""
    if isinstance(cfg.agent, LMAgentConfig):
        from sim2human.agents.lm_models import load

        try:
            load(path)
        except _LOAD_ERRORS as err:
            raise RunDirError(f"{path}: cannot load the trained model ({err})") from None
    else:
        load_checkpoint(path)


def load_saved(path: Path, cfg: StudyConfig, scenario: AnyScenario, seed: int) -> Agent:
    """The agent saved at ``path``, ready to play: a PPO policy sampling with ``seed``, or the
    language model at the study's evaluation temperature and token limit (its draws are seeded
    by each call and turn, ``LMPolicy.act``)."""
    agent_cfg = cfg.agent
    try:
        if isinstance(agent_cfg, LMAgentConfig):
            from sim2human.agents.lm_models import load

            model, tok = load(path)
            model.eval()
            return LMPolicy(
                model,
                tok,
                scenario,
                temperature=agent_cfg.eval_temperature,
                max_new_tokens=agent_cfg.max_new_tokens,
            )
        load_checkpoint(path)  # its own clear line for a file that is no checkpoint
        return PolicyAgent.load(path, scenario, seed=seed)
    except _LOAD_ERRORS as err:
        raise RunDirError(f"{path}: cannot load the trained agent ({err})") from None


def pack(path: Path) -> bytes:
    """``path`` (a checkpoint file or a model folder) as bytes that ``unpack`` restores."""
    if path.is_file():
        return path.read_bytes()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(path, arcname=path.name)
    return buffer.getvalue()


def unpack(blob: bytes, name: str, into: Path) -> Path:
    """Where ``blob`` (from ``pack`` of a file or folder called ``name``) now lies in ``into``."""
    target = into / name
    if name != POLICY:
        target.write_bytes(blob)
        return target
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r") as tar:
        tar.extractall(into, filter="data")  # the data filter refuses links and absolute paths
    return target
