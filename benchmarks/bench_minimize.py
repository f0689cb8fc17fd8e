"""Minimizer speed: a 10 KB recording cut into ~2,000 chunks with one bad split.

    python benchmarks/bench_minimize.py [--quick]

The detector is ``BROKEN["per_chunk_markers"]`` (PR #879, ARCHITECTURE.md §15.2:
markers matched one chunk at a time), the predicate what the replay runner asks:
run the trace, run the oracles against the whole run, and look for a ``no_leak``
violation. Exactly one split cuts a ``<tool_call>`` marker; every other
marker-cutting chunk is merged, so the minimizer has a single culprit among ~2,000 splits to find.

Target (ARCHITECTURE.md §17): shrunk in under 2 s, with O(log n) predicate calls.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.detector.broken import BROKEN
from tcr.minimize import minimize
from tcr.oracle import check_trace
from tcr.rechunk import split_at
from tcr.trace import run_trace

TITLE = "Minimizer: a 10 KB recording with one bad split (bench_minimize.py)"
OPEN, CLOSE = "<tool_call>", "</tool_call>"
TARGET_S = 2.0


def realistic_text(size: int, seed: int = 3) -> str:
    """Prose paragraphs with a tool call every ~2 KB, about ``size`` characters."""
    rng = random.Random(seed)
    words = (
        "the weather in Paris looks mild this week so a light jacket should do and the "
        "museums open at nine while the river walks are best before noon I will check "
        "the forecast again tomorrow and let you know if anything changes"
    ).split()
    parts: list[str] = []
    total = 0
    while total < size:
        prose = " ".join(rng.choices(words, k=rng.randint(40, 80))).capitalize() + ".\n"
        if len(parts) % 5 == 4:
            args = {"city": rng.choice(["Paris", "Oslo", "Lyon"]), "days": rng.randint(1, 7)}
            prose = f"{OPEN}\n{json.dumps({'name': 'get_weather', 'arguments': args})}\n{CLOSE}\n"
        parts.append(prose)
        total += len(prose)
    return "".join(parts)


def one_bad_split(text: str, seed: int = 11) -> tuple[list[int], int]:
    """Split offsets for random chunk sizes 1..8, none inside a marker but the one
    returned with them, inside the second ``<tool_call>``."""
    rng = random.Random(seed)
    offsets: list[int] = []
    at = rng.randint(1, 8)
    while at < len(text):
        offsets.append(at)
        at += rng.randint(1, 8)
    spans = [
        (i, i + len(marker))
        for marker in (OPEN, CLOSE)
        for i in range(len(text))
        if text.startswith(marker, i)
    ]
    inside = {k for a, b in spans for k in range(a + 1, b)}
    bad = text.index(OPEN, text.index(OPEN) + 1) + 5  # "<tool" | "_call>"
    return sorted({k for k in offsets if k not in inside} | {bad}), bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run, no RESULTS.md")
    opts = parser.parse_args()

    factory = BROKEN["per_chunk_markers"]
    text = realistic_text(10 * 1024)
    offsets, bad = one_bad_split(text)
    chunks = split_at(text, offsets)
    whole = run_trace(factory(), [text], states=False)

    def leaks(candidate: Sequence[str]) -> bool:
        trace = run_trace(factory(), candidate, states=False)
        return any(v.check == "no_leak" for v in check_trace(trace, whole=whole).violations)

    assert leaks(chunks), "the benchmark chunking must fail"
    assert not leaks(split_at(text, [k for k in offsets if k != bad])), "only one split is bad"

    start = time.perf_counter()
    leaks(chunks)
    one_run = time.perf_counter() - start

    best = float("inf")
    for _ in range(1 if opts.quick else 3):
        start = time.perf_counter()
        result = minimize(chunks, leaks, text_too=False)
        best = min(best, time.perf_counter() - start)
    assert result.splits == (bad,), result.splits

    def leaks_in_own_text(candidate: Sequence[str]) -> bool:
        # Shortened texts need their own whole run to compare with.
        own = run_trace(factory(), ["".join(candidate)], states=False)
        trace = run_trace(factory(), candidate, states=False)
        return any(v.check == "no_leak" for v in check_trace(trace, whole=own).violations)

    start = time.perf_counter()
    shortest = minimize(chunks, leaks_in_own_text, text_too=True)
    text_time = time.perf_counter() - start

    met = "met" if best < TARGET_S else "MISSED"
    report = "\n".join(
        [
            f"A {len(text):,}-character text (prose and {text.count(OPEN)} `<tool_call>` "
            f"blocks) in {len(chunks):,} chunks of 1..8 characters ({len(offsets):,} splits); "
            f"the only bad split is at offset {bad}, inside a `<tool_call>` marker. "
            "Detector `BROKEN['per_chunk_markers']`; predicate: `run_trace` + `check_trace` "
            "against the whole run has a `no_leak` violation.",
            "",
            "| splits | predicate calls | one predicate call | minimize_splits (best of 3) |",
            "|---:|---:|---:|---:|",
            f"| {len(offsets):,} → {len(result.splits)} (`--rechunk {result.rechunk}`) "
            f"| {result.calls} | {one_run * 1e3:.1f} ms | {best:.3f} s |",
            "",
            f"Target: under {TARGET_S:.0f} s: **{best:.3f} s, {met}**.",
            "",
            f"For scale, `minimize(..., text_too=True)` (fewest splits, then the shortest "
            f"text) ends at {''.join(shortest.chunks)!r} cut as `--rechunk {shortest.rechunk}` "
            f"after {shortest.calls} predicate calls in {text_time:.3f} s.",
        ]
    )
    print(report)
    if not opts.quick:
        write_section(TITLE, report)


if __name__ == "__main__":
    main()
