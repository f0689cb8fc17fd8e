"""What an oracle reports, and the event-by-event comparison two checks share.

A ``Check`` names an oracle and knows whether its failure is an error (a crash:
the detector is unusable input, exit 2) or a violation (exit 1). A ``Violation``
is one finding, placed at a chunk and an input offset with an excerpt of the
input around it; a ``Verdict`` is the findings of one judgement with the checks
that ran and why the others did not. ``first_difference`` is the
comparison behind both chunk invariance and warm equals cold. Private: the
public names are re-exported by ``tcr.oracle``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field

from tcr.detector.events import Detector, Event, Reasoning, Rejected, Text, ToolCall
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION
from tcr.signature import opening_dialect
from tcr.time_limit import OverTime
from tcr.trace import Crash, Placed, Trace, stream_steps

__all__ = [
    "CARET",
    "CHECKS",
    "INCONSISTENT",
    "PROBE_CHECKS",
    "RECORDING_CHECKS",
    "TRACE_CHECKS",
    "Agreement",
    "Check",
    "Verdict",
    "Violation",
    "agrees",
    "brief",
    "clip",
    "common_prefix_length",
    "difference_kind",
    "event_dialect",
    "excerpt",
    "first_difference",
    "probed",
    "same_event",
    "violation",
]

CARET = "‸"  # marks the offset in an excerpt; "|" would be ambiguous inside "<|tool_call>"


class Check(enum.StrEnum):
    """An oracle (ARCHITECTURE.md §7.2). A ``str``, so JSON, JUnit and the CLI show its value."""

    CONSERVATION = "conservation"
    INVARIANCE = "invariance"
    NO_LEAK = "no_leak"
    HOLDBACK = "holdback"
    WARM_COLD = "warm_cold"
    EXPECTED = "expected"
    CRASH = "crash"
    # Judged once per detector and run, on a probe message, not per recording (tcr.cost).
    COST = "cost"
    # Judged once per detector and run, on probe messages: output no policy's choice
    # explains, or a pinned choice broken (tcr.probes).
    POLICY = "policy"
    # Not an oracle on events: re-split transport bytes must decode the same (ARCHITECTURE.md §6).
    TRANSPORT = "transport"

    @property
    def is_error(self) -> bool:
        """A detector that raises is unusable input, not a parser bug to weigh."""
        return self is Check.CRASH

    @property
    def exit_code(self) -> int:
        """What a command exits with when this check fails."""
        return EXIT_ERROR if self.is_error else EXIT_VIOLATION


# The oracles on a detector, in report order; TRANSPORT judges the decoders.
CHECKS: tuple[Check, ...] = tuple(c for c in Check if c is not Check.TRANSPORT)
# warm_cold judges a detector factory, not a trace: see tcr.warm_cold; cost times a
# detector on a probe message of its own: see tcr.cost.
TRACE_CHECKS: tuple[Check, ...] = tuple(
    c for c in CHECKS if c not in (Check.WARM_COLD, Check.COST, Check.POLICY)
)
# What a recording is replayed for: every check but cost and policy, which need none.
RECORDING_CHECKS: tuple[Check, ...] = tuple(
    c for c in CHECKS if c not in (Check.COST, Check.POLICY)
)
# Judged once per run, on probe messages of their own, not per recording.
PROBE_CHECKS: tuple[Check, ...] = (Check.COST, Check.POLICY)
# The one policy finding told on a message, not on a probe (tcr.judge: one choice on the
# probe, another in the message).
INCONSISTENT = "inconsistent"


def probed(check: str, kind: str) -> bool:
    """Whether a violation of ``check`` and ``kind`` was found on probe messages (the cost
    probe, a policy's probes), not on a message: nothing to shrink, save or locate."""
    return check == Check.COST or (check == Check.POLICY and kind != INCONSISTENT)


@dataclass(frozen=True, slots=True)
class Violation:
    check: Check
    message: str  # one line: what went wrong
    chunk: int | None  # chunk index; len(chunks) is the finish() step
    offset: int | None  # input offset
    excerpt: str  # the input around offset, CARET where it happened
    # What a signature needs (tcr.signature): short, stable words for what went wrong
    # ("lost", "missing ToolCall", the leaked marker, "ValueError"), and the dialect
    # involved when it is known ("" otherwise).
    kind: str = ""
    dialect: str = ""

    @property
    def where(self) -> str:
        """``chunk 2, offset 40``; either part left out when it is not known."""
        parts = [f"chunk {self.chunk}"] if self.chunk is not None else []
        parts += [f"offset {self.offset}"] if self.offset is not None else []
        return ", ".join(parts) or "somewhere in the message"

    def __str__(self) -> str:
        return f"{self.check} at {self.where}: {self.message}  [{self.excerpt}]"


@dataclass(frozen=True, slots=True)
class Verdict:
    violations: tuple[Violation, ...]
    ran: tuple[Check, ...]  # checks that ran
    skipped: dict[str, str] = field(default_factory=dict, hash=False)  # check -> why not

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def exit_code(self) -> int:
        """0 when every check passed, else the worst failed check's code."""
        return max((v.check.exit_code for v in self.violations), default=EXIT_OK)

    def __add__(self, other: Verdict) -> Verdict:
        """Both verdicts' findings, the checks either ran in ``CHECKS`` order."""
        ran = set(self.ran) | set(other.ran)
        return Verdict(
            (*self.violations, *other.violations),
            tuple(c for c in CHECKS if c in ran),
            {**self.skipped, **other.skipped},
        )


def excerpt(text: str, offset: int, width: int = 16) -> str:
    """``text`` around ``offset``, escaped like ``repr``, with ``CARET`` at the offset."""
    offset = max(0, min(offset, len(text)))
    head = "…" if offset > width else ""
    tail = "…" if offset + width < len(text) else ""
    before, after = text[max(0, offset - width) : offset], text[offset : offset + width]
    return f"{head}{repr(before)[1:-1]}{CARET}{repr(after)[1:-1]}{tail}"


def violation(
    check: Check,
    message: str,
    text: str,
    chunk: int | None,
    at: int | None,
    *,
    kind: str = "",
    dialect: str = "",
) -> Violation:
    """A violation with the excerpt of ``text`` (the input) around ``at``."""
    return Violation(check, message, chunk, at, excerpt(text, at or 0), kind, dialect)


def clip(text: str, width: int = 24) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def brief(event: Event | None) -> str:
    if event is None:
        return "nothing"
    if isinstance(event, ToolCall):
        body = f"{event.name}, {event.arguments}"
    elif isinstance(event, Rejected):
        body = f"{event.reason}, {event.content!r}"
    else:
        body = repr(event.text)
    return f"{type(event).__name__}({clip(body, 40)})"


def common_prefix_length(a: str, b: str) -> int:
    n, limit = 0, min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def same_event(a: Event, b: Event) -> bool:
    """Whether two events are the same, judging everything but ``raw`` when one side has none."""
    if a == b:
        return True
    if type(a) is not type(b) or (a.raw is not None and b.raw is not None):
        return False
    # One side cannot say which span it consumed: judge everything but raw.
    if isinstance(a, ToolCall) and isinstance(b, ToolCall):
        return (a.name, a.arguments, a.format) == (b.name, b.arguments, b.format)
    if isinstance(a, Reasoning) and isinstance(b, Reasoning):
        return (a.text, a.format) == (b.text, b.format)
    if isinstance(a, Rejected) and isinstance(b, Rejected):
        return (a.content, a.format, a.reason) == (b.content, b.format, b.reason)
    return False


def first_difference(
    trace: Trace, mine: Sequence[Placed], reference: Sequence[Placed], check: Check, other: str
) -> Violation | None:
    """The first event where ``mine`` and ``reference`` differ, as a violation."""
    for index in range(max(len(mine), len(reference))):
        a = mine[index] if index < len(mine) else None
        b = reference[index] if index < len(reference) else None
        if a is not None and b is not None and same_event(a.event, b.event):
            continue
        chunk = a.step if a is not None else len(trace.chunks)
        offset = a.start if a is not None and a.start is not None else (b.start if b else None)
        left, right = (a.event if a else None), (b.event if b else None)
        parted = ("", "")  # the texts from where they part
        if isinstance(left, Text) and isinstance(right, Text):
            same = common_prefix_length(left.text, right.text)  # point where they part
            parted = (left.text[same:], right.text[same:])
            if a and a.start is not None:
                offset, chunk = a.start + same, a.step_at(same)
        message = f"event {index} is {brief(left)}; {other} has {brief(right)}"
        if left is not None and right is not None and brief(left) == brief(right):
            # The summaries look alike: the span where they part leads.
            message = (
                f"event {index} ({type(left).__name__}): {_field_difference(left, right, other)}"
            )
        kind = difference_kind(left, right, _after(mine, index), _after(reference, index))
        dialect = event_dialect(left, right) or opening_dialect(*parted)
        return violation(check, message, trace.input, chunk, offset, kind=kind, dialect=dialect)
    return None


def _after(placed: Sequence[Placed], index: int) -> Event | None:
    return placed[index + 1].event if index + 1 < len(placed) else None


def difference_kind(
    mine: Event | None,
    reference: Event | None,
    mine_next: Event | None = None,
    reference_next: Event | None = None,
) -> str:
    """How an event differs from the reference's, in a few stable words (a signature's kind):
    ``missing ToolCall``, ``extra Text``, ``Rejected instead of ToolCall``,
    ``ToolCall arguments differ``.

    Text on one side stands for what the other side parsed: Text where the reference
    has a call is a ``missing ToolCall``; Text that runs on past the reference's Text
    swallowed the reference's next event (a leaked marker with text before it is the
    same finding as one without), unless both go on to the same kind of event.
    """
    if mine is None or (isinstance(mine, Text) and not isinstance(reference, Text | None)):
        return f"missing {type(reference).__name__}"
    if reference is None or (isinstance(reference, Text) and not isinstance(mine, Text)):
        return f"extra {type(mine).__name__}"
    if type(mine) is not type(reference):
        return f"{type(mine).__name__} instead of {type(reference).__name__}"
    name = type(mine).__name__
    if isinstance(mine, Text) and isinstance(reference, Text):
        # Text that ran on into the other side's next event stands for it; when both sides
        # go on to the same kind of event, only the text differs (a prefix emitted twice is
        # one kind whatever follows it).
        if mine_next is not None and type(mine_next) is type(reference_next):
            return "Text differs"
        if mine.text.startswith(reference.text):
            return f"missing {type(reference_next).__name__}" if reference_next else "extra Text"
        if reference.text.startswith(mine.text):
            return f"extra {type(mine_next).__name__}" if mine_next else "missing Text"
        return "Text differs"
    if getattr(mine, "text", None) != getattr(reference, "text", None):
        return f"{name} differs"  # its reasoning text
    for field_name in ("name", "arguments", "content", "reason", "format", "raw"):
        if getattr(mine, field_name, None) != getattr(reference, field_name, None):
            return f"{name} {field_name} differ" + ("s" if field_name != "arguments" else "")
    return f"{name} differs"


def event_dialect(*events: Event | None) -> str:
    """The format of the first of ``events`` that has one (``Text`` has none)."""
    for event in events:
        fmt = getattr(event, "format", "")
        if isinstance(fmt, str) and fmt:
            return fmt
    return ""


def _field_difference(a: Event, b: Event, other: str) -> str:
    """``text differs at character 57: '…brown fox<tool', the whole run has '…brown fox'``."""
    for name in ("text", "name", "arguments", "content", "reason", "format", "raw"):
        mine, theirs = getattr(a, name, None), getattr(b, name, None)
        if mine == theirs:
            continue
        if isinstance(mine, str) and isinstance(theirs, str):  # show where they part
            at = common_prefix_length(mine, theirs)
            window = slice(max(0, at - 8), at + 16)
            lead = "…" if at > 8 else ""
            return (
                f"{name} differs at character {at}: {lead + mine[window]!r}, "
                f"{other} has {lead + theirs[window]!r}"
            )
        return f"{name} is {clip(repr(mine), 40)}, {other} has {clip(repr(theirs), 40)}"
    return f"{brief(a)} differs from {other}'s"


class Agreement:
    """A run's events, adjacent Text merged on the way, compared with a reference run's
    merged events as each closes (``first_difference``'s equality: ``same_event``,
    Text by its text), keeping a Text run as its length only: the streamed form of
    invariance (``tcr.streamed``) and of warm equals cold."""

    __slots__ = ("at", "reference", "run", "text")

    def __init__(self, reference: tuple[Event, ...]) -> None:
        self.reference = reference
        self.at = 0  # index of the reference event the next merged event must equal
        self.run = -1  # length of the open Text run, or -1
        self.text = ""  # the reference Text the open run must spell

    def takes(self, event: Event) -> bool:
        """Whether the run still agrees with the reference after ``event``."""
        if isinstance(event, Text):
            piece = event.text
            if not piece:  # empty Text is dropped and does not end a run (merge_placed)
                return True
            if self.run < 0:
                if self.at >= len(self.reference):
                    return False
                ahead = self.reference[self.at]
                if not isinstance(ahead, Text):
                    return False
                self.text, self.run = ahead.text, 0
            if not self.text.startswith(piece, self.run):
                return False
            self.run += len(piece)
            return True
        if not self._closed():
            return False
        if self.at >= len(self.reference) or not same_event(event, self.reference[self.at]):
            return False
        self.at += 1
        return True

    def shown(self) -> Iterator[tuple[None, str]]:
        """The text of each merged Text so far (the open run's too), for ``unforgiven``."""
        for event in self.reference[: self.at]:
            if isinstance(event, Text):
                yield None, event.text
        if self.run > 0:
            yield None, self.text[: self.run]

    def ended(self) -> bool:
        """Whether the run, at its end, had every reference event and no more."""
        return self._closed() and self.at == len(self.reference)

    def _closed(self) -> bool:
        """Close the open Text run: it must have spelled the whole reference Text."""
        if self.run < 0:
            return True
        if self.run != len(self.text):
            return False
        self.at, self.run, self.text = self.at + 1, -1, ""
        return True


def agrees(
    detector: Detector,
    chunks: Sequence[str],
    reference: tuple[Event, ...],
    timeout: float | None = None,
) -> bool:
    """Whether ``detector`` fed ``chunks`` emits ``reference`` (merged events) without a
    crash, read as it streams: an ``OverTime`` raised while comparing is a no."""
    agreement = Agreement(reference)
    try:
        with closing(stream_steps(detector, chunks, timeout=timeout)) as steps:
            for item in steps:
                if isinstance(item, Crash) or not all(map(agreement.takes, item[1])):
                    return False
    except OverTime:
        return False
    return agreement.ended()
