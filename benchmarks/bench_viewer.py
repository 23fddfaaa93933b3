"""How long ``sim2human view`` takes on a large run, and how big its page is.

    .venv/bin/python benchmarks/bench_viewer.py [--episodes 50000] [--played 2000] [--keep DIR]
        [--browser]

Builds a synthetic study: ``--played`` distinct evaluation episodes are played (the scripted
agent against three training and three held-out families), then copied, with fresh ids and
seeds, into 5 conditions x 2 seeds until there are ``--episodes`` in all. The copies repeat
the played texts, as a real run's phrasings repeat; the page's string table (``viewer.data``)
counts each text once, so a run whose every turn is new text writes a larger page. Prints the
seconds to read the run and to build the page (``build_view``, reading included), wall clock and
this process's CPU time (the one to quote from a shared, busy machine), and the page's size.
With ``--browser`` (Debian's ``chromium`` and ``chromium-driver``) it also opens the page in
headless Chromium and prints the seconds until the first page of rows shows, the milliseconds a
filter and opening a transcript take, and how many elements the page holds (one page of rows,
not 50,000). No pass/fail: the numbers are for comparing commits on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sim2human.agents.scripted import ScriptedAgent
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.store.layout import CONFIG, EPISODES, MEMBERS, SUMMARY
from sim2human.store.rundir import JsonlWriter, write_json
from sim2human.types import Episode
from sim2human.viewer.load import load_groups

ROOT = Path(__file__).resolve().parents[1]

CONDITIONS = ("frozen-small", "frozen-large", "uniform", "randomized", "randomized+perturb")
SEEDS = 2


def played(n: int) -> list[Episode]:
    """About ``n`` evaluation episodes of the scripted agent, half on each split."""
    scenario = IntakeScenario()
    pool = QuirkPool.from_acts(scenario.acts)
    ens = Ensemble.from_families(
        ["cooperative", "chatty", "anxious"],
        ["elderly-confused", "noisy-line", "terse-guarded"],
        4,
        pool,
    )
    agent = ScriptedAgent(scenario)
    per = max(1, n // (len(ens.train) + len(ens.heldout)))
    kw = {"per_member": per, "max_turns": 20}
    return [
        *evaluate(agent, ens.train, scenario, split="train", **kw),
        *evaluate(agent, ens.heldout, scenario, split="heldout", **kw),
    ]


def write_run(root: Path, source: list[Episode], total: int) -> None:
    """``total`` copies of ``source`` episodes spread over the conditions and seeds."""
    per_run = total // (len(CONDITIONS) * SEEDS)
    for c in CONDITIONS:
        for s in range(SEEDS):
            sub = root / "conditions" / c / f"seed-{s}"
            sub.mkdir(parents=True)
            write_json(sub / CONFIG, {"condition": {"name": c}, "seed": s})
            write_json(sub / MEMBERS, {"trained_on": [], "heldout": []})
            with JsonlWriter(sub / EPISODES) as log:
                for i in range(per_run):
                    e = source[i % len(source)]
                    seed = e.seed + i
                    eid = f"{c}/eval/{e.simulator_id}/{seed}/{s}"
                    log.write(e.model_copy(update={"id": eid, "seed": seed, "condition": c}))
            write_json(sub / SUMMARY, {"condition": c})


BUILD = """
import json, sys, time
from pathlib import Path
from sim2human.viewer.build import build_view
t, c = time.perf_counter(), time.process_time()
html = build_view(Path(sys.argv[1]), lambda _: None)
Path(sys.argv[2]).write_text(html, encoding="utf-8")
print(json.dumps([time.perf_counter() - t, time.process_time() - c]))
"""


def build_with(src: Path, run: Path, page: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``build_view`` (reading included) as the package in ``src``
    has it, in a fresh interpreter (so two versions are timed alike)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", BUILD, str(run), str(page)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    wall, cpu = json.loads(done.stdout.strip().splitlines()[-1])
    return float(wall), float(cpu)


def checkout(rev: str, into: Path) -> Path:
    """``src/`` of git revision ``rev`` unpacked into ``into``; its path."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True, timeout=120)
    return into / "src"


AFTER_LOAD = (
    "const t = performance.now(); const s = document.getElementById('f-outcome');"
    "s.value = 'failures'; s.dispatchEvent(new Event('change'));"
    "const f = performance.now() - t; const u = performance.now();"
    "document.querySelector('#rows tbody tr').click();"
    "const o = performance.now() - u;"
    "const m = performance.getEntriesByName('viewer-first-rows');"
    "return [f, o, document.getElementsByTagName('*').length, m.length ? m[0].startTime : -1];"
)


@dataclass
class Opened:
    """A page in Chromium: seconds from asking for it until its first rows are there, and until
    it has loaded; ms of the failures filter and of opening a transcript after that; elements;
    the page's own mark of its first rows (ms from navigation start; -1 when it has none)."""

    first_rows: float
    loaded: float
    filtered: float
    opened: float
    elements: int
    mark: float


def in_browser(page: Path) -> Opened:
    """The page's load, filter and open times in headless Chromium (a fresh browser for each
    page, so one page's cache and memory do not help or hinder the other)."""
    sys.path.insert(0, str(ROOT / "tests" / "report"))
    from headless_chromium import Browser

    with Browser(page_load="none") as b:
        b.size(1400, 900)
        start = time.perf_counter()
        b.open(page)
        b.find("#rows tbody tr", timeout_s=600)
        first = time.perf_counter() - start
        while b.run("return document.readyState") != "complete":
            time.sleep(0.02)
        loaded = time.perf_counter() - start
        filtered, opened, elements, mark = b.run(AFTER_LOAD)
    return Opened(first, loaded, filtered, opened, elements, mark)


def table(rows: list[tuple[str, list[str]]], heads: list[str]) -> None:
    """Rows of labelled values, one column a build."""
    width = max(len(label) for label, _ in rows)
    print(f"{'':{width}}  " + "  ".join(f"{h:>18}" for h in heads))
    for label, values in rows:
        print(f"{label:{width}}  " + "  ".join(f"{v:>18}" for v in values))


def measure(src: Path, run: Path, page: Path, browser: bool, episodes: int) -> list[str]:
    """One column of the table: build, size, and (with ``browser``) Chromium's times."""
    wall, cpu = build_with(src, run, page)
    size = page.stat().st_size
    out = [f"{wall:.1f} / {cpu:.1f} s", f"{size / 1e6:.1f} MB ({size // episodes} B/ep)"]
    if browser:
        o = in_browser(page)
        mark = f"{o.mark / 1000:.2f} s" if o.mark >= 0 else "-"
        out += [f"{o.first_rows:.2f} s", mark, f"{o.loaded:.2f} s"]
        out += [f"{o.filtered:.0f} ms", f"{o.opened:.0f} ms", str(o.elements)]
    return out


LABELS = [
    "build: wall / CPU",
    "page size",
    "first rows (WebDriver)",
    "first rows (page's mark)",
    "fully loaded",
    "failures filter",
    "open a transcript",
    "elements on the page",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50_000)
    parser.add_argument("--played", type=int, default=2_000)
    parser.add_argument("--keep", type=Path, help="write the run and its pages here")
    parser.add_argument("--browser", action="store_true", help="also time it in Chromium")
    parser.add_argument(
        "--before", default="bac9383", help="git revision to compare with ('' for none)"
    )
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    try:
        t0 = time.perf_counter()
        source = played(args.played)
        t1 = time.perf_counter()
        write_run(work / "run", source, args.episodes)
        t2, c2 = time.perf_counter(), time.process_time()
        load_groups(work / "run", None)
        t3, c3 = time.perf_counter(), time.process_time()
        log_bytes = sum(p.stat().st_size for p in (work / "run").rglob(EPISODES))
        print(f"episodes: {args.episodes} ({len(source)} played, {t1 - t0:.1f} s)")
        print(f"episodes.jsonl: {log_bytes / 1e6:.1f} MB in all (written in {t2 - t1:.1f} s)")
        print(f"read the run: {t3 - t2:.2f} s wall, {c3 - c2:.2f} s CPU")
        heads, columns = [], []
        if args.before:
            old = checkout(args.before, work / "before")
            heads.append(f"before ({args.before})")
            columns.append(
                measure(old, work / "run", work / "before.html", args.browser, args.episodes)
            )
        heads.append("after (this tree)")
        columns.append(
            measure(ROOT / "src", work / "run", work / "view.html", args.browser, args.episodes)
        )
        labels = LABELS if args.browser else LABELS[:2]
        table([(label, [c[i] for c in columns]) for i, label in enumerate(labels)], heads)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
