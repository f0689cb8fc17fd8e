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
from array import array
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, cast, overload

from tcr.detector.events import Detector, Event, Reasoning, Rejected, Text, ToolCall
from tcr.time_limit import OverTime, event_limit, interrupted_by_user, message_time_limit

__all__ = [
    "EVENT_TYPES",
    "Crash",
    "PackedSteps",
    "Pieces",
    "Placed",
    "PlacedEvents",
    "Step",
    "Trace",
    "TupleLike",
    "checked_events",
    "describe_error",
    "iter_placed",
    "iter_steps",
    "merge_placed",
    "merged_events",
    "place_events",
    "reads_state",
    "run_trace",
    "snapshot_state",
    "stream_steps",
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


def _step_maker() -> Callable[[int, str | None, int, tuple[Event, ...]], Step]:
    # A frozen dataclass's __init__ sets each field through object.__setattr__; the
    # slots' own setters do the same work in half the time, which matters when the
    # oracles walk a million packed steps (tcr replay at char chunking).
    new = object.__new__
    index, chunk, offset, events, state = (
        vars(Step)[name].__set__ for name in ("index", "chunk", "offset", "events", "state")
    )

    def make(i: int, c: str | None, o: int, e: tuple[Event, ...]) -> Step:
        step: Step = new(Step)
        index(step, i)
        chunk(step, c)
        offset(step, o)
        events(step, e)
        state(step, None)
        return step

    return make


_step = _step_maker()


class TupleLike:
    """Compared, hashed and shown as the tuple of its items: the tuple it stands for."""

    __slots__ = ()

    def _items(self) -> tuple[object, ...]:
        return tuple(cast("Iterable[object]", self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._items() == tuple(other)

    def __hash__(self) -> int:
        return hash(self._items())

    def __repr__(self) -> str:
        return repr(self._items())


class PackedSteps(TupleLike, Sequence[Step]):
    """The steps of a run without states, kept as one flat tuple of events.

    A ``Step`` per chunk is about 120 bytes with its events tuple; a replay at
    ``char`` chunking feeds one chunk per character, so the steps alone were
    several times the text. Here a step costs one array entry (where its events
    start), and its ``Step`` is made when it is read.
    """

    __slots__ = ("_chunks", "_events", "_starts")

    def __init__(
        self, chunks: tuple[str, ...], events: tuple[Event, ...], starts: array[int]
    ) -> None:
        self._chunks = chunks  # the trace's chunks; a step past them is finish()
        self._events = events  # every event, in order
        self._starts = starts  # step i's events are events[starts[i]:starts[i + 1]]

    def __len__(self) -> int:
        return len(self._starts) - 1

    @overload
    def __getitem__(self, index: int) -> Step: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Step, ...]: ...
    def __getitem__(self, index: int | slice) -> Step | tuple[Step, ...]:
        if isinstance(index, slice):
            start, stop, stride = index.indices(len(self))
            return tuple(islice(self, start, stop, stride)) if stride > 0 else tuple(self)[index]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("step index out of range")
        return next(islice(self, index, None))  # its offset needs the chunks before it

    def __iter__(self) -> Iterator[Step]:
        # The oracles walk every step of a char-level run: this loop is their cost.
        chunks, events, starts = self._chunks, self._events, self._starts
        fed, offset = len(chunks), 0
        for index in range(len(starts) - 1):
            begin, end = starts[index], starts[index + 1]
            chunk = chunks[index] if index < fed else None
            yield _step(index, chunk, offset, events[begin:end] if end > begin else ())
            if chunk is not None:
                offset += len(chunk)

    @property
    def events(self) -> tuple[Event, ...]:
        return self._events

    def indexed_events(self) -> Iterator[tuple[int, Event]]:
        """Every event with the index of its step (``Trace.indexed_events``)."""
        starts, index = self._starts, 0
        for position, event in enumerate(self._events):
            while starts[index + 1] <= position:
                index += 1
            yield index, event


@dataclass(frozen=True, slots=True)
class Trace:
    """One run of a detector over one chunking (``steps`` packed when states are skipped)."""

    chunks: tuple[str, ...]
    steps: Sequence[Step]  # a tuple, or PackedSteps
    crash: Crash | None
    # ``placed()`` and ``merged()``, made once: the checks of a run, and of every run
    # compared with it, read them
    _placed: PlacedEvents | None = field(default=None, init=False, repr=False, compare=False)
    _merged: tuple[Placed, ...] | None = field(default=None, init=False, repr=False, compare=False)

    def placed(self) -> PlacedEvents:
        """``place_events(self)``, made once and kept compact (``PlacedEvents``)."""
        if self._placed is None:
            object.__setattr__(self, "_placed", PlacedEvents(self))
        assert self._placed is not None
        return self._placed

    def merged(self) -> tuple[Placed, ...]:
        """``merge_placed(place_events(self))``, made once, with no ``Placed`` per event
        kept on the way (a run at ``char`` chunking has one per character)."""
        if self._merged is None:
            object.__setattr__(self, "_merged", tuple(merge_placed(iter_placed(self))))
        assert self._merged is not None
        return self._merged

    @property
    def events(self) -> tuple[Event, ...]:
        """Every event, in the order emitted."""
        if isinstance(self.steps, PackedSteps):
            return self.steps.events
        return tuple(event for step in self.steps for event in step.events)

    @property
    def input(self) -> str:
        return "".join(self.chunks)

    @property
    def shown(self) -> str:
        """What the user sees: ``Text`` text and ``Rejected`` content, in order."""
        parts: list[str] = []
        for event in self.events:
            if isinstance(event, Text):
                parts.append(event.text)
            elif isinstance(event, Rejected):
                parts.append(event.content)
        return "".join(parts)

    @property
    def has_raw(self) -> bool:
        """Whether every event names its input span (foreign detectors may not)."""
        return all(event.raw is not None for event in self.events)

    def indexed_events(self) -> Iterator[tuple[int, Event]]:
        """Every event with the index of the step that emitted it, in order."""
        if isinstance(self.steps, PackedSteps):
            return self.steps.indexed_events()
        return ((step.index, event) for step in self.steps for event in step.events)

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

    ``timeout``: seconds the whole message may take, plus ``PER_CHUNK`` per chunk
    (``tcr.time_limit``); a run over it ends with a ``Crash`` at the step it was in, ``timed_out``.

    ``states=False`` skips reading ``detector.state`` after each step; a replay
    that only runs the oracles does not need it, and a state snapshot per chunk
    can cost more than the detector itself. It also lets a detector that offers
    ``feed_many(chunks)`` (an iterator of what ``feed`` returns for each chunk,
    raising at the chunk that fails) take all the chunks at once: a detector in
    another process pipelines them instead of paying a round trip per chunk.
    """
    chunk_tuple = tuple(chunks)
    if not states:
        return _packed_trace(detector, chunk_tuple, timeout)
    steps: list[Step] = []
    # closing(): a crash ends the run at once, and a feed_many() pipeline with it
    try:
        with (
            message_time_limit(timeout, len(chunk_tuple)),
            closing(iter_steps(detector, chunk_tuple, states=states)) as stepping,
        ):
            for item in stepping:
                if isinstance(item, Crash):
                    return Trace(chunk_tuple, tuple(steps), item)
                steps.append(item)
    except OverTime as error:
        return Trace(chunk_tuple, tuple(steps), _between_steps(chunk_tuple, len(steps), error))
    return Trace(chunk_tuple, tuple(steps), None)


def _packed_trace(detector: Detector, chunks: tuple[str, ...], timeout: float | None) -> Trace:
    """``run_trace`` without states: each step kept as where its events start."""
    events: list[Event] = []
    starts = array("q", [0])
    crash: Crash | None = None
    try:
        with closing(stream_steps(detector, chunks, timeout=timeout)) as steps:
            for item in steps:
                if isinstance(item, Crash):
                    crash = item
                    break
                events += item[1]
                starts.append(len(events))
    except OverTime as error:  # the limit ran out here, between two steps
        crash = _between_steps(chunks, len(starts) - 1, error)
    return Trace(chunks, PackedSteps(chunks, tuple(events), starts), crash)


def stream_steps(
    detector: Detector, chunks: Sequence[str], *, timeout: float | None = None
) -> Generator[tuple[str | None, tuple[Event, ...]] | Crash, None, None]:
    """Each step's chunk (``None``: finish) and events, as the detector makes them, or the
    ``Crash`` that ends the run; nothing is kept, and no state is read.

    The message's time limit is armed while the caller reads the steps, so it also
    runs out in the caller's code: an ``OverTime`` raised there is the caller's to
    take as a crash. Close the iterator to end the run early (``closing``).
    """
    done = 0
    try:
        with (
            message_time_limit(timeout, len(chunks)),
            closing(_outcomes(detector, chunks, states=False)) as outcomes,
        ):
            for item in outcomes:
                if isinstance(item, Crash):
                    yield item
                    return
                yield item[1], item[3]
                done += 1  # the caller has taken it
    except OverTime as error:
        yield _between_steps(chunks, done, error)


def merged_events(
    detector: Detector, chunks: Sequence[str], *, timeout: float | None = None
) -> tuple[Event, ...] | None:
    """The events of a run with adjacent Text merged and empty Text dropped
    (``merge_placed``'s events), made as it streams; ``None`` when it crashed or ran
    out of time (``run_trace`` tells how).

    A Text run keeps its pieces' texts joined a thousand at a time, not one string
    (about 50 bytes) per piece.
    """
    merged: list[Event] = []
    joined: list[str] = []  # the open Text run, joined in blocks
    pieces: list[str] = []  # its pieces since the last block
    runs = 0  # pieces in the open run

    def close_run() -> None:
        nonlocal runs
        if runs:
            text = "".join([*joined, *pieces])
            merged.append(first if runs == 1 else Text(text))
            joined.clear()
            pieces.clear()
            runs = 0

    first: Event = Text("")
    try:
        with closing(stream_steps(detector, chunks, timeout=timeout)) as steps:
            for item in steps:
                if isinstance(item, Crash):
                    return None
                for event in item[1]:
                    if not isinstance(event, Text):
                        close_run()
                        merged.append(event)
                    elif event.text:
                        first = event if not runs else first
                        runs += 1
                        pieces.append(event.text)
                        if len(pieces) == 1024:
                            joined.append("".join(pieces))
                            pieces.clear()
    except OverTime:  # ran out here, between two steps
        return None
    close_run()
    return tuple(merged)


def _between_steps(chunks: Sequence[str], done: int, error: OverTime) -> Crash:
    """The time limit ran out after ``done`` steps, outside the detector: a crash at the next."""
    offset = sum(len(chunk) for chunk in islice(chunks, done))
    return Crash(done, offset, str(error), timed_out=True)


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
    with closing(_outcomes(detector, chunks, states=states)) as outcomes:
        for item in outcomes:
            yield item if isinstance(item, Crash) else Step(*item)


_Outcome = tuple[int, str | None, int, tuple[Event, ...], Any]  # a Step's fields


def _outcomes(
    detector: Detector, chunks: Sequence[str], *, states: bool
) -> Generator[_Outcome | Crash, None, None]:
    """``iter_steps`` with each step as a plain tuple, for a caller that keeps no ``Step``."""
    read_state = states and reads_state(detector)
    # Only states=False pipelines: feed_many() needs every chunk up front.
    many = None if states else _feed_many(detector, chunks)
    offset = index = emitted = 0
    try:
        while True:
            chunk = chunks[index] if index < len(chunks) else None
            try:
                if chunk is None:
                    events = checked_events(detector.finish(), "finish()")
                else:
                    result = detector.feed(chunk) if many is None else next(many)
                    events = checked_events(result, "feed()")
                emitted += len(events)
                fed = offset + len(chunk or "")
                if emitted > event_limit(fed, index + 1):  # judging them would take hours
                    call = "feed()" if chunk is not None else "finish()"
                    raise TypeError(
                        f"{call} returned {emitted:,} events in all for {fed:,} characters, "
                        f"over the bound of {event_limit(fed, index + 1):,} (tcr.time_limit)"
                    )
                state = snapshot_state(getattr(detector, "state", None)) if read_state else None
            except OverTime as error:
                yield Crash(index, offset, str(error), timed_out=True)
                return
            except BaseException as error:  # SystemExit too: any detector failure is a finding
                if interrupted_by_user(error):  # only Ctrl-C stops tcr
                    raise
                yield Crash(index, offset, describe_error(error))
                return
            yield index, chunk, offset, events, state
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


class Pieces(TupleLike, Sequence[tuple[int, int]]):
    """Where each piece of a merged ``Text`` starts in its text, and the step that emitted it.

    A char-level run merges one piece per character: two arrays of ints cost 16
    bytes a piece where a tuple of two ints cost about 120.
    """

    __slots__ = ("offsets", "steps")

    def __init__(self, offsets: array[int], steps: array[int]) -> None:
        self.offsets = offsets
        self.steps = steps

    def __len__(self) -> int:
        return len(self.offsets)

    @overload
    def __getitem__(self, index: int) -> tuple[int, int]: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[tuple[int, int], ...]: ...
    def __getitem__(self, index: int | slice) -> tuple[int, int] | tuple[tuple[int, int], ...]:
        if isinstance(index, slice):
            return tuple(zip(self.offsets[index], self.steps[index], strict=True))
        return self.offsets[index], self.steps[index]


@dataclass(slots=True)
class Placed:
    """An event, or a merged run of ``Text``, with where it sits in the input and the steps."""

    event: Event
    start: int | None  # input offset of its raw; None once an earlier event's raw is unknown
    shown: int  # offset of what it shows (Text text, Rejected content) in ``Trace.shown``
    step: int  # the step that emitted it (the first piece, for merged Text)
    pieces: Sequence[tuple[int, int]] = ()  # merged Text: (offset in text, step) per piece

    def step_at(self, position: int) -> int:
        """The step that emitted the character at ``position`` of this (merged) Text."""
        if not self.pieces:
            return self.step
        index = bisect_right(self.pieces, (position, 1 << 62)) - 1
        return self.pieces[max(index, 0)][1]


def place_events(trace: Trace) -> list[Placed]:
    """Every event of the trace with its input offset, shown offset and step: one pass."""
    return list(iter_placed(trace))


def iter_placed(trace: Trace) -> Iterator[Placed]:
    """``place_events`` one at a time, for a caller that keeps few of them."""
    start: int | None = 0
    shown = 0
    for index, event in trace.indexed_events():
        yield Placed(event, start, shown, index)
        raw = event.raw
        if start is not None:
            start = None if raw is None else start + len(raw)
        if isinstance(event, Text):
            shown += len(event.text)
        elif isinstance(event, Rejected):
            shown += len(event.content)


class PlacedEvents(TupleLike, Sequence[Placed]):
    """``place_events(trace)`` as three arrays of ints beside the trace's own events.

    A ``Placed`` with its three ints is about 160 bytes, and a run at ``char`` chunking
    has one event per character: held as records, they were most of ``tcr replay``'s
    peak on a large recording. Here an event costs 24 bytes, and its ``Placed`` is
    made when it is read.
    """

    __slots__ = ("_events", "_shown", "_starts", "_steps")

    _UNKNOWN = -1  # a start past an event whose raw is unknown

    def __init__(self, trace: Trace) -> None:
        self._events = trace.events
        self._starts, self._shown, self._steps = array("q"), array("q"), array("q")
        for placed in iter_placed(trace):
            self._starts.append(self._UNKNOWN if placed.start is None else placed.start)
            self._shown.append(placed.shown)
            self._steps.append(placed.step)

    def __len__(self) -> int:
        return len(self._events)

    @overload
    def __getitem__(self, index: int) -> Placed: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Placed, ...]: ...
    def __getitem__(self, index: int | slice) -> Placed | tuple[Placed, ...]:
        if isinstance(index, slice):
            return tuple(self._at(i) for i in range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("placed event index out of range")
        return self._at(index)

    def _at(self, index: int) -> Placed:
        start = self._starts[index]
        known = None if start == self._UNKNOWN else start
        return Placed(self._events[index], known, self._shown[index], self._steps[index])

    def __iter__(self) -> Iterator[Placed]:
        return (self._at(index) for index in range(len(self)))


def merge_placed(placed: Iterable[Placed]) -> list[Placed]:
    """Adjacent Text joined into one, empty Text dropped: how text was cut is not a result.

    ``placed`` is read once, keeping nothing of a Text run but its first record, its
    texts and two ints per piece (``Pieces``).
    """
    merged: list[Placed] = []
    first: Placed | None = None  # the run's first Text
    texts: list[str] = []  # each piece's text
    offsets, steps = array("q"), array("q")  # each piece's offset in the run, and step
    length = 0

    def close_run() -> None:
        nonlocal first, offsets, steps, length
        if first is None:
            return
        if len(texts) == 1:
            merged.append(first)
        else:
            joined = Text("".join(texts))
            pieces = Pieces(offsets, steps)
            merged.append(Placed(joined, first.start, first.shown, first.step, pieces))
        first, length = None, 0
        offsets, steps = array("q"), array("q")
        texts.clear()

    for item in placed:
        event = item.event
        if not isinstance(event, Text):
            close_run()
            merged.append(item)
        elif event.text:
            if first is None:
                first = item
            texts.append(event.text)
            offsets.append(length)
            steps.append(item.step)
            length += len(event.text)
    close_run()
    return merged
