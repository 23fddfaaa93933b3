"""A language-model agent's call as its served chat reads it, written piece by piece.

A saved policy is served (``eval-agent`` through llama.cpp or vLLM, or a user's own stack) with
the scenario's tools (``tools=``), each agent turn's tool calls in a message of their own and
their results as ``tool`` messages, then the turn's words (``agents.tool_messages``); the server
renders that chat with the policy's chat template, Qwen2.5's ChatML with tools
(``templates/chatml_tools.jinja``, saved with every policy). The policy must train and play on
the very text it will be served, but it grows each call's context by tokens (``agents.lm_policy``:
GRPO trains on the tokens it sampled), so it cannot render the whole chat again each turn. These
functions write each piece the template writes, in the template's order; the test renders whole
calls both ways and compares them token for token (``tests/agents/test_lm_chat.py``).

Why written here rather than rendered by the template: the template renders a whole chat, and a
piece cut out of it by string offsets would tie this module to the template's text anyway.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from sim2human.types import ToolCall

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
OPEN_ASSISTANT = f"{IM_START}assistant\n"
"""What opens every agent turn (the template's generation prompt): the model writes after it."""
AFTER = "\n"
"""What follows the closing token of every message."""
_TOOLS_HEAD = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def chat_template() -> str:
    """The chat template every language-model agent is saved with."""
    path = resources.files("sim2human.agents") / "templates" / "chatml_tools.jinja"
    return path.read_text(encoding="utf-8")


def system_text(prompt: str, tools: Sequence[dict[str, Any]] | None) -> str:
    """The system message: ``prompt``, then the tools' signatures where there are any."""
    if not tools:
        return f"{IM_START}system\n{prompt}{IM_END}{AFTER}"
    specs = "".join("\n" + _json(t) for t in tools)
    return f"{IM_START}system\n{prompt}{_TOOLS_HEAD}{specs}{_TOOLS_TAIL}{IM_END}{AFTER}"


def user_text(text: str) -> str:
    """A caller's turn."""
    return f"{IM_START}user\n{text}{IM_END}{AFTER}"


def results_text(results: Sequence[str]) -> str:
    """One round's tool results, in one user message as the template merges them."""
    said = "".join(f"\n<tool_response>\n{r}\n</tool_response>" for r in results)
    return f"{IM_START}user{said}{IM_END}{AFTER}"


def calls_text(calls: Sequence[ToolCall]) -> str:
    """What the agent writes after ``OPEN_ASSISTANT`` to call ``calls`` (its closing token
    apart): one ``<tool_call>`` block each, as the template renders an assistant message that
    carries them and no words."""
    return "\n".join(
        f'<tool_call>\n{{"name": "{c.name}", "arguments": {_json(c.arguments)}}}\n</tool_call>'
        for c in calls
    )


def _json(value: object) -> str:
    """JSON as the template's ``tojson`` writes it (transformers' filter: ``json.dumps``)."""
    return json.dumps(value, ensure_ascii=False)
