"""The viewer's screenshots in docs/images/, taken in headless Chromium from a run's page.

    PYTHONPATH=src:tests/report .venv/bin/python scripts/viewer_screenshots.py VIEW_HTML [OUT_DIR]

VIEW_HTML is the page ``sim2human view RUN_DIR`` wrote (the docs use the demo run's). Writes
``viewer-failures.png`` (the episode list filtered to failures) and ``viewer-transcript.png``
(a frozen-small failure open, its exploit turns highlighted). Needs Debian's ``chromium`` and
``chromium-driver`` and ``tests/report/headless_chromium.py`` on the path.
"""

from __future__ import annotations

import sys
from pathlib import Path

from headless_chromium import Browser

CHOOSE = (
    "const s = document.querySelector('{css}'); s.value = '{value}';"
    "s.dispatchEvent(new Event('change'));"
)
FIRST_FLAGGED = (
    "const rows = document.querySelectorAll('#rows tbody tr');"
    "for (const r of rows) { r.click();"
    " if (document.querySelector('#transcript .turn.flagged')) return r.dataset.index; }"
    "return null;"
)


def choose(b: Browser, css: str, value: str) -> None:
    b.run(CHOOSE.replace("{css}", css).replace("{value}", value))


def main() -> None:
    page = Path(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("docs/images")
    out.mkdir(parents=True, exist_ok=True)
    with Browser() as b:
        b.size(1400, 900)
        b.open(page)
        b.find("#rows tbody tr")
        choose(b, "#f-outcome", "failures")
        choose(b, "#f-size", "25")
        b.run("document.getElementById('episodes').scrollIntoView()")
        b.screenshot(out / "viewer-failures.png")
        choose(b, "#f-condition", "frozen-small")
        choose(b, "#f-split", "heldout")
        if b.run(FIRST_FLAGGED) is None:
            raise SystemExit("no failed frozen-small episode with a flagged turn on page 1")
        b.size(1400, 1100)
        b.run("document.getElementById('episodes').scrollIntoView()")
        b.screenshot(out / "viewer-transcript.png")


if __name__ == "__main__":
    main()
