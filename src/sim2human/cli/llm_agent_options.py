"""The options that put an LLM agent behind an endpoint beside a run's trained agents, the same
in every verb that takes one (``human serve``, ``human play``, ``stress``): where it is served,
its key's variable, its system prompt. The agent is called ``llm`` wherever agents are named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2human.agents.endpoint_agent import EndpointAgent
from sim2human.errors import UsageError

LLM_AGENT = "llm"
"""The endpoint agent's name among a run's agents (``--agents``, ``--agent``, ``--conditions``)."""

LLMUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--llm-base-url",
        help="Also an LLM agent (named 'llm') at this OpenAI-compatible endpoint, "
        "e.g. http://localhost:8000/v1.",
    ),
]
LLMModelOpt = Annotated[
    str | None, typer.Option("--llm-model", help="Model name at --llm-base-url.")
]
LLMKeyOpt = Annotated[
    str | None, typer.Option("--llm-api-key-env", help="NAME of the env var with the key.")
]
LLMPromptOpt = Annotated[
    Path | None,
    typer.Option(
        "--llm-system-prompt",
        help="File with the LLM agent's system prompt (default: the scenario's agent prompt).",
    ),
]


def endpoint_agent(
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    system_prompt: Path | None,
) -> EndpointAgent | None:
    """The endpoint agent the options describe, or None when none is named."""
    from sim2human.store.loading import read_text

    if (base_url is None) != (model is None):
        raise UsageError("--llm-base-url and --llm-model go together")
    if base_url is None or model is None:
        if api_key_env is not None or system_prompt is not None:
            raise UsageError("--llm-api-key-env and --llm-system-prompt need --llm-base-url")
        return None
    prompt = None if system_prompt is None else read_text(system_prompt, "system prompt file")
    return EndpointAgent(base_url, model, api_key_env, system_prompt=prompt)
