"""report.html in headless Chromium: no console errors, every plot loaded, fits 1280 px.

Needs Debian's ``chromium`` and ``chromium-driver``
(``apt-get install -y chromium chromium-driver``); skipped where they are absent. Set
SIM2HUMAN_SCREENSHOTS=DIR to keep the screenshots.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from headless_chromium import Browser, available

from planted_runs import write_sub_run
from sim2human.diagnostics.stored import diagnose_run
from sim2human.metrics import embeddings
from sim2human.report.html import write_report

PLOTS = {"learning curves", "overoptimisation", "gold by family", "behaviour over training"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("study")
    write_sub_run(root / "conditions" / "frozen-trigger" / "seed-0", exploit=True)
    write_sub_run(root / "conditions" / "clean" / "seed-0", exploit=False)
    with pytest.MonkeyPatch.context() as mp:  # lexical embeddings: MiniLM is tested elsewhere
        mp.setattr(embeddings, "_load_minilm", lambda: "not needed here")
        diagnose_run(root)
        return write_report(root).html


def test_report_is_self_contained(report: Path) -> None:
    html = report.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert html.count('src="data:image/png;base64,') == len(PLOTS)
    assert "<script" not in html


@pytest.mark.skipif(not available(), reason="needs: apt-get install -y chromium chromium-driver")
def test_report_renders_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    with Browser() as browser:
        browser.size(1280, 900)
        browser.open(report)
        images = browser.run(
            "return Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth])"
        )
        widths = browser.run("return [document.documentElement.scrollWidth, window.innerWidth]")
        errors = [e for e in browser.console() if e.get("level") == "SEVERE"]
        browser.screenshot(tmp_path / "report-top.png")
        height = browser.run("return document.documentElement.scrollHeight")
        browser.size(1280, min(int(height) + 150, 12000))
        browser.screenshot(tmp_path / "report-full.png")
    assert errors == []
    assert {alt for alt, _, _ in images} == PLOTS
    assert all(complete and width > 0 for _, complete, width in images), images
    assert widths[0] <= widths[1], f"horizontal scroll at 1280 px: {widths}"
    assert (tmp_path / "report-full.png").stat().st_size > 10_000
    if keep := os.environ.get("SIM2HUMAN_SCREENSHOTS"):
        for shot in tmp_path.glob("report-*.png"):
            shutil.copy(shot, Path(keep) / shot.name)
