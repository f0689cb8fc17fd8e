"""Shared by the debugger's tests: bundled recordings, small detectors, a headless run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tcr.corpora import ROOT
from tcr.detector.events import Event, Text, ToolCall
from tcr.tui import DebuggerApp

T = TypeVar("T")

REGRESSIONS = ROOT / "regressions"
SPLIT_MARKER = REGRESSIONS / "split_marker_llama_server.msgpack"  # <tool_call> in nine pieces
END_IN_PREFIX = REGRESSIONS / "end_inside_marker_prefix.msgpack"  # ends on "<tool_c"
PER_CHUNK_MARKERS = "tcr.detector.broken:per_chunk_markers"
DROPS_PENDING = "tcr.detector.broken:drops_pending_at_finish"
STATELESS = "tui_helpers:stateless_detector"
CRASHES = "tui_helpers:crashing_detector"


class StatelessDetector:
    """No ``state``: emits each line when its newline arrives, a ``CALL name`` line as a call."""

    def __init__(self) -> None:
        self.held = ""

    def feed(self, chunk: str) -> list[Event]:
        self.held += chunk
        events: list[Event] = []
        while "\n" in self.held:
            line, _, self.held = self.held.partition("\n")
            events.append(self._line(line + "\n"))
        return events

    def finish(self) -> list[Event]:
        line, self.held = self.held, ""
        return [self._line(line)] if line else []

    @staticmethod
    def _line(line: str) -> Event:
        if line.startswith("CALL "):
            return ToolCall(line[5:].strip(), "{}", line, "line")
        return Text(line)


def stateless_detector() -> StatelessDetector:
    return StatelessDetector()


class CrashingDetector(StatelessDetector):
    """Raises on the chunk that holds "boom"."""

    def feed(self, chunk: str) -> list[Event]:
        if "boom" in chunk:
            raise ValueError("boom")
        return super().feed(chunk)


def crashing_detector() -> CrashingDetector:
    return CrashingDetector()


def run(main: Callable[[], Awaitable[T]]) -> T:
    """Run an async test body (no pytest-asyncio needed)."""

    async def wrapped() -> T:
        return await main()

    return asyncio.run(wrapped())


async def settle(app: DebuggerApp) -> None:
    """Until the run is traced and judged and every pane shows it."""
    await app.wait_for_verdict(timeout=60)
