"""The embedded model for the tests that need it: skipped, with the install hint, when absent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sim2human.errors import ModelUnavailableError
from sim2human.llm import local
from sim2human.llm.client import EndpointConfig


def require_model() -> None:
    """Skip the calling test when the GGUF or xllamacpp is not installed."""
    try:
        local.gguf_path()
        local.xllamacpp_module()
    except ModelUnavailableError as exc:
        pytest.skip(f"embedded model not installed: {exc}")


def serve_model(n_parallel: int) -> Iterator[EndpointConfig]:
    """The embedded model served on 127.0.0.1 for a module's tests (a fixture's body)."""
    require_model()
    with local.local_model(n_parallel=n_parallel, ctx_per_slot=1024) as ep:
        yield ep
