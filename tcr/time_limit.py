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

A message's other bound is its events: ``event_limit`` allows ``EVENTS_BASE`` plus
``EVENTS_PER_UNIT`` per character and per chunk fed, far beyond any parser (one event
per character is already a lot), so a detector that answers a 160-character message
with 200,000 events per chunk is a finding at once instead of minutes of judging.

Only Ctrl-C stops tcr: a ``KeyboardInterrupt`` that a detector raises itself is its
crash. The two are told apart by SIGINT's handler, installed with the others on the
main thread (when SIGINT has Python's default one): it notes that the signal came.
``interrupted_by_user`` asks; where tcr's handler is not in place it cannot tell, and
every interrupt is the user's, as before.
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
    "EVENTS_BASE",
    "EVENTS_PER_UNIT",
    "PER_CHUNK",
    "OverTime",
    "check_timeout",
    "event_limit",
    "interrupted_by_user",
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
# Events a message may have: this many, plus EVENTS_PER_UNIT per character and per chunk.
EVENTS_BASE = 1024
EVENTS_PER_UNIT = 4


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


def event_limit(characters: int, chunks: int) -> int:
    """How many events a message may have once ``characters`` in ``chunks`` chunks were fed."""
    return EVENTS_BASE + EVENTS_PER_UNIT * (characters + chunks)


_limit: str | None = None  # the limit of the message running now, as said, while one is
_installed = False
_ctrl_c = False  # SIGINT came since the message running now began


def _install() -> None:
    global _installed
    signal.signal(signal.SIGPROF, _on_alarm)
    signal.signal(signal.SIGALRM, _on_alarm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not one a host chose
        signal.signal(signal.SIGINT, _on_ctrl_c)
    _installed = True


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _limit is not None:
        raise OverTime(f"took longer than {_limit}")


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    global _ctrl_c
    _ctrl_c = True
    raise KeyboardInterrupt


def interrupted_by_user(error: BaseException) -> bool:
    """Whether ``error``, raised while a detector ran, is Ctrl-C (stop tcr) rather than
    the detector's own (a crash finding): a ``KeyboardInterrupt`` while SIGINT came, or
    while tcr's handler is not in place to tell."""
    if not isinstance(error, KeyboardInterrupt):
        return False
    return _ctrl_c or signal.getsignal(signal.SIGINT) is not _on_ctrl_c


@contextmanager
def message_time_limit(seconds: float | None, chunks: int = 0) -> Iterator[None]:
    """Raise ``OverTime`` in the body once ``seconds`` plus ``PER_CHUNK`` per chunk of
    the ``chunks`` fed have passed (None: no limit)."""
    global _limit, _ctrl_c
    _ctrl_c = False  # an interrupt from here on is this message's
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if not _installed:
        _install()
    if seconds is None:
        yield
        return
    said = f"{seconds:g} s"  # the limit as given: the same words whatever the chunking
    seconds = message_limit(seconds, chunks) or seconds
    _limit = said
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_FACTOR)
    try:
        yield
    finally:
        _limit = None  # first: an alarm already on its way is ignored, not raised here
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
