"""LLM endpoints: an async OpenAI-compatible chat client and the embedded default model.

Importing this package needs neither ``openai`` nor ``xllamacpp``; using them does, and says
what to install when they are missing.
"""

from __future__ import annotations

from sim2human.llm.client import ChatClient, ChatResult, ClientStats, EndpointConfig
from sim2human.llm.faults import FaultProxy, FaultRates
from sim2human.llm.local import MODEL_NAME, gguf_path, local_model

__all__ = [
    "MODEL_NAME",
    "ChatClient",
    "ChatResult",
    "ClientStats",
    "EndpointConfig",
    "FaultProxy",
    "FaultRates",
    "gguf_path",
    "local_model",
]
