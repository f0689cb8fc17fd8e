"""The step debugger on a 1 MB recording: time to the first screen and per step.

    python benchmarks/bench_tui.py [--quick]

Targets (ARCHITECTURE.md §17): a 1 MB recording (realistic text with tool calls, ``chunks``
kind, 4-character chunks) opens in under 1 s, from ``make_app`` to the first
screen rendered in a headless ``run_test()``; each step renders in under 50 ms,
from the key press to the end of the screen refresh that shows it.

Times are read from the screen refreshes themselves (a hook on the compositor
refresh), not from ``pilot.pause()``, which sleeps 20 ms or more by design.
Baseline in the same run: a minimal Textual app (a label and a footer) that
redraws its label on each key, measured the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).parent))

from _results import write_section
from bench_detector import realistic_stream
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from tcr.corpus import Frame, new_header, write_recording
from tcr.tui import make_app

SIZE = (120, 40)
_refreshes: list[float] = []


def _hook_refreshes() -> None:
    """Record the end time of every screen refresh (headless apps render too)."""
    refresh = Screen._compositor_refresh

    def timed(self: Screen[Any]) -> None:
        refresh(self)
        _refreshes.append(time.perf_counter())

    Screen._compositor_refresh = timed  # type: ignore[method-assign]


class Baseline(App[None]):
    """A label redrawn on every key: the cost of any Textual app's step."""

    BINDINGS: ClassVar[list[BindingType]] = [("n", "next", "next")]

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Static("step 0", id="label")
        yield Footer()

    def action_next(self) -> None:
        self.count += 1
        self.query_one("#label", Static).update(f"step {self.count}")


async def measure(factory: Callable[[], App[Any]], steps: int) -> dict[str, Any]:
    """Seconds to the first screen, then per key press until the screen showed it."""
    _refreshes.clear()
    started = time.perf_counter()
    app = factory()
    made = time.perf_counter() - started
    latencies: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        while not _refreshes:
            await asyncio.sleep(0.001)
        first = _refreshes[0] - started
        for _ in range(steps):
            pressed = time.perf_counter()
            count = len(_refreshes)
            await pilot.press("n")
            while len(_refreshes) == count:
                await asyncio.sleep(0.001)
            latencies.append(_refreshes[count] - pressed)
        extra: dict[str, Any] = {}
        wait = getattr(app, "wait_for_verdict", None)
        if wait is not None:
            await wait(600)
            extra["verdict"] = time.perf_counter() - started
            extra["steps_total"] = app.active_run.rows  # type: ignore[attr-defined]
            extra["ok"] = app.active_run.verdict.ok  # type: ignore[attr-defined]
            settled: list[float] = []
            for _ in range(steps):
                pressed = time.perf_counter()
                count = len(_refreshes)
                await pilot.press("n")
                while len(_refreshes) == count:
                    await asyncio.sleep(0.001)
                settled.append(_refreshes[count] - pressed)
            extra["settled"] = settled
            pressed = time.perf_counter()
            count = len(_refreshes)
            await pilot.press("G")
            while len(_refreshes) == count:
                await asyncio.sleep(0.001)
            extra["end"] = _refreshes[count] - pressed
    return {"made": made, "first": first, "steps": latencies, **extra}


def recording(folder: Path, size: int) -> tuple[Path, int]:
    text = realistic_stream(size)
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    path = folder / "stream.msgpack"
    header = new_header("chunks", labels={"origin": "handmade", "note": "bench_tui"})
    write_recording(path, header, [Frame(i * 20_000, c) for i, c in enumerate(chunks)])
    return path, len(text)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller input, no RESULTS.md")
    parser.add_argument("--steps", type=int, default=40, help="key presses measured")
    opts = parser.parse_args()
    _hook_refreshes()
    size = (1 << 20) // (8 if opts.quick else 1)
    with tempfile.TemporaryDirectory() as tmp:
        path, length = recording(Path(tmp), size)
        disk = path.stat().st_size
        baseline = asyncio.run(measure(Baseline, opts.steps))
        tui = asyncio.run(measure(lambda: make_app(path), opts.steps))

    base_step = statistics.median(baseline["steps"])
    rows = [
        ("baseline: a label and a footer", baseline, base_step),
    ]
    lines = [
        f"A `chunks` recording of {length:,} characters in {length // 4:,} chunks of 4 "
        f"({disk / 1e6:.1f} MB on disk), opened with `make_app(path)` in a headless "
        f"`run_test(size={SIZE})`; {opts.steps} presses of `n` right after the first "
        "screen (while the rest is read and traced in the background), then as many "
        "once the oracles have run. Times end when the screen refresh that shows the "
        "step has finished.",
        "",
        "| app | make_app | first screen | step median | step p95 | step max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, result, _ in rows:
        steps = sorted(result["steps"])
        lines.append(
            f"| {label} | {_ms(result['made'])} | {_ms(result['first'])} | "
            f"{_ms(statistics.median(steps))} | {_ms(steps[int(len(steps) * 0.95) - 1])} | "
            f"{_ms(steps[-1])} |"
        )
    for label, key in (
        ("tcr tui, while reading and tracing", "steps"),
        ("tcr tui, settled", "settled"),
    ):
        steps = sorted(tui[key])
        first = _ms(tui["first"]) if key == "steps" else ""
        made = _ms(tui["made"]) if key == "steps" else ""
        lines.append(
            f"| {label} | {made} | {first} | {_ms(statistics.median(steps))} | "
            f"{_ms(steps[int(len(steps) * 0.95) - 1])} | {_ms(steps[-1])} |"
        )
    worst = max(max(tui["steps"]), max(tui["settled"]))
    lines += [
        "",
        f"Whole run read, traced ({tui['steps_total']:,} steps) and judged by every oracle "
        f"in the background: {tui['verdict']:.1f} s after `make_app` "
        f"({'pass' if tui['ok'] else 'violations'}); `G` (to `finish()`) then: "
        f"{_ms(tui['end'])}.",
        "",
        f"Targets: open under 1 s: **{tui['first']:.2f} s, "
        f"{'met' if tui['first'] < 1 else 'missed'}** ({tui['first'] / baseline['first']:.0f}x "
        f"the baseline's first screen); each step under 50 ms: **worst {_ms(worst)}, "
        f"{'met' if worst < 0.05 else 'missed'}** (median "
        f"{statistics.median(tui['settled']) / base_step:.1f}x the baseline's step).",
    ]
    report = "\n".join(lines)
    print(report)
    if not opts.quick:
        write_section("TUI: opening a 1 MB recording and stepping (bench_tui.py)", report)


if __name__ == "__main__":
    main()
