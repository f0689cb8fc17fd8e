"""Fuzzing: examples per second, every broken detector found and shrunk, the reference survives.

    python benchmarks/bench_fuzz.py [--quick] [--survival SECONDS] [--throughput-only]

Targets (ARCHITECTURE.md §17): at least 1,000 generated examples per second against the
reference detector, claiming every dialect and restricted to Hermes (``--dialect hermes``);
every deliberately broken detector of ``tcr.detector.broken`` found within a 30 s budget
with each of 5 seeds (``-x``: the first finding), the shrunk case at most 100 characters
besides its dialects' markers (a finding keeps its dialect: ``Case.unmarked``) and 3 split
points, and its saved recording failing ``tcr replay`` with the same signature;
the reference detector surviving a
600 s run. The throughput is shown beside its floor measured in the same run:
Hypothesis drawing the same bytes into a test that does nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.corpora import ROOT
from tcr.detector.broken import BROKEN
from tcr.fuzz import engine, run
from tcr.fuzz.runner import GENERATED_BYTES
from tcr.replay import run as replay

REGRESSIONS = [ROOT / "regressions"]
Rate = tuple[float, float]  # examples/s by the wall clock, and by CPU time
SEEDS = (0, 1, 2, 3, 4)


def floor_rate(examples: int) -> float:
    """Examples per second of Hypothesis alone: the same bytes drawn by the engine the
    search drives (``tcr.fuzz.engine``), nothing decoded or run."""
    started = time.perf_counter()
    engine.search(lambda data: None, size=GENERATED_BYTES, seed=0, limit=examples)
    return examples / (time.perf_counter() - started)


def _rate(examples: int, seed: int, corpus: list[Path], dialects: list[str] | None) -> Rate:
    """Examples per second of one run: by the wall clock and by this process's CPU time."""
    started = time.process_time()
    report = run(max_examples=examples, seed=seed, corpus=corpus, save=None, dialects=dialects)
    assert report.finding is None, report.finding
    return report.examples_per_second, report.examples / (time.process_time() - started)


def _rates(examples: int, dialects: list[str] | None) -> tuple[Rate, Rate]:
    """Generated examples/s (median of 3 seeds), and generated and mutated (seed 0)."""
    rates = [_rate(examples, s, [], dialects) for s in range(3)]
    generated = statistics.median(r[0] for r in rates), statistics.median(r[1] for r in rates)
    return generated, _rate(examples, 0, REGRESSIONS, dialects)


def _shown(rate: Rate) -> str:
    return f"{rate[0]:,.0f} ({rate[1]:,.0f})"


def throughput(examples: int) -> list[str]:
    (generated, cpu), mixed = _rates(examples, None)
    (hermes, hermes_cpu), hermes_mixed = _rates(examples, ["hermes"])  # --dialect hermes
    floor = floor_rate(examples)
    load = os.getloadavg()[0]
    return [
        f"### Examples per second against the reference detector ({examples:,} per run)",
        "",
        "By the wall clock, and in parentheses by the fuzzing process's CPU time (what the "
        "wall clock shows on an idle machine).",
        "",
        "| | every dialect | `--dialect hermes` |",
        "|---|---:|---:|",
        f"| floor: Hypothesis's engine drawing the bytes, doing nothing | {floor:,.0f} | |",
        f"| generated messages, every oracle (median of 3 seeds) "
        f"| {_shown((generated, cpu))} | {_shown((hermes, hermes_cpu))} |",
        f"| generated and mutated (one batch in four mutates the regressions) "
        f"| {_shown(mixed)} | {_shown(hermes_mixed)} |",
        "",
        f"Target at least 1,000 generated examples/s: **{generated:,.0f}** "
        f"({'met' if generated >= 1000 else 'NOT met'}); the floor alone is "
        f"{1e3 / floor:.2f} ms of the {1e3 / generated:.2f} ms an example takes.",
        f"With `--dialect hermes` (the reference restricted to Hermes, unclaimed markup mixed "
        f"in as text, no_leak and holdback for Hermes markers): **{hermes:,.0f}** "
        f"({'met' if hermes >= 1000 else 'NOT met'}), {hermes / generated:.2f}x the "
        f"every-dialect rate of the same run ({hermes_cpu / cpu:.2f}x by CPU time). "
        f"Load average at the end: {load:.1f} on {os.cpu_count()} cores.",
    ]


# Shrinking keeps a finding's signature, its dialect included: the shortest case is the
# shortest in that dialect (two qwen3_coder calls in one block take 84 characters).
SHRUNK_LENGTH = 100


def broken_detectors(budget_s: float, seeds: tuple[int, ...]) -> list[str]:
    rows = []
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name, factory in BROKEN.items():
            for s in seeds:
                spec = f"tcr.detector.broken:{name}"
                report = run(
                    detector=spec,
                    budget_s=budget_s,
                    seed=s,
                    corpus=REGRESSIONS,
                    save=tmp,
                    exitfirst=True,
                )
                f = report.finding
                if f is None or f.saved is None:
                    ok = False
                    rows.append(f"| {name} | {s} | **no** ({report.examples:,} examples) |||||||")
                    continue
                again = replay([f.saved], strategies=["original"], detector=factory)
                replays = f.signature in {x.signature for _, x in again.failures}
                small = f.case.unmarked <= SHRUNK_LENGTH and len(f.case.splits) <= 3
                ok = ok and small and replays
                rows.append(
                    f"| {name} | {s} | yes | {f.check} | {f.found_after:,} | "
                    f"{f.seconds_to_find:.2f} s | {f.shrink_seconds:.1f} s | "
                    f"{len(f.case.text)} ({f.case.unmarked}) | {len(f.case.splits)} | "
                    f"{'yes' if replays else '**no**'} |"
                )
    return [
        f"### Every broken detector, {len(seeds)} seeds, `--budget {budget_s:g}s`",
        "",
        "| detector | seed | found | check | examples | time to find | shrinking | "
        "length (besides markers) | splits | replays |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---|",
        *rows,
        "",
        f"Target: every one found with every seed, shrunk to at most {SHRUNK_LENGTH} characters "
        "besides its dialects' markers and 3 split points, and the saved recording failing "
        "`tcr replay` with the same signature: "
        f"**{'met' if ok else 'NOT met'}**.",
    ]


def survival(seconds: float) -> list[str]:
    """``tcr fuzz --budget SECONDS`` as it runs by default: seed 0, the bundled corpora."""
    report = run(budget_s=seconds, seed=0, save=None)
    verdict = "no violation" if report.finding is None else f"**{report.finding.violation}**"
    return [
        f"### The reference detector for {seconds:g} s (seed 0)",
        "",
        f"{report.examples:,} examples ({report.generated:,} generated, {report.mutated:,} "
        f"mutated from {report.recordings} bundled recordings) in {report.search_seconds:.0f} s, "
        f"{report.examples_per_second:,.0f} examples/s: {verdict} (exit code {report.exit_code}).",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs, no RESULTS.md")
    parser.add_argument("--survival", type=float, default=600.0, help="seconds (0: skip)")
    parser.add_argument(
        "--throughput-only", action="store_true", help="print the throughput table only"
    )
    opts = parser.parse_args()
    lines = throughput(3000 if opts.quick else 20000)
    if opts.throughput_only:
        print("\n".join(lines))
        return
    lines += ["", *broken_detectors(5 if opts.quick else 30, SEEDS[:2] if opts.quick else SEEDS)]
    if opts.survival > 0:
        lines += ["", *survival(opts.survival)]
    text = "\n".join(lines)
    print(text)
    if not opts.quick:
        write_section("Fuzz: throughput, broken detectors, survival (bench_fuzz.py)", text)


if __name__ == "__main__":
    main()
