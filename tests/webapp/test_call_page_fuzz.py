"""Property-based: whatever request reaches the call page (any path, method, form fields,
tokens, ``seen`` counts, ratings, raw bodies, origins and cookies), the answer is never a
server error and no page shows a traceback or the admin token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from webapp_helpers import ADMIN, FakeClock

from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.store.calls import HumanStore
from sim2human.webapp import admin
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.app import create_app
from sim2human.webapp.calls import Calls

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TOKENS: list[str] = []
"""Real call tokens (one call in each state), filled in by the fixture."""
COOKIES: list[str] = []
"""A real admin sign-in."""
FIELDS = ["consent", "mode", "seen", "text", "rating", "details", "comment", "token"]
FIELDS += list(IntakeScenario().fields)
VALUES = ["yes", "no", "self", "card", "partly", "", "0", "1", "2", "5", "-1", "1e9", "٣"]


@pytest.fixture(scope="module")
def client(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = tmp_path_factory.mktemp("fuzz") / "calls.sqlite"
    calls = Calls(HumanStore(db), AgentPool.from_run(run_dir, ["scripted"]))
    with TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock())) as c:
        for mode, steps in [("card", 0), ("card", 1), ("card", 3), ("self", 2), ("card", 4)]:
            r = c.post("/start", data={"consent": "yes", "mode": mode}, follow_redirects=False)
            token = r.headers["location"].removeprefix("/call/")
            TOKENS.append(token)
            if steps >= 1:
                c.post(f"/call/{token}/begin")
                c.post(f"/call/{token}/say", data={"seen": "0", "text": "Hello, a headache."})
            if steps >= 3:
                c.post(f"/call/{token}/hangup", data={"seen": "2"})
            if steps >= 4:
                c.post(f"/call/{token}/rate", data={"rating": "3", "details": "yes"})
        r = c.post("/admin/login", data={"token": ADMIN}, follow_redirects=False)
        COOKIES.append(r.cookies[admin.COOKIE])
        c.cookies.clear()
        yield c


text = st.text(max_size=120)
tokens = st.deferred(lambda: st.sampled_from(TOKENS))  # drawn after the fixture made them
ACTIONS = ["", "/begin", "/say", "/say", "/hangup", "/confirm", "/rate", "/rate", "/", "/say/x"]
real_call = st.builds(lambda t, a: f"/call/{t}{a}", tokens, st.sampled_from(ACTIONS))
any_call = st.builds(lambda t, a: f"/call/{quote(t, safe='')}{a}", text, st.sampled_from(ACTIONS))
path = st.one_of(
    real_call,
    real_call,
    st.sampled_from(
        [
            *("/", "/start", "/admin", "/admin/login", "/admin/logout", "/admin/export.jsonl"),
            *("/healthz", "/static/style.css", "/favicon.ico", "/docs", "/static/../x", "//x"),
        ]
    ),
    any_call,
    text.map(lambda t: "/" + quote(t, safe="/")),
)
value = st.one_of(
    st.sampled_from(VALUES),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.text(max_size=300),
    tokens,
)
fields = st.dictionaries(
    st.one_of(st.sampled_from(FIELDS), st.sampled_from(FIELDS), text), value, max_size=12
)
cookie = st.one_of(
    st.deferred(lambda: st.sampled_from(COOKIES)).map(lambda c: f"{admin.COOKIE}={c}"),
    text.map(lambda t: f"{admin.COOKIE}={quote(t)}"),
)
origin = st.fixed_dictionaries(
    {},
    optional={
        "Origin": st.sampled_from(["http://testserver", "http://evil.example", "null", "x"]),
        "Sec-Fetch-Site": st.sampled_from(["same-origin", "cross-site", "none", "same-site", ""]),
    },
)
headers = st.builds(
    lambda o, c: {**o, **({"Cookie": c} if c else {})},
    st.one_of(st.just({}), st.just({}), origin),  # mostly none: posts get past the origin check
    st.one_of(st.none(), cookie),
)
body = st.one_of(fields, st.binary(max_size=3000))


@SETTINGS
@given(
    method=st.sampled_from(["GET", "POST", "POST", "POST", "HEAD", "PUT"]),
    path=path,
    body=body,
    headers=headers,
)
def test_no_request_gets_a_server_error(
    client: TestClient, method: str, path: str, body: Any, headers: dict[str, str]
) -> None:
    kwargs: dict[str, Any] = {"headers": dict(headers), "follow_redirects": False}
    if method in ("POST", "PUT"):
        if isinstance(body, bytes):
            kwargs["content"] = body
            kwargs["headers"]["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            kwargs["data"] = body
    r = client.request(method, path, **kwargs)
    event(f"{method} {path.split('/')[1][:6]}: {r.status_code}")
    assert r.status_code < 500, (r.status_code, r.text[:500])
    assert "Traceback" not in r.text and 'File "' not in r.text
    assert ADMIN not in r.text
    if r.headers.get("content-type", "").startswith("text/html"):
        assert r.headers["content-security-policy"].startswith("default-src 'none'")
