"""Helpers for the call-page tests: a small run directory, and what a person types."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from sim2human.agents.policy import PolicyAgent
from sim2human.experiments.study.config import load_study, parse_study
from sim2human.scenarios.catalog import get_scenario
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.store.layout import CHECKPOINT

ADMIN = "test-admin-token-7f3a9c"


class FakeClock:
    """A monotonic clock the test moves by hand (rate limits and back-off read it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_run(root: Path, conditions: int = 2, scenario_ref: str | None = None) -> Path:
    """A study run directory as `study` leaves it: config.yaml and one checkpoint per
    condition and seed (untrained policies: these tests are about the page, not the agents);
    the collapse study's, on ``scenario_ref`` when given (a scenario file's path)."""
    path = resources.files("sim2human").joinpath("examples", "collapse.yaml")
    with resources.as_file(path) as config:
        cfg = load_study(config, quick=True)
    if scenario_ref is not None:  # without intake's corpus families, which fit intake alone
        raw = cfg.model_dump(mode="json")
        raw["scenario"] = scenario_ref
        raw["ensemble"]["heldout"] = [f for f in raw["ensemble"]["heldout"] if f != "aci-heldout"]
        raw["ensemble"]["members"] = {}
        raw["eval"]["per_family"] = {}
        raw["conditions"] = [{**c, "mix": None} for c in raw["conditions"]]
        raw.pop("quick", None)
        cfg = parse_study(raw)
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    scenario = get_scenario(cfg.scenario)
    for c in cfg.conditions[:conditions]:
        for seed in cfg.seeds:
            target = root / "conditions" / c.name / f"seed-{seed}" / CHECKPOINT
            target.parent.mkdir(parents=True, exist_ok=True)
            PolicyAgent(scenario, seed=seed).save(target)
    return root


def answer(profile: dict[str, object], field: str | None) -> str:
    """What a person reading their card types when asked for ``field``."""
    from sim2human.webapp.card import plain

    if field == "red_flag":
        return "Yes, some chest pain." if profile["red_flag"] else "No, none of that."
    if field is None or field not in profile:
        return "Yes, that is right."
    return plain(IntakeScenario(), field, profile[field])  # type: ignore[arg-type]


def opening(profile: dict[str, object]) -> str:
    return f"Hello, I'm calling about my {profile['complaint']}."


def _serve(run: str, db: str, agents: str, port: int) -> None:
    from sim2human.store.calls import HumanStore
    from sim2human.webapp import serving
    from sim2human.webapp.agents import AgentPool
    from sim2human.webapp.app import create_app
    from sim2human.webapp.calls import Calls

    calls = Calls(HumanStore(Path(db)), AgentPool.from_run(Path(run), agents.split(",")))
    serving.serve(create_app(calls, admin_token=ADMIN), "127.0.0.1", port)


class Server:
    """The call page in another process, so it can be killed with SIGKILL.

    ``cli=True`` runs the real ``sim2human human serve`` command (a fresh interpreter: slow to
    import on a busy machine); otherwise a forked copy of this process serves the same app.
    """

    def __init__(self, run: Path, db: Path, log: Path, agents: str = "scripted") -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.run, self.db, self.agents = run, db, agents
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.fork: Any = None

    def start(self, cli: bool = False) -> Server:
        import multiprocessing

        import httpx

        if cli:
            args = [
                sys.executable,
                "-m",
                "sim2human.cli",
                "human",
                "serve",
                str(self.run),
                "--port",
                str(self.port),
                "--db",
                str(self.db),
                "--agents",
                self.agents,
            ]
            env = {**os.environ, "SIM2HUMAN_ADMIN_TOKEN": ADMIN}
            with self.log.open("ab") as out:
                self.proc = subprocess.Popen(args, stdout=out, stderr=out, env=env)
        else:
            ctx = multiprocessing.get_context("fork")
            args = (str(self.run), str(self.db), self.agents, self.port)
            self.fork = ctx.Process(target=_serve, args=args, daemon=True)
            self.fork.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise TimeoutError("server did not start")

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, nothing is flushed on the way out."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
            self.proc = None
        if self.fork is not None:
            os.kill(self.fork.pid, signal.SIGKILL)
            self.fork.join(timeout=10)
            self.fork = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        if self.fork is not None:
            self.fork.terminate()
            self.fork.join(timeout=10)
