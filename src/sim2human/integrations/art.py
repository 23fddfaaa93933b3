"""OpenPipe ART: a rollout function that plays one simulated user and returns a Trajectory.

ART trains on ``art.Trajectory`` groups gathered from rollout functions that talk to the model
through its OpenAI-compatible client. ``rollout`` plays one dataset row (``rows.draw_rows``:
member, seed, spec) to the end of the call: the agent's turns are the model's ``Choice`` objects
(what ART trains on), the caller's are ``user`` messages; the reward is the simulator's
satisfaction (proxy); gold, member and family go in ``metrics`` / ``metadata``, and ``log``
stores the episode for ``sim2human report`` / ``diagnose``::

    groups = await art.gather_trajectory_groups(
        art.TrajectoryGroup(rollout(model, pop, row) for _ in range(8)) for row in rows)
    await model.train(groups)

Needs ``pip install 'sim2human[art]'`` (ART's client side; no torch of its own).
"""

from __future__ import annotations

import os
from typing import Any

from sim2human.agents.base import AgentTurn
from sim2human.integrations._extra import require
from sim2human.integrations.population import Population
from sim2human.integrations.runlog import RunLog

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import time


def _import_art() -> Any:
    """``import art``, undoing the patch its import applies to transformers' attention-mask
    preprocessing: written for ART's training backend and its pinned transformers, it breaks
    every other transformers model in the process (TRL, sentence-transformers) on newer
    versions, and ART's client side (trajectories, gathering) does not use it."""
    try:
        from transformers import masking_utils
    except ImportError:
        return require("art", "art")
    original = masking_utils._preprocess_mask_arguments
    module = require("art", "art")
    masking_utils._preprocess_mask_arguments = original
    return module


art = _import_art()


async def rollout(
    model: Any,
    pop: Population,
    row: dict[str, Any],
    *,
    client: Any = None,
    max_tokens: int = 128,
    temperature: float = 1.0,
    log: RunLog | None = None,
) -> Any:
    """One conversation as an ``art.Trajectory``; ``model`` is an ``art.Model`` (or anything
    with ``openai_client()`` and ``get_inference_name()``), ``client`` overrides its client."""
    client = client if client is not None else model.openai_client()
    name = model.get_inference_name() if hasattr(model, "get_inference_name") else model.name
    spec = pop.resolve(row.get("member"), row.get("spec"))
    split = row.get("split", "train")
    conv = pop.open(spec, int(row["seed"]), phase="eval" if split == "heldout" else "train")
    prompt = list(row.get("prompt") or [])[:1]  # the system prompt, if the row has one
    traj = art.Trajectory(
        messages_and_choices=[*prompt, {"role": "user", "content": conv.turns[-1].text}],
        reward=0.0,
        metadata={
            "member": spec.id,
            "family": spec.family,
            "seed": int(row["seed"]),
            "split": split,
        },
    )
    while not conv.done:
        completion = await client.chat.completions.create(
            model=name,
            messages=traj.messages(),
            max_tokens=max_tokens,
            temperature=temperature,
        )
        choice = completion.choices[0]
        traj.messages_and_choices.append(choice)
        conv.step(AgentTurn(text=(choice.message.content or "").strip() or "..."))
        traj.messages_and_choices.append({"role": "user", "content": conv.turns[-1].text})
    episode = conv.episode()
    if log is not None:
        log.write(episode)
    traj.reward = episode.proxy
    traj.metrics = {
        "proxy": episode.proxy,
        "gold": float(episode.gold.success),
        "gold_fields": episode.gold.field_accuracy,
        "turns": episode.n_turns,
        "dropped": episode.gold.dropped,
    }
    return traj
