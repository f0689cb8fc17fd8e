"""A per-message time limit for in-process detectors, without a thread touching them.

The limit is CPU time: ``signal.setitimer(ITIMER_PROF)`` is armed once per
message, on the main thread only (a ``--jobs`` worker runs its tasks on its own
main thread), and its SIGPROF raises ``OverTime`` inside whatever the detector
is doing. CPU time, because the machines tcr runs on are shared: other jobs
must not turn a slow-but-fine detector into a finding. A detector that waits
instead of computing (a sleep, a lock) is stopped by ``ITIMER_REAL`` at
``WALL_FACTOR`` times the limit, its SIGALRM raising the same way. ``OverTime`` is a
``BaseException``, so a detector's own ``except Exception`` cannot swallow it.

The handlers are installed at the first limited message and left in place:
swapping handlers per message cost 13 us and even reading the installed one
4 us (``signal`` converts enums), while arming and disarming the timer costs
2.5 us: 3 us per message in all, 4% of an 80-character message's run through
the reference at 8-character chunks, less on any longer message. An alarm while no message is
limited is ignored.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from tcr.errors import TcrError

__all__ = [
    "DEFAULT_TIMEOUT",
    "PER_CHUNK",
    "OverTime",
    "check_timeout",
    "message_limit",
    "message_time_limit",
]

# What ``--timeout`` defaults to: far beyond any parser's real message (the
# reference takes milliseconds on the largest bundled one), short enough that
# a hang is reported while the user still waits.
DEFAULT_TIMEOUT = 10.0
# Added to the limit per chunk fed: a correct parser may spend this on each call
# (10-20 us is typical in Python), so a million one-character chunks get 110 s at
# the default, not 10 s: the limit is for hangs, ``cost`` is for growth.
PER_CHUNK = 100e-6
# Wall time a message may take, in limits: past it a detector that waits is stopped.
WALL_FACTOR = 3.0


class OverTime(BaseException):
    """The message took longer than its time limit; ``str()`` says how long that was."""


def check_timeout(seconds: float | None) -> float | None:
    """``seconds`` if it is a usable limit (positive, finite) or None; else ``TcrError``."""
    if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
        raise TcrError(f"--timeout must be a positive number of seconds, not {seconds:g}")
    return seconds


def message_limit(timeout: float | None, chunks: int) -> float | None:
    """The limit of a message fed in ``chunks`` chunks: ``timeout`` plus ``PER_CHUNK`` each."""
    return None if timeout is None else timeout + PER_CHUNK * chunks


_limit: str | None = None  # the limit of the message running now, as said, while one is
_installed = False


def _install() -> None:
    global _installed
    signal.signal(signal.SIGPROF, _on_alarm)
    signal.signal(signal.SIGALRM, _on_alarm)
    _installed = True


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _limit is not None:
        raise OverTime(f"took longer than {_limit}")


@contextmanager
def message_time_limit(seconds: float | None, chunks: int = 0) -> Iterator[None]:
    """Raise ``OverTime`` in the body once ``seconds`` plus ``PER_CHUNK`` per chunk of
    the ``chunks`` fed have passed (None: no limit)."""
    global _limit
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    said = f"{seconds:g} s"  # the limit as given: the same words whatever the chunking
    seconds = message_limit(seconds, chunks) or seconds
    if not _installed:
        _install()
    _limit = said
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_FACTOR)
    try:
        yield
    finally:
        _limit = None  # first: an alarm already on its way is ignored, not raised here
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
