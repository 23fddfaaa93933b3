"""A flood of starts from many addresses cannot lock newcomers out (audit N7: 37 addresses made
579 starts in 2.2 s, filled the server-wide ceiling, and the next client got 429 for a minute).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from webapp_helpers import ADMIN, FakeClock

from sim2human.store.calls import HumanStore
from sim2human.webapp.admission import VISITOR_COOKIE, StartAdmission
from sim2human.webapp.agents import AgentPool
from sim2human.webapp.app import Limits, create_app
from sim2human.webapp.calls import Calls


@pytest.fixture()
def calls(run_dir: Path, db: Path) -> Calls:
    return Calls(HumanStore(db), AgentPool.from_run(run_dir, ["scripted"]))


def start(c: TestClient) -> tuple[int, str | None]:
    r = c.post("/start", data={"consent": "yes"}, follow_redirects=False)
    return r.status_code, r.headers.get("retry-after")


def test_a_flood_from_37_addresses_leaves_a_newcomer_room(calls: Calls) -> None:
    """The audit's reproduction, with the page's default limits: 20 starts from each of
    127.0.0.3-39, then one from 127.0.0.200."""
    clock = FakeClock()
    app = create_app(calls, admin_token=ADMIN, clock=clock)
    flood = [TestClient(app, client=(f"127.0.0.{i}", 40000)) for i in range(3, 40)]
    answers = [start(c) for c in flood for _ in range(20)]
    started = sum(code == 303 for code, _ in answers)
    refused = [wait for code, wait in answers if code == 429]
    limits = Limits()
    shared = limits.starts_per_minute - limits.newcomer_reserve
    # repeat starts stop at 450; addresses that came after that still had their first start
    assert all(answers[20 * i][0] == 303 for i in range(37))
    late = 37 - -(-shared // 20)  # addresses whose first start came after the 450 (14)
    assert started == shared + late  # 464 of 740, where 600 filled the ceiling before
    assert len(refused) == 37 * 20 - started
    assert all(wait is not None and 1 <= int(wait) <= 60 for wait in refused)
    fresh = TestClient(app, client=("127.0.0.200", 40000))
    assert start(fresh)[0] == 303  # was 429 "Too many calls are starting right now"
    assert start(flood[0])[0] == 429  # the flood is still held
    clock.advance(60.0)
    assert start(flood[0])[0] == 303  # ...for a minute, not for good


def test_the_reserve_is_for_newcomers_only() -> None:
    """Repeat starts never take the reserve; once it is spent by newcomers, everyone waits,
    and the wait is until the oldest start leaves the minute."""
    clock = FakeClock()
    gate = StartAdmission(
        per_visitor=5, per_client=100, per_minute=10, newcomer_reserve=4, clock=clock
    )
    assert [gate.admit("heavy", None) for _ in range(6)] == [None] * 6
    held = gate.admit("heavy", None)
    assert held is not None and held.retry_after_s == pytest.approx(60.0)
    clock.advance(10.0)
    assert all(gate.admit(f"new-{i}", None) is None for i in range(4))
    full = gate.admit("new-last", None)
    assert full is not None and full.retry_after_s == pytest.approx(50.0)
    clock.advance(50.0)  # the heavy client's six starts leave the window
    assert gate.admit("new-last", None) is None


def test_a_browser_is_held_to_its_own_budget_behind_a_shared_address(calls: Calls) -> None:
    """Two browsers behind one address (a lab's NAT): one that keeps starting uses its visitor
    budget, not the whole address's, so the other still starts."""
    app = create_app(calls, admin_token=ADMIN, clock=FakeClock())
    restless, colleague = (TestClient(app, client=("10.1.0.1", 40000)) for _ in range(2))
    for browser in (restless, colleague):
        browser.get("/")
        assert browser.cookies.get(VISITOR_COOKIE)
    codes = [start(restless)[0] for _ in range(8)]
    assert codes == [303] * Limits().starts_per_visitor + [429] * 3
    assert start(colleague)[0] == 303
    restless.cookies.clear()
    restless.cookies.set(VISITOR_COOKIE, "forged")  # a value never handed out is ignored
    assert start(restless)[0] == 303  # ...and the start is held by the address alone


def test_the_visitor_cookie_is_kept_and_secure_over_tls(calls: Calls) -> None:
    app = create_app(calls, admin_token=ADMIN, clock=FakeClock())
    plain = TestClient(app)
    first = plain.get("/")
    assert "httponly" in first.headers["set-cookie"].lower()
    assert "secure" not in first.headers["set-cookie"].lower()
    assert "set-cookie" not in plain.get("/").headers  # the browser keeps its name
    tls = TestClient(app, base_url="https://testserver")
    assert "secure" in tls.get("/").headers["set-cookie"].lower()
