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
Markup-heavy prose (HTML, markdown links and fences, JSON, citations, words that
begin markers) at 4-character chunks: with every dialect within 3x of the floor,
with one dialect claimed within 2x (issue 13, "Speed"); repeated, with the spread
and the load average, since the machine is shared.

    python benchmarks/bench_detector.py --markup-only   # that table alone

Call-heavy prose (agent traffic, issue 37): the same kind of prose with a tool call
after every 40 words, in Hermes (the target: within 3x of the floor with every dialect,
within 2.5x with hermes claimed), and in three other dialects' shapes: Qwen3-Coder
XML, Mistral's compact NAME[ARGS]{…} and Harmony.

    python benchmarks/bench_detector.py --calls-only    # that table alone
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
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


def markup_prose(size: int, seed: int = 11) -> str:
    """Prose dense with markup that is no tool call, about ``size`` characters.

    HTML tags, markdown links, code spans and fences, JSON snippets, ``[1]``-style
    citations and words that begin markers (``functools``, ``tool``, ``seed``,
    ``think``, ``<|``, ``[TOOL``): the characters that send a detector off its
    fast path, with nothing that opens a block.
    """
    rng = random.Random(seed)
    words = (
        "the a weather city forecast value is of and to in for it that with as on be "
        "functools function tool tools token plugin action seed minimax think python "
        "start end call begin section result"
    ).split()

    def word() -> str:
        return rng.choice(words)

    pieces: list[Callable[[], str]] = [
        lambda: f"<b>{word()}</b>",
        lambda: f'<a href="https://example.org/{word()}">{word()}</a>',
        lambda: '<div class="note">',
        lambda: "</div>",
        lambda: "<br/>",
        lambda: f"<p>{word()}</p>",
        lambda: f"[{word()}](https://example.com/{word()})",
        lambda: f"[{rng.randint(1, 40)}]",
        lambda: f"`{word()}()`",
        lambda: "```python\nimport functools\nprint({'a': [1, 2]})\n```\n",
        lambda: '{"key": "value", "n": [1, 2, {"x": null}]}',
        lambda: f"[{rng.randint(1, 9)}, {rng.randint(1, 9)}]",
        lambda: f"functools.{word()}",
        lambda: rng.choice(["<|", "[TOOL", "<seed", "<tool", "<thinking>", "<minimax", "{"]),
    ]
    out: list[str] = []
    total = 0
    while total < size:
        if rng.random() < 0.45:
            piece = rng.choice(pieces)()
        else:
            piece = " ".join(rng.choices(words, k=rng.randint(2, 9)))
        piece += rng.choice((" ", " ", "\n", ". "))
        out.append(piece)
        total += len(piece)
    return "".join(out)[:size]


def markup_rows(size: int, rounds: int, claimed: str) -> tuple[list[str], dict[str, float]]:
    """The markup-heavy table: each detector against the floor, round after round."""
    chunks = chunked(markup_prose(size), 4)
    detectors: dict[str, Callable[[], object]] = {
        "every dialect": StreamDetector,
        f"claimed: {claimed}": lambda: StreamDetector(dialects=[claimed]),
    }
    ratios: dict[str, list[float]] = {name: [] for name in detectors}
    floors = []
    load = os.getloadavg()[0]
    for _ in range(rounds):
        floor = timed(NoopDetector, chunks, 5)
        floors.append(floor)
        for name, factory in detectors.items():
            ratios[name].append(timed(factory, chunks, 5) / floor)
    load = max(load, os.getloadavg()[0])
    kb = size // 1024
    lines = [f"### Markup-heavy prose, {kb} KB at 4-character chunks", ""]
    lines.append("| detector | vs floor (median) | spread | target |")
    lines.append("|---|---:|---:|---:|")
    targets = dict(zip(detectors, ("3x", "2x"), strict=True))
    medians = {}
    for name, found in ratios.items():
        medians[name] = statistics.median(found)
        lines.append(
            f"| {name} | **{medians[name]:.2f}x** | {min(found):.2f}-{max(found):.2f}x "
            f"| at most {targets[name]} |"
        )
    lines += [
        "",
        f"{rounds} rounds, each the best of 5 per detector; floor (no-op) "
        f"{statistics.median(floors) * 1e3:.0f} ms median; load average up to {load:.1f} "
        "on 2 cores shared with other work. Every time in this section is the benchmark "
        "thread's CPU time (time.thread_time), so the load is not counted in it.",
        "",
    ]
    return lines, medians


# One call per dialect of the call-heavy table: the block a model writes, as the dialect's
# renderer writes it (get_weather(city="Paris")).
CALLS = {
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "qwen3_coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>"
    ),
    "mistral_v13": '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    "harmony": (
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city":"Paris"}<|call|>'
    ),
}


def call_prose(size: int, call: str, seed: int = 13) -> str:
    """Plain prose with ``call`` after every 40 words, about ``size`` characters."""
    rng = random.Random(seed)
    words = (
        "the a weather city forecast value is of and to in for it that with as on be "
        "result tomorrow rain sun wind cold warm north south"
    ).split()
    out: list[str] = []
    total = 0
    while total < size:
        piece = " ".join(rng.choices(words, k=40)) + ". " + call + "\n"
        out.append(piece)
        total += len(piece)
    return "".join(out)[:size]


def call_rows(size: int, rounds: int) -> tuple[list[str], dict[str, float]]:
    """The call-heavy table: each dialect's mix, every dialect and that one claimed."""
    rows: dict[str, tuple[list[str], Callable[[], object]]] = {}
    for dialect, call in CALLS.items():
        chunks = chunked(call_prose(size, call), 4)
        rows[f"{dialect}: every dialect"] = (chunks, StreamDetector)
        rows[f"{dialect}: claimed"] = (chunks, lambda d=dialect: StreamDetector(dialects=[d]))
    ratios: dict[str, list[float]] = {name: [] for name in rows}
    load = os.getloadavg()[0]
    for _ in range(rounds):
        for name, (chunks, factory) in rows.items():
            floor = timed(NoopDetector, chunks, 5)
            ratios[name].append(timed(factory, chunks, 5) / floor)
    load = max(load, os.getloadavg()[0])
    targets = {"hermes: every dialect": "3x", "hermes: claimed": "2.5x"}
    lines = [f"### Call-heavy prose, {size // 1024} KB at 4-character chunks", ""]
    lines.append("| calls, detector | vs floor (best) | median | target |")
    lines.append("|---|---:|---:|---:|")
    bests = {}
    for name, found in ratios.items():
        bests[name] = min(found)
        target = f"at most {targets[name]}" if name in targets else ""
        lines.append(
            f"| {name} | **{bests[name]:.2f}x** | {statistics.median(found):.2f}x | {target} |"
        )
    lines += [
        "",
        f"A call after every 40 words; best of {rounds} interleaved rounds, each the best "
        f"of 5 per detector against the floor timed beside it; load average up to {load:.1f} "
        "on 2 cores shared with other work; thread CPU time (time.thread_time).",
        "",
    ]
    return lines, bests


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
    """The best of ``repeat`` runs, in this thread's CPU time: other work on the shared
    cores takes turns with a run but is not counted in it."""
    best = float("inf")
    for _ in range(repeat):
        det = factory()
        feed = det.feed  # type: ignore[attr-defined]
        start = time.thread_time()
        for chunk in chunks:
            feed(chunk)
        det.finish()  # type: ignore[attr-defined]
        best = min(best, time.thread_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, no RESULTS.md")
    parser.add_argument("--markup-only", action="store_true", help="the markup table alone")
    parser.add_argument("--calls-only", action="store_true", help="the call-heavy table alone")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of the markup table")
    opts = parser.parse_args()
    scale = 8 if opts.quick else 1
    repeat = 3
    if opts.calls_only:
        print("\n".join(call_rows((1 << 20) // scale, 5)[0]))
        return
    markup, _ = markup_rows((256 << 10) // scale, opts.rounds, "hermes")
    if opts.markup_only:
        print("\n".join(markup))
        return
    calls, _ = call_rows((1 << 20) // scale, 5)

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
    report = "\n".join([*lines, "", *markup, *calls])
    print(report)
    if not opts.quick:
        write_section("Detector: throughput and linearity (bench_detector.py)", report)


if __name__ == "__main__":
    main()
