"""A run judged as the detector makes it: it passes, or it is traced again (ARCHITECTURE.md §7.1).

``tcr replay`` of a large recording feeds one chunk per character at ``char``
chunking; a held trace keeps an event per character (a ``Text`` of about 40 bytes,
its place in three arrays, two more for the merged text), so a 0.8 MB message cost
about 80 MB to judge. Almost every run of a recording passes, and a passing run
needs none of it: conservation and holdback are sums over the steps, and invariance
compares each merged event with the whole run's as it closes. ``streamed_verdict``
runs them on each step as it comes and keeps nothing per chunk.

What only a held trace can say (which step emitted the character where two texts
part, what a conservation break looks like further on) is needed only when a run
fails. Then ``streamed_verdict`` stops at once and returns ``None``, and the caller
traces the chunking again, held: ``check_trace`` tells every finding, so what a
finding says has one code path. ``None`` is also the answer for anything the stream
cannot settle on the way, so it is never a guess. A run that crashes (or runs out
of time) is judged from its ``Crash`` and the steps before it, which conservation
and holdback have already read, without a second run: a flaky detector or a time
limit could answer that one otherwise.

``no_leak`` and ``expected`` read a run's events, not its chunking: a run whose
merged events are the whole run's (``same_event``, as invariance compares them) shows the
same text, calls and reasoning, so it passes them exactly when the whole run does
(``Reference``, judged once per message).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass

from tcr._verdict import CHECKS, Agreement, Check, Verdict, Violation
from tcr.detector.events import Detector, Event
from tcr.expectation import Expectation
from tcr.oracle import (
    HeldBack,
    Schemas,
    check_trace,
    expected,
    no_leak,
    unforgiven,
    why_skipped,
)
from tcr.time_limit import OverTime
from tcr.trace import Crash, Trace, stream_steps

__all__ = ["Reference", "streamed_verdict"]

# The checks that read a run's events only through their comparison with the whole run's.
_COMPARED = (Check.INVARIANCE, Check.NO_LEAK, Check.EXPECTED)


@dataclass(frozen=True, slots=True)
class Reference:
    """What every streamed run of one message is judged against: the whole run, its merged
    events, and whether it passes the checks an equal run passes with it."""

    whole: Trace
    merged: tuple[Event, ...]  # the whole run's events, adjacent Text merged (``merge_placed``)
    leaks: bool  # the whole run fails no_leak (with the judge's markers)
    unexpected: bool  # the whole run fails expected (with the judge's expectation)

    @classmethod
    def of(
        cls,
        whole: Trace,
        *,
        expectation: Expectation | None,
        leak: re.Pattern[str] | None,
        shown_anyway: Callable[[], Mapping[str, int]] | None,
        schemas: Schemas | None,
    ) -> Reference:
        merged = tuple(placed.event for placed in whole.merged())
        leaks = leak is not None and bool(no_leak(whole, leak, shown_anyway))
        unexpected = expectation is not None and bool(
            expected(whole, expectation, whole=whole, schemas=schemas)
        )
        return cls(whole, merged, leaks, unexpected)


def streamed_verdict(
    detector: Detector,
    chunks: Sequence[str],
    reference: Reference,
    *,
    text: str,
    checks: Collection[str],
    expectation: Expectation | None,
    bound: int,
    leak: re.Pattern[str] | None,
    shown_anyway: Callable[[], Mapping[str, int]] | None = None,
    timeout: float | None = None,
) -> Verdict | None:
    """The verdict of ``check_trace`` on this run when it fails no check but ``crash``;
    else ``None``.

    ``text`` is the message (``"".join(chunks)``); the other arguments are those
    ``check_trace`` takes. The verdict is exactly ``check_trace``'s: the same
    checks ran, the same skipped with the same reasons, the same crash.
    """
    wanted = [c for c in CHECKS if c in checks]
    if (Check.NO_LEAK in wanted and reference.leaks) or (
        Check.EXPECTED in wanted and reference.unexpected
    ):
        return None  # an equal run fails as the whole run does; another one may too
    whole = reference.whole
    conserve = Check.CONSERVATION in wanted
    meter = HeldBack(whole, bound) if Check.HOLDBACK in wanted else None
    compare = Agreement(reference.merged) if any(c in wanted for c in _COMPARED) else None
    emitted = received = 0
    has_raw = True
    crash: Crash | None = None
    try:
        with closing(stream_steps(detector, chunks, timeout=timeout)) as steps:
            for item in steps:
                if isinstance(item, Crash):
                    crash = item
                    break
                chunk, events = item
                received = received + len(chunk) if chunk is not None else len(text)
                for event in events:
                    raw = event.raw
                    if raw is None:
                        has_raw = False  # conservation and holdback are skipped: no break
                    elif conserve and has_raw and not text.startswith(raw, emitted, received):
                        return None
                    else:
                        emitted += len(raw)
                    if compare is not None and not compare.takes(event):
                        return None
                if (
                    meter is not None
                    and chunk is not None
                    and has_raw
                    and received - emitted > bound
                    and meter.over(received, emitted) is not None
                ):
                    return None
    except OverTime:  # ran out while the checks read a step: the held run decides
        return None
    found: tuple[Violation, ...] = ()
    if crash is not None:
        # What it showed is a prefix of the whole run's events: no_leak reads that prefix.
        if Check.NO_LEAK in wanted and leak is not None and compare is not None:
            leaked = next(unforgiven(compare.shown(), leak, shown_anyway), None)
            if leaked is not None:
                return None
        if Check.CRASH in wanted:  # told by check_trace: it needs none of the steps
            stepless = Trace(tuple(chunks), (), crash)
            found = check_trace(stepless, whole=whole, checks=(Check.CRASH,)).violations
    elif (conserve and has_raw and emitted < len(text)) or (
        compare is not None and not compare.ended()
    ):
        return None
    raw_known = has_raw, whole.has_raw
    ran: list[Check] = []
    skipped: dict[str, str] = {}
    for check in wanted:
        why = why_skipped(check, crash, whole, expectation, raw_known, leak)
        if why:
            skipped[check] = why
        else:
            ran.append(check)
    return Verdict(found, tuple(ran), skipped)
