"""The finish phase of a study (what runs after training), this checkout against a baseline.

    .venv/bin/python benchmarks/bench_finish.py RUN_DIR [--baseline REF] [--rounds K]

RUN_DIR is a finished study (say, a ``sim2human demo`` run). Each side works on its own copy of
it, with that side's ``src`` on the path, and times what ``sim2human study`` does once the
sub-runs are trained: ``aggregate`` (study.json) and ``finish`` (``cli.report.finish_study``:
diagnosis.json, then report.html/md/json, as the study command runs them), plus the two
standalone commands' work, ``diagnose`` (``diagnose_run``) and ``report`` (``write_report``).
The training itself is not run: the stored episodes stand in for it. Rounds alternate between the
sides and the fastest round of each is reported (noise on a shared machine only ever slows a
round down).

``--child RUN_DIR --keep DIR`` runs one side in this interpreter and leaves its copy in DIR, for
comparing the files the two sides write (``compare_finish.py``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from sides import best_of, run_child, study_module

BASELINE = "0f2dc62"
"""main before the finish phase was sped up."""
PHASES = ("aggregate", "diagnose", "report", "finish")
WRITTEN = ("study.json", "diagnosis.json", "report.html", "report.md", "report.json", "adaptive")
"""What the finish phase writes (removed from the copy first, so that each side writes its own)."""


def copy_run(run_dir: Path, work: Path) -> None:
    """``run_dir`` as the finish phase found it: trained sub-runs, no study.json or reports."""
    shutil.copytree(run_dir, work, ignore=shutil.ignore_patterns(".sim2human.lock"))
    for name in WRITTEN:
        path = work / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def measure(run_dir: Path, work: Path) -> dict[str, float]:
    """Seconds of each finish step of this interpreter's ``sim2human`` on a copy of ``run_dir``
    in ``work``; study.json keeps the stored wall time so that the files compare equal."""
    from rich.console import Console

    from sim2human.cli.report import finish_study
    from sim2human.diagnostics.stored import diagnose_run
    from sim2human.report.html import write_report
    from sim2human.store.loading import read_yaml

    aggregate = study_module("aggregate").aggregate
    parse_study = study_module("config").parse_study
    write_study_result = study_module("results").write_study_result

    wall = float(json.loads((run_dir / "study.json").read_text())["wall_seconds"])
    copy_run(run_dir, work)
    cfg = parse_study(read_yaml(work / "config.yaml", "stored study config"))
    quiet = Console(quiet=True)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    study = aggregate(cfg, work, wall)
    write_study_result(work, study)
    seconds["aggregate"] = time.perf_counter() - started
    for phase, step in (
        ("diagnose", lambda: diagnose_run(work)),
        ("report", lambda: write_report(work, console=quiet)),
        ("finish", lambda: finish_study(study, work, quiet)),
    ):
        started = time.perf_counter()
        step()
        seconds[phase] = time.perf_counter() - started
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run_dir", type=Path, help="a finished study directory (not modified)")
    parser.add_argument("--baseline", default=BASELINE, help="git ref to compare against")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--keep", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    run_dir = args.run_dir.resolve()
    if args.child:
        if args.keep is not None:
            print(json.dumps(measure(run_dir, args.keep.resolve())))
            return
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(measure(run_dir, Path(tmp) / "run")))
        return

    def side(src: Path) -> dict[str, float]:
        seconds = run_child(__file__, src, [str(run_dir)], 1800)
        return {k: -v for k, v in seconds.items()}  # best_of keeps the largest: the fastest

    sides = best_of(args.baseline, args.rounds, side)
    print(f"{run_dir}: finish phase, fastest of {args.rounds} rounds (seconds)")
    print(f"{'':<11}{'baseline ' + args.baseline:>18}{'current':>10}{'ratio':>8}")
    for phase in PHASES:
        b, c = -sides["baseline"][phase], -sides["current"][phase]
        print(f"{phase:<11}{b:>18.2f}{c:>10.2f}{b / c:>7.2f}x")
    b = -sides["baseline"]["aggregate"] - sides["baseline"]["finish"]
    c = -sides["current"]["aggregate"] - sides["current"]["finish"]
    print(f"{'study':<11}{b:>18.2f}{c:>10.2f}{b / c:>7.2f}x  (aggregate + finish, as the demo)")


if __name__ == "__main__":
    main()
