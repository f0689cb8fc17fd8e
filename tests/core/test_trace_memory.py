"""A trace without states keeps no record per step, and a merged Text no tuple per piece."""

from __future__ import annotations

import dataclasses

from toy_detectors import RaisesOnThirdChunk, ToyDetector

from tcr.detector.core import StreamDetector
from tcr.detector.events import Text
from tcr.trace import PackedSteps, Pieces, Step, merge_placed, place_events, run_trace

CHUNKS = ["hi <tool", "_call>", '{"name": "f", "arguments": {}}</tool_call>', " bye"]
# No letter that begins a marker (<, [, {, `, the f of functools[): nothing is held back.
PROSE = list("Some plain text, read one character at a time.")


def without_states(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    return tuple(dataclasses.replace(step, state=None) for step in steps)


def test_a_trace_without_states_keeps_no_step_object() -> None:
    stateful = run_trace(ToyDetector(), CHUNKS)
    packed = run_trace(ToyDetector(), CHUNKS, states=False)
    assert isinstance(stateful.steps, tuple)
    assert isinstance(packed.steps, PackedSteps)
    assert not any(isinstance(kept, Step) for kept in vars_of(packed.steps))
    # Read back, the steps are those of a run with states, less the states.
    assert tuple(packed.steps) == without_states(stateful.steps)
    assert packed.steps == without_states(stateful.steps)
    assert len(packed.steps) == len(CHUNKS) + 1
    assert packed.steps[2] == without_states(stateful.steps)[2]
    assert packed.steps[-1].is_finish
    assert packed.steps[1:3] == without_states(stateful.steps)[1:3]
    assert packed.events == stateful.events
    assert list(packed.indexed_events()) == list(stateful.indexed_events())
    assert (packed.shown, packed.has_raw) == (stateful.shown, stateful.has_raw)
    assert place_events(packed) == place_events(stateful)


def vars_of(steps: PackedSteps) -> list[object]:
    return [getattr(steps, name) for name in PackedSteps.__slots__]


def test_a_crash_ends_a_packed_trace_as_it_ends_one_with_states() -> None:
    stateful = run_trace(RaisesOnThirdChunk(), CHUNKS)
    packed = run_trace(RaisesOnThirdChunk(), CHUNKS, states=False)
    assert packed.crash == stateful.crash is not None
    assert tuple(packed.steps) == without_states(stateful.steps)


def test_merged_text_keeps_its_pieces_in_two_arrays() -> None:
    trace = run_trace(StreamDetector(), PROSE, states=False)
    [merged] = merge_placed(place_events(trace))
    assert merged.event == Text("".join(PROSE))
    assert isinstance(merged.pieces, Pieces)
    assert list(merged.pieces.offsets) == list(range(len(PROSE)))
    assert merged.pieces == tuple((i, i) for i in range(len(PROSE)))
    assert [merged.step_at(i) for i in (0, 5, len(PROSE) - 1)] == [0, 5, len(PROSE) - 1]
