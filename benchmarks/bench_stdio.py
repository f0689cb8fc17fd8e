"""Per-chunk cost the stdio protocol adds over an in-process detector.

    python benchmarks/bench_stdio.py [--quick]

The reference ``StreamDetector`` runs in-process and behind
``python -m tcr.stdio``, over a realistic ~100 KB message (prose
with tool calls and reasoning) cut into 4-character chunks, each driven the
way a replay drives it: ``run_trace(detector, chunks, states=False)``, which
takes the process detector's pipelined ``feed_many``.
Target (ARCHITECTURE.md §17): the protocol adds at most 30 µs per chunk.

For context, not the target: one request per chunk, waiting for each answer
(how ``tcr show`` and the TUI step), and the pipe round trip to a process
that only echoes, which is what that costs at least.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.detector.core import StreamDetector
from tcr.detector.events import Detector
from tcr.stdio import command_factory
from tcr.stdio._pipe import Pipe
from tcr.trace import run_trace

TARGET_US = 30.0
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
PARAGRAPH = (
    "The forecast for the coming week shows a mix of sun and showers, with "
    "temperatures around twenty degrees and a light breeze from the west. "
)
ECHO = (
    "import sys\nout = sys.stdout.buffer\n"
    "for line in sys.stdin.buffer:\n    out.write(b'{\"events\":[]}\\n'); out.flush()\n"
)


def message(size: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        parts += [PARAGRAPH * 6, "<think>check the city first</think>", CALL, "\n"]
    return "".join(parts)[:size]


def replayed(detector: Detector, chunks: list[str]) -> None:
    """As a replay runs it: the trace runner, no state snapshots."""
    run_trace(detector, chunks, states=False)


def stepped(detector: Detector, chunks: list[str]) -> None:
    """One ``feed`` at a time, each answer awaited: how the TUI steps."""
    for chunk in chunks:
        detector.feed(chunk)
    detector.finish()


def per_chunk(
    make: Callable[[], Detector],
    drive: Callable[[Detector, list[str]], None],
    chunks: list[str],
    repeats: int,
) -> list[float]:
    """µs per chunk (``finish`` counted as one), once per repeat."""
    times: list[float] = []
    for _ in range(repeats):
        detector = make()
        started = time.perf_counter()
        drive(detector, chunks)
        times.append((time.perf_counter() - started) / (len(chunks) + 1) * 1e6)
    return times


def pipe_floor(rounds: int) -> float:
    """One request and one answer line through a process that does nothing: the OS floor."""
    pipe = Pipe([sys.executable, "-c", ECHO], timeout=5.0)
    try:
        request = b'{"op":"feed","chunk":"abcd"}\n'
        started = time.perf_counter()
        for _ in range(rounds):
            pipe.request(request)
        return (time.perf_counter() - started) / rounds * 1e6
    finally:
        pipe.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    text = message(20_000 if args.quick else 100_000)
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    repeats = 2 if args.quick else 5
    cmd = shlex.join([sys.executable, "-m", "tcr.stdio", "tcr.detector.core:StreamDetector"])
    local = per_chunk(StreamDetector, replayed, chunks, repeats)
    local_stepped = per_chunk(StreamDetector, stepped, chunks, repeats)
    with command_factory(cmd) as factory:
        replayed(factory(), chunks[:2000])  # warm up the process
        remote = per_chunk(factory, replayed, chunks, repeats)
        remote_stepped = per_chunk(factory, stepped, chunks, repeats)
    added = min(remote) - min(local)
    added_stepped = min(remote_stepped) - min(local_stepped)
    floor = pipe_floor(len(chunks))
    verdict = "meets" if added <= TARGET_US else "misses"

    def row(label: str, times: list[float]) -> str:
        return f"| {label} | {min(times):.2f} | {statistics.median(times):.2f} |\n"

    body = (
        f"{len(text) // 1000} KB message, {len(chunks)} chunks of 4 characters, "
        f"{repeats} runs each.\n\n"
        "As a replay drives it (`run_trace(..., states=False)`; the process detector's "
        "pipelined `feed_many`):\n\n"
        "| detector | µs per chunk, best | median |\n|---|---|---|\n"
        + row("in-process `StreamDetector`", local)
        + row("same behind `python -m tcr.stdio`", remote)
        + f"| **added by the protocol** | **{added:.2f}** | |\n\n"
        "For context, one `feed` at a time, each answer awaited (`tcr show`, the TUI):\n\n"
        "| detector | µs per chunk, best | median |\n|---|---|---|\n"
        + row("in-process `StreamDetector`", local_stepped)
        + row("same behind `python -m tcr.stdio`", remote_stepped)
        + f"| added | {added_stepped:.2f} | |\n"
        f"| floor: a pipe round trip to a process that only echoes | {floor:.2f} | |\n\n"
        f"Target: at most {TARGET_US:g} µs added per chunk (best against best): {verdict} "
        "it. A replay sends the chunks ahead of their answers (up to 64 requests in "
        "flight), so it pays the JSON encoding and parsing on both sides but not a pipe round "
        "trip per chunk; stepping one chunk at a time pays the round trip, whose cost varies "
        "with machine load (10 to 90 µs seen on this 2-core machine)."
    )
    print(body)
    if not args.quick:
        write_section("stdio detector protocol (bench_stdio.py)", body)


if __name__ == "__main__":
    main()
