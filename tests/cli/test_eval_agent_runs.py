"""``eval-agent`` runs that can be acted on: the agent under test is recorded and never served
from the cache unless asked, and a run stopped by SIGTERM resumes to the very episodes and
tables of one that was never stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim2human.agents.llm import agent_setup
from sim2human.cli.app import main
from sim2human.scenarios.catalog import get_scenario
from sim2human.store.rundir import read_json
from sim2human.testing import FakeOpenAI, Reply, completion


def study(tmp_path: Path, cache: Path | None, per: int = 2) -> Path:
    """Two persona families held out (no simulator endpoint), ``per`` calls each member."""
    raw: dict[str, Any] = {
        "name": "tiny-eval",
        "seeds": [0],
        "train": {"episodes": 8, "batch_episodes": 8, "epochs": 1, "max_turns": 4},
        "ensemble": {
            "train": ["cooperative"],
            "heldout": ["terse-guarded", "noisy-line"],
            "members_per_family": 2,
        },
        "eval": {"episodes_per_member": per, "bootstrap": 100},
        "llm": {"cache": None if cache is None else str(cache)},
        "conditions": [{"name": "mixed", "sampler": "uniform"}],
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def says(text: str, delay_s: float = 0.0) -> Any:
    return lambda n, body: Reply(body=completion(text), delay_s=delay_s)


def agent_texts(out: Path) -> list[str]:
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return [t["text"] for r in rows for t in r["turns"] if t["speaker"] == "agent"]


def test_two_agents_under_one_model_name_are_two_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old cache keyed the agent's replies by model name and messages: the second agent,
    served under the same name, was scored on the first one's replies."""
    cfg = study(tmp_path, tmp_path / "cache.sqlite")
    runs = []
    for i, text in enumerate(["Hello, what is your name?", "Good day. Which date suits you?"]):
        with FakeOpenAI(says(text)) as fake:
            out = tmp_path / f"run-{i}"
            argv = ["eval-agent", str(cfg), "--base-url", fake.base_url, "--model", "same"]
            assert main([*argv, "--label", f"agent-{i}", "--out", str(out)]) == 0
            runs.append(out)
    first, second = (set(agent_texts(r)) for r in runs)
    assert first == {"Hello, what is your name?"}
    assert second == {"Good day. Which date suits you?"}
    printed = capsys.readouterr().out
    assert "cache: agent 0 of" in printed
    config = read_json(runs[1] / "config.json")
    agent = config["agent"]
    assert agent["label"] == "agent-1" and agent["model"] == "same"
    assert agent["served_model"] == "fake-model" and agent["cached"] is False
    assert agent["system_prompt"] and len(agent["system_prompt_sha256"]) == 12
    assert agent["tools"] == ["record", "submit"] and agent["record_by"] == "tools"
    summary = read_json(runs[1] / "summary.json")
    assert summary["llm"]["agent"]["cache_hits"] == 0 and summary["llm"]["agent"]["requests"] > 0
    assert config["population_hash"] == read_json(runs[0] / "config.json")["population_hash"]


def test_export_writes_the_system_prompt_the_agent_ran_with(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are Ada, the desk of a small hotel.")
    cfg = study(tmp_path, None)
    with FakeOpenAI(says("Hello.")) as fake:
        argv = ["eval-agent", str(cfg), "--base-url", fake.base_url, "--model", "m"]
        assert main([*argv, "--system-prompt", str(prompt), "--out", str(tmp_path / "r")]) == 0
    assert main(["export", str(tmp_path / "r"), "--format", "openai-chat"]) == 0
    row = json.loads((tmp_path / "r" / "export-openai-chat.jsonl").read_text().splitlines()[0])
    # as sent: the file's prompt and the sentence on how to hand the record over (agents.llm)
    sent = agent_setup(get_scenario("intake"), prompt.read_text(), "tools").system_prompt
    assert sent.startswith(prompt.read_text()) and sent != prompt.read_text()
    assert row["messages"][0] == {"role": "system", "content": sent}
    assert read_json(tmp_path / "r" / "config.json")["agent"]["system_prompt"] == sent


def test_cache_agent_replays_the_same_agent_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--cache-agent`` answers the same agent at the same endpoint from the cache (the count
    is printed), and never another server's agent under the same name."""
    cfg = study(tmp_path, tmp_path / "cache.sqlite")
    with FakeOpenAI(says("Hello, what is your name?")) as fake:
        argv = ["eval-agent", str(cfg), "--base-url", fake.base_url, "--model", "same"]
        assert main([*argv, "--cache-agent", "--out", str(tmp_path / "a")]) == 0
        asked = len(fake.seen)
        capsys.readouterr()
        assert main([*argv, "--cache-agent", "--out", str(tmp_path / "b")]) == 0
        assert len(fake.seen) == asked + 1  # the probe only: every reply came from the cache
    printed = capsys.readouterr().out
    hits = read_json(tmp_path / "b" / "summary.json")["llm"]["agent"]["cache_hits"]
    assert hits > 0 and f"cache: agent {hits} of {hits} replies" in printed
    with FakeOpenAI(says("Good day.")) as other:
        argv = ["eval-agent", str(cfg), "--base-url", other.base_url, "--model", "same"]
        assert main([*argv, "--cache-agent", "--out", str(tmp_path / "c")]) == 0
    assert set(agent_texts(tmp_path / "c")) == {"Good day."}


def _lines(out: Path) -> list[str]:
    return sorted((out / "episodes.jsonl").read_text().splitlines())


@pytest.mark.slow
def test_sigterm_halfway_then_resume_is_the_uninterrupted_run(tmp_path: Path) -> None:
    cfg = study(tmp_path, None, per=6)  # 4 members x 6 calls
    with FakeOpenAI(says("Hello, what is your name?", delay_s=0.02)) as fake:
        base = ["eval-agent", str(cfg), "--base-url", fake.base_url, "--model", "m"]
        whole = tmp_path / "whole"
        assert main([*base, "--out", str(whole)]) == 0
        stopped = tmp_path / "stopped"
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
        cmd = [sys.executable, "-m", "sim2human", *base, "--out", str(stopped)]
        cmd += ["--max-concurrency", "1"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        log = stopped / "episodes.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and len(log.read_text().splitlines()) >= 6:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143, err.decode()
        assert "--resume" in err.decode()
        assert (stopped / "config.json").exists()
        kept = len(_lines(stopped))
        assert 0 < kept < 24
        assert main([*base, "--out", str(stopped)]) == 2  # refused without --resume
        assert main([*base, "--out", str(stopped), "--resume"]) == 0
    assert _lines(stopped) == _lines(whole)
    assert read_json(stopped / "summary.json")["rows"] == read_json(whole / "summary.json")["rows"]


def test_the_model_an_endpoint_reports_is_stored_valid_redacted_and_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``response.model`` is the endpoint's text: it keys the cache and is stored in
    ``config.json``, so it goes through the untrusted-text policy as a completion does. A lone
    surrogate in it failed the run's ``config.json`` (UTF-8 cannot encode it), and a key the
    server echoed there was written beside the run."""
    key = "sk-test-0123456789abcdef0123"
    monkeypatch.setenv("EA_KEY", key)
    reported = f"ckpt-{key}-\ud800" + "x" * 10_000

    def reply(n: int, body: Any) -> Reply:
        return Reply(body={**completion("Hello, what is your name?"), "model": reported})

    cfg = study(tmp_path, None)
    with FakeOpenAI(reply) as fake:
        argv = ["eval-agent", str(cfg), "--base-url", fake.base_url, "--model", "m"]
        out = tmp_path / "r"
        assert main([*argv, "--api-key-env", "EA_KEY", "--no-tools", "--out", str(out)]) == 0
    agent = read_json(out / "config.json")["agent"]
    served = agent["served_model"]
    assert served.startswith("ckpt-[redacted]-\ufffd") and len(served) == 200
    assert key not in (out / "config.json").read_text()
    assert agent["tools"] == [] and agent["record_by"] == "summary"  # --no-tools: none offered


def test_the_training_split_plays_a_frozen_condition_s_own_simulator(tmp_path: Path) -> None:
    """A study's ``fixed`` condition names its own simulator (a user's, in the endpoints
    guide): ``--split train`` plays it beside the ensemble's training members."""
    raw = yaml.safe_load(study(tmp_path, None, per=1).read_text())
    frozen = {"family": "standard", "seed": 7, "capacity": 0.1, "temperature": 0}
    raw["conditions"].append({"name": "frozen", "sampler": "fixed", "simulator": frozen})
    cfg = tmp_path / "frozen.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    with FakeOpenAI(says("Hello, what is your name?")) as fake:
        out = tmp_path / "train"
        argv = ["eval-agent", str(cfg), "--base-url", fake.base_url, "--model", "m"]
        assert main([*argv, "--split", "train", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    families = sorted({r["family"] for r in rows})
    assert families == ["cooperative", "standard"]
    assert {r["split"] for r in rows} == {"train"}


def test_the_report_of_an_evaluation_reads_as_one(tmp_path: Path) -> None:
    """An evaluation trained nothing: its report and page name agents, resample episodes, and
    have no training columns, overoptimisation section or "did the agent learn" title (they
    read 'over training runs' and 'condition' before)."""
    with FakeOpenAI(says("Hello, what is your name?")) as fake:
        out = tmp_path / "eval"
        argv = ["eval-agent", str(study(tmp_path, None, per=1)), "--base-url", fake.base_url]
        assert main([*argv, "--model", "m", "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out), "--quiet"]) == 0
    md = (out / "report.md").read_text()
    assert md.startswith("# evaluation `") and "| agent | train proxy" in md
    assert "bootstrap over episodes" in md and "over training runs" not in md
    assert "episodes trained" not in md and "Overoptimisation" not in md
    assert "| condition |" not in md  # the exploit finder's rows are agents too
    assert "## Agent under test" in md and "system prompt sha256" in md  # what was evaluated
    assert "resample training runs" not in md
    # diversity of what it met: the held-out members it played, not the study's training ones
    diversity = md.split("## Simulator diversity")[1].split("\n## ")[0]
    assert "| held-out ensemble | ensemble |" in diversity and "cooperative" not in diversity
    page = (out / "report.html").read_text()
    assert "Overoptimisation" not in page and "did the agent learn" not in page
    assert "over training runs" not in page and '<th class="l">condition</th>' not in page
    assert '<th class="l">agent</th>' in page


ROOT = Path(__file__).resolve().parents[2]
SUPPORT_EVAL = ROOT / "docs" / "results" / "eval-agent-support.md"


@pytest.mark.skipif(
    not (ROOT.parent / "shared" / "data" / "multiwoz21-convlab2").is_dir()
    and "SIM2HUMAN_DATA" not in os.environ,
    reason="the MultiWOZ corpus is not beside the repository",
)
def test_the_support_evaluation_page_names_the_population_its_command_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/results/eval-agent-support.md's command (``--sample 20`` real callers plus one member
    per held-out family) plans the 23 calls and meets the population the page names."""
    page = SUPPORT_EVAL.read_text(encoding="utf-8")
    with FakeOpenAI(says("Hello, how can I help?")) as fake:
        out = tmp_path / "support-eval"
        argv = ["eval-agent", str(ROOT / "examples" / "support-eval.yaml"), "--base-url"]
        argv += [fake.base_url, "--model", "m", "--sample", "20", "--episodes", "1"]
        assert main([*argv, "--out", str(out)]) == 0
    said = capsys.readouterr()
    plan = next(line for line in (said.out + said.err).splitlines() if line.startswith("plan:"))
    assert plan in page and "23 calls in all" in plan
    population = read_json(out / "config.json")["population_hash"]
    assert f"Population hash `{population}`" in page
