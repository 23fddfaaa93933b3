"""Wall time of `sim2human demo` (the quick studies a newcomer runs first), by phase, against a
baseline commit side by side, and against the targets: every demo within 120 s on 2 cores, the
intake demo within 90 s as a stretch (issue #39).

    .venv/bin/python benchmarks/bench_demo.py [--scenarios intake support negotiation]
        [--baseline REF] [--workers N] [--data DIR] [--keep DIR] [--floors]

Each demo runs as a person runs it, in a subprocess (interpreter start-up and imports included),
``python -m sim2human demo --scenario NAME --out DIR`` with one side's ``src`` on the path: the
baseline's checked out into a temporary git worktree, then this checkout's, one scenario after
the other (so both sides of a row meet the same machine within minutes). The wall time is split
into phases from what the run stored: start-up (until ``config.yaml``), training and evaluation
(the sub-runs and side jobs, until ``study.json``) and the finish (diagnosis and reports). Then
the sub-runs' own time by phase (``summary.json``'s ``phase_seconds``), added up over every
sub-run: core-seconds, since the workers run sub-runs side by side. With ``--keep DIR`` the runs
stay in ``DIR/<side>-<scenario>`` (``scripts/same_episodes.py`` compares two). With
``--floors``, each training phase that counts its work (``summary.json``'s ``phase_work``) is set
against its floor, that work at a rate measured here on one thread: playing at the rate of the
persona alone (turns per second of the scripted reference on the training members), PPO's
updates at the rate of their matrix products alone; how far a phase is above its floor says how
much a faster implementation could take out of it. Run it on an otherwise idle machine: each
study uses every core it is given.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
TARGET_S = 120.0
STRETCH_S = {"intake": 90.0}
"""A scenario's stretch target, where the issue names one."""


def run_demo(src: Path, scenario: str, out: Path, args: argparse.Namespace) -> dict[str, float]:
    """One ``demo`` with ``src``'s code into ``out``: its wall seconds, the command's phases
    (from the times its files were written) and the sub-runs' phases."""
    cmd = [sys.executable, "-m", "sim2human", "demo", "--out", str(out)]
    cmd += ["--workers", str(args.workers)] if args.workers else []
    cmd += ["--data", str(args.data)] if args.data else []
    cmd += ["--scenario", scenario] if scenario != "intake" else []
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, timeout=3600)
    ended = time.time()
    configured, studied = ((out / name).stat().st_mtime for name in ("config.yaml", "study.json"))
    print(f"  {out.name}: {ended - started:.1f} s", file=sys.stderr, flush=True)
    return {
        "wall": ended - started,
        "start-up": configured - started,
        "training and evaluation": studied - configured,
        "diagnosis and reports": ended - studied,
        **sub_run_phases(out),
    }


def sub_run_phases(run: Path) -> dict[str, float]:
    """Every sub-run's seconds by phase, added up (``sub-runs: PHASE``), ``other`` (their wall
    times less their phases) and ``all sub-runs``."""
    total: dict[str, float] = {}
    work: dict[str, float] = {}
    wall = 0.0
    for path in sorted(run.glob("conditions/*/*/summary.json")):
        summary = json.loads(path.read_text())
        for phase, seconds in summary.get("phase_seconds", {}).items():
            total[phase] = total.get(phase, 0.0) + seconds
        for phase, units in summary.get("phase_work", {}).items():
            work[phase] = work.get(phase, 0.0) + units
        wall += summary.get("wall_seconds", 0.0)
    if not wall:
        return {}
    total["other"] = wall - sum(total.values())
    total["all sub-runs"] = wall
    return {
        **{f"sub-runs: {phase}": seconds for phase, seconds in total.items()},
        **{f"work: {phase}": units for phase, units in work.items()},
    }


def floor_rates(run: Path) -> dict[str, float]:
    """Measured here, on one thread, with this checkout: the persona alone (the scripted
    reference agent playing the run's training members: no policy, no perturbation; turns of
    both speakers per second) and the matrix products of one PPO minibatch step alone (the
    policy network's layers, forward and backward: 6 x rows x inputs x outputs flops per layer,
    timed as plain products of those shapes)."""
    import torch
    from torch import nn

    from sim2human.agents.policy import PolicyAgent
    from sim2human.agents.scripted import reference_agent
    from sim2human.experiments.study.config import load_run_config
    from sim2human.experiments.study.world import StudyWorld
    from sim2human.rollout.evaluate import evaluate
    from sim2human.store import collector

    torch.set_num_threads(1)
    collector.for_batch_work()  # as a study's worker plays
    cfg = load_run_config(run)
    world = StudyWorld.build(cfg)
    agent, members = reference_agent(world.scenario), world.ensemble.train
    play = lambda per: evaluate(  # noqa: E731
        agent, members, world.scenario, split="train", per_member=per, max_turns=world.max_turns
    )
    play(2)  # warm: the readers' memos, the imports
    began = time.perf_counter()
    turns = sum(len(e.turns) for e in play(max(8, 800 // len(members))))
    turns_per_s = turns / (time.perf_counter() - began)
    rows = cfg.train.minibatch
    net = PolicyAgent(world.scenario, seed=0).net
    shapes = [(m.in_features, m.out_features) for m in net.modules() if isinstance(m, nn.Linear)]
    flops = sum(6 * rows * i * o for i, o in shapes)
    xs = [(torch.randn(rows, i), torch.randn(i, o)) for i, o in shapes]
    for x, w in xs:
        x @ w  # warm
    began, reps = time.perf_counter(), 2000
    for _ in range(reps):
        for x, w in xs:
            x @ w
    rate = reps * flops / 3 / (time.perf_counter() - began)  # the forward's 2 of the 6 per layer
    return {"turns_per_s": turns_per_s, "step_flops": float(flops), "flops_per_s": rate}


def print_floors(rows: dict[tuple[str, str], dict[str, float]], runs: Path) -> None:
    """Each counted phase of this checkout's sub-runs against its floor: the same work at the
    rates ``floor_rates`` measured (``--child-floors``, in a fresh interpreter)."""
    print("\nthis checkout's training phases against their floors (core-seconds, summed)")
    print(f"{'demo':<13}{'phase':<8}{'work':>14}{'seconds':>10}{'floor':>9}{'x floor':>9}")
    for s in dict.fromkeys(s for _, s in rows):
        row = rows[("current", s)]
        rates = run_child_floors(runs / f"current-{s}")
        floors = {
            "play": ("turns", row.get("work: play", 0.0) / rates["turns_per_s"]),
            "update": (
                "steps",
                row.get("work: update", 0.0) * rates["step_flops"] / rates["flops_per_s"],
            ),
        }
        for phase, (unit, floor) in floors.items():
            seconds = row.get(f"sub-runs: {phase}", 0.0)
            work = f"{row.get(f'work: {phase}', 0.0):,.0f} {unit}"
            ratio = f"{seconds / floor:>8.1f}x" if floor else "       -"
            print(f"{s:<13}{phase:<8}{work:>14}{seconds:>10.1f}{floor:>9.1f}{ratio}")
        turns, gflops = rates["turns_per_s"], rates["flops_per_s"] / 1e9
        step = rates["step_flops"] / 1e6
        print(f"{'':<13}floors: the persona alone at {turns:,.0f} turns/s; the products")
        print(f"{'':<13}at {gflops:.1f} GFLOP/s, {step:.1f} MFLOP a minibatch step")


def run_child_floors(run: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **ONE_THREAD}
    cmd = [sys.executable, __file__, "--child-floors", str(run)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=900)
    rates: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return rates


def worktree(ref: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), ref])
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", nargs="+", default=["intake"])
    parser.add_argument("--baseline", default=None, help="git ref to run side by side")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--data", type=Path, default=None, help="the folder holding aci-bench/")
    parser.add_argument("--keep", type=Path, default=None, help="keep the runs in this new folder")
    parser.add_argument("--floors", action="store_true", help="set phases against their floors")
    parser.add_argument("--child-floors", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_floors:
        print(json.dumps(floor_rates(args.child_floors)))
        return
    if args.keep is not None and args.keep.exists():
        sys.exit(f"{args.keep}: already exists; --keep makes a new folder of runs")
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        runs = args.keep or Path(tmp) / "runs"
        runs.mkdir(parents=True)
        sides = {"current": ROOT / "src"}
        if args.baseline:
            sides = {"baseline": worktree(args.baseline, Path(tmp) / "baseline") / "src", **sides}
        try:
            rows = {
                (side, s): run_demo(src, s, runs / f"{side}-{s}", args)
                for s in args.scenarios
                for side, src in sides.items()
            }
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(Path(tmp) / "baseline")], check=False)  # fmt: skip
        report(rows, args)
        if args.floors:
            print_floors(rows, runs)


def report(rows: dict[tuple[str, str], dict[str, float]], args: argparse.Namespace) -> None:
    scenarios = list(dict.fromkeys(s for _, s in rows))
    base = f"baseline {args.baseline}"
    print(f"sim2human demo on {os.cpu_count()} cores, wall seconds")
    head = f"{'demo':<13}" + (f"{base:>20}" if args.baseline else "")
    print(head + f"{'current':>10}" + (f"{'ratio':>8}" if args.baseline else "") + "  target")
    for s in scenarios:
        cur = rows[("current", s)]["wall"]
        line = f"{s:<13}"
        if args.baseline:
            b = rows[("baseline", s)]["wall"]
            line += f"{b:>20.1f}{cur:>10.1f}{b / cur:>7.2f}x"
        else:
            line += f"{cur:>10.1f}"
        targets = [TARGET_S, *([STRETCH_S[s]] if s in STRETCH_S else [])]
        verdicts = [
            f"{t:.0f} s {'met' if cur <= t else 'not met'} ({cur / t:.2f}x)" for t in targets
        ]
        print(line + "  " + "; ".join(verdicts))
    keys = [k for k in rows[("current", scenarios[0])] if k != "wall"]
    print("\nthis checkout by phase (seconds; the sub-runs' are core-seconds, summed)")
    print(f"{'phase':<44}" + "".join(f"{s:>14}" for s in scenarios))
    for k in keys:
        print(f"{k:<44}" + "".join(f"{rows[('current', s)].get(k, 0.0):>14.1f}" for s in scenarios))


if __name__ == "__main__":
    main()
