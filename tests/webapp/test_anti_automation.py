"""The call page per OWASP ASVS basics: per-client start limits, same-origin posts, the admin
login back-off and minimum token length, a logout that ends the session."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from webapp_helpers import ADMIN, FakeClock

from sim2human.errors import UsageError
from sim2human.store.calls import HumanStore
from sim2human.webapp import admin
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.app import Limits, create_app
from sim2human.webapp.calls import Calls
from sim2human.webapp.guard import Backoff, RateLimit

EVIL = "http://evil.example"


@pytest.fixture()
def calls(run_dir: Path, db: Path) -> Calls:
    return Calls(HumanStore(db), AgentPool.from_run(run_dir, ["scripted"]))


def clients(app: object, *hosts: str) -> list[TestClient]:
    return [TestClient(app, client=(h, 40000)) for h in hosts]  # type: ignore[arg-type]


def start_code(c: TestClient, **headers: str) -> int:
    r = c.post("/start", data={"consent": "yes"}, headers=headers, follow_redirects=False)
    return r.status_code


def test_one_client_cannot_block_anothers_start(calls: Calls) -> None:
    app = create_app(calls, Limits(starts_per_client=5), admin_token=ADMIN, clock=FakeClock())
    greedy, other, v6a, v6b = clients(app, "10.0.0.1", "10.0.0.2", "2001:db8::1", "2001:db8::2")
    codes = [start_code(greedy) for _ in range(40)]  # a script at full speed
    assert codes == [303] * 5 + [429] * 35
    r = greedy.post("/start", data={"consent": "yes"}, follow_redirects=False)
    assert r.status_code == 429 and 1 <= int(r.headers["retry-after"]) <= 60
    assert start_code(other) == 303  # everyone else still gets in
    assert len(calls.store.sessions()) == 6
    assert [start_code(v6a) for _ in range(5)] == [303] * 5
    assert start_code(v6b) == 429  # one IPv6 /64 is one client: no free addresses to rotate


def test_the_server_wide_ceiling_is_above_any_one_client() -> None:
    assert Limits().starts_per_minute >= 10 * Limits().starts_per_client


def test_the_start_limit_forgets_after_a_minute_and_stays_bounded() -> None:
    clock = FakeClock()
    limit = RateLimit(2, clock, max_keys=100)
    assert [limit.allow("a") for _ in range(3)] == [True, True, False]
    assert limit.retry_after("a") == pytest.approx(60.0)
    clock.advance(60.0)
    assert limit.allow("a")
    for i in range(10_000):  # a client per address of a whole network
        limit.allow(f"10.{i // 256}.{i % 256}.1")
    assert len(limit.sent) == 100


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        ({"Origin": EVIL}, True),
        ({"Origin": "null"}, True),
        ({"Origin": "http://testserver.evil.example"}, True),
        ({"Sec-Fetch-Site": "cross-site"}, True),
        ({"Sec-Fetch-Site": "same-site"}, True),
        ({"Sec-Fetch-Site": "cross-site", "Origin": "http://testserver"}, True),
        ({"Origin": "http://testserver"}, False),
        ({"Sec-Fetch-Site": "same-origin", "Origin": "http://testserver"}, False),
        ({"Sec-Fetch-Site": "same-origin", "Origin": "https://study.example"}, False),  # a proxy
        ({"Sec-Fetch-Site": "none"}, False),
        ({}, False),  # curl, scripts, tests
    ],
)
def test_posts_from_another_site_are_refused(
    calls: Calls, headers: dict[str, str], refused: bool
) -> None:
    app = create_app(calls, admin_token=ADMIN, clock=FakeClock())
    (c,) = clients(app, "10.0.0.9")
    r = c.post("/start", data={"consent": "yes"}, headers=headers, follow_redirects=False)
    assert r.status_code == (403 if refused else 303)
    assert len(calls.store.sessions()) == (0 if refused else 1)
    r = c.post("/admin/login", data={"token": ADMIN}, headers=headers, follow_redirects=False)
    assert r.status_code == (403 if refused else 303)  # no login CSRF
    assert ("another site" in r.text) is refused
    assert r.headers["content-security-policy"].startswith("default-src 'none'")


def test_every_call_post_checks_the_origin(calls: Calls) -> None:
    c = TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock()))
    r = c.post("/start", data={"consent": "yes"}, follow_redirects=False)
    token = r.headers["location"].removeprefix("/call/")
    c.post("/admin/login", data={"token": ADMIN})
    for path in ("begin", "say", "hangup", "confirm", "rate"):
        r = c.post(
            f"/call/{token}/{path}", data={"seen": "0", "text": "hi"}, headers={"Origin": EVIL}
        )
        assert r.status_code == 403, path
    assert c.post("/admin/logout", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    s = calls.store.by_token(token)
    assert s is not None and s.status == "card" and s.turns == ()
    assert c.get("/admin").text.count('id="sessions"') == 1  # still signed in


def test_wrong_admin_tokens_back_off_exponentially(calls: Calls) -> None:
    """Guesses looked at, not wall time: 40 guesses at once get 1 looked at; an attacker who
    retries the moment Retry-After allows gets ~16 looks in 10 minutes (was: every guess,
    ~1,500 a second)."""
    clock = FakeClock()
    app = create_app(calls, admin_token=ADMIN, clock=clock)
    attacker, admin_browser = clients(app, "10.0.0.66", "10.0.0.7")

    def guess(token: str = "x" * 24) -> tuple[int, int]:
        r = attacker.post("/admin/login", data={"token": token}, follow_redirects=False)
        return r.status_code, int(r.headers.get("retry-after", 0))

    burst = [guess() for _ in range(40)]
    assert burst[0] == (403, 1) and set(burst[1:]) == {(429, 1)}
    assert guess(ADMIN)[0] == 429  # while locked out no token is even compared
    looked, waited = 1, [1]
    while clock.now < 1000.0 + 600:
        clock.advance(waited[-1])
        code, wait = guess()
        assert code == 403
        looked += 1
        waited.append(wait)
    assert waited[:8] == [1, 2, 4, 8, 16, 32, 60, 60]  # doubling from 1 s, capped at 60 s
    assert looked <= 20
    r = admin_browser.post("/admin/login", data={"token": ADMIN}, follow_redirects=False)
    assert r.status_code == 303  # another client is not locked out
    clock.advance(60)
    assert guess(ADMIN)[0] == 303  # the attacker's address is served again after the wait
    assert guess()[0] == 403 and guess()[1] == 1  # ...and a right token cleared its count


def test_backoff_table_stays_bounded_and_forgets() -> None:
    clock = FakeClock()
    b = Backoff(1.0, 60.0, forget_s=900.0, clock=clock, max_keys=50)
    assert [b.fail("a") for _ in range(3)] == [1.0, 2.0, 4.0]
    clock.advance(4.0 + 901.0)
    assert b.wait("a") == 0.0 and b.fail("a") == 1.0  # a quiet quarter of an hour: afresh
    for i in range(5000):
        b.fail(f"k{i}")
    assert len(b.failed) == 50


def test_short_admin_tokens_are_refused(calls: Calls) -> None:
    with pytest.raises(UsageError, match=r"at least 16"):
        create_app(calls, admin_token="hunter2")
    create_app(calls, admin_token="")  # empty: the admin page is off


def test_logout_ends_the_session(calls: Calls, db: Path) -> None:
    c = TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock()))
    r = c.post("/admin/login", data={"token": ADMIN}, follow_redirects=False)
    cookie = r.cookies[admin.COOKIE]
    assert 'id="logout"' in c.get("/admin").text  # signed in, with a sign-out button
    again = TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock()))
    second = again.post("/admin/login", data={"token": ADMIN}, follow_redirects=False)
    assert second.cookies[admin.COOKIE] != cookie  # random per sign-in, not a hash of the token
    r = c.post("/admin/logout", follow_redirects=False)
    assert r.status_code == 303 and f"{admin.COOKIE}=" in r.headers["set-cookie"]
    stolen = TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock()))
    stolen.cookies.set(admin.COOKIE, cookie)  # the old cookie, kept by someone
    assert 'id="sessions"' not in stolen.get("/admin").text
    assert stolen.get("/admin/export.jsonl").status_code == 403
    other = Calls(HumanStore(db), calls.pool)  # a second server on the same file
    fresh = TestClient(create_app(other, admin_token=ADMIN, clock=FakeClock()))
    fresh.cookies.set(admin.COOKIE, second.cookies[admin.COOKIE])
    assert 'id="sessions"' in fresh.get("/admin").text  # sign-ins are in the database
    rotated = TestClient(create_app(other, admin_token=ADMIN + "-new", clock=FakeClock()))
    rotated.cookies.set(admin.COOKIE, second.cookies[admin.COOKIE])
    assert 'id="sessions"' not in rotated.get("/admin").text  # a new token ends them all
    forged = TestClient(create_app(other, admin_token=ADMIN, clock=FakeClock()))
    import hashlib
    import hmac

    old_style = hmac.new(ADMIN.encode(), b"sim2human-admin-v1", hashlib.sha256).hexdigest()
    forged.cookies.set(admin.COOKIE, old_style)  # the fixed cookie of the old design
    assert 'id="sessions"' not in forged.get("/admin").text


def test_admin_sessions_expire(db: Path) -> None:
    import time

    store = HumanStore(db)
    store.add_admin_session("live", time.time() + 60)
    store.add_admin_session("old", time.time() - 1)
    assert store.admin_session("live") and not store.admin_session("old")
    store.add_admin_session("another", time.time() + 60)  # sweeps the expired rows
    import sqlite3

    with sqlite3.connect(db) as con:
        keys = {k for (k,) in con.execute("SELECT key FROM admin_sessions")}
    assert keys == {"live", "another"}


def test_oversized_headers_are_refused(calls: Calls) -> None:
    c = TestClient(create_app(calls, admin_token=ADMIN, clock=FakeClock()))
    r = c.get("/", headers={"X-Pad": "a" * 100_000})
    assert r.status_code == 431
    assert c.get("/", headers={"X-Pad": "a" * 4000}).status_code == 200


def test_only_the_allowed_host_names_are_answered(calls: Calls) -> None:
    """DNS rebinding: a page on evil.example whose name now points at this server sends
    ``Host: evil.example`` (and its own Origin, which matches it): refused before a call starts."""
    app = create_app(calls, admin_token=ADMIN, clock=FakeClock(), allowed_hosts=["localhost"])
    rebound = TestClient(app, base_url="http://evil.example")
    assert start_code(rebound, origin=EVIL) == 400
    assert rebound.get("/").status_code == 400
    ours = TestClient(app, base_url="http://localhost:8000")
    assert start_code(ours, origin="http://localhost:8000") == 303


def test_the_admin_cookie_is_secure_over_tls(calls: Calls) -> None:
    app = create_app(calls, admin_token=ADMIN, clock=FakeClock())
    for base, secure in (("https://testserver", True), ("http://testserver", False)):
        c = TestClient(app, base_url=base)
        r = c.post("/admin/login", data={"token": ADMIN}, follow_redirects=False)
        assert r.status_code == 303
        assert ("; secure" in r.headers["set-cookie"].lower()) is secure, r.headers["set-cookie"]


def test_a_repetitive_admin_token_is_refused_however_long(calls: Calls) -> None:
    for weak in ("aaaaaaaaaaaaaaaa", "ab" * 12):
        with pytest.raises(UsageError, match="repeats itself"):
            create_app(calls, admin_token=weak)
    create_app(calls, admin_token="86bf95a78845c869")  # 16 random hex digits pass


def test_many_addresses_share_one_login_budget(calls: Calls) -> None:
    """200 wrong tokens from 200 addresses: each address's own back-off never fires, but the
    server's does, so only the free few are even checked."""
    from sim2human.webapp.routes.deps import LOGIN_FREE

    app = create_app(calls, admin_token=ADMIN, clock=FakeClock())
    hosts = [f"10.1.{i // 250}.{i % 250 + 1}" for i in range(200)]
    codes = [
        c.post("/admin/login", data={"token": "wrong"}, follow_redirects=False).status_code
        for c in clients(app, *hosts)
    ]
    assert codes.count(403) == LOGIN_FREE + 1 and codes.count(429) == 200 - LOGIN_FREE - 1
