"""What judging against claims, with signatures, costs replay: this tree against an older one.

    python benchmarks/bench_overhead.py [--baseline REV] [--rounds N]

Target (issue 12, ARCHITECTURE.md §17): replay throughput within 10% of the code
before claims and signatures (``--baseline``, default 7d8864d, the main that
issue 12 started from). Both trees are checked out side by side (git worktrees in
a temporary folder) and replay the same recordings in alternating subprocesses,
so a busy machine slows both alike; each round warms up, then times a few replays in
CPU seconds of its process and keeps the fastest, and the rounds' medians are
compared. The cost check, which is new and runs once per run rather than per
recording, is left out: it is measured in
``tests/core/test_cost_timing.py`` and reported in RESULTS.md on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "7d8864d"
# The folders setuptools maps into the tcr package (pyproject.toml package-dir).
MAPPED = ("recorder", "replay", "fuzz", "tui", "corpora")

# Runs in a subprocess with one tree first on sys.path: every recording under 1 MB
# (the 2 MB policy-13 one would dominate), the default strategies, every check but cost.
MEASURE = """
import json, sys, time
from tcr.corpora import bundled
from tcr.oracle import CHECKS
from tcr.replay import run
files = [p for p in bundled() if p.stat().st_size < 1_000_000]
checks = [c for c in CHECKS if c != "cost"]
run(files, runs=int(sys.argv[1]), checks=checks)  # warm-up: lazy imports, compiled patterns
times = []
for _ in range(int(sys.argv[2])):
    started = time.process_time()
    report = run(files, runs=int(sys.argv[1]), checks=checks)
    times.append(time.process_time() - started)
# The fastest repeat: what the code costs, with the least of the machine's noise in it.
print(json.dumps({"chars": report.chars, "seconds": min(times), "exit": report.exit_code}))
"""


def checkout(rev: str, into: Path) -> Path:
    """``rev`` as a tree whose ``tcr`` package holds the mapped folders (symlinks)."""
    tree = into / rev
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True
    )
    for folder in MAPPED:
        (tree / "tcr" / folder).symlink_to(tree / folder, target_is_directory=True)
    return tree


def measure(tree: Path, runs: int, repeats: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(runs), str(repeats)],
        cwd=tempfile.gettempdir(),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20, help="runs per random strategy")
    parser.add_argument("--repeats", type=int, default=3, help="timed replays per process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        trees = {
            "baseline": checkout(args.baseline, Path(folder)),
            "now": checkout("HEAD", Path(folder)),
        }
        try:
            rates: dict[str, list[float]] = {"baseline": [], "now": []}
            chars: dict[str, float] = {}
            for round_ in range(args.rounds):
                for name in ("baseline", "now") if round_ % 2 == 0 else ("now", "baseline"):
                    result = measure(trees[name], args.runs, args.repeats)
                    assert result["exit"] == 0, (name, result)
                    chars[name] = result["chars"]
                    rates[name].append(result["chars"] / result["seconds"])
                    print(f"{name}: {rates[name][-1]:,.0f} characters/s", flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                    check=False,
                )
    baseline, now = statistics.median(rates["baseline"]), statistics.median(rates["now"])
    ratio = now / baseline
    verdict = "met" if ratio >= 0.9 else "NOT met"
    body = f"""
Replay of the bundled recordings under 1 MB (default strategies, `--runs {args.runs}`,
every check but `cost`), {args.rounds} alternating rounds per tree; in each round a fresh
process replays once to warm up, then {args.repeats} times, and the fastest by CPU time counts.
Baseline: `{args.baseline}` (before claims and signatures).

| tree | characters per round | median characters/s (CPU) |
|---|---|---|
| baseline `{args.baseline}` | {chars["baseline"]:,.0f} | {baseline:,.0f} |
| now | {chars["now"]:,.0f} | {now:,.0f} |

Throughput now is **{ratio:.2f}x** the baseline's (target ≥ 0.90x): {verdict}.
"""
    write_section("Replay: the cost of claims and signatures (bench_overhead.py)", body)
    print(f"now / baseline = {ratio:.2f}x ({verdict})")


if __name__ == "__main__":
    main()
