#!/usr/bin/env python3
"""Held-out gold of a `support` study by request: new bookings against changes of a booking.

    PYTHONPATH=src python scripts/support_changes.py RUN_DIR [--play N]

Reads every stored evaluation episode of RUN_DIR (a `sim2human study` on `support`) and prints,
per condition (and reference agent), the held-out gold success on the programmatic families and
on the real callers (`multiwoz-heldout`), split by the caller's `task` (`new booking`, or a
`time change` / `stay change`): the mean in %, a 95% cluster-bootstrap CI that resamples the
members (a real caller is one member) and n calls.

A quick study's evaluation plays a few profiles per member (the same ones for every member), so
its programmatic held-out calls may hold no change at all. `--play N` then plays each stored
agent (every condition's checkpoint of every seed, and the scripted reference) N calls per
persona held-out member of the run's own ensemble on the val goals that change their
booking only (the profile rows with `task` other than `new booking`), and prints that column.
"""

from __future__ import annotations

import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from sim2human.agents.base import Agent
from sim2human.agents.policy import PolicyAgent
from sim2human.agents.scripted import reference_agent
from sim2human.experiments.research.stress import programmatic
from sim2human.experiments.study.config import load_study
from sim2human.experiments.study.world import StudyWorld
from sim2human.metrics.outcomes import cluster_bootstrap
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.store.layout import CONFIG_YAML, RunLayout
from sim2human.store.rundir import read_episodes
from sim2human.types import Episode

REAL = "multiwoz-heldout"
NEW = "task: new booking,"


def cell(episodes: Sequence[Episode]) -> str:
    if not episodes:
        return "-"
    est = cluster_bootstrap(
        [float(e.gold.success) for e in episodes], [e.simulator_id for e in episodes]
    )
    lo, hi = est.ci
    return f"{100 * est.mean:.0f} [{100 * lo:.0f}, {100 * hi:.0f}] (n={len(episodes)})"


def stored(run: Path) -> dict[tuple[str, bool, bool], list[Episode]]:
    """(condition, real caller, change) -> the run's held-out evaluation episodes."""
    groups: dict[tuple[str, bool, bool], list[Episode]] = defaultdict(list)
    for path in sorted(run.rglob("episodes.jsonl")):
        for e in read_episodes(path):
            if e.split != "heldout" or e.phase != "eval" or "task" not in e.profile:
                continue
            change = e.profile["task"] != "new booking"
            groups[(e.condition, e.family == REAL, change)].append(e)
    return groups


def changes_only(scratch: Path) -> FileScenario:
    """The packaged `support` file with its change rows only (a copy, beside its
    vocabularies)."""
    folder = resources.files("sim2human.scenarios").joinpath("support")
    for f in folder.iterdir():
        if f.name.endswith((".yaml", ".txt")):
            text = f.read_text(encoding="utf-8")
            kept = "".join(ln for ln in text.splitlines(keepends=True) if NEW not in ln)
            (scratch / f.name).write_text(kept, encoding="utf-8")
    return load_scenario_file(scratch / "scenario.yaml", name="support")


def play(run: Path, n: int) -> dict[str, list[Episode]]:
    """Each stored agent's calls on the change rows, by condition."""
    cfg = load_study(run / CONFIG_YAML)
    world = StudyWorld.build(cfg)
    members = [m for m in programmatic(world.ensemble.heldout) if m.family != REAL]
    out: dict[str, list[Episode]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        scenario = changes_only(Path(tmp))
        agents: list[tuple[str, Agent]] = [("scripted", reference_agent(scenario))]
        for c in cfg.conditions:
            for seed in cfg.seeds:
                path = RunLayout(run).sub_run(c.name, seed) / "checkpoint.pt"
                agents.append((c.name, PolicyAgent.load(path, scenario, seed=seed)))
        for name, agent in agents:
            eps = evaluate(
                agent, members, scenario, split="heldout", per_member=n, max_turns=world.max_turns
            )
            out[name] += eps
    return out


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--play"):
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    run = Path(argv[0])
    groups = stored(run)
    played = play(run, int(argv[2])) if len(argv) == 3 else {}
    heads = [f"{who}: {what}" for who in ("families", "real") for what in ("new booking", "change")]
    heads += ["families: change, played"] if played else []
    print("| condition | " + " | ".join(heads) + " |")
    print("| --- |" + " ---: |" * len(heads))
    for condition in dict.fromkeys(c for c, _, _ in groups):
        cells = [
            cell(groups[(condition, real, ch)]) for real in (False, True) for ch in (False, True)
        ]
        cells += [cell(played[condition])] if played else []
        print(f"| {condition} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
