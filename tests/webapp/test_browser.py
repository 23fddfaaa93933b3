"""A whole call in headless Chromium: consent, card, ten turns and more, rating; then the admin
export holds the episode with the right gold.

Needs Debian's ``chromium`` and ``chromium-driver`` (``scripts/setup --dev`` installs them);
skipped where they are absent. Set SIM2HUMAN_SCREENSHOTS=DIR to keep screenshots of the pages.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from headless_chromium import Browser, available
from webapp_helpers import ADMIN, Server, answer, opening

from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.store.call_records import Session
from sim2human.store.calls import HumanStore
from sim2human.types import Episode, Termination


def settled(b: Browser, store: HumanStore, token: str, at_least: int) -> Session:
    """Wait until the message is stored and the page shows the result (a click on a form
    button returns once the request is sent, not when the next page has loaded)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        s = store.by_token(token)
        assert s is not None
        n = len(s.turns)
        if n >= at_least and (
            b.exists(f'input[name=seen][value="{n}"]') or b.exists("#rate") or b.exists("#thanks")
        ):
            return s
        time.sleep(0.05)
    raise TimeoutError(f"the page did not show turn {at_least}")


def appears(b: Browser, selector: str, timeout_s: float = 30.0) -> bool:
    """Whether ``selector`` shows up within ``timeout_s`` (a click returns before the next page
    has loaded, so checking at once races the browser on a busy machine)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if b.exists(selector):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not available(), reason="needs: apt-get install -y chromium chromium-driver")
def test_a_whole_call_in_a_real_browser(run_dir: Path, db: Path, tmp_path: Path) -> None:
    shots = Path(os.environ.get("SIM2HUMAN_SCREENSHOTS", tmp_path))
    server = Server(run_dir, db, tmp_path / "server.log").start()
    store = HumanStore(db)
    try:
        with Browser() as b:
            b.size(1200, 900)
            b.go(server.url + "/")
            b.click("#consent")
            b.click("#mode-card")
            b.click("#start")
            assert appears(b, "#begin"), "the card page did not load after 'start'"
            token = b.url().rsplit("/", 1)[-1]
            s = store.by_token(token)
            assert s is not None and s.profile is not None
            profile = s.profile
            assert "Date of birth" in b.text("#card")
            b.click("#begin")
            assert appears(b, "#say"), "the call page did not load after 'begin'"
            text, sent = opening(profile), 0
            while b.exists("#say"):
                b.type("#text", text)
                b.click("#send")
                sent += 1
                s = settled(b, store, token, 2 * sent - 1)
                text = answer(profile, s.turns[-1].field)
                if sent == 4:  # the whole page, card and all (the README's picture)
                    b.size(1200, 1000)
                    b.screenshot(shots / "human-call.png")
                    b.size(1200, 900)
            assert sent >= 10
            shown = b.text("#transcript") if b.exists("#transcript") else ""
            assert shown == ""  # the rating page follows the call
            b.click("#rating-4")
            b.click("#details-yes")
            b.type("#comment", "Quick and clear.")
            b.click("#rate")
            assert "saved" in b.text("#thanks")
            errors = [e for e in b.console() if e.get("level") == "SEVERE"]
            b.go(server.url + "/admin")
            b.type("#token", ADMIN)
            b.click("button[type=submit]")
            assert "scripted" in b.text("#agents")
            b.go(server.url + "/admin/export.jsonl")
            exported = b.text("body").splitlines()
    finally:
        server.stop()
    assert errors == []
    (ep,) = [Episode.model_validate_json(line) for line in exported]
    s = store.by_token(token)
    assert s is not None and s.record is not None
    assert ep.profile == profile and ep.termination == Termination.COMPLETED
    assert ep.gold == IntakeScenario().grade(profile, s.record, Termination.COMPLETED)
    assert ep.gold.success and ep.proxy == 0.75 and ep.n_turns == sent
    assert len([t for t in ep.turns if t.speaker == "user"]) == sent
