"""Wall and CPU time of `sim2human stress` on a study run (the quick demo's, by default).

    PYTHONPATH=src python benchmarks/bench_stress.py RUN_DIR [--out DIR] [stress options...]

Prints the wall time, the CPU time of this process and its workers, and the machine's load, side
by side: on a shared machine the wall time overstates what the same work takes on 2 free cores,
and CPU seconds / cores is the estimate for that. The issue's budget is <= 120 s on 2 cores.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str]) -> int:
    from sim2human.cli.app import main as cli

    if not argv:
        print(__doc__)
        return 2
    args = list(argv)
    if "--out" not in args:
        args += ["--out", tempfile.mkdtemp(prefix="bench-stress-")]
    load_before = os.getloadavg()[0]
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    code = cli(["stress", *args])
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    cores = min(2, os.cpu_count() or 1)
    print(f"exit {code}")
    print(
        f"wall {wall:.1f} s | cpu {cpu:.1f} s (this process + workers) | cpu/{cores} cores "
        f"{cpu / cores:.1f} s | wall/(cpu/{cores}) {wall / (cpu / cores):.2f} | load average "
        f"{load_before:.1f} -> {os.getloadavg()[0]:.1f} | budget 120 s on 2 cores"
    )
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
