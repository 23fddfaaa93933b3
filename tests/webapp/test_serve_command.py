"""``sim2human human serve``: bad input is one line and exit 2 before anything is served or
written (a short admin token, a damaged checkpoint, a proxy that is not an address)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sim2human.cli.app import main
from sim2human.store.layout import CHECKPOINT
from sim2human.webapp import admin


def test_serve_refuses_a_short_token_in_one_line(
    run_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(admin.ADMIN_TOKEN_ENV, "short")
    assert main(["human", "serve", str(run_dir), "--db", str(tmp_path / "d.sqlite")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "SIM2HUMAN_ADMIN_TOKEN is 5 characters" in err
    assert "short" not in err.replace("SIM2HUMAN", "")  # the token itself is not printed
    assert not (tmp_path / "d.sqlite").exists()


def test_serve_names_a_garbage_checkpoint_in_one_line(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    bad = next(run.glob(f"conditions/*/seed-*/{CHECKPOINT}"))
    bad.write_bytes(b"not a checkpoint" * 100)
    code = main(["human", "serve", str(run), "--db", str(tmp_path / "d.sqlite")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert str(bad) in err and "not a sim2human checkpoint" in err


def test_a_trusted_proxy_must_be_an_address(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["human", "serve", str(run_dir), "--trusted-proxy", "localhost"]) == 2
    assert "--trusted-proxy 'localhost': not an IP address" in capsys.readouterr().err


def test_a_busy_port_is_a_usage_error_and_creates_no_database(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = tmp_path / "d.sqlite"
        code = main(["human", "serve", str(run_dir), "--port", str(port), "--db", str(db)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip() == (
        f"error: --port {port}: 127.0.0.1:{port} is already in use; choose another --port"
    )
    assert "call page" not in captured.out  # no URL printed for a server that never ran
    assert not db.exists()
