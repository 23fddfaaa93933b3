"""A recorded fake of the two verl types the adapter touches (verl 0.9.1,
``verl/experimental/agent_loop/agent_loop.py``): ``AgentLoopBase`` (constructor and the
Continuous Token helpers ``ct_build_initial_tokens``, ``ct_merge_assistant_token``,
``ct_merge_context_msg``) and ``AgentLoopOutput``/``AgentLoopMetrics`` field for field, plus the
server's ``TokenOutput``. verl itself needs ray and a GPU serving stack to import.

Tokens are characters here; the merge helpers keep verl's contract: assistant tokens extend the
response with mask 1, appended context messages (the user) with mask 0.
"""

from __future__ import annotations

import sys
import types
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Optional

from pydantic import BaseModel


class AgentLoopMetrics(BaseModel):
    generate_sequences: float = 0.0
    tool_calls: float = 0.0
    compute_score: float = 0.0
    num_preempted: int = -1


class AgentLoopOutput(BaseModel):
    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]
    response_logprobs: Optional[list[float]] = None  # noqa: UP045  (as in verl)
    routed_experts: Optional[Any] = None  # noqa: UP045
    multi_modal_data: Optional[dict[str, Any]] = None  # noqa: UP045
    reward_score: Optional[float] = None  # noqa: UP045
    num_turns: int = 0
    metrics: AgentLoopMetrics
    extra_fields: dict[str, Any] = {}
    mm_processor_kwargs: Optional[dict[str, Any]] = None  # noqa: UP045
    mm_processor_output: Optional[list[dict[str, Any]]] = None  # noqa: UP045


class TokenOutput(BaseModel):
    token_ids: list[int]
    log_probs: Optional[list[float]] = None  # noqa: UP045
    stop_reason: Optional[str] = None  # noqa: UP045
    num_preempted: Optional[int] = None  # noqa: UP045
    extra_fields: dict[str, Any] = {}


class CharTokenizer:
    def render(self, messages: list[dict[str, Any]], generation: bool) -> str:
        text = "".join(f"<{m['role']}>{m['content']}\n" for m in messages)
        return text + ("<assistant>" if generation else "")

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(i) for i in ids)


@dataclass
class Merge:
    token_ids: list[int]


class DictConfigWrap:
    def __init__(self, config: Any) -> None:
        self.config = config


class AgentLoopBase(ABC):
    def __init__(
        self,
        trainer_config: DictConfigWrap,
        server_manager: Any,
        tokenizer: Any,
        processor: Any,
        dataset_cls: Any,
        data_config: DictConfigWrap,
        hf_model_type: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        self.processor = processor
        self.dataset_cls = dataset_cls
        self.data_config = data_config.config

    async def ct_build_initial_tokens(self, messages: list[dict[str, Any]], **_: Any) -> list[int]:
        return self.tokenizer.encode(self.tokenizer.render(messages, True))

    async def ct_merge_assistant_token(
        self,
        runtime_token_ids: list[int],
        assistant_token_ids: list[int],
        response_mask: list[int],
        response_logprobs: list[float] | None = None,
        assistant_logprobs: list[float] | None = None,
    ) -> Any:
        logprobs = None
        if response_logprobs is not None or assistant_logprobs is not None:
            logprobs = [*(response_logprobs or []), *(assistant_logprobs or [])]
        merged = [*runtime_token_ids, *assistant_token_ids]
        return Merge(merged), [*response_mask, *[1] * len(assistant_token_ids)], logprobs

    async def ct_merge_context_msg(
        self,
        previous_messages: list[dict[str, Any]],
        updated_messages: list[dict[str, Any]],
        runtime_token_ids: list[int],
        response_mask: list[int],
        response_logprobs: list[float] | None = None,
        tools: Any = None,
    ) -> Any:
        new = self.tokenizer.encode(
            "\n" + self.tokenizer.render(updated_messages[len(previous_messages) :], True)
        )
        logprobs = [*response_logprobs, *[0.0] * len(new)] if response_logprobs else None
        return Merge([*runtime_token_ids, *new]), [*response_mask, *[0] * len(new)], logprobs

    @abstractmethod
    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput: ...


def install() -> None:
    """Put the fake where ``import verl.experimental.agent_loop.agent_loop`` finds it."""
    names = [
        "verl",
        "verl.experimental",
        "verl.experimental.agent_loop",
        "verl.experimental.agent_loop.agent_loop",
    ]
    for name in names:
        sys.modules[name] = types.ModuleType(name)
    leaf = sys.modules[names[-1]]
    for obj in (AgentLoopBase, AgentLoopOutput, AgentLoopMetrics, DictConfigWrap):
        setattr(leaf, obj.__name__, obj)
