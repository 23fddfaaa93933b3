"""Scrub secrets out of any text that may reach a page, a log, stderr or a file.

An upstream endpoint's error body is free text chosen by the server: some echo the request's
``Authorization`` header, some name the key they rejected. Everything that quotes such a body
passes through ``redact`` first, at the source (``llm.client``) and again where texts are stored
or shown (episode error reasons, the CLI's error line, the call page's server log).

What is replaced with ``[redacted]``:
- the exact values passed as ``secrets`` (a client's configured key), also JSON-escaped;
- the values of environment variables whose names say they hold a secret (``*KEY*``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ...), so that a layer which does not know the key
  still removes it;
- ``Authorization:`` / ``Proxy-Authorization:`` values and ``Bearer ...`` tokens;
- ``api_key=...``, ``x-api-key: ...``, ``access_token=...``, ``password=...``, ``?key=...``;
- key-shaped strings: ``sk-...`` (``sk-proj-``, ``sk-ant-``), ``rk_...``, ``hf_...``,
  ``gsk_...``, ``nvapi-...``, GitHub, GitLab, Slack, AWS and Google key prefixes;
- long opaque tokens: a run of 32+ characters of ``[A-Za-z0-9_+-]`` that is all hex or holds a
  16+ character piece mixing letters and digits (paths, URLs, model names, hyphenated names and
  words are kept; a base64 key cut by ``/`` is caught only piece by piece).

Hand-written because no well-kept library does this for free text: secret scanners
(detect-secrets, gitleaks) find secrets in files for review; they do not rewrite a message.
Every pattern is linear in the text's length (no nested or overlapping repeats).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

REDACTED = "[redacted]"

MIN_SECRET_CHARS = 6
"""An explicitly named secret shorter than this is not searched for (it would match words)."""

MIN_ENV_SECRET_CHARS = 8
"""An environment value shorter than this is not treated as a secret (``1``, ``true``, ...)."""

_SECRET_ENV_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE|AUTH|SESSION|COOKIE", re.IGNORECASE
)

# A header or parameter value: up to whitespace, a quote, a separator or a bracket (so that an
# already redacted "[redacted]" is never matched again).
_VALUE = r"[^\s\[\]{}()<>,;&\"'`]+"

_AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(?:bearer|basic|token|digest|apikey|key)\s+)?" + _VALUE
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)" + _VALUE)
_NAMED = re.compile(
    r"(?i)(\b(?:x-)?(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
    r"id[_-]?token|client[_-]?secret|secret[_-]?key|secret|password|passwd|token|"
    r"x-goog-api-key)[\"']?\s*[:=]\s*[\"']?)"
    # PyYAML's own wording is no value: "while scanning for the next token: found character"
    r"(?!(?:found|expected)\s)" + _VALUE
)
_QUERY_KEY = re.compile(r"(?i)([?&](?:key|sig|signature|code)=)[^\s&#\"'<>]+")
_URL_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/\s:@\"'<>]+:[^/\s@\"'<>]+@")
_SHAPED = re.compile(
    r"\b(?:sk|rk|gsk|nvapi)[-_][A-Za-z0-9_-]{8,}"
    r"|\bhf_[A-Za-z0-9]{8,}"
    r"|\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{16,}"
    r"|\bglpat-[A-Za-z0-9_-]{16,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_-]{30,}"
)
_LONG = re.compile(r"(?<![A-Za-z0-9_+-])[A-Za-z0-9_+-]{32,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_SEPARATORS = re.compile(r"[-_+]")


def _opaque(match: re.Match[str]) -> str:
    """A long run is a token if it is 32+ hex digits, or holds a 16+ character piece (between
    ``-``, ``_``, ``+``) that mixes letters and digits; a model name such as
    ``Meta-Llama-3-70B-Instruct-Turbo`` is made of short pieces and is kept."""
    run = match.group(0)
    if _HEX.fullmatch(run.strip("_+-")):
        return REDACTED
    for piece in _SEPARATORS.split(run):
        if len(piece) >= 16 and not piece.isalpha() and not piece.isdigit():
            return REDACTED
    return run


def secret_env_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of environment variables whose names say they hold a secret."""
    env = os.environ if environ is None else environ
    return [
        v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= MIN_ENV_SECRET_CHARS
    ]


def _literal_forms(secrets: Iterable[str], min_chars: int) -> set[str]:
    """Each secret as it may appear in text: verbatim and JSON-escaped."""
    out: set[str] = set()
    for s in secrets:
        if len(s) >= min_chars:
            out.add(s)
            out.add(json.dumps(s)[1:-1])
    return out


def redact(
    text: str, secrets: Iterable[str] = (), *, environ: Mapping[str, str] | None = None
) -> str:
    """``text`` with every secret it may hold replaced by ``[redacted]`` (see the module)."""
    literal = _literal_forms(secrets, MIN_SECRET_CHARS)
    literal |= _literal_forms(secret_env_values(environ), MIN_ENV_SECRET_CHARS)
    for value in sorted(literal, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _NAMED.sub(lambda m: m.group(1) + REDACTED, text)
    text = _QUERY_KEY.sub(lambda m: m.group(1) + REDACTED, text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _SHAPED.sub(REDACTED, text)
    return _LONG.sub(_opaque, text)


def redact_exact(text: str, secrets: Iterable[str]) -> str:
    """Only the exact ``secrets`` removed: for a model's own output, which patterns would alter
    (a model may well write a long hex string), but which must never carry the key."""
    for value in sorted(_literal_forms(secrets, MIN_SECRET_CHARS), key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def public_url(url: str) -> str:
    """``url`` without user, password, query or fragment: what may be stored beside a run
    (a key passed as ``?key=`` or ``user:key@`` never reaches a file)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
