"""Tracing: one step per chunk plus finish, crashes recorded, events placed in the input."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator, Sequence

import pytest
from toy_detectors import RaisesOnThirdChunk, ToyDetector, ToyState

from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall
from tcr.oracle import crash_kind
from tcr.time_limit import EVENTS_BASE, EVENTS_PER_UNIT, PER_CHUNK, event_limit, message_limit
from tcr.trace import Crash, Placed, Step, merge_placed, place_events, run_trace

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
CHUNKS = ["hi <tool", "_call>", '{"name": "f", "arguments": {}}</tool_call>', " bye"]


class Scripted:
    """Returns whatever it is told to, one answer per call; no ``state``."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)

    def feed(self, chunk: str) -> list[Event]:
        return self._answer()

    def finish(self) -> list[Event]:
        return self._answer()

    def _answer(self) -> list[Event]:
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[return-value]


def test_one_step_per_chunk_then_finish() -> None:
    trace = run_trace(ToyDetector(), CHUNKS)
    assert [s.index for s in trace.steps] == [0, 1, 2, 3, 4]
    assert [s.chunk for s in trace.steps] == [*CHUNKS, None]
    assert [s.offset for s in trace.steps] == [0, 8, 14, 56, 60]
    assert trace.steps[-1].is_finish
    assert trace.steps[1].end == 14
    assert trace.crash is None
    assert trace.finished


def test_events_in_order_and_where_they_were_emitted() -> None:
    trace = run_trace(ToyDetector(), CHUNKS)
    assert trace.steps[0].events == (Text("hi "),)
    assert trace.steps[1].events == ()
    assert trace.steps[2].events == (ToolCall("f", "{}", CALL, "tool_call_tag"),)
    assert trace.events == (Text("hi "), ToolCall("f", "{}", CALL, "tool_call_tag"), Text(" bye"))


def test_input_shown_and_has_raw() -> None:
    trace = run_trace(ToyDetector(), ["x <tool_call>oops</tool_call> y"])
    assert trace.input == "x <tool_call>oops</tool_call> y"
    assert trace.shown == "x oops y"  # Rejected content is shown
    assert trace.has_raw


def test_has_raw_is_false_when_any_event_lacks_raw() -> None:
    trace = run_trace(Scripted([Text("a")], [ToolCall("f", "{}", None)]), ["a"])
    assert not trace.has_raw


def test_state_snapshot_after_every_step() -> None:
    trace = run_trace(ToyDetector(), CHUNKS)
    assert trace.steps[0].state == ToyState("printing", "<tool", "")
    assert trace.steps[1].state == ToyState("in_block", "", "")
    assert trace.steps[-1].state == ToyState("printing", "", "")


def test_no_state_attribute_means_none() -> None:
    trace = run_trace(Scripted([], []), ["a"])
    assert [s.state for s in trace.steps] == [None, None]


def test_states_can_be_skipped_for_speed() -> None:
    trace = run_trace(ToyDetector(), CHUNKS, states=False)
    assert all(s.state is None for s in trace.steps)


class MutableState:
    """Exposes its live buffer as ``state``: the trace must copy it."""

    def __init__(self) -> None:
        self.state: list[str] = []

    def feed(self, chunk: str) -> list[Event]:
        self.state.append(chunk)
        return []

    def finish(self) -> list[Event]:
        text = "".join(self.state)
        self.state.clear()
        return [Text(text)] if text else []


def test_a_mutable_state_is_copied_so_later_steps_cannot_rewrite_it() -> None:
    trace = run_trace(MutableState(), ["a", "b"])
    assert [s.state for s in trace.steps] == [["a"], ["a", "b"], []]


def test_exception_in_feed_is_a_crash_and_stops_the_trace() -> None:
    trace = run_trace(RaisesOnThirdChunk(), ["ab", "cd", "ef", "gh"])
    assert trace.crash == Crash(2, 4, "ValueError: boom")
    assert [s.index for s in trace.steps] == [0, 1]
    assert not trace.finished


class FailsAtFinish(ToyDetector):
    def finish(self) -> list[Event]:
        raise RuntimeError("first line\nsecond line")


def test_exception_in_finish_is_a_crash_at_the_finish_index() -> None:
    trace = run_trace(FailsAtFinish(), ["ab", "cd"])
    assert trace.crash == Crash(2, 4, "RuntimeError: first line")
    assert len(trace.steps) == 2


def test_an_exception_without_message_is_its_type() -> None:
    class Empty(ToyDetector):
        def feed(self, chunk: str) -> list[Event]:
            raise KeyError

    assert run_trace(Empty(), ["a"]).crash == Crash(0, 0, "KeyError")


def test_wrong_return_type_is_a_crash_not_a_confusing_error_later() -> None:
    trace = run_trace(Scripted(None), ["a"])
    assert trace.crash == Crash(0, 0, "TypeError: feed() returned NoneType, not a list of events")
    trace = run_trace(Scripted(["a"]), ["a"])
    assert trace.crash == Crash(0, 0, "TypeError: feed() returned a str among its events")


def test_system_exit_and_other_base_exceptions_are_crashes() -> None:
    for error in (SystemExit("bye"), SystemExit(3), GeneratorExit()):
        trace = run_trace(Scripted([], error), ["a", "b"])
        assert trace.crash is not None and trace.crash.index == 1, error
        assert trace.crash.error.startswith(type(error).__name__)


class _CtrlC:
    """Ctrl-C arrives while it runs: a real SIGINT, as the terminal sends it."""

    def feed(self, chunk: str) -> list[Event]:
        signal.raise_signal(signal.SIGINT)
        return [Text(chunk)]

    def finish(self) -> list[Event]:
        return []


def test_ctrl_c_in_a_detector_still_interrupts() -> None:
    with pytest.raises(KeyboardInterrupt):
        run_trace(_CtrlC(), ["a"])


def test_a_keyboard_interrupt_the_detector_raises_itself_is_its_crash() -> None:
    # issue 36: it is the detector's, not the user's Ctrl-C (which came as no SIGINT)
    trace = run_trace(Scripted([Text("a")], KeyboardInterrupt()), ["a", "b"])
    assert trace.crash is not None and trace.crash.index == 1
    assert trace.crash.error == "KeyboardInterrupt"
    run_trace(ToyDetector(), CHUNKS)  # and Ctrl-C still stops the next message
    with pytest.raises(KeyboardInterrupt):
        run_trace(_CtrlC(), ["a"])
    assert run_trace(Scripted(KeyboardInterrupt()), ["a"]).crash is not None


def test_events_past_the_bound_of_the_input_are_a_bad_event_crash() -> None:
    # issue 36: 200,000 events a feed on a short message took minutes to judge
    many = [Text("")] * (EVENTS_BASE + 100)
    trace = run_trace(Scripted([Text("ab")], many, []), ["ab", "c"], states=False)
    assert trace.crash is not None and trace.crash.index == 1 and trace.crash.offset == 2
    assert trace.crash.error.startswith("TypeError: feed() returned ")
    assert f"over the bound of {event_limit(3, 2):,}" in trace.crash.error
    assert crash_kind(trace.crash.error) == "bad event"


def test_events_within_the_bound_are_no_crash() -> None:
    text = "x" * 100
    within = [Text(c) for c in text] * EVENTS_PER_UNIT
    trace = run_trace(Scripted(within, []), [text])
    assert trace.crash is None


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (Text(b"hi"), "Text.text is bytes"),
        (ToolCall(1, "{}"), "ToolCall.name is int"),
        (ToolCall("f", {}), "ToolCall.arguments is dict"),
        (ToolCall("f", "{}", raw=3), "ToolCall.raw is int"),
        (ToolCall("f", "{}", format=None), "ToolCall.format is NoneType"),
        (Reasoning(None), "Reasoning.text is NoneType"),
        (Rejected(None, 5), "Rejected.content is int"),
        (Rejected("x", "x", reason=None), "Rejected.reason is NoneType"),
        (Rejected("x", "x", format=5), "Rejected.format is int"),
    ],
)
def test_an_event_field_of_the_wrong_type_is_a_crash_naming_the_chunk(
    event: object, field: str
) -> None:
    trace = run_trace(Scripted([Text("ok")], [event]), ["a", "b"])
    assert trace.crash == Crash(1, 1, f"TypeError: feed() returned {field}, not str")
    assert run_trace(Scripted([], [event]), ["a"]).crash == Crash(
        1, 1, f"TypeError: finish() returned {field}, not str"
    )


def test_well_typed_events_pass_the_field_check() -> None:
    events = [Text("a"), ToolCall("f", "{}"), Reasoning("r", "x", "f"), Rejected(None, "c")]
    assert run_trace(Scripted(events, []), ["a"]).crash is None


def test_empty_input_is_just_finish() -> None:
    trace = run_trace(ToyDetector(), [])
    assert trace.steps == (Step(0, None, 0, (), ToyState("printing", "", "")),)


def test_place_events_gives_input_and_shown_offsets_and_steps() -> None:
    trace = run_trace(ToyDetector(), ["a <tool_call>bad</tool", "_call> b"])
    placed = place_events(trace)
    assert [(p.start, p.shown, p.step) for p in placed] == [(0, 0, 0), (2, 2, 1), (28, 5, 1)]
    assert isinstance(placed[1].event, Rejected)


def test_place_events_stops_knowing_offsets_after_an_unknown_raw() -> None:
    trace = run_trace(Scripted([Text("a"), ToolCall("f", "{}"), Text("b")], []), ["a<x>b"])
    assert [p.start for p in place_events(trace)] == [0, 1, None]
    assert [p.start for p in trace.placed()] == [0, 1, None]  # kept compact, read the same


def test_merge_placed_joins_text_and_remembers_each_piece() -> None:
    trace = run_trace(ToyDetector(), ["ab", "", "cd", "e"])
    (merged,) = merge_placed(place_events(trace))
    assert merged.event == Text("abcde")
    assert (merged.start, merged.step) == (0, 0)
    assert [merged.step_at(i) for i in range(5)] == [0, 0, 2, 2, 3]


def test_merge_placed_drops_empty_text() -> None:
    items = [Placed(Text(""), 0, 0, 0), Placed(ToolCall("f", "{}", ""), 0, 0, 0)]
    assert [p.event for p in merge_placed(items)] == [ToolCall("f", "{}", "")]


class StateRaises(ToyDetector):
    @property
    def state(self) -> ToyState:
        raise RuntimeError("no state yet")


def test_a_state_that_cannot_be_read_is_a_crash() -> None:
    trace = run_trace(StateRaises(), ["ab"])
    assert trace.crash == Crash(0, 0, "RuntimeError: no state yet")


class Batched(ToyDetector):
    """Offers the optional ``feed_many`` fast path; counts how it was fed."""

    def __init__(self, *, results: int | None = None, fails_at: int | None = None) -> None:
        super().__init__()
        self.results, self.fails_at = results, fails_at
        self.single_feeds = 0
        self.batches = 0

    def feed(self, chunk: str) -> list[Event]:
        self.single_feeds += 1
        return super().feed(chunk)

    def feed_many(self, chunks: Sequence[str]) -> Iterator[list[Event]]:
        self.batches += 1
        for index, chunk in enumerate(chunks[: self.results]):
            if index == self.fails_at:
                raise ValueError("boom")
            yield super().feed(chunk)


def test_feed_many_takes_every_chunk_at_once_when_states_are_skipped() -> None:
    detector = Batched()
    trace = run_trace(detector, CHUNKS, states=False)
    assert (detector.batches, detector.single_feeds) == (1, 0)
    assert trace == run_trace(ToyDetector(), CHUNKS, states=False)


def test_feed_many_is_not_used_when_a_state_is_read_after_each_chunk() -> None:
    detector = Batched()
    trace = run_trace(detector, CHUNKS)
    assert (detector.batches, detector.single_feeds) == (0, len(CHUNKS))
    assert trace == run_trace(ToyDetector(), CHUNKS)


def test_feed_many_raising_at_a_chunk_is_a_crash_at_that_chunk() -> None:
    trace = run_trace(Batched(fails_at=2), ["ab", "cd", "ef", "gh"], states=False)
    assert trace.crash == Crash(2, 4, "ValueError: boom")
    assert [s.index for s in trace.steps] == [0, 1]


def test_feed_many_giving_too_few_results_is_a_crash_at_the_first_missing() -> None:
    trace = run_trace(Batched(results=1), ["ab", "cd"], states=False)
    assert trace.crash == Crash(1, 2, "TypeError: feed_many() stopped after 1 of 2 chunks")


def spin(seconds: float) -> None:
    """Compute for ``seconds`` of CPU time (the time limit counts CPU time)."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass


class SlowOnSecondChunk(ToyDetector):
    """Computes for 0.3 s on its second chunk: over a 0.1 s limit, under none."""

    def __init__(self, tools: Sequence[str] | None = None, format: str | None = None) -> None:
        super().__init__(tools, format)
        self._fed = 0

    def feed(self, chunk: str) -> list[Event]:
        self._fed += 1
        if self._fed == 2:
            spin(0.3)
        return super().feed(chunk)


class SleepsOnSecondChunk(SlowOnSecondChunk):
    """Waits, computing nothing, on its second chunk."""

    def feed(self, chunk: str) -> list[Event]:
        if self._fed == 1:
            time.sleep(1.0)
        return super().feed(chunk)


@pytest.mark.parametrize("states", [True, False], ids=["states", "packed"])
def test_a_message_over_the_time_limit_is_a_crash_at_the_chunk_it_was_in(states: bool) -> None:
    trace = run_trace(SlowOnSecondChunk(), ["ab", "cd", "ef"], states=states, timeout=0.1)
    assert trace.crash == Crash(1, 2, "took longer than 0.1 s", timed_out=True)
    assert [s.index for s in trace.steps] == [0]


def test_a_detector_that_waits_is_stopped_at_a_multiple_of_the_limit_in_wall_time() -> None:
    # Its sleep uses no CPU: only the wall-time limit (WALL_FACTOR limits) stops it.
    trace = run_trace(SleepsOnSecondChunk(), ["ab", "cd", "ef"], states=False, timeout=0.1)
    assert trace.crash == Crash(1, 2, "took longer than 0.1 s", timed_out=True)


def test_the_limit_grows_with_the_chunks_fed() -> None:
    assert message_limit(10.0, 1_000_000) == pytest.approx(10.0 + 1_000_000 * PER_CHUNK)
    assert message_limit(None, 5) is None


def test_without_a_time_limit_a_slow_message_just_takes_its_time() -> None:
    assert run_trace(SlowOnSecondChunk(), ["ab", "cd", "ef"]).crash is None


def test_the_time_limit_is_disarmed_after_the_message() -> None:
    assert run_trace(ToyDetector(), ["ab"], timeout=0.05).crash is None
    time.sleep(0.1)  # an alarm left armed would raise here
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_a_detector_that_catches_exception_does_not_swallow_the_time_limit() -> None:
    class Swallows(ToyDetector):
        def feed(self, chunk: str) -> list[Event]:
            try:
                spin(0.3)
            except Exception:  # the broad catch a time limit must get through
                return [Text("swallowed")]
            return []

    assert run_trace(Swallows(), ["a"], timeout=0.1).crash == Crash(
        0, 0, "took longer than 0.1 s", timed_out=True
    )


def test_off_the_main_thread_there_is_no_time_limit() -> None:
    traces: list[object] = []
    worker = threading.Thread(
        target=lambda: traces.append(run_trace(SlowOnSecondChunk(), ["a", "b"], timeout=0.1))
    )
    worker.start()
    worker.join()
    assert [getattr(t, "crash", "?") for t in traces] == [None]
