"""Where each key of the debugger moves to: pure functions of a run and a row.

Moving forward may trace more of the run (a run is traced lazily); nothing here
knows about Textual. A detector without ``state`` has no state changes: for it
a "change" is a step that emitted events (see ``Run._record``).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from tcr.detector.events import Text
from tcr.detector.formats import BY_ID, FORMATS
from tcr.detector.machine import TRANSITIONS

from .model import Run

__all__ = [
    "Target",
    "compile_query",
    "find",
    "first_violation",
    "last_step",
    "next_change",
    "next_step",
    "previous_change",
    "previous_step",
    "run_back",
    "run_to",
    "targets",
]

_SCAN = 4096  # rows traced at a time while searching ahead


def next_step(run: Run, row: int) -> int:
    run.ensure(row + 1)
    return min(row + 1, run.rows - 1)


def previous_step(run: Run, row: int) -> int:
    return max(row - 1, 0)


def last_step(run: Run) -> int:
    run.finish_tracing()
    return run.rows - 1


def next_change(run: Run, row: int) -> int | None:
    """The next row whose state changed (no state: that emitted events)."""
    while True:
        at = bisect_right(run.changes, row)
        if at < len(run.changes):
            return run.changes[at]
        if run.done:
            return None
        run.advance(steps=_SCAN)


def previous_change(run: Run, row: int) -> int | None:
    at = bisect_left(run.changes, min(row, len(run.steps)))
    return run.changes[at - 1] if at > 0 else None


def first_violation(run: Run) -> int | None:
    """The earliest row an oracle flags; None without a verdict or a violation."""
    rows = run.violation_rows
    return rows[0] if rows else None


# --- breakpoints ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """Run forward until the FSM enters ``state`` or a block of ``format`` opens."""

    kind: str  # "state" or "format"
    value: str

    def __str__(self) -> str:
        return f"{self.kind} {self.value}"

    @property
    def described(self) -> str:
        """What the breakpoint picker shows: a format's engine parser names and example."""
        record = BY_ID.get(self.value) if self.kind == "format" else None
        if record is None:
            return str(self)
        return f"{self} ({record.engines.shown(2)})  {_clip(record.example.block)!r}"


def _clip(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def targets() -> list[Target]:
    """Every breakpoint there is: the FSM's states (from the transition table), then
    the formats (from the format table)."""
    states = [Target("state", str(state.value)) for state in TRANSITIONS]
    return states + [Target("format", fmt.id) for fmt in FORMATS]


def hits(run: Run, row: int, target: Target) -> bool:
    """Whether the step at ``row`` (traced) enters the target."""
    if target.kind == "state":
        return run.label(row) == target.value and run.label_before(row) != target.value
    if row >= len(run.steps):
        return False
    before = run.block_formats[row - 1] if row else None
    if before == target.value:  # already inside such a block
        return False
    if run.block_formats[row] == target.value:
        return True
    # A block that opened and closed inside this one step (or a detector without state).
    return any(
        type(event) is not Text and getattr(event, "format", None) == target.value
        for event in run.steps[row].events
    )


def run_to(run: Run, row: int, target: Target) -> int | None:
    """The first row after ``row`` that enters ``target``; None if none does."""
    candidate = row + 1
    while True:
        while candidate < len(run.steps):
            if hits(run, candidate, target):
                return candidate
            candidate += 1
        if run.done:
            return None
        run.advance(steps=_SCAN)


def run_back(run: Run, row: int, target: Target) -> int | None:
    """The last row before ``row`` that enters ``target`` (rr's reverse-continue);
    None if none does. The rows before the current one are traced already."""
    for candidate in range(min(row, len(run.steps)) - 1, -1, -1):
        if hits(run, candidate, target):
            return candidate
    return None


# --- search ---------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def compile_query(query: str) -> re.Pattern[str] | None:
    r"""A literal search; ``\n``, ``\t``, ``\r`` and ``\\`` are escapes; smart case
    (case-insensitive unless the query has a capital). None for an empty query."""
    text, chars = [], iter(query)
    for char in chars:
        if char == "\\":
            following = next(chars, "\\")
            text.append(_ESCAPES.get(following, "\\" + following))
        else:
            text.append(char)
    literal = "".join(text)
    if not literal:
        return None
    flags = 0 if any(c.isupper() for c in literal) else re.IGNORECASE
    return re.compile(re.escape(literal), flags)


def find(text: str, query: str, start: int) -> tuple[int, int] | None:
    """The next match at or after ``start``, wrapping around: (start, end) or None."""
    pattern = compile_query(query)
    if pattern is None:
        return None
    match = pattern.search(text, max(0, start)) or pattern.search(text, 0)
    return None if match is None else (match.start(), match.end())
