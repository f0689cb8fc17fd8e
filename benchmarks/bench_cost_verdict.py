"""The cost check's verdict under load: the same detector, the same verdict, every run.

    python benchmarks/bench_cost_verdict.py [--runs 10] [--load 3]

Issue 33: a verdict that flips between two runs of the same detector is noise a
maintainer stops trusting. Each detector (linear, and quadratic inside Hermes blocks) is
measured ``--runs`` times with Hermes claimed, while ``--load`` other processes keep both
cores busy shuffling a 24 MB list (the caches thrashed, as a neighbour's test run does).
The check runs in this process on its CPU clock (``time.process_time``, as ``tcr replay``
and ``tcr fuzz`` run it for an in-process detector), so the load reaches it through the
caches and the scheduler, not through its clock. Writes the section "Cost check: the
same verdict under load" of RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.claims import Claim
from tcr.cost import measure_cost
from tcr.detector.loader import load_factory

DETECTORS = (
    ("tcr.detector.core:StreamDetector", "linear"),
    ("tcr.detector.broken:per_chunk_markers", "linear (its bug is a split marker's)"),
    ("tcr.detector.broken:rejoins_buffer", "quadratic in a block"),
)
LOAD = (
    "import random, time\n"
    "a = [random.random() for _ in range(3_000_000)]\n"
    "while True:\n"
    "    random.shuffle(a); sorted(a[:200_000])\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--load", type=int, default=3, help="busy processes beside it")
    opts = parser.parse_args()
    hermes = Claim(frozenset({"hermes"}))
    loads = [subprocess.Popen([sys.executable, "-c", LOAD]) for _ in range(opts.load)]
    rows, loadavg = [], []
    try:
        time.sleep(2)  # the load processes past their set-up
        for spec, what in DETECTORS:
            factory = load_factory(spec)
            verdicts, growths, seconds = [], [], []
            for _ in range(opts.runs):
                started = time.perf_counter()
                cost = measure_cost(factory, claim=hermes, clock=time.process_time)
                seconds.append(time.perf_counter() - started)
                verdicts.append(" ".join(v.kind + "/" + v.dialect for v in cost.violations))
                growths.append(cost.growth.ratio if cost.growth is not None else 0.0)
                loadavg.append(os.getloadavg()[0])
                print(spec, verdicts[-1] or "linear", f"{growths[-1]:.2f}", flush=True)
            distinct = sorted(set(verdicts))
            rows.append(
                f"| `{spec.split(':')[1]}` | {what} | "
                f"{', '.join(f'`cost/{v}`' if v else 'no finding' for v in distinct)} | "
                f"{max(verdicts.count(v) for v in distinct)} of {opts.runs} | "
                f"{min(growths):.2f}-{max(growths):.2f}x | "
                f"{min(seconds):.1f}-{max(seconds):.1f} s |"
            )
    finally:
        for process in loads:
            process.kill()
    body = "\n".join(
        [
            f"Each detector measured {opts.runs} times with Hermes claimed, {opts.load} "
            "processes shuffling 24 MB lists beside it on the 2 cores (load average "
            f"{min(loadavg):.1f} to {max(loadavg):.1f}). Growth: the probe of every claimed "
            "part, first measurement (`Cost.growth`); wall seconds of the whole check.",
            "",
            "| detector | cost | verdicts | the same | growth | seconds |",
            "|---|---|---|---:|---:|---:|",
            *rows,
        ]
    )
    print(body)
    write_section("Cost check: the same verdict under load (bench_cost_verdict.py)", body)


if __name__ == "__main__":
    main()
