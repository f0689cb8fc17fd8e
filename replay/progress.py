"""Progress of a replay on stderr: a live bar on a terminal, else a plain line every few
seconds, so that a piped or logged run is never silent for long and never shows escape codes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .report import short_path

__all__ = ["EVERY", "LONGEST", "ReplayProgress", "gaps"]

EVERY = 5.0  # seconds before the first plain progress line, and between the first two
LONGEST = 60.0  # the gap between two plain lines doubles up to this


def gaps(every: float = EVERY, longest: float = LONGEST) -> Iterator[float]:
    """The waits before each plain progress line: ``every`` twice, then doubling up to
    ``longest``. A piped run is never silent for more than ``longest`` seconds, and a long
    one stays short to read: 6 lines in 3 minutes, about 35 in half an hour."""
    gap = every
    yield gap
    while True:
        yield gap
        gap = min(gap * 2, max(longest, every))


class ReplayProgress:
    """``on_progress`` for ``tcr.replay.run``, as a context manager: on a terminal a transient
    bar; elsewhere a line such as ``tcr replay: 12/56 done, 40 s (regressions/a.msgpack)``
    after ``every`` seconds, then at gaps that double up to a minute (``gaps``; none for a
    run shorter than ``every``), naming the recording last reported: the one being
    replayed, or with ``--jobs`` the last one done."""

    def __init__(
        self,
        stream: TextIO,
        *,
        enabled: bool = True,
        every: float = EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = Console(file=stream)
        self.stream = stream
        self.live = enabled and self.console.is_terminal
        self.plain = enabled and not self.live
        self.every = every
        self.clock = clock
        self.done, self.total = 0, 0
        self.latest = ""  # the recording last reported
        self.started = 0.0
        self.stopped = threading.Event()
        self.ticker = threading.Thread(target=self._tick, name="tcr-progress", daemon=True)
        self.bar = Progress(
            TextColumn("replaying"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=self.console,
            transient=True,
        )
        self.task = self.bar.add_task("", total=None)

    def __enter__(self) -> ReplayProgress:
        self.started = self.clock()
        if self.live:
            self.bar.start()
        elif self.plain:
            self.ticker.start()
        return self

    def __call__(self, description: str, done: int, total: int) -> None:
        self.done, self.total, self.latest = done, total, description
        if self.live:
            self.bar.update(self.task, completed=done, total=total, description=description)

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.bar.stop()
        elif self.plain:
            self.stopped.set()
            self.ticker.join()

    def line(self) -> str:
        """What a plain progress line says now."""
        elapsed = self.clock() - self.started
        counted = f"{self.done}/{self.total} done" if self.total else "starting"
        latest = f" ({short_path(self.latest)})" if self.latest else ""
        return f"tcr replay: {counted}, {elapsed:.0f} s{latest}"

    def _tick(self) -> None:
        # A thread, not the callback: one recording may take minutes (shrinking a finding).
        for gap in gaps(self.every):
            if self.stopped.wait(gap):
                return
            try:
                print(self.line(), file=self.stream, flush=True)
            except (OSError, ValueError):  # stderr closed or gone: the replay goes on
                return
