"""The redactor: what it removes, what it keeps, and that a key never survives it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim2human.redact import REDACTED, redact, redact_exact, secret_env_values

NO_ENV: dict[str, str] = {}


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("boom Bearer sk-test-KEYECHO-123456789abcdef", "sk-test"),
        ('{"error": {"message": "you sent Bearer abc.def-ghi"}}', "abc.def"),
        ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
        ("{'Authorization': 'Token t0k3n-value'}", "t0k3n"),
        ("Proxy-Authorization: Digest qwerty123", "qwerty123"),
        ("x-api-key: abc123secret", "abc123secret"),
        ('{"api_key": "k-998877"}', "998877"),
        ("api-key=zz9 and access_token=yy8 and password: hunter2", "hunter2"),
        ("GET https://host/v1?alt=json&key=AIzaSomething", "AIzaSomething"),
        ("https://user:pa55@example.com/v1", "pa55"),
        ("sk-proj-AbCdEf0123456789 in the body", "AbCdEf"),
        ("an hf_AbCdEfGhIjKlMnOp token", "hf_AbC"),
        ("a gsk_0123456789abcdefXYZ key", "gsk_"),
        ("ghp_0123456789abcdefABCD and glpat-0123456789abcdefgh", "ghp_"),
        ("aws AKIAABCDEFGHIJKLMNOP end", "AKIA"),
        ("hex 0123456789abcdef0123456789abcdef here", "0123456789abcdef"),
        ("b64 ZXhhbXBsZTEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9w here", "ZXhhbXBs"),
    ],
)
def test_secrets_are_removed(text: str, gone: str) -> None:
    out = redact(text, environ=NO_ENV)
    assert gone not in out and REDACTED in out, out


@pytest.mark.parametrize(
    "text",
    [
        "endpoint http://127.0.0.1:8080/v1 (model 'Meta-Llama-3-70B-Instruct-Turbo') failed "
        "after 5 attempt(s): HTTP 500",
        "/work/runs/20240101-120000-eval-agent/conditions/ensemble-uniform/seed-0/episodes.jsonl",
        "config.yaml: train.lr: Input should be greater than 0 (and 2 more problems)",
        "max_tokens=64 completion_tokens: 3 tokens=5, duplicate key 'seeds' (first on line 3)",
        "the-longest-hyphenated-study-name-you-ever-saw-2 finished",
        "Bearer [redacted] already",
    ],
)
def test_ordinary_messages_are_kept(text: str) -> None:
    assert redact(text, environ=NO_ENV) == text


def test_the_configured_key_and_its_json_form_are_removed() -> None:
    key = 'plain"KEY/value42'  # no shape a pattern would know
    text = f"raw {key} and json {json.dumps(key)}"
    out = redact(text, [key], environ=NO_ENV)
    assert "KEY" not in out and out.count(REDACTED) == 2


def test_secret_looking_environment_values_are_removed() -> None:
    env = {"S2H_KEY": "weird!value#1", "MY_TOKEN": "tok-ABC-12345", "HOME": "/home/someone"}
    assert sorted(secret_env_values(env)) == ["tok-ABC-12345", "weird!value#1"]
    out = redact("got weird!value#1 and tok-ABC-12345 in /home/someone", environ=env)
    assert out == f"got {REDACTED} and {REDACTED} in /home/someone"
    assert secret_env_values({"TOKENIZERS_PARALLELISM": "false"}) == []  # too short to be one


def test_exact_redaction_leaves_a_models_text_alone() -> None:
    text = "My code is 0123456789abcdef0123456789abcdef, sk-ish words stay."
    assert redact_exact(text, ["sk-real-key-000"]) == text
    assert redact_exact("you sent sk-real-key-000", ["sk-real-key-000"]) == f"you sent {REDACTED}"
    assert redact_exact("abc", ["abc"]) == "abc"  # too short to search for


KEY_CHARS = st.text(alphabet="abcdefghijkLMNOPQRSTuvwxyz0123456789-_", min_size=6, max_size=40)


@settings(max_examples=300, deadline=None)
@given(before=st.text(max_size=200), key=KEY_CHARS, after=st.text(max_size=200))
def test_a_known_key_never_survives(before: str, key: str, after: str) -> None:
    for form in (key, f"Bearer {key}", json.dumps({"Authorization": f"Bearer {key}"})):
        assert key not in redact(before + form + after, [key], environ=NO_ENV)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=2000))
def test_redaction_is_idempotent_and_never_fails(text: str) -> None:
    once = redact(text, environ=NO_ENV)
    assert redact(once, environ=NO_ENV) == once


def test_redaction_is_linear_on_hostile_input() -> None:
    import time

    for junk in ("A1" * 500_000, "Bearer " * 100_000, "a" * 1_000_000, "api_key=" * 100_000):
        start = time.perf_counter()
        redact(junk, environ=NO_ENV)
        assert time.perf_counter() - start < 5.0
