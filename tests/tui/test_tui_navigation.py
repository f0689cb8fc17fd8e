"""Where each key moves: pure functions of a run and a row, no Textual."""

from __future__ import annotations

import pytest
from tui_helpers import DROPS_PENDING, END_IN_PREFIX, PER_CHUNK_MARKERS, SPLIT_MARKER, STATELESS

from tcr.detector.formats import FORMATS
from tcr.detector.machine import TRANSITIONS
from tcr.tui import navigation as nav
from tcr.tui.model import Run, open_session
from tcr.tui.navigation import Target


def traced(path: object = SPLIT_MARKER, **kwargs: object) -> Run:
    session = open_session(path, **kwargs)  # type: ignore[arg-type]
    session.run.apply(session.analyse(session.run))
    return session.run


def test_next_and_previous_step_move_by_one_and_stop_at_the_ends() -> None:
    run = traced()
    assert nav.next_step(run, 0) == 1
    assert nav.previous_step(run, 1) == 0
    assert nav.previous_step(run, 0) == 0
    assert nav.next_step(run, run.finish_row) == run.finish_row
    assert nav.last_step(run) == run.finish_row == 36


def test_previous_undoes_next_everywhere() -> None:
    run = traced()
    for row in range(run.rows - 1):
        assert nav.previous_step(run, nav.next_step(run, row)) == row


def test_next_and_previous_change_visit_the_fsm_moves() -> None:
    run = traced()
    assert nav.next_change(run, 0) == 8
    assert nav.next_change(run, 8) == 35
    assert nav.next_change(run, 35) is None
    assert nav.previous_change(run, 35) == 8
    assert nav.previous_change(run, 8) == 0
    assert nav.previous_change(run, 0) is None


def test_without_state_a_change_is_a_step_that_emits() -> None:
    run = traced(None, chunks=["a", "b\n", "c", "\n"], detector=STATELESS)
    assert nav.next_change(run, 0) == 1
    assert nav.next_change(run, 1) == 3


def test_next_change_traces_ahead_as_far_as_it_must() -> None:
    run = open_session(SPLIT_MARKER).run
    assert len(run.steps) < 36
    assert nav.next_change(run, 9) == 35


def test_first_violation_is_where_the_marker_starts_to_leak() -> None:
    run = traced(detector=PER_CHUNK_MARKERS)
    row = nav.first_violation(run)
    assert row == 0
    assert run.view(0).events[0].raw == "<"  # the marker's first character, shown as text


def test_first_violation_is_the_finish_that_loses_the_held_prefix() -> None:
    run = traced(END_IN_PREFIX, detector=DROPS_PENDING)
    assert nav.first_violation(run) == run.finish_row


def test_no_violation_without_a_verdict_or_when_every_check_passes() -> None:
    assert nav.first_violation(open_session(SPLIT_MARKER, detector=PER_CHUNK_MARKERS).run) is None
    assert nav.first_violation(traced()) is None


def test_breakpoints_are_drawn_from_the_transition_and_format_tables() -> None:
    targets = nav.targets()
    assert [t.value for t in targets if t.kind == "state"] == [s.value for s in TRANSITIONS]
    assert [t.value for t in targets if t.kind == "format"] == [f.id for f in FORMATS]


SEARCHES = {"forward": nav.run_to, "back": nav.run_back}  # c and C


@pytest.mark.parametrize(
    ("direction", "start", "target", "row"),
    [
        ("forward", 0, Target("state", "in_block"), 8),
        ("forward", 0, Target("state", "matching_prefix"), None),  # entered at row 0, not after
        ("forward", -1, Target("state", "matching_prefix"), 0),
        ("forward", 0, Target("format", "hermes"), 8),
        ("forward", 8, Target("state", "printing"), 35),
        ("forward", 0, Target("format", "think"), None),
        ("back", 36, Target("state", "in_block"), 8),
        ("back", 9, Target("state", "in_block"), 8),
        ("back", 8, Target("state", "in_block"), None),  # entered at row 8, not before it
        ("back", 36, Target("state", "printing"), 35),
        ("back", 35, Target("state", "printing"), None),  # the start state is not entered
        ("back", 8, Target("state", "matching_prefix"), 0),
        ("back", 36, Target("format", "hermes"), 8),
        ("back", 8, Target("format", "hermes"), None),
        ("back", 36, Target("format", "think"), None),
    ],
)
def test_running_to_a_breakpoint_stops_at_the_nearest_step_that_enters_it(
    direction: str, start: int, target: Target, row: int | None
) -> None:
    assert SEARCHES[direction](traced(), start, target) == row


def test_run_to_a_format_finds_a_block_opened_and_closed_in_one_chunk() -> None:
    chunks = ['Hi <tool_call>{"name": "f", "arguments": {}}</tool_call>', " ok"]
    run = traced(None, chunks=chunks)
    assert run.view(0).after.block_format is None  # type: ignore[union-attr]
    assert nav.run_to(run, -1, Target("format", "hermes")) == 0
    assert nav.run_back(run, 1, Target("format", "hermes")) == 0


def test_run_back_undoes_run_to_between_two_hits() -> None:
    chunks = ["a <tool_call>", "{}</tool_call> b ", "<tool_call>", "{}</tool_call>", " c"]
    run = traced(None, chunks=chunks)
    hermes = Target("format", "hermes")
    assert nav.run_to(run, 0, hermes) == 2
    assert nav.run_back(run, 2, hermes) == 0
    assert nav.run_back(run, 4, hermes) == 2


@pytest.mark.parametrize(
    ("query", "start", "found"),
    [
        ("tool", 0, (1, 5)),
        ("tool", 2, (70, 74)),
        ("tool", 71, (1, 5)),  # wraps around
        ("TOOL", 0, None),  # a capital makes it case-sensitive
        ("PARIS", 0, None),
        ("paris", 0, (59, 64)),
        ("\\n", 0, (11, 12)),
        ("}}\\n<", 0, (65, 69)),
        ("", 0, None),
        ("absent", 0, None),
    ],
)
def test_find(query: str, start: int, found: tuple[int, int] | None) -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert nav.find(text, query, start) == found


def test_a_format_breakpoint_shows_its_engines_and_an_example() -> None:
    described = {t.value: t.described for t in nav.targets()}
    assert described["in_block"] == "state in_block"
    assert described["hermes"].startswith("format hermes (hermes, qwen3_json +5)  '<tool_call>")
    assert described["tools_tag"].startswith("format tools_tag (HERMES_2_PRO)  '<tools>")
    assert all(len(text) < 120 for text in described.values())  # a line in the picker
