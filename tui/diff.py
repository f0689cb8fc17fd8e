"""What the user was shown against what should have been shown, step by step.

The reference is the recording's expectation (its ``text``) when there is one,
else the run of the unsplit text (the oracles' ``whole`` run). The whole run's
raw spans map input offsets to shown offsets, so after any step the debugger
knows how much of the reference the input received so far accounts for; a
correct detector is at most its hold-back bound behind that, never different.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tcr.detector.events import Rejected, Text
from tcr.trace import Trace, place_events

__all__ = ["Diff", "Reference", "common_prefix_length", "diff_at", "reference_for"]


@dataclass(frozen=True, slots=True)
class Reference:
    """The text that should be shown, and (when known) how the input maps onto it."""

    name: str  # "expectation" or "whole run"
    text: str
    starts: tuple[int, ...] = ()  # input start of each placed event of the whole run
    spans: tuple[tuple[int, int, int, int, bool], ...] = ()  # (start, raw, shown at, shown, text)
    mapped: bool = False

    def so_far(self, received: int) -> int | None:
        """Characters of ``text`` the first ``received`` input characters account for."""
        if not self.mapped:
            return None
        index = bisect_left(self.starts, received) - 1
        if index < 0:
            return 0
        start, raw, shown_at, shown, is_text = self.spans[index]
        if is_text:
            return shown_at + min(received - start, shown)
        return shown_at + (shown if received >= start + raw else 0)


def reference_for(expect: Mapping[str, Any] | None, whole: Trace) -> Reference | None:
    """The expectation's text if it has one, else the whole run's shown text."""
    text = expect.get("text") if expect is not None else None
    if isinstance(text, str):
        name = "expectation"
        mappable = whole.finished and whole.has_raw and whole.shown == text
    elif whole.finished:
        name, text = "whole run", whole.shown
        mappable = whole.has_raw
    else:
        return None
    if not mappable:
        return Reference(name, text)
    starts: list[int] = []
    spans: list[tuple[int, int, int, int, bool]] = []
    for placed in place_events(whole):
        event, start = placed.event, placed.start
        if start is None:  # has_raw: never; kept for the type checker
            return Reference(name, text)
        is_text = isinstance(event, Text)
        if is_text:
            shown = len(event.text)  # type: ignore[union-attr]
        elif isinstance(event, Rejected):
            shown = len(event.content)
        else:
            shown = 0
        starts.append(start)
        spans.append((start, len(event.raw or ""), placed.shown, shown, is_text))
    return Reference(name, text, tuple(starts), tuple(spans), True)


def common_prefix_length(a: str, b: str) -> int:
    """Length of the longest common prefix, by slice comparisons (C speed on 1 MB)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # a[:low] == b[:low] and a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low


@dataclass(frozen=True, slots=True)
class Diff:
    """Shown so far against the reference after one step."""

    reference: str  # its name
    shown: str  # what the user has been shown so far
    expected: str  # the reference text (all of it)
    expected_so_far: int | None  # how much of it the input so far accounts for
    at: int | None  # first differing character, None while shown is a prefix of expected
    final: bool  # after finish(): shown must equal the reference

    @property
    def status(self) -> str:
        """``same``, ``behind`` (held back, may be fine), ``missing`` (at the end),
        ``differs`` or ``extra`` (shown more than the reference has)."""
        if self.at is not None:
            return "extra" if self.at >= len(self.expected) else "differs"
        if self.final:
            return "same" if len(self.shown) == len(self.expected) else "missing"
        if self.expected_so_far is None or len(self.shown) >= self.expected_so_far:
            return "same"
        return "behind"

    @property
    def behind(self) -> int:
        """Characters the reference would show by now that have not been shown."""
        target = len(self.expected) if self.final else self.expected_so_far
        return max(0, (target or 0) - len(self.shown))


def diff_at(reference: Reference, shown: str, received: int, *, final: bool) -> Diff:
    """Compare what was shown after a step with the reference."""
    common = common_prefix_length(shown, reference.text)
    at = common if common < len(shown) else None
    so_far = len(reference.text) if final else reference.so_far(received)
    return Diff(reference.name, shown, reference.text, so_far, at, final)
