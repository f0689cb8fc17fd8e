"""Replay throughput with every oracle, and the time to replay the bundled corpora.

    python benchmarks/bench_replay.py [--quick]

Targets (ARCHITECTURE.md §17): replay with every oracle on processes at least 500,000
content characters per second at ``random`` chunking. Measured beside a
baseline in the same run: the bare detector fed the same chunkings with no
tracing and no oracles, so the ratio shows what checking costs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section
from bench_detector import realistic_stream

from tcr.corpus import Frame, new_header, write_recording
from tcr.detector.core import StreamDetector
from tcr.rechunk import parse_strategy
from tcr.replay import run


def bare_detector_seconds(text: str, runs: int, seed: int) -> float:
    """The same random chunkings through the detector alone."""
    chunkings = [c.chunks for c in parse_strategy("random").chunkings(text, runs=runs, seed=seed)]
    started = time.perf_counter()
    for chunks in chunkings:
        detector = StreamDetector()
        for chunk in chunks:
            detector.feed(chunk)
        detector.finish()
    return time.perf_counter() - started


def oracle_linearity() -> tuple[float, float]:
    """Every trace check on 4x the input: a linear oracle takes ~4x, a quadratic one ~16x."""
    from tcr.oracle import check_trace
    from tcr.trace import run_trace

    times = []
    for size in (64 * 1024, 256 * 1024):
        text = realistic_stream(size)
        chunks = next(parse_strategy("random").chunkings(text, seed=5)).chunks
        trace = run_trace(StreamDetector(), chunks, states=False)
        whole = run_trace(StreamDetector(), [text], states=False)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            check_trace(trace, whole=whole)
            best = min(best, time.perf_counter() - started)
        times.append(best)
    return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, no RESULTS.md")
    opts = parser.parse_args()
    size = (1 << 20) // (8 if opts.quick else 1)
    runs = 5
    text = realistic_stream(size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.msgpack"
        chunks = [text[i : i + 7] for i in range(0, len(text), 7)]
        write_recording(path, new_header("chunks"), [Frame(i, c) for i, c in enumerate(chunks)])
        report = run([path], strategies=["random"], runs=runs, seed=1)
        assert report.exit_code == 0, report.to_dict()
        outcome = report.outcomes[0]
        checked = outcome.chars / outcome.seconds
        bare = bare_detector_seconds(text, runs, 1)
    bare_rate = runs * len(text) / bare

    small, large = oracle_linearity()

    started = time.perf_counter()
    bundled = run(None, runs=100)
    bundled_seconds = time.perf_counter() - started

    lines = [
        f"### Every oracle at `random` chunking ({len(text) / 1e6:.1f} MB, {runs} runs)",
        "",
        "| | chars/s |",
        "|---|---:|",
        f"| detector alone (baseline) | {bare_rate:,.0f} |",
        f"| replay with every oracle | {checked:,.0f} |",
        "",
        f"Checking costs **{bare_rate / checked:.1f}x** the bare detector; "
        f"target at least 500,000 chars/s: **{checked:,.0f}**.",
        "",
        "### Oracles are linear in the input",
        "",
        f"Every trace check on 64 KB: {small * 1e3:.1f} ms; on 256 KB: {large * 1e3:.1f} ms; "
        f"ratio **{large / small:.1f}x** for 4x the input (quadratic would be ~16x).",
        "",
        "### The bundled corpora, default strategies, `--runs 100`",
        "",
        f"{bundled.recordings} recordings, {len(bundled.outcomes)} strategy runs, "
        f"{bundled.chars:,} characters in **{bundled_seconds:.2f} s** "
        f"(exit code {bundled.exit_code}).",
    ]
    report_text = "\n".join(lines)
    print(report_text)
    if not opts.quick:
        write_section("Replay: throughput with every oracle (bench_replay.py)", report_text)


if __name__ == "__main__":
    main()
