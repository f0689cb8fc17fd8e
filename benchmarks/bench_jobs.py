"""``tcr replay --jobs 2`` against ``--jobs 1`` on the bundled corpora, in the same run.

    python benchmarks/bench_jobs.py [--repeat N] [--quick]

Target (ARCHITECTURE.md §17): ``--jobs 2`` on a 2-core machine replays the bundled corpora at
least 1.6x faster than ``--jobs 1``. One recording (a 1 MB block) is most of the
work, so the split into tasks has to reach inside it.

Each repeat times ``run(jobs=1)`` and ``run(jobs=2)`` back to back and checks
that the reports agree. Wall time is what the target is about; CPU time (this
process and its workers) shows whether the split costs extra work, and the load
average says how much of the machine the run had: on a shared machine another
process's load depresses the ratio, not the CPU time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.replay import Report, run

TARGET = 1.6


def cpu_seconds() -> float:
    """CPU time of this process and of its children, the pool's workers included."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + live_children()


def live_children() -> float:
    """CPU time of the children still running and of the children they waited for.

    The workers are the fork server's children, not ours: their time is in its
    counters (read from /proc; 0 where there is none), not in RUSAGE_CHILDREN.
    """
    seconds = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()  # after the command name
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == os.getpid():  # utime, stime, cutime, cstime, in clock ticks
            seconds += sum(map(int, fields[11:15])) / os.sysconf("SC_CLK_TCK")
    return seconds


def timed(jobs: int, runs: int) -> tuple[Report, float, float, float]:
    """The report, wall seconds, CPU seconds and the 1-minute load average before it."""
    load = os.getloadavg()[0]
    cpu, started = cpu_seconds(), time.perf_counter()
    report = run(None, jobs=jobs, runs=runs)
    return report, time.perf_counter() - started, cpu_seconds() - cpu, load


def comparable(report: Report) -> dict[str, Any]:
    data = report.to_dict()
    del data["seconds"]
    for outcome in data["outcomes"]:
        del outcome["seconds"]
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="pairs of runs (default 3)")
    parser.add_argument("--quick", action="store_true", help="--runs 4, one pair, no RESULTS.md")
    opts = parser.parse_args()
    runs, repeat = (4, 1) if opts.quick else (20, opts.repeat)

    rows: list[str] = []
    ratios: list[float] = []
    one = None
    for index in range(repeat):
        one, wall_one, cpu_one, load_one = timed(1, runs)
        two, wall_two, cpu_two, load_two = timed(2, runs)
        assert comparable(one) == comparable(two), "--jobs 2 changed the report"
        ratios.append(wall_one / wall_two)
        rows.append(
            f"| {index + 1} | {load_one:.2f} / {load_two:.2f} | {wall_one:.2f} s | "
            f"{wall_two:.2f} s | **{wall_one / wall_two:.2f}x** | "
            f"{cpu_one:.2f} s / {cpu_two:.2f} s | {cpu_two / wall_two:.2f} |"
        )
        print(rows[-1], flush=True)
    assert one is not None
    by_path: dict[str, float] = {}
    for outcome in one.outcomes:
        by_path[outcome.path] = by_path.get(outcome.path, 0.0) + outcome.seconds
    largest, largest_seconds = max(by_path.items(), key=lambda item: item[1])
    share = largest_seconds / sum(by_path.values())

    best, median = max(ratios), statistics.median(ratios)
    verdict = "met" if median >= TARGET else ("met at best" if best >= TARGET else "missed")
    lines = [
        f"The bundled corpora ({one.recordings} recordings, default strategies, "
        f"`--runs {runs}`, {len(one.outcomes)} outcomes), `run(jobs=1)` then `run(jobs=2)` "
        f"on {os.cpu_count()} CPUs; the reports are checked equal. One recording, "
        f"`{Path(largest).name}`, is {share:.0%} of the work at `--jobs 1`.",
        "",
        "| pair | load before (1 / 2) | `--jobs 1` | `--jobs 2` | speed-up | CPU (1 / 2) "
        "| cores used by `--jobs 2` |",
        "|---:|---|---:|---:|---:|---|---:|",
        *rows,
        "",
        f"Target `--jobs 2` at least {TARGET}x faster: median **{median:.2f}x**, "
        f"best {best:.2f}x: **{verdict}**. The load column is the 1-minute load "
        "average before each run (it includes this benchmark's own previous run, so "
        "about 1 is an otherwise idle machine); the last column, CPU seconds per wall "
        "second, is how many of the two cores `--jobs 2` got.",
    ]
    text = "\n".join(lines)
    print(text)
    if not opts.quick:
        write_section("Replay in processes: `--jobs 2` against `--jobs 1` (bench_jobs.py)", text)


if __name__ == "__main__":
    main()
