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
import shutil
import sys
import tempfile
import time
from pathlib import Path

from sim2human.agents.scripted import ScriptedAgent
from sim2human.population.ensemble import Ensemble
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.store.layout import CONFIG, EPISODES, MEMBERS, SUMMARY
from sim2human.store.rundir import JsonlWriter, write_json
from sim2human.types import Episode
from sim2human.viewer.build import build_view
from sim2human.viewer.load import load_groups

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


BROWSER_STEPS = (
    "const t = performance.now(); const s = document.getElementById('f-outcome');"
    "s.value = 'failures'; s.dispatchEvent(new Event('change'));"
    "const f = performance.now() - t; const u = performance.now();"
    "document.querySelector('#rows tbody tr').click();"
    "return [f, performance.now() - u, document.getElementsByTagName('*').length];"
)


def in_browser(page: Path) -> None:
    """The page's load, filter and open times in headless Chromium."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "report"))
    from headless_chromium import Browser

    with Browser() as b:
        b.size(1400, 900)
        start = time.perf_counter()
        b.open(page)
        b.find("#rows tbody tr", timeout_s=300)
        loaded = time.perf_counter() - start
        filtered, opened, elements = b.run(BROWSER_STEPS)
    print(f"chromium: first rows after {loaded:.1f} s; failures filter {filtered:.0f} ms;")
    print(f"  a transcript opens in {opened:.0f} ms; {elements} elements on the page")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=50_000)
    parser.add_argument("--played", type=int, default=2_000)
    parser.add_argument("--keep", type=Path, help="write the run and its page here")
    parser.add_argument("--browser", action="store_true", help="also time it in Chromium")
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
        html = build_view(work / "run", lambda _: None)
        t4, c4 = time.perf_counter(), time.process_time()
        (work / "view.html").write_text(html, encoding="utf-8")
        size = len(html.encode("utf-8"))
        log_bytes = sum(p.stat().st_size for p in (work / "run").rglob(EPISODES))
        print(f"episodes: {args.episodes} ({len(source)} played, {t1 - t0:.1f} s)")
        print(f"episodes.jsonl: {log_bytes / 1e6:.1f} MB in all (written in {t2 - t1:.1f} s)")
        print(f"read the run: {t3 - t2:.2f} s wall, {c3 - c2:.2f} s CPU")
        print(f"build the page (reading included): {t4 - t3:.2f} s wall, {c4 - c3:.2f} s CPU")
        print(f"page: {size / 1e6:.1f} MB ({size / args.episodes:.0f} bytes an episode)")
        if args.browser:
            in_browser(work / "view.html")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
