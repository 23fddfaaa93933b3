"""kill -9 of the server mid-call: restarted, the call continues and nothing is lost."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from webapp_helpers import ADMIN, Server, answer, opening

from sim2human.store.calls import HumanStore
from sim2human.types import Episode


def transcript(html: str) -> list[str]:
    return re.findall(r'<span class="text">(.*?)</span>', html, flags=re.S)


def seen(html: str) -> int:
    m = re.search(r'name="seen" value="(\d+)"', html)
    assert m is not None
    return int(m.group(1))


def test_killed_server_loses_nothing_and_the_call_resumes(
    run_dir: Path, db: Path, tmp_path: Path
) -> None:
    server = Server(run_dir, db, tmp_path / "server.log").start()
    try:
        c = httpx.Client(base_url=server.url, timeout=10.0)
        r = c.post("/start", data={"consent": "yes", "mode": "card"})
        token = r.headers["location"].rsplit("/", 1)[-1]
        c.post(f"/call/{token}/begin")
        sid_store = HumanStore(db)
        s = sid_store.by_token(token)
        assert s is not None and s.profile is not None
        profile = s.profile
        text = opening(profile)
        for _ in range(4):
            page = c.get(f"/call/{token}").text
            c.post(f"/call/{token}/say", data={"seen": seen(page), "text": text})
            s = sid_store.by_token(token)
            assert s is not None
            text = answer(profile, s.turns[-1].field)
        before = transcript(c.get(f"/call/{token}").text)
        assert len(before) == 8

        server.kill()
        server.start(cli=True)  # as an operator would: the command again
        after = transcript(c.get(f"/call/{token}").text)
        assert after == before  # every acknowledged turn survived the kill
        while 'id="say"' in (page := c.get(f"/call/{token}").text):
            c.post(f"/call/{token}/say", data={"seen": seen(page), "text": text})
            s = sid_store.by_token(token)
            assert s is not None
            text = answer(profile, s.turns[-1].field)
        rated = c.post(f"/call/{token}/rate", data={"rating": "3", "details": "yes"})
        assert rated.status_code == 303

        server.kill()  # straight after the rating was acknowledged
        server.start()
        assert "Thank you" in c.get(f"/call/{token}").text
        c.post("/admin/login", data={"token": ADMIN})
        (line,) = c.get("/admin/export.jsonl").text.splitlines()
        ep = Episode.model_validate_json(line)
        assert ep.gold.success and ep.proxy == 0.5
        assert [t.text for t in ep.turns][: len(before)] == [
            t.replace("&#39;", "'") for t in before
        ]
        assert [t.speaker for t in ep.turns] == ["user", "agent"] * (len(ep.turns) // 2)
        sid_store.close()
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text()
    assert ADMIN not in log and token not in log
