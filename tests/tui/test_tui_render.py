"""What each pane draws, as pure functions: the stream's rows, the steps' cells, the detail."""

from __future__ import annotations

from types import SimpleNamespace

from tui_helpers import DROPS_PENDING, END_IN_PREFIX, PER_CHUNK_MARKERS, SPLIT_MARKER, STATELESS

from tcr.detector.core import StreamDetector
from tcr.detector.events import Reasoning, Rejected, Text, ToolCall
from tcr.tui.model import Session, moves_between, open_session, triggers
from tcr.tui.widgets.detail import describe, plain
from tcr.tui.widgets.status import status_text
from tcr.tui.widgets.steps import (
    EVENTS_WIDTH,
    cells_width,
    event_summary,
    header_line,
    row_cells,
    row_line,
    short_state,
)
from tcr.tui.widgets.stream import Span, chunk_spans, layout, marker_spans, step_spans


def no_spans(low: int, high: int) -> list[Span]:
    return []


def rows_text(rows: list[list[object]]) -> list[str]:
    return ["".join(cell.text for cell in row) for row in rows]  # type: ignore[attr-defined]


def judged(session: Session) -> Session:
    session.run.apply(session.analyse(session.run))
    session.reference()
    return session


# --- the stream pane's layout --------------------------------------------------------------


def test_invisible_characters_are_drawn_and_a_newline_ends_its_row() -> None:
    rows, _ = layout("a\tb  \nc d", 0, 20, 5, no_spans)
    assert rows_text(rows) == ["a→b··↵", "c d"]


def test_long_lines_fold_at_the_width() -> None:
    rows, _ = layout("abcdefghij", 0, 4, 5, no_spans)
    assert rows_text(rows) == ["abcd", "efgh", "ij"]


def test_wide_characters_take_two_cells() -> None:
    rows, _ = layout("漢字漢字", 0, 5, 5, no_spans)
    assert rows_text(rows) == ["漢字", "漢字"]


def test_only_a_window_around_the_anchor_is_laid_out() -> None:
    text = "".join(f"line {i}\n" for i in range(10_000))
    seen: list[tuple[int, int]] = []

    def spans(low: int, high: int) -> list[Span]:
        seen.append((low, high))
        return []

    anchor = text.index("line 5000")
    rows, first = layout(text, anchor, 20, 6, spans)
    assert rows_text(rows)[4] == "line 5000↵"  # two thirds down
    assert len(rows) == 6 and text.startswith("line 4996", first)
    ((low, high),) = seen
    assert high - low < 400


def test_classes_come_from_overlapping_spans() -> None:
    rows, _ = layout("abcdef", 0, 10, 2, lambda low, high: [(0, 4, "x"), (2, 6, "y")])
    assert [(c.text, sorted(c.classes)) for c in rows[0]] == [
        ("ab", ["x"]),
        ("cd", ["x", "y"]),
        ("ef", ["y"]),
    ]


def test_chunk_boundaries_are_marked_so_they_show_without_colour() -> None:
    rows, _ = layout("abcdef", 0, 20, 2, no_spans, breaks=[0, 2, 5, 6])
    assert rows_text(rows) == ["ab¦cde¦f"]
    assert [sorted(c.classes) for c in rows[0] if c.text == "¦"] == [["boundary"], ["boundary"]]


def test_a_boundary_takes_a_cell_and_one_after_a_newline_starts_the_row() -> None:
    rows, _ = layout("abcd\nef", 0, 3, 5, no_spans, breaks=[0, 2, 5, 6, 7])
    assert rows_text(rows) == ["ab¦", "cd↵", "¦e¦", "f"]


def test_a_boundary_mark_in_the_stream_itself_is_drawn_as_its_code_point() -> None:
    rows, _ = layout("a¦b", 0, 20, 2, no_spans, breaks=[0, 1, 3])
    assert rows_text(rows) == ["a¦⟨U+00A6⟩b"]
    assert [(c.text, sorted(c.classes)) for c in rows[0]] == [
        ("a", []),
        ("¦", ["boundary"]),
        ("⟨U+00A6⟩", ["glyph"]),
        ("b", []),
    ]


def test_boundaries_between_every_character_still_fill_the_pane() -> None:
    text = "".join(f"line {i}\n" for i in range(200))
    anchor = text.index("line 100")
    rows, _ = layout(text, anchor, 20, 6, no_spans, breaks=range(len(text) + 1))
    assert len(rows) == 6
    assert rows_text(rows)[4] == "¦l¦i¦n¦e¦ ¦1¦0¦0¦↵"  # two thirds down, as without marks


def test_chunks_alternate_shades() -> None:
    assert chunk_spans([0, 2, 5, 9], 0, 9) == [(0, 2, "even"), (2, 5, "odd"), (5, 9, "even")]
    assert chunk_spans([0, 2, 5, 9], 3, 4) == [(2, 5, "odd")]


def test_markers_are_found_around_the_window_too() -> None:
    text = "ab <tool_call> cd </tool_call>"
    assert marker_spans(text, 5, 6) == [(3, 14, "marker")]
    assert marker_spans(text) == [(3, 14, "marker"), (18, 30, "marker")]


def test_a_step_marks_its_chunk_the_input_ahead_and_what_it_holds() -> None:
    session = open_session(SPLIT_MARKER)
    run, text = session.run, session.source.text
    view = run.view(5)  # "c": "<tool_c" received
    assert (view.offset, view.end) == (6, 7)
    spans = step_spans(run, view, text)(0, len(text))
    assert (6, 7, "current") in spans
    assert (7, 80, "ahead") in spans
    assert (0, 7, "held") in spans  # received and not emitted


def test_a_finished_step_marks_what_was_never_emitted() -> None:
    session = open_session(END_IN_PREFIX, detector=DROPS_PENDING)
    run, text = session.run, session.source.text
    run.finish_tracing()
    assert (18, 25, "lost") in step_spans(run, run.view(run.finish_row), text)(0, 25)


def test_an_emitted_block_is_coloured_by_its_event() -> None:
    session = open_session(SPLIT_MARKER)
    run, text = session.run, session.source.text
    run.finish_tracing()
    assert (0, 80, "ToolCall") in step_spans(run, run.view(36), text)(0, 80)
    assert (0, 12, "open") in step_spans(run, run.view(9), text)(0, 80)  # "<tool_call>\n"


# --- the steps pane's cells ------------------------------------------------------------------


def test_state_names_are_shortened_to_their_last_word() -> None:
    assert [short_state(s) for s in ("printing", "matching_prefix", "in_block", None)] == [
        "printing",
        "prefix",
        "block",
        "·",
    ]


def test_events_are_summarised_in_a_few_words() -> None:
    events = (
        Text("a\nb"),
        ToolCall("f", "{}", "", "x"),
        Reasoning("hm", "", "think"),
        Rejected("", "x", "y", "malformed"),
    )
    assert event_summary(events) == "'a↵b' call f think 'hm' rej malformed"


def test_a_row_shows_the_state_move_where_it_changes() -> None:
    run = open_session(SPLIT_MARKER).run
    run.finish_tracing()
    assert row_cells(run, 8) == ("●", "8", "'>'", "prefix→block", "")
    assert row_cells(run, 9) == (" ", "9", "'↵'", "block", "")
    assert row_cells(run, 35) == ("●", "35", "'>'", "block→printing", "call get_weather")
    assert row_cells(run, 36) == (" ", "fin", "finish()", "printing", "")


def test_the_events_column_is_left_out_where_it_does_not_fit() -> None:
    run = open_session(SPLIT_MARKER).run
    run.finish_tracing()
    narrow, wide = cells_width(run) + 1, cells_width(run) + 1 + EVENTS_WIDTH
    assert header_line(run, narrow) == "    # chunk    state"
    assert row_line(run, 35, narrow) == ("●", "●  35 '>'      block→printing  ", "")
    assert header_line(run, wide) == "    # chunk    state           events"
    assert row_line(run, 35, wide)[2] == "call get_weather"


def test_a_flagged_row_is_marked() -> None:
    session = judged(open_session(SPLIT_MARKER, detector=PER_CHUNK_MARKERS))
    assert row_cells(session.run, 0)[0] == "✗"


def test_rows_not_traced_yet_say_so() -> None:
    run = open_session(SPLIT_MARKER).run
    assert row_cells(run, 30)[3] == "…"


# --- the detail pane ---------------------------------------------------------------------------


def test_transitions_are_read_from_the_table() -> None:
    assert triggers("matching_prefix", "in_block") == ["open"]
    assert triggers("in_block", "printing") == ["close", "release", "too_long"]
    assert triggers("mode_x", "printing") == []


def test_a_close_step_shows_the_move_taken_not_every_one_possible() -> None:
    session = judged(open_session(SPLIT_MARKER))
    run = session.run
    text = plain(describe(run, run.view(35), reference=session.reference(), show_diff=False))
    assert "state    in_block ─close→ printing" in text


def test_a_step_that_opens_and_closes_a_block_shows_both_moves() -> None:
    chunks = ['Hi <tool_call>{"name": "f", "arguments": {}}</tool_call> ok <t', "hink>"]
    run = open_session(chunks=chunks).run
    first = plain(describe(run, run.view(0), reference=None, show_diff=False))
    assert "state    printing ─open→ in_block ─close→ printing ─prefix→ matching_prefix" in first
    second = plain(describe(run, run.view(1), reference=None, show_diff=False))
    assert "state    matching_prefix ─open→ in_block" in second


def test_a_detector_that_names_no_moves_gets_the_moves_the_table_allows() -> None:
    class Quiet(StreamDetector):  # a state without moves, as a foreign detector's
        @property
        def state(self) -> object:
            state = super().state
            return SimpleNamespace(
                fsm=state.fsm, format=state.format, block_format=state.block_format,
                pending=state.pending, block=state.block,
            )  # fmt: skip

    run = open_session(SPLIT_MARKER, detector=Quiet).run
    assert moves_between(run.view(34).after, run.view(35).after) == (
        ("close/release/too_long", "printing"),
    )
    text = plain(describe(run, run.view(35), reference=None, show_diff=False))
    assert "state    in_block ─close/release/too_long→ printing" in text
    assert "state    printing  (unchanged)" in plain(
        describe(run, run.view(36), reference=None, show_diff=False)
    )


def test_the_detail_shows_the_move_the_buffers_and_the_events() -> None:
    session = judged(open_session(SPLIT_MARKER))
    run = session.run
    text = plain(describe(run, run.view(8), reference=session.reference(), show_diff=True))
    assert "state    matching_prefix ─open→ in_block" in text
    assert "fsm      ○printing ○prefix ●block" in text
    assert "pending  '' (0)" in text
    assert "block    '<tool_call>' (11)" in text
    assert "events   none" in text
    assert "diff     vs expectation: ✓ same so far" in text


def test_the_detail_shows_a_violation_and_the_difference() -> None:
    session = judged(open_session(END_IN_PREFIX, detector=DROPS_PENDING))
    run = session.run
    finish = run.view(run.finish_row)
    text = plain(describe(run, finish, reference=session.reference(), show_diff=True))
    assert "✗        conservation: lost 7 characters at end" in text
    assert "diff     vs expectation: ✗ 7 chars never shown" in text
    assert " shown   The answer is 42.↵(end)" in text
    assert " expect  The answer is 42.↵<tool_c" in text
    without = plain(describe(run, finish, reference=session.reference(), show_diff=False))
    assert "vs expectation" not in without


def test_the_detail_of_a_detector_without_state_derives_what_it_holds() -> None:
    session = open_session(chunks=["ab", "c\n"], detector=STATELESS)
    run = session.run
    text = plain(describe(run, run.view(0), reference=None, show_diff=False))
    assert "state    none: no state attribute; stepped by its events" in text
    assert "held     'ab' (2, from raw spans)" in text


def test_the_status_line_names_file_strategy_step_and_verdict() -> None:
    session = judged(open_session(SPLIT_MARKER, detector=PER_CHUNK_MARKERS))
    line = status_text(session, session.run, 8).plain
    assert line.startswith(" split_marker_llama_server.msgpack · original 1/2 · step 8/36 · ")
    assert line.endswith("✗ 4 violations: invariance, no_leak, expected")
