"""Per-chunk cost the stdio protocol adds over an in-process detector.

    python benchmarks/bench_stdio.py [--quick]

The reference ``StreamDetector`` runs in-process and behind
``python -m tcr.detector.stdio``, over a realistic ~100 KB message (prose
with tool calls and reasoning) cut into 4-character chunks.
Target (issue 7): the protocol adds at most 30 µs per chunk.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.detector.core import StreamDetector
from tcr.detector.loader import Factory
from tcr.detector.stdio import _Process, command_factory

TARGET_US = 30.0
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
PARAGRAPH = (
    "The forecast for the coming week shows a mix of sun and showers, with "
    "temperatures around twenty degrees and a light breeze from the west. "
)


def message(size: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        parts += [PARAGRAPH * 6, "<think>check the city first</think>", CALL, "\n"]
    return "".join(parts)[:size]


def per_chunk(factory: Factory, chunks: list[str], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        detector = factory()
        started = time.perf_counter()
        for chunk in chunks:
            detector.feed(chunk)
        detector.finish()
        best = min(best, (time.perf_counter() - started) / (len(chunks) + 1))
    return best * 1e6


ECHO = (
    "import sys\nout = sys.stdout.buffer\n"
    "for line in sys.stdin.buffer:\n    out.write(b'{\"events\":[]}\\n'); out.flush()\n"
)


def pipe_floor(rounds: int) -> float:
    """One request and one answer line through a process that does nothing: the OS floor."""
    with command_factory(shlex.join([sys.executable, "-c", ECHO])) as factory:
        process = factory._process = _Process(factory.argv, factory.timeout)
        started = time.perf_counter()
        for _ in range(rounds):
            process.request({"op": "feed", "chunk": "abcd"})
        return (time.perf_counter() - started) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    text = message(20_000 if args.quick else 100_000)
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    repeats = 2 if args.quick else 5
    cmd = shlex.join(
        [sys.executable, "-m", "tcr.detector.stdio", "tcr.detector.core:StreamDetector"]
    )
    local = per_chunk(StreamDetector, chunks, repeats)
    with command_factory(cmd) as factory:
        per_chunk(factory, chunks[:2000], 1)  # warm up the process
        remote = per_chunk(factory, chunks, repeats)
    added = remote - local
    floor = pipe_floor(len(chunks))
    verdict = "meets" if added <= TARGET_US else "misses"
    body = (
        f"{len(text) // 1000} KB message, {len(chunks)} chunks of 4 characters, "
        f"best of {repeats}.\n\n"
        "| detector | µs per chunk |\n|---|---|\n"
        f"| in-process `StreamDetector` | {local:.2f} |\n"
        f"| same behind `python -m tcr.detector.stdio` | {remote:.2f} |\n"
        f"| **added by the protocol** | **{added:.2f}** |\n"
        f"| floor: a pipe round trip to a process that only echoes | {floor:.2f} |\n\n"
        f"Target: at most {TARGET_US:g} µs added per chunk: {verdict} it. One round trip "
        "per chunk is inherent to the protocol; the pipe floor (last row) is most of the "
        "cost and varies with machine load (10 to 90 µs seen on this 2-core machine)."
    )
    print(body)
    if not args.quick:
        write_section("stdio detector protocol (bench_stdio.py)", body)


if __name__ == "__main__":
    main()
