"""``sim2human model serve``: prints where it serves, answers, stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sim2human.cli.model import model_app
from sim2human.errors import ModelUnavailableError
from sim2human.llm import local
from sim2human.llm.client import ChatClient, EndpointConfig

SRC = Path(__file__).resolve().parents[2] / "src"


def test_help_lists_the_commands() -> None:
    result = CliRunner().invoke(model_app, ["--help"])
    assert result.exit_code == 0
    assert "serve" in result.output and "bench" in result.output


def test_serve_answers_then_stops_cleanly_on_ctrl_c() -> None:
    try:
        local.gguf_path()
        local.xllamacpp_module()
    except ModelUnavailableError as exc:
        pytest.skip(f"embedded model not installed: {exc}")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim2human.cli.model", "serve", "--parallel", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().split()[-1]
        model = proc.stdout.readline().split()[-1]
        assert base_url.startswith("http://127.0.0.1:") and model == local.MODEL_NAME
        client = ChatClient(EndpointConfig(base_url=base_url, model=model, timeout_s=30))
        result = client.chat_sync([{"role": "user", "content": "Hi"}], temperature=0, max_tokens=4)
        assert result.completion_tokens > 0
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
        assert time.monotonic() - start < 10
        assert "stopped" in (proc.stderr.read() if proc.stderr else "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
