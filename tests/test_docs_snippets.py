"""Code in the docs pages that claims to run does: the block after ``<!-- docs-test: NAME -->``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from sim2human.testing import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- docs-test: ([a-z-]+) -->\n```[a-z]*\n(.*?)```", re.DOTALL)


def snippets(page: str) -> dict[str, str]:
    return dict(BLOCK.findall((ROOT / "docs" / page).read_text(encoding="utf-8")))


def test_the_llm_agent_snippet_runs_against_an_endpoint(tmp_path: Path) -> None:
    code = snippets("guides/endpoints.md")["llm-agent"]
    assert "http://127.0.0.1:8000/v1" in code and "per_member=10" in code
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "prompt.txt").write_text("You take a patient's intake details by phone.")
    with FakeOpenAI() as fake:
        # one episode per member keeps the test short; the code is the page's
        run = code.replace("http://127.0.0.1:8000/v1", fake.base_url)
        run = run.replace("per_member=10", "per_member=1") + "\nprint(len(episodes))\n"
        done = subprocess.run(
            [sys.executable, "-c", run],
            cwd=tmp_path,
            env={**os.environ, "MY_KEY": "not-a-real-key"},
            capture_output=True,
            text=True,
            timeout=600,
        )
        seen = list(fake.seen)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 0
    assert seen and all(s.body["model"] == "my-agent" for s in seen)
    assert all(s.headers["authorization"] == "Bearer not-a-real-key" for s in seen)
