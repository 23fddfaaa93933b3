"""Load on the call page: N participants at once, each following the whole flow over HTTP.

Starts ``sim2human human serve`` (a separate process, as in a study) on a run directory with
policy checkpoints, then runs async participants (httpx) that give consent, read their card,
send up to ten messages (answers drawn from their card, plus one deliberate double submission
each), hang up if the agent has not closed, and rate the call. Afterwards the database is
checked: every acknowledged message stored exactly once and in order, no double-submitted
message stored twice, every rating stored. Prints turn latency (p50/p95/p99) for one participant
alone and for N at once, side by side.

    .venv/bin/python benchmarks/bench_human_load.py            # 100 participants
    .venv/bin/python benchmarks/bench_human_load.py --think 5  # people type between messages
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from importlib import resources
from itertools import pairwise
from pathlib import Path

import httpx
import numpy as np
import yaml

from sim2human.agents.policy import PolicyAgent
from sim2human.experiments.study.config import load_study
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.store.calls import HumanStore
from sim2human.store.layout import CHECKPOINT

SEEN = re.compile(r'name="seen" value="(\d+)"')
TIMEOUT = httpx.Timeout(60.0)


def make_run(root: Path) -> Path:
    path = resources.files("sim2human").joinpath("examples", "collapse.yaml")
    with resources.as_file(path) as config:
        cfg = load_study(config, quick=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    scenario = IntakeScenario()
    for c in cfg.conditions:
        for seed in cfg.seeds:
            target = root / "conditions" / c.name / f"seed-{seed}" / CHECKPOINT
            target.parent.mkdir(parents=True, exist_ok=True)
            PolicyAgent(scenario, seed=seed).save(target)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def say_for(profile_text: str, rng: random.Random) -> str:
    return rng.choice([profile_text, f"It's {profile_text}.", f"um, {profile_text} I think"])


async def participant(
    c: httpx.AsyncClient, i: int, latencies: list[float], think: float
) -> tuple[str, list[str], int]:
    """One person's whole call; returns (token, messages acknowledged, rating)."""
    rng = random.Random(i)
    r = await c.post("/start", data={"consent": "yes", "mode": "card"})
    token = r.headers["location"].rsplit("/", 1)[-1]
    await c.post(f"/call/{token}/begin")
    card = (await c.get(f"/call/{token}")).text
    values = re.findall(r"<dd>(.*?)</dd>", card)
    sent: list[str] = []
    page = (await c.get(f"/call/{token}")).text
    for k in range(10):
        m = SEEN.search(page)
        if m is None:
            break  # the agent closed the call
        text = f"[{i}:{k}] " + say_for(rng.choice(values) if values else "yes", rng)
        await asyncio.sleep(rng.uniform(0.5, 1.5) * think)  # reading and typing
        t0 = time.perf_counter()
        r = await c.post(f"/call/{token}/say", data={"seen": m.group(1), "text": text})
        latencies.append(time.perf_counter() - t0)
        if r.status_code != 303:
            raise RuntimeError(f"participant {i}: say -> {r.status_code}")
        sent.append(text)
        if k == 3:  # a double click: the same form again, stale `seen`
            await c.post(f"/call/{token}/say", data={"seen": m.group(1), "text": text})
        page = (await c.get(f"/call/{token}")).text
    if (m := SEEN.search(page)) is not None:
        await c.post(f"/call/{token}/hangup", data={"seen": m.group(1)})
    rating = 1 + i % 5
    r = await c.post(f"/call/{token}/rate", data={"rating": str(rating), "details": "partly"})
    if r.status_code != 303:
        raise RuntimeError(f"participant {i}: rate -> {r.status_code}")
    return token, sent, rating


Call = tuple[str, list[str], int]


async def crowd(
    url: str, n: int, offset: int, think: float
) -> tuple[list[Call], list[float], float]:
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT, limits=limits) as c:
        done = await asyncio.gather(
            *(participant(c, offset + i, latencies, think) for i in range(n))
        )
    return list(done), latencies, time.perf_counter() - started


def check(db: Path, results: list[tuple[str, list[str], int]]) -> tuple[int, int]:
    """(turns checked, problems): every acknowledged message exactly once, in order; ratings."""
    store = HumanStore(db)
    problems = turns = 0
    for token, sent, rating in results:
        s = store.by_token(token)
        if s is None:
            problems += 1
            continue
        said = [t.text for t in s.turns if t.speaker == "user"]
        turns += len(said)
        problems += said != sent
        problems += s.rating != rating or s.status != "done" or s.episode is None
        speakers = [t.speaker for t in s.turns]
        problems += any(a == b for a, b in pairwise(speakers))
    store.close()
    return turns, problems


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1000, q))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--participants", type=int, default=100)
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean seconds a participant takes to type each message (0: none)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sim2human-load-") as tmp:
        run = make_run(Path(tmp) / "run")
        db = Path(tmp) / "calls.sqlite"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        cmd = [
            sys.executable,
            "-m",
            "sim2human.cli",
            "human",
            "serve",
            str(run),
            "--port",
            str(port),
            "--db",
            str(db),
            "--starts-per-client",  # every participant comes from 127.0.0.1 here
            str(args.participants + 1),
        ]
        server = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(url + "/healthz", timeout=1.0).status_code == 200:
                        break
                except httpx.HTTPError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            alone, lat1, wall1 = asyncio.run(crowd(url, 1, 0, args.think))
            many, latn, walln = asyncio.run(crowd(url, args.participants, 1, args.think))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
        turns, problems = check(db, [*alone, *many])
    n = args.participants
    print(
        f"turn latency (POST a message -> the agent's reply stored), {os.cpu_count()} cores, "
        f"think time {args.think:g} s"
    )
    print(f"{'':28}{'1 participant':>16}{f'{n} at once':>16}{'ratio':>8}")
    for q in (50, 95, 99):
        a, b = pct(lat1, q), pct(latn, q)
        print(f"{f'p{q} (ms)':28}{a:>16.1f}{b:>16.1f}{b / a:>8.1f}")
    print(f"{'messages':28}{len(lat1):>16}{len(latn):>16}")
    print(f"{'wall (s)':28}{wall1:>16.1f}{walln:>16.1f}")
    print(
        f"checked {turns} stored messages and {len(alone) + len(many)} ratings: "
        f"{problems} lost, duplicated or out of order"
    )
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
