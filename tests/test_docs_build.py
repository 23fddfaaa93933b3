"""``scripts/test``'s docs step fails on a broken site (``--quiet`` once made ``--strict`` pass
anything: it hides the warnings that strict mode counts)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def docs_step() -> str:
    lines = (ROOT / "scripts" / "test").read_text().splitlines()
    (line,) = [ln for ln in lines if "mkdocs build" in ln]
    return line


def test_the_docs_step_is_strict_and_not_quiet() -> None:
    line = docs_step()
    assert "--strict" in line
    assert "--quiet" not in line and " -q" not in line


@pytest.mark.skipif(
    shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None,
    reason="mkdocs is in the dev extra",
)
def test_the_docs_step_fails_on_a_page_left_out_of_the_nav(tmp_path: Path) -> None:
    for name in ("mkdocs.yml", "docs", "examples"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, tmp_path / name, symlinks=True)
        else:
            shutil.copy(src, tmp_path / name)
    (tmp_path / "src").symlink_to(ROOT / "src")
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (tmp_path / "docs" / "orphan.md").write_text("# Not in the nav\n")
    script = f'set -euo pipefail\nsite=$(mktemp -d)\n{docs_step()}\nrm -rf "$site"\n'
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0
    assert "orphan.md" in done.stdout + done.stderr
