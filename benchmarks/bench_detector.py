"""Detector throughput and linearity against two baselines in the same run.

    python benchmarks/bench_detector.py [--quick]

Baselines:
- ``noop``: emits every chunk as Text; the per-call floor of any detector.
- ``naive``: the pre-fix shape from the seeds (PR #879, ARCHITECTURE.md §15.2): it
  re-joins its whole buffer (held text or open block) and re-scans it for markers on
  every chunk.

Targets (ARCHITECTURE.md §17): at 4-character chunks within 4x of the no-op floor; on a
256 KB tool block fed one character at a time at least 20x faster than naive,
the gap growing with size; a 1 MB block at most 12x the time of a 100 KB one.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section

from tcr.detector import Event, Text, ToolCall
from tcr.detector.core import StreamDetector


class NoopDetector:
    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk)]

    def finish(self) -> list[Event]:
        return []


class NaiveDetector:
    """Re-joins and re-scans its whole buffer on every chunk.

    The seeds' quadratic bug (ARCHITECTURE.md §15.2).
    """

    OPEN, CLOSE = "<tool_call>", "</tool_call>"

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.in_block = False

    def feed(self, chunk: str) -> list[Event]:
        self.parts.append(chunk)
        buf = "".join(self.parts)
        if self.in_block:
            end = buf.find(self.CLOSE)
            if end < 0:
                return []
            self.in_block = False
            self.parts = [buf[end + len(self.CLOSE) :]]
            return [ToolCall("?", "{}", buf[: end + len(self.CLOSE)], "tool_call_tag")]
        start = buf.find(self.OPEN)
        if start >= 0:
            self.in_block = True
            self.parts = [buf[start:]]
            return [Text(buf[:start])]
        hold = next((k for k in range(len(self.OPEN) - 1, 0, -1) if buf.endswith(self.OPEN[:k])), 0)
        self.parts = [buf[len(buf) - hold :]] if hold else []
        return [Text(buf[: len(buf) - hold])]

    def finish(self) -> list[Event]:
        return [Text("".join(self.parts))]


def realistic_stream(size: int, seed: int = 7) -> str:
    """Prose with tool calls, reasoning, code fences and near-miss markers, about ``size`` chars."""
    rng = random.Random(seed)
    # Mostly prose; about one word in thirty can begin a marker (markdown code,
    # links, HTML), so roughly 5% of 4-character chunks take the slow path.
    words = (
        "the a weather city forecast call tool result value is of and to in for é 漢字 😀 "
        "it that with as on be at by this have from or one had not but what all were we "
        "when your can said there use an each which she do how their if will up other about"
    ).split()
    words += ["`code`", "[link]", "<b>"]
    out: list[str] = []
    total = 0
    while total < size:
        roll = rng.random()
        if roll < 0.06:
            city = rng.choice(["Paris", "Oslo", "東京"])
            args = {"city": city, "days": rng.randint(1, 9)}
            call = json.dumps({"name": "get_weather", "arguments": args})
            piece = f"<tool_call>\n{call}\n</tool_call>"
        elif roll < 0.09:
            piece = "<think>" + " ".join(rng.choices(words, k=30)) + "</think>"
        elif roll < 0.11:
            piece = "```python\nprint('hi')\n```"
        elif roll < 0.13:
            piece = rng.choice(["<tool_result>", "<tools do not", "[TOOL", "<|python"])
        else:
            piece = " ".join(rng.choices(words, k=rng.randint(5, 40))) + ".\n"
        out.append(piece)
        total += len(piece)
    return "".join(out)[:size]


def block_of(size: int) -> str:
    """One tool block whose JSON arguments make it ``size`` characters long."""
    head = '<tool_call>{"name": "write_file", "arguments": {"text": "'
    tail = '"}}</tool_call>'
    # Quotes, braces and a closing-marker look-alike inside the string: the
    # naive baseline must not be cut short by them, or it would not be re-scanning.
    filler = ('line with "quotes", {braces} and </tool_call inside\\n ' * (size // 40 + 1)).replace(
        '"', '\\"'
    )
    return head + filler[: size - len(head) - len(tail)].rstrip("\\") + tail


def chunked(text: str, n: int) -> list[str]:
    return [text[i : i + n] for i in range(0, len(text), n)]


def timed(factory: Callable[[], object], chunks: Sequence[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        det = factory()
        feed = det.feed  # type: ignore[attr-defined]
        start = time.perf_counter()
        for chunk in chunks:
            feed(chunk)
        det.finish()  # type: ignore[attr-defined]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, no RESULTS.md")
    opts = parser.parse_args()
    scale = 8 if opts.quick else 1
    repeat = 3

    lines = ["### Throughput on a 1 MB realistic stream", ""]
    lines.append("| chunk | noop (floor) | naive | StreamDetector | vs floor | MB/s |")
    lines.append("|---:|---:|---:|---:|---:|---:|")
    stream = realistic_stream((1 << 20) // scale)
    ratios = {}
    for n in (1, 4, 64):
        chunks = chunked(stream, n)
        t_noop = timed(NoopDetector, chunks, repeat)
        t_naive = timed(NaiveDetector, chunks, repeat)
        t_ref = timed(StreamDetector, chunks, repeat)
        ratios[n] = t_ref / t_noop
        mbs = len(stream) / t_ref / 1e6
        lines.append(
            f"| {n} | {t_noop * 1e3:.0f} ms | {t_naive * 1e3:.0f} ms | {t_ref * 1e3:.0f} ms "
            f"| {ratios[n]:.2f}x | {mbs:.1f} |"
        )
    lines += [
        "",
        f"Target at 4-character chunks: within 4x of the floor: **{ratios[4]:.2f}x**.",
        "",
    ]

    lines += ["### One tool block fed one character at a time", ""]
    lines.append("| block | naive | StreamDetector | naive / StreamDetector |")
    lines.append("|---:|---:|---:|---:|")
    gaps = {}
    times = {}
    for kb in (16, 64, 256):
        chars = list(block_of(kb * 1024 // scale))
        t_naive = timed(NaiveDetector, chars, 1)
        t_ref = timed(StreamDetector, chars, repeat)
        gaps[kb] = t_naive / t_ref
        lines.append(
            f"| {kb} KB | {t_naive * 1e3:.0f} ms | {t_ref * 1e3:.1f} ms | {gaps[kb]:.0f}x |"
        )
    lines += ["", f"Target at 256 KB: at least 20x: **{gaps[256]:.0f}x**, growing with size.", ""]

    lines += ["### Linearity", ""]
    for kb in (100, 1000):
        times[kb] = timed(StreamDetector, list(block_of(kb * 1024 // scale)), repeat)
    lines.append(
        f"1 MB block one character at a time: {times[1000] * 1e3:.0f} ms; "
        "100 KB: "
        f"{times[100] * 1e3:.0f} ms; ratio **{times[1000] / times[100]:.1f}x** "
        "(target at most 12x)."
    )
    report = "\n".join(lines)
    print(report)
    if not opts.quick:
        write_section("Detector: throughput and linearity (bench_detector.py)", report)


if __name__ == "__main__":
    main()
