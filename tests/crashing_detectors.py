"""Detectors that fail in the ways a user's plug-in fails: loaded by spec in the replay tests."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import time

from tcr.detector import Event, Text
from tcr.detector.core import StreamDetector


def factory_raises(tools: list[str] | None = None) -> StreamDetector:
    raise RuntimeError("cannot connect to the model registry")


class _RaisesInFeed(StreamDetector):
    def feed(self, chunk: str) -> list[Event]:
        if "<tool_call>" in self.state.pending + chunk or chunk.startswith("_c"):
            raise KeyError("tool_call")
        return super().feed(chunk)


def feed_raises(tools: list[str] | None = None) -> StreamDetector:
    return _RaisesInFeed(tools=tools)


def no_tools_keyword() -> StreamDetector:
    """A factory without a ``tools`` keyword is called with no arguments."""
    return StreamDetector()


class _ExitsInFeed(StreamDetector):
    def feed(self, chunk: str) -> list[Event]:
        if multiprocessing.parent_process() is None:  # never end the test session itself
            raise RuntimeError("feed_exits ends only a worker process")
        os._exit(3)


def feed_exits(tools: list[str] | None = None) -> StreamDetector:
    """Ends its process in ``feed``, as a native crash or an out-of-memory kill would."""
    return _ExitsInFeed(tools=tools)


class _InterruptedInFeed(StreamDetector):
    def feed(self, chunk: str) -> list[Event]:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C arriving while the detector runs
        return super().feed(chunk)


def interrupted_in_feed(tools: list[str] | None = None) -> StreamDetector:
    return _InterruptedInFeed(tools=tools)


class _RaisesKeyboardInterrupt(StreamDetector):
    def feed(self, chunk: str) -> list[Event]:
        raise KeyboardInterrupt  # the detector's own, no Ctrl-C: a crash (issue 36)


def raises_keyboard_interrupt(tools: list[str] | None = None) -> StreamDetector:
    return _RaisesKeyboardInterrupt(tools=tools)


class _ExitsBySysExit(StreamDetector):
    def feed(self, chunk: str) -> list[Event]:
        if "<tool_call>" in self.state.pending + chunk:
            raise SystemExit("a parser calling sys.exit() on bad input")
        return super().feed(chunk)


def feed_sys_exits(tools: list[str] | None = None) -> StreamDetector:
    """Calls ``sys.exit()`` in ``feed``: a crash finding, not the end of tcr."""
    return _ExitsBySysExit(tools=tools)


class _TextNotStr(StreamDetector):
    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk.encode())] if chunk else []  # type: ignore[arg-type]


def text_not_str(tools: list[str] | None = None) -> StreamDetector:
    """Emits ``Text`` whose text is bytes: a finding naming the chunk, not a traceback."""
    return _TextNotStr(tools=tools)


class _HangsOnACall(StreamDetector):
    def feed(self, chunk: str) -> list[Event]:
        if "<tool_call>" in self.state.pending + chunk:
            time.sleep(30)  # a hang, as far as any time limit in the tests goes
        return super().feed(chunk)


def hangs_on_a_call(tools: list[str] | None = None) -> StreamDetector:
    """Hangs in ``feed`` once it sees a call: over ``--timeout``, a finding at that chunk."""
    return _HangsOnACall(tools=tools)


_made = itertools.count()


class _CrashesEveryOtherTime(StreamDetector):
    def __init__(self, tools: list[str] | None = None) -> None:
        super().__init__(tools=tools)
        self.crashes = next(_made) % 2 == 1  # global state: the same input, another answer

    def feed(self, chunk: str) -> list[Event]:
        if self.crashes and "<tool_call>" in self.state.pending + chunk:
            raise RuntimeError("only sometimes")
        return super().feed(chunk)


def flaky(tools: list[str] | None = None) -> StreamDetector:
    """Crashes on a call in every other detector made: not reproducible, so not shrinkable."""
    return _CrashesEveryOtherTime(tools=tools)
