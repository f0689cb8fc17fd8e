"""Running a detector over one chunking, one step per chunk, for the oracles and the TUI.

A detector that raises is a finding, not a failure of tcr: the exception is
recorded as a ``Crash`` and the trace ends there, so a replay of a whole corpus
goes on and reports it.

``place_events`` locates every event in the input (from the raw lengths) and in
the shown text, and ``merge_placed`` joins adjacent Text while remembering which
step emitted each piece: that is how a violation names its chunk and offset.
"""

from __future__ import annotations

import copy
import enum
from bisect import bisect_right
from collections.abc import Generator, Iterable, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass
from typing import Any

from tcr.detector.events import Detector, Event, Reasoning, Rejected, Text, ToolCall
from tcr.time_limit import OverTime, message_time_limit

__all__ = [
    "EVENT_TYPES",
    "Crash",
    "Placed",
    "Step",
    "Trace",
    "checked_events",
    "describe_error",
    "iter_steps",
    "merge_placed",
    "place_events",
    "reads_state",
    "run_trace",
    "snapshot_state",
]

EVENT_TYPES = (Text, ToolCall, Reasoning, Rejected)

_IMMUTABLE = (str, bytes, int, float, bool, enum.Enum, type(None))


@dataclass(frozen=True, slots=True)
class Step:
    """What one ``feed`` (or the final ``finish``) returned."""

    index: int  # chunk index; len(chunks) for the finish() step
    chunk: str | None  # None for finish
    offset: int  # input offset where this chunk starts (len(input) for finish)
    events: tuple[Event, ...]
    state: Any | None  # the detector's state after the step, when it exposes one

    @property
    def is_finish(self) -> bool:
        return self.chunk is None

    @property
    def end(self) -> int:
        """Input offset just past this chunk: how much input the detector has received."""
        return self.offset + (len(self.chunk) if self.chunk is not None else 0)


@dataclass(frozen=True, slots=True)
class Crash:
    """The detector raised in ``feed`` (index < len(chunks)) or ``finish`` (index == len)."""

    index: int
    offset: int
    error: str  # one line, e.g. "ValueError: boom", or "took longer than 10 s"
    timed_out: bool = False  # the message went over its time limit in this step


@dataclass(frozen=True, slots=True)
class Trace:
    """One run of a detector over one chunking."""

    chunks: tuple[str, ...]
    steps: tuple[Step, ...]
    crash: Crash | None

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event, in the order emitted."""
        return tuple(event for step in self.steps for event in step.events)

    @property
    def input(self) -> str:
        return "".join(self.chunks)

    @property
    def shown(self) -> str:
        """What the user sees: ``Text`` text and ``Rejected`` content, in order."""
        parts: list[str] = []
        for step in self.steps:
            for event in step.events:
                if isinstance(event, Text):
                    parts.append(event.text)
                elif isinstance(event, Rejected):
                    parts.append(event.content)
        return "".join(parts)

    @property
    def has_raw(self) -> bool:
        """Whether every event names its input span (foreign detectors may not)."""
        return all(event.raw is not None for step in self.steps for event in step.events)

    @property
    def finished(self) -> bool:
        """Whether ``finish()`` ran: the detector did not crash."""
        return self.crash is None


def describe_error(error: BaseException) -> str:
    """``"ValueError: boom"``: the type and the first line of the message, bounded."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def run_trace(
    detector: Detector,
    chunks: Sequence[str],
    *,
    states: bool = True,
    timeout: float | None = None,
) -> Trace:
    """Feed every chunk, then finish, recording each step (``iter_steps``).

    ``timeout``: seconds the whole message may take (``tcr.time_limit``); a run
    over it ends with a ``Crash`` at the step it was in, ``timed_out``.

    ``states=False`` skips reading ``detector.state`` after each step; a replay
    that only runs the oracles does not need it, and a state snapshot per chunk
    can cost more than the detector itself. It also lets a detector that offers
    ``feed_many(chunks)`` (an iterator of what ``feed`` returns for each chunk,
    raising at the chunk that fails) take all the chunks at once: a detector in
    another process pipelines them instead of paying a round trip per chunk.
    """
    chunk_tuple = tuple(chunks)
    steps: list[Step] = []
    # closing(): a crash ends the run at once, and a feed_many() pipeline with it
    try:
        with (
            message_time_limit(timeout),
            closing(iter_steps(detector, chunk_tuple, states=states)) as stepping,
        ):
            for item in stepping:
                if isinstance(item, Crash):
                    return Trace(chunk_tuple, tuple(steps), item)
                steps.append(item)
    except OverTime as error:  # the alarm went off between two steps, not inside one
        offset = steps[-1].end if steps else 0
        return Trace(chunk_tuple, tuple(steps), Crash(len(steps), offset, str(error), True))
    return Trace(chunk_tuple, tuple(steps), None)


def reads_state(detector: Detector) -> bool:
    """Whether the detector exposes a ``state`` to snapshot after each step."""
    try:
        return hasattr(detector, "state")
    except Exception:  # a state property that raises: read it per step, so it is a Crash
        return True


def iter_steps(
    detector: Detector, chunks: Sequence[str], *, states: bool = True
) -> Generator[Step | Crash, None, None]:
    """Feed each chunk, then finish: one ``Step`` each, or the ``Crash`` that ends the run.

    ``chunks`` may grow while this runs (the TUI traces a recording as it loads
    it, one slice at a time): ``finish()`` is fed when the iterator reaches their end,
    so take the next step only once the chunk it needs is there.
    """
    read_state = states and reads_state(detector)
    # Only states=False pipelines: feed_many() needs every chunk up front.
    many = None if states else _feed_many(detector, chunks)
    offset = index = 0
    try:
        while True:
            chunk = chunks[index] if index < len(chunks) else None
            try:
                if chunk is None:
                    events = checked_events(detector.finish(), "finish()")
                else:
                    result = detector.feed(chunk) if many is None else next(many)
                    events = checked_events(result, "feed()")
                state = snapshot_state(getattr(detector, "state", None)) if read_state else None
            except KeyboardInterrupt:  # only Ctrl-C stops tcr
                raise
            except OverTime as error:
                yield Crash(index, offset, str(error), timed_out=True)
                return
            except BaseException as error:  # SystemExit too: any detector failure is a finding
                yield Crash(index, offset, describe_error(error))
                return
            yield Step(index, chunk, offset, events, state)
            if chunk is None:
                return
            offset += len(chunk)
            index += 1
    finally:
        if many is not None:
            many.close()


def _feed_many(detector: Detector, chunks: Sequence[str]) -> Generator[object, None, None] | None:
    """The results of the detector's ``feed_many`` fast path, one per chunk; None without one."""
    try:
        feed_many = getattr(detector, "feed_many", None)
    except Exception:  # a lookup that raises: the plain feed() path reports what goes wrong
        return None
    return _results(feed_many, chunks) if callable(feed_many) else None


def _results(feed_many: Any, chunks: Sequence[str]) -> Generator[object, None, None]:
    results = iter(feed_many(chunks))
    try:
        for count in range(len(chunks)):
            result = next(results, _MISSING)
            if result is _MISSING:
                raise TypeError(f"feed_many() stopped after {count} of {len(chunks)} chunks")
            yield result
    finally:  # results not taken are dropped: a process detector reads their answers off its pipe
        close = getattr(results, "close", None)
        if callable(close):
            with suppress(Exception):  # the trace is already decided
                close()


_MISSING = object()


def checked_events(result: object, call: str) -> tuple[Event, ...]:
    """What ``feed()``/``finish()`` returned, as events; anything else is a ``TypeError``.

    Field types are checked too (``raw`` may be None): a ``Text`` of bytes would
    otherwise surface as an obscure error deep in an oracle, not at its chunk.
    """
    if not isinstance(result, list | tuple):
        raise TypeError(f"{call} returned {type(result).__name__}, not a list of events")
    for event in result:
        fields = _STR_FIELDS.get(type(event)) or _fields_of_subclass(event)
        if fields is None:
            raise TypeError(f"{call} returned a {type(event).__name__} among its events")
        for name, optional in fields:
            value = getattr(event, name)
            if not isinstance(value, str) and not (optional and value is None):
                kind = f"{type(event).__name__}.{name} is {type(value).__name__}"
                raise TypeError(f"{call} returned {kind}, not str")
    return tuple(result)


# Every field of every event is a str; the ones marked True may also be None.
_Fields = tuple[tuple[str, bool], ...]
_STR_FIELDS: dict[type, _Fields] = {
    Text: (("text", False),),
    ToolCall: (("name", False), ("arguments", False), ("raw", True), ("format", False)),
    Reasoning: (("text", False), ("raw", True), ("format", False)),
    Rejected: (("raw", True), ("content", False), ("format", False), ("reason", False)),
}


def _fields_of_subclass(event: object) -> _Fields | None:
    """The fields to check for a subclass of an event type (a dict lookup misses it)."""
    return next((f for kind, f in _STR_FIELDS.items() if isinstance(event, kind)), None)


def snapshot_state(state: object) -> object:
    """A detector's ``state`` kept safe from later steps (frozen values are kept as is)."""
    # The reference detector's ``state`` is already a fresh frozen snapshot; copying
    # it again per chunk would cost more than the detector step. Anything mutable is
    # deep-copied so later steps cannot rewrite earlier ones.
    if isinstance(state, _IMMUTABLE):
        return state
    params = getattr(type(state), "__dataclass_params__", None)
    if params is not None and params.frozen:
        return state
    if isinstance(state, tuple) and all(isinstance(item, _IMMUTABLE) for item in state):
        return state
    return copy.deepcopy(state)


@dataclass(slots=True)
class Placed:
    """An event, or a merged run of ``Text``, with where it sits in the input and the steps."""

    event: Event
    start: int | None  # input offset of its raw; None once an earlier event's raw is unknown
    shown: int  # offset of what it shows (Text text, Rejected content) in ``Trace.shown``
    step: int  # the step that emitted it (the first piece, for merged Text)
    pieces: tuple[tuple[int, int], ...] = ()  # merged Text: (offset in text, step) per piece

    def step_at(self, position: int) -> int:
        """The step that emitted the character at ``position`` of this (merged) Text."""
        if not self.pieces:
            return self.step
        index = bisect_right(self.pieces, (position, 1 << 62)) - 1
        return self.pieces[max(index, 0)][1]


def place_events(trace: Trace) -> list[Placed]:
    """Every event of the trace with its input offset, shown offset and step: one pass."""
    placed: list[Placed] = []
    start: int | None = 0
    shown = 0
    for step in trace.steps:
        index = step.index
        for event in step.events:
            placed.append(Placed(event, start, shown, index))
            raw = event.raw
            if start is not None:
                start = None if raw is None else start + len(raw)
            if isinstance(event, Text):
                shown += len(event.text)
            elif isinstance(event, Rejected):
                shown += len(event.content)
    return placed


def merge_placed(placed: Iterable[Placed]) -> list[Placed]:
    """Adjacent Text joined into one, empty Text dropped: how text was cut is not a result."""
    merged: list[Placed] = []
    run: list[tuple[Placed, str]] = []

    def close_run() -> None:
        if len(run) == 1:
            merged.append(run[0][0])
        elif run:
            pieces: list[tuple[int, int]] = []
            length = 0
            for piece, text in run:
                pieces.append((length, piece.step))
                length += len(text)
            first = run[0][0]
            joined = Text("".join(text for _, text in run))
            merged.append(Placed(joined, first.start, first.shown, first.step, tuple(pieces)))
        run.clear()

    for item in placed:
        if isinstance(item.event, Text):
            if item.event.text:
                run.append((item, item.event.text))
            continue
        close_run()
        merged.append(item)
    close_run()
    return merged
