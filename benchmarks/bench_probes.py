"""What reading a detector's policies costs a replay of the bundled corpora.

    python benchmarks/bench_probes.py [--quick]

Before judging, replay runs the detector on probe messages to read its choices
(``tcr.probes``; ARCHITECTURE.md §5.8). Target (issue 32): the probes cost at most 5%
of a replay of the bundled corpora. Each row is a fresh process (the probe messages
are built once per process, and the readings cached per factory, so a second run
in a process would cost nothing): the policy row's wall seconds against the whole
run's (the probes, then every recording, the default strategies, the cost probe).
Both are measured in the same run of the same process, so a busy machine slows
both alike. Writes the section "Replay: the cost of reading policies" of RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.05
# (what is measured, the replay's arguments): the reference claiming every dialect reads
# every dialect's probes; a Python parser in an engine's shape, claiming one.
SUBJECTS = (
    ("the reference, every dialect", []),
    ("the reference, `--dialect hermes`", ["--dialect", "hermes"]),
    ("`parsers.strict:factory` (a Python parser), `--dialect hermes`",
     ["--detector", "parsers.strict:factory", "--dialect", "hermes"]),
)  # fmt: skip

MEASURE = """
import json, sys, time
from tcr.replay import run
args = json.loads(sys.argv[1])
started = time.perf_counter()
report = run(None, runs=int(sys.argv[2]), **args)
wall = time.perf_counter() - started
probes = report.policy.seconds if report.policy is not None else 0.0
print(json.dumps({"probes": probes, "wall": wall, "chars": report.chars}))
"""


def measured(argv: list[str], runs: int) -> dict[str, float]:
    """One replay in a fresh process: the probes' seconds and the whole run's."""
    args: dict[str, object] = {}
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        if flag == "--detector":
            args["detector"] = value
        else:
            args["dialects"] = [value]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(args), str(runs)],
        capture_output=True, text=True, check=True, env=env, cwd=ROOT,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="--runs 2, no RESULTS.md")
    opts = parser.parse_args()
    runs = 2 if opts.quick else 20
    rows, shares = [], []
    for what, argv in SUBJECTS:
        figures = measured(argv, runs)
        share = figures["probes"] / figures["wall"]
        shares.append(share)
        rows.append(
            f"| {what} | {figures['probes'] * 1000:.0f} ms | {figures['wall']:.1f} s | "
            f"**{share:.2%}** |"
        )
        print(rows[-1], flush=True)
    worst = max(shares)
    text = "\n".join(
        [
            f"A replay of the bundled corpora (`--runs {runs}`, the default strategies and "
            f"checks), each in a fresh process on {os.cpu_count()} CPUs; the load average "
            f"before the first was {os.getloadavg()[0]:.1f}.",
            "",
            "| detector | policy probes | whole replay | probes' share |",
            "|---|---:|---:|---:|",
            *rows,
            "",
            f"Target at most {TARGET:.0%}: worst **{worst:.2%}**: "
            f"**{'met' if worst <= TARGET else 'missed'}**.",
        ]
    )
    print(text)
    if not opts.quick:
        write_section("Replay: the cost of reading policies (bench_probes.py)", text)


if __name__ == "__main__":
    main()
