"""One chunking of the content through a fresh detector, traced step by step.

A :class:`Run` feeds the detector one chunk at a time, exactly as
:func:`tcr.trace.run_trace` does, but *incrementally*: the first screen needs
the first steps only, and the rest is traced in slices (``Run.advance``) while
the user reads. What the panes need per step (state label, whether it changed,
raw emitted, shown length, block spans) is kept in flat lists, and a
:class:`StepView` is built on demand for the one step being displayed.
"""

from __future__ import annotations

import enum
import time
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tcr.detector.events import Detector, Event, Rejected, Text
from tcr.detector.machine import FSM, TRANSITIONS
from tcr.oracle import Verdict, Violation
from tcr.time_limit import OverTime, message_time_limit
from tcr.trace import Crash, Step, Trace, iter_steps, reads_state, snapshot_state

from .source import deadline_passed

if TYPE_CHECKING:
    from .model import Session

__all__ = ["Move", "Run", "StateView", "StepView", "moves_between", "state_label", "triggers"]


# --- state snapshots, whatever the detector ---------------------------------------


@dataclass(frozen=True, slots=True)
class StateView:
    """What a panel shows of a detector's state, read from any state object.

    The reference ``DetectorState`` has every field; a foreign detector's state
    may have some or none (``label`` is then its ``repr``).
    """

    label: str  # the FSM state name, e.g. "matching_prefix"
    format: str | None
    block_format: str | None
    pending: str | None
    block: str | None
    raw: object
    moves: tuple[str, ...] | None = None  # the triggers the step took (None: not told)

    @classmethod
    def of(cls, state: object) -> StateView:
        return cls(
            label=state_label(state),
            format=_str_field(state, "format"),
            block_format=_str_field(state, "block_format"),
            pending=_str_field(state, "pending"),
            block=_str_field(state, "block"),
            raw=state,
            moves=_moves_field(state),
        )


_LABELS = ("fsm", "mode", "phase", "state")  # where foreign states keep their name


def state_label(state: object) -> str:
    """The FSM state's name: ``state.fsm`` (or ``mode``, ``phase``, ``state``) as an
    Enum's value or a string, else the state's short repr."""
    for name in _LABELS:
        try:
            value = getattr(state, name, None)
        except Exception:  # a computed field that raises counts as absent
            continue
        if isinstance(value, enum.Enum):
            return str(value.value)
        if isinstance(value, str):
            return value
    if isinstance(state, enum.Enum):
        return str(state.value)
    text = state if isinstance(state, str) else repr(state)
    return text if len(text) <= 40 else text[:39] + "…"


def _str_field(state: object, name: str) -> str | None:
    try:
        value = getattr(state, name, None)
    except Exception:  # a computed field that raises is shown as absent
        return None
    return value if isinstance(value, str) else None


def _moves_field(state: object) -> tuple[str, ...] | None:
    try:
        value = getattr(state, "moves", None)
    except Exception:  # as _str_field
        return None
    if isinstance(value, tuple) and all(isinstance(item, str) for item in value):
        return value
    return None


# --- the move a step made, from the transition table ---------------------------------

Move = tuple[str, str]  # (trigger, the state it leads to)


def triggers(before: str, after: str) -> list[str]:
    """The triggers of the transition table that lead from ``before`` to ``after``."""
    try:
        moves = TRANSITIONS[FSM(before)]
    except ValueError:
        return []
    return [trigger for trigger, target in moves.items() if target.value == after]


def moves_between(before: StateView | None, after: StateView) -> tuple[Move, ...]:
    """The moves a step made from ``before`` to ``after``, in order.

    A detector that names its moves (the reference's ``state.moves``) is followed
    through the table, so a ``close`` step says ``close``, and a step that opened and
    closed a block says both. Otherwise only the table can say: the triggers that
    lead from one state to the other, ``/``-joined when there are several.
    """
    if before is None:
        return ()
    taken = after.moves
    if taken is not None:
        path: list[Move] = []
        state = before.label
        for trigger in taken:
            try:
                state = TRANSITIONS[FSM(state)][trigger].value
            except (ValueError, KeyError):  # not this table's states: the table cannot say
                break
            path.append((trigger, state))
        else:
            if state == after.label:
                return tuple(path)
    if before.label == after.label:
        return ()
    return (("/".join(triggers(before.label, after.label)) or "?", after.label),)


@dataclass(frozen=True, slots=True)
class StepView:
    """One row of the steps pane and everything the detail pane shows for it."""

    row: int  # == chunk index; len(chunks) is finish; a crash row after the last step
    chunk: str | None  # None for finish (and for a crash in finish)
    offset: int  # input offset where the chunk starts
    end: int  # input received after this step
    events: tuple[Event, ...]
    before: StateView | None  # None: the detector exposes no state
    after: StateView | None
    changed: bool  # FSM state or block format changed (no state: events were emitted)
    violations: tuple[Violation, ...]
    crash: str | None  # the error, on the crash row
    emitted: int | None  # raw input emitted so far (None once a raw span is unknown)
    shown_length: int  # characters shown to the user so far

    @property
    def is_finish(self) -> bool:
        return self.chunk is None and self.crash is None

    @property
    def held(self) -> int | None:
        """Input received but not yet emitted (as events' raw spans say)."""
        return None if self.emitted is None else self.end - self.emitted


# --- one chunking, traced incrementally ---------------------------------------------


class Run:
    """One chunking of the source through a fresh detector, traced step by step.

    Mirrors :func:`tcr.trace.run_trace` (same steps, same crash handling) but
    one slice at a time; ``trace()`` gives the finished :class:`Trace`.
    """

    def __init__(self, session: Session, spec: str, chunks: Sequence[str]) -> None:
        self.session = session
        self.spec = spec
        self.chunks = chunks  # the source's own list for "original": it grows while loading
        self.starts: list[int] = [0]  # chunk start offsets, then the end of the content
        self._sync()
        self.detector: Detector = session.new_detector()
        self.stateful = reads_state(self.detector)
        # The steps, taken as the user needs them; self.chunks grows while the source loads.
        self._stepping = iter_steps(self.detector, self.chunks, states=True)
        self.initial: object = None
        if self.stateful:
            try:
                self.initial = snapshot_state(self.detector.state)  # type: ignore[attr-defined]
            except Exception:
                self.initial = None
        self.steps: list[Step] = []
        self.crash: Crash | None = None
        self.done = False
        # Flat per-step data, appended as the trace grows.
        self.labels: list[str | None] = []
        self.block_formats: list[str | None] = []
        self.changes: list[int] = []  # rows whose state changed, ascending
        self.emitted: list[int | None] = []
        self.shown_lengths: list[int] = []
        self.blocks: list[tuple[int, int, str]] = []  # (start, end, event type) in the input
        self.verdict: Verdict | None = None
        self.analysis_error: str | None = None
        self.violations: dict[int, list[Violation]] = {}
        self._shown_parts: list[str] = []
        self._shown_text = ""
        self._shown_joined = 0
        self._emitted_so_far: int | None = 0
        self._shown_so_far = 0
        self._previous: tuple[str | None, str | None] | None = (
            (state_label(self.initial), _str_field(self.initial, "block_format"))
            if self.initial is not None
            else None
        )

    def _sync(self) -> None:
        """Catch up with chunks the source loaded since."""
        starts, chunks = self.starts, self.chunks
        position = starts[-1]
        for index in range(len(starts) - 1, len(chunks)):
            position += len(chunks[index])
            starts.append(position)

    # -- size ----------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Whether every chunk is known (the source has loaded)."""
        return self.chunks is not self.session.source.chunks or self.session.source.done

    @property
    def rows(self) -> int:
        """Rows of the steps pane: every feed and the finish; after a crash, up to it.

        While the source loads, the last row stands for what is still to come.
        """
        if self.crash is not None:
            return self.crash.index + 1
        return len(self.chunks) + 1

    @property
    def traced(self) -> int:
        """Rows whose step has been run."""
        return len(self.steps) + (1 if self.crash is not None else 0)

    @property
    def finish_row(self) -> int:
        return len(self.chunks)

    @property
    def length(self) -> int:
        """Characters of content known (all of it once complete)."""
        return self.starts[-1]

    # -- tracing -------------------------------------------------------------------

    def advance(self, *, steps: int | None = None, seconds: float | None = None) -> bool:
        """Trace up to ``steps`` more steps or for about ``seconds``; True when done.

        Stops early at the end of what the source has loaded so far. The session's time
        limit is armed per call (the slices between keys are not one message's time): a
        detector that hangs in a step ends the run on a timed-out crash row, as in replay.
        """
        self._sync()
        try:
            with message_time_limit(self.session.timeout, len(self.chunks)):
                self._advance(steps, seconds)
        except OverTime as error:  # ran out here, between two steps
            self._stepping.close()
            done = len(self.steps)
            self.crash = Crash(done, self.starts[done], str(error), timed_out=True)
            self.done = True
        self.shown  # noqa: B018  (joined here, in the background, not per key)
        return self.done

    def _advance(self, steps: int | None, seconds: float | None) -> None:
        deadline = None if seconds is None else time.perf_counter() + seconds
        budget = steps if steps is not None else 1 << 62
        n = len(self.chunks)
        complete = self.complete
        while not self.done and budget > 0:
            if len(self.steps) == n and not complete:
                break  # the finish() step waits for the rest of the content
            step = next(self._stepping)
            if isinstance(step, Crash):
                self.crash = step
                self.done = True
                break
            self._record(step)
            if step.is_finish:
                self.done = True
            budget -= 1
            if budget % 64 == 0 and deadline_passed(deadline):
                break

    def ensure(self, row: int) -> None:
        """Trace at least up to ``row``, loading the source as far as that needs."""
        source = self.session.source
        if not self.complete:
            source.load(chunks=row + 1)
        self._sync()
        missing = min(row, self.rows - 1) + 1 - len(self.steps)
        if missing > 0 and not self.done:
            self.advance(steps=missing)

    def finish_tracing(self) -> None:
        self.session.source.load_all()
        self.advance()

    def _record(self, step: Step) -> None:
        self.steps.append(step)
        row = step.index
        state = step.state
        if self.stateful:
            label: str | None = state_label(state)
            block_format = _str_field(state, "block_format")
            key = (label, block_format)
            changed = key != self._previous
            self._previous = key
        else:
            label = block_format = None
            changed = bool(step.events)
        self.labels.append(label)
        self.block_formats.append(block_format)
        if changed:
            self.changes.append(row)
        emitted, shown = self._emitted_so_far, self._shown_so_far
        for event in step.events:
            raw = event.raw
            if emitted is not None:
                if raw is None:
                    emitted = None
                else:
                    if type(event) is not Text and raw:
                        self.blocks.append((emitted, emitted + len(raw), type(event).__name__))
                    emitted += len(raw)
            if type(event) is Text:
                self._shown_parts.append(event.text)
                shown += len(event.text)
            elif isinstance(event, Rejected):
                self._shown_parts.append(event.content)
                shown += len(event.content)
        self._emitted_so_far, self._shown_so_far = emitted, shown
        self.emitted.append(emitted)
        self.shown_lengths.append(shown)

    def trace(self) -> Trace:
        """The finished trace (loading and tracing what is left first)."""
        self.finish_tracing()
        return Trace(tuple(self.chunks), tuple(self.steps), self.crash)

    # -- the oracles' verdict ------------------------------------------------------------

    def apply(self, verdict: Verdict) -> None:
        """Attach a verdict: each violation flags the row of the step it names."""
        self.verdict = verdict
        self.violations = {}
        for found in verdict.violations:
            if found.chunk is not None:
                self.violations.setdefault(found.chunk, []).append(found)

    @property
    def violation_rows(self) -> list[int]:
        return sorted(self.violations)

    # -- what the panes read ------------------------------------------------------------

    @property
    def shown(self) -> str:
        """Everything shown to the user by the steps traced so far."""
        if self._shown_joined != len(self._shown_parts):
            self._shown_text += "".join(self._shown_parts[self._shown_joined :])
            self._shown_joined = len(self._shown_parts)
        return self._shown_text

    def changed(self, row: int) -> bool:
        at = bisect_left(self.changes, row)
        return at < len(self.changes) and self.changes[at] == row

    def label(self, row: int) -> str | None:
        """The state label after ``row`` (traced rows only)."""
        return self.labels[row] if row < len(self.labels) else None

    def label_before(self, row: int) -> str | None:
        if row == 0:
            return None if self.initial is None else state_label(self.initial)
        return self.label(row - 1)

    def row_for_received(self, received: int, *, finish: bool = False) -> int:
        """The first row after which at least ``received`` characters have been fed
        (the finish row for ``finish``): how a new chunking keeps the position."""
        if finish or not self.chunks:
            return self.finish_row
        if received <= 0:
            return 0
        return self.chunk_at(received - 1)

    def chunk_at(self, offset: int) -> int:
        """The row whose chunk holds input ``offset`` (the finish row past the end)."""
        if offset >= self.length:
            return self.finish_row
        return max(bisect_right(self.starts, offset) - 1, 0)

    def view(self, row: int) -> StepView:
        """The step at ``row``, traced on demand."""
        self.ensure(max(row, 0))
        row = max(0, min(row, self.traced - 1))
        violations = tuple(self.violations.get(row, ()))
        if row >= len(self.steps):  # the crash row
            assert self.crash is not None
            crash = self.crash
            chunk = self.chunks[row] if row < len(self.chunks) else None
            previous = self._state_view(row - 1) if row else self._initial_view()
            return StepView(
                row=row,
                chunk=chunk,
                offset=crash.offset,
                end=crash.offset + (len(chunk) if chunk is not None else 0),
                events=(),
                before=previous,
                after=None,
                changed=False,
                violations=violations,
                crash=crash.error,
                emitted=self.emitted[row - 1] if row else 0,
                shown_length=self.shown_lengths[row - 1] if row else 0,
            )
        step = self.steps[row]
        return StepView(
            row=row,
            chunk=step.chunk,
            offset=step.offset,
            end=step.end if step.chunk is not None else self.length,
            events=step.events,
            before=self._state_view(row - 1) if row else self._initial_view(),
            after=self._state_view(row),
            changed=self.changed(row),
            violations=violations,
            crash=None,
            emitted=self.emitted[row],
            shown_length=self.shown_lengths[row],
        )

    def _state_view(self, row: int) -> StateView | None:
        return StateView.of(self.steps[row].state) if self.stateful else None

    def _initial_view(self) -> StateView | None:
        return StateView.of(self.initial) if self.stateful and self.initial is not None else None

    def held_text(self, view: StepView) -> str | None:
        """What was received and not yet emitted, from the raw spans (any detector)."""
        if view.emitted is None:
            return None
        return self.session.source.text[view.emitted : view.end]
