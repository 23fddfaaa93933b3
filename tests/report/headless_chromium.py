"""A headless Chromium session driven through chromedriver's W3C WebDriver HTTP API.

About 80 lines of urllib instead of selenium: the test needs five endpoints (new session, window
size, navigate, run a script, screenshot) plus the browser log, and selenium would add a pip
dependency (with urllib3, trio, websocket-client) to the dev set-up for that. Needs the Debian
packages ``chromium`` and ``chromium-driver``.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
TIMEOUT = 30.0
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
]


def available() -> bool:
    return Path(CHROMIUM).exists() and shutil.which(CHROMEDRIVER) is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Browser:
    def __init__(self, page_load: str = "normal") -> None:
        """``page_load``: WebDriver's page load strategy; "none" returns from ``open`` at once,
        so a caller can time what appears while the page is still loading."""
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.profile = tempfile.TemporaryDirectory(prefix="sim2human-chromium-")
        self.driver = subprocess.Popen(
            [CHROMEDRIVER, f"--port={self.port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                if self._call("GET", "/status")["ready"]:
                    break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                self.close()
                raise TimeoutError("chromedriver did not become ready")
            time.sleep(0.1)
        options = {"binary": CHROMIUM, "args": [*FLAGS, f"--user-data-dir={self.profile.name}"]}
        caps = {
            "browserName": "chrome",
            "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL"},
            "pageLoadStrategy": page_load,
        }
        self.session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})[
            "sessionId"
        ]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return json.loads(resp.read())["value"]

    def _s(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def size(self, width: int, height: int) -> None:
        self._s("POST", "/window/rect", {"width": width, "height": height})

    def open(self, path: Path) -> None:
        self._s("POST", "/url", {"url": path.resolve().as_uri()})

    def go(self, url: str) -> None:
        self._s("POST", "/url", {"url": url})

    def url(self) -> str:
        return str(self._s("GET", "/url"))

    def find(self, css: str, timeout_s: float = 30.0) -> str:
        """The WebDriver id of the first element matching ``css``, waiting for it to appear (a
        click that navigates returns before the next page has loaded)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self._s("POST", "/elements", {"using": "css selector", "value": css})
            if found:
                return str(next(iter(found[0].values())))
            if time.monotonic() > deadline:
                raise LookupError(f"no element {css!r} within {timeout_s:.0f} s")
            time.sleep(0.05)

    def _on(self, css: str, method: str, action: str, body: dict[str, Any] | None) -> Any:
        """``action`` on the element ``css``, found afresh if the page replaced it meanwhile
        (WebDriver answers 404, a stale element, when a page loads between find and act)."""
        for attempt in range(3):
            try:
                return self._s(method, f"/element/{self.find(css)}/{action}", body)
            except urllib.error.HTTPError as err:
                if err.code != 404 or attempt == 2:
                    raise
                time.sleep(0.1)
        return None

    def exists(self, css: str) -> bool:
        return bool(self._s("POST", "/elements", {"using": "css selector", "value": css}))

    def click(self, css: str) -> None:
        self._on(css, "POST", "click", {})

    def type(self, css: str, text: str) -> None:
        self._on(css, "POST", "value", {"text": text})

    def text(self, css: str) -> str:
        return str(self._on(css, "GET", "text", None))

    def run(self, script: str) -> Any:
        return self._s("POST", "/execute/sync", {"script": script, "args": []})

    def console(self) -> list[dict[str, Any]]:
        """Browser log entries (console messages and page errors) since the last call."""
        entries: list[dict[str, Any]] = self._s("POST", "/se/log", {"type": "browser"})
        return entries

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self._s("GET", "/screenshot")))

    def close(self) -> None:
        try:
            if hasattr(self, "session"):
                self._call("DELETE", f"/session/{self.session}")
        finally:
            self.driver.terminate()
            self.driver.wait(timeout=TIMEOUT)
            self.profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
