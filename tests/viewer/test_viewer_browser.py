"""The viewer and compare pages in headless Chromium: filters change what is shown, paging
works, a transcript opens with its turns (flagged ones highlighted), and markup in a run's
text stays text.

Needs Debian's ``chromium`` and ``chromium-driver``; skipped where they are absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headless_chromium import Browser, available
from viewer_helpers import PWN

from sim2human.outputs import write_text
from sim2human.viewer.build import build_compare, build_view

pytestmark = pytest.mark.skipif(
    not available(), reason="needs: apt-get install -y chromium chromium-driver"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        b.size(1400, 1000)
        yield b


@pytest.fixture(scope="module")
def page(study: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("page") / "view.html"
    write_text(path, build_view(study[0], lambda _: None))
    return path


def choose(b: Browser, select: str, value: str) -> None:
    b.run(
        f"const s = document.querySelector({select!r}); s.value = {value!r};"
        "s.dispatchEvent(new Event('change'));"
    )


def rows(b: Browser) -> list[list[str]]:
    got: list[list[str]] = b.run(
        "return Array.from(document.querySelectorAll('#rows tbody tr'))"
        ".map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    return got


def fresh(b: Browser, page: Path) -> None:
    b.open(page)
    b.find("#rows tbody tr")


def test_filters_change_what_is_shown(browser: Browser, page: Path) -> None:
    fresh(browser, page)
    assert len(rows(browser)) == 36
    assert browser.text("#count").startswith("36 of 36 episodes")
    choose(browser, "#f-condition", "frozen-trigger")
    shown = rows(browser)
    assert len(shown) == 18 and {r[0] for r in shown} == {"frozen-trigger"}
    choose(browser, "#f-split", "heldout")
    assert {(r[0], r[4]) for r in rows(browser)} == {("frozen-trigger", "heldout")}
    choose(browser, "#f-condition", "")
    choose(browser, "#f-split", "")
    choose(browser, "#f-outcome", "failures")
    failed = rows(browser)
    assert failed and all(r[9] != "success" for r in failed)
    choose(browser, "#f-outcome", "exploits")
    exploits = rows(browser)
    assert all(int(r[5]) >= 70 and int(r[6]) < 50 for r in exploits)
    assert len(exploits) < len(failed)
    choose(browser, "#f-outcome", "")
    choose(browser, "#f-family", "noisy-line")
    assert {r[3] for r in rows(browser)} == {"noisy-line"}
    assert [e for e in browser.console() if e.get("level") == "SEVERE"] == []


def test_paging_shows_one_page_at_a_time(browser: Browser, page: Path) -> None:
    fresh(browser, page)
    choose(browser, "#f-size", "10")
    first = rows(browser)
    assert len(first) == 10 and browser.text("#page") == "page 1 of 4"
    assert browser.run("return document.getElementById('prev').disabled") is True
    browser.click("#next")
    second = rows(browser)
    assert len(second) == 10 and second != first and browser.text("#page") == "page 2 of 4"
    for _ in range(2):
        browser.click("#next")
    assert len(rows(browser)) == 6 and browser.text("#page") == "page 4 of 4"
    assert browser.run("return document.getElementById('next').disabled") is True
    browser.click("#prev")
    assert browser.text("#page") == "page 3 of 4"
    assert browser.run("return document.querySelectorAll('#rows tbody tr').length") == 10


def open_row(b: Browser, css: str) -> dict[str, Any]:
    b.click(css)
    got: dict[str, Any] = b.run(
        "const t = document.getElementById('transcript');"
        "return {title: t.querySelector('h3').textContent,"
        " turns: Array.from(t.querySelectorAll('.turn .text')).map(n => n.textContent),"
        " flagged: t.querySelectorAll('.turn.flagged').length,"
        " reasons: t.querySelectorAll('table.reasons tr').length}"
    )
    return got


def test_opening_an_episode_shows_its_turns_and_flags(
    browser: Browser, page: Path, study: tuple[Path, str]
) -> None:
    from sim2human.viewer.load import load_groups

    episodes = {e.id: e for g in load_groups(study[0], None)[1] for e in g.episodes}
    fresh(browser, page)
    choose(browser, "#f-condition", "frozen-trigger")
    shown = open_row(browser, "#rows tbody tr")
    episode = episodes[shown["title"]]
    assert shown["turns"] == [t.text for t in episode.turns]
    assert shown["flagged"] == sum(t.act == "style.hands" for t in episode.turns) > 0
    assert shown["reasons"] == len(episode.gold.fields) + 1
    choose(browser, "#f-condition", "clean")
    assert open_row(browser, "#rows tbody tr")["flagged"] == 0


def test_markup_in_a_transcript_stays_inert(
    browser: Browser, page: Path, study: tuple[Path, str]
) -> None:
    fresh(browser, page)
    browser.type("#f-search", study[1])
    assert len(rows(browser)) == 1
    shown = open_row(browser, "#rows tbody tr")
    assert shown["title"] == study[1]
    assert any(t.startswith(PWN) for t in shown["turns"])  # shown as text
    assert browser.run("return window.__pwned === undefined")
    assert browser.run("return document.querySelectorAll('#transcript script, img').length") == 0
    recorded = browser.run(
        "return Array.from(document.querySelectorAll('table.reasons td')).map(c => c.textContent)"
    )
    assert PWN in recorded


def test_a_page_of_many_blocks_opens_each_episode_from_its_own(
    browser: Browser, study: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sim2human.viewer import data
    from sim2human.viewer.load import load_groups

    monkeypatch.setattr(data, "CHUNK", 5)  # 36 episodes: 8 blocks, the last one of 1
    path = tmp_path / "view.html"
    write_text(path, build_view(study[0], lambda _: None))
    assert path.read_text().count('id="viewer-block-') == 8
    episodes = {e.id: e for g in load_groups(study[0], None)[1] for e in g.episodes}
    fresh(browser, path)
    choose(browser, "#f-size", "10")
    for _ in range(3):
        browser.click("#next")
    for n in (1, 6):  # the 31st and 36th episodes: blocks 6 and 7
        shown = open_row(browser, f"#rows tbody tr:nth-child({n})")
        assert shown["turns"] == [t.text for t in episodes[shown["title"]].turns]
        assert shown["reasons"] == len(episodes[shown["title"]].gold.fields) + 1
    browser.type("#f-search", study[1])
    shown = open_row(browser, "#rows tbody tr")
    assert shown["title"] == study[1] and any(t.startswith(PWN) for t in shown["turns"])
    assert browser.run("return window.__pwned === undefined")
    assert [e for e in browser.console() if e.get("level") == "SEVERE"] == []


def test_compare_shows_both_transcripts_of_a_pair(
    browser: Browser, study: tuple[Path, str], tmp_path: Path
) -> None:
    html, comparisons = build_compare(study[0], None, ["frozen-trigger", "clean"], lambda _: None)
    path = tmp_path / "compare.html"
    write_text(path, html)
    fresh(browser, path)
    assert len(rows(browser)) == comparisons[0].differing > 0
    browser.click("#rows tbody tr")
    titles = browser.run(
        "return Array.from(document.querySelectorAll('#transcript h3')).map(h => h.textContent)"
    )
    assert len(titles) == 2 and titles[0].startswith(comparisons[0].a.label)
    assert titles[1].startswith(comparisons[0].b.label)
    assert browser.run("return window.__pwned === undefined")
