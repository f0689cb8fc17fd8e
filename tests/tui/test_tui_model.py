"""The debugger's model, without Textual: sources, runs, per-step data, verdicts, diffs."""

from __future__ import annotations

from pathlib import Path

import pytest
from crashing_detectors import hangs_on_a_call
from tui_helpers import (
    CRASHES,
    DROPS_PENDING,
    END_IN_PREFIX,
    PER_CHUNK_MARKERS,
    SPLIT_MARKER,
    STATELESS,
    crashing_detector,
    stateless_detector,
)

from tcr.corpus import Frame, new_header, read_recording, write_expectation, write_recording
from tcr.detector.broken import per_chunk_markers
from tcr.detector.core import StreamDetector
from tcr.detector.events import Text
from tcr.errors import TcrError
from tcr.stream import decode
from tcr.trace import run_trace
from tcr.tui.diff import Reference, common_prefix_length, diff_at, reference_for
from tcr.tui.model import (
    Session,
    check_strategy,
    load_source,
    open_session,
    source_from_chunks,
    state_label,
)


def judged(session: Session) -> Session:
    session.run.apply(session.analyse(session.run))
    return session


def chunks_recording(path: Path, chunks: list[str], expect: str | None = None) -> Path:
    write_recording(path, new_header("chunks"), [Frame(i, c) for i, c in enumerate(chunks)])
    if expect is not None:
        write_expectation(path, {"text": expect})
    return path


# --- the trace is run_trace's, one slice at a time ------------------------------------


@pytest.mark.parametrize(
    ("factory", "chunks"),
    [
        (StreamDetector, ["Hi <", "tool_call>", '{"name": "f", "arguments": {}}', "</tool_call>"]),
        (per_chunk_markers, list("ab <tool_call>{}</tool_call>")),
        (stateless_detector, ["one\nCA", "LL f\nrest"]),
        (crashing_detector, ["one\n", "boom", "never fed"]),
    ],
)
def test_incremental_trace_equals_run_trace(factory: object, chunks: list[str]) -> None:
    session = open_session(chunks=chunks, detector=factory)  # type: ignore[arg-type]
    run = session.run
    while not run.advance(steps=1):
        pass
    assert run.trace() == run_trace(factory(), chunks)  # type: ignore[operator]


def test_a_detector_that_raises_ends_the_run_on_a_crash_row() -> None:
    run = open_session(chunks=["a\n", "boom", "c"], detector=CRASHES).run
    run.finish_tracing()
    assert run.rows == 2
    view = run.view(1)
    assert view.crash == "ValueError: boom"
    assert view.chunk == "boom"


# --- per-step data -----------------------------------------------------------------------


def test_each_step_knows_the_state_before_and_after() -> None:
    run = open_session(SPLIT_MARKER).run
    view = run.view(8)  # ">" completes "<tool_call>"
    assert view.before is not None and view.after is not None
    assert (view.before.label, view.after.label) == ("matching_prefix", "in_block")
    assert view.before.pending == "<tool_call"
    assert view.after.block == "<tool_call>"
    assert view.after.block_format == "hermes"


def test_rows_that_change_state_are_the_fsm_moves() -> None:
    run = open_session(SPLIT_MARKER).run
    run.finish_tracing()
    assert run.changes == [0, 8, 35]  # printing→prefix, prefix→block, block→printing
    assert run.changed(8) and not run.changed(9)


def test_a_detector_without_state_changes_where_it_emits() -> None:
    run = open_session(chunks=["one", "\nCALL f", "\nrest"], detector=STATELESS).run
    run.finish_tracing()
    assert not run.stateful
    assert run.changes == [1, 2, 3]
    view = run.view(0)
    assert view.before is None and view.after is None
    assert run.held_text(view) == "one"  # held back, from the raw spans


def test_shown_so_far_and_emitted_so_far_grow_per_step() -> None:
    run = open_session(END_IN_PREFIX).run
    run.finish_tracing()
    assert run.shown == "The answer is 42.\n<tool_c"
    at_prefix = run.view(8)  # "oo": "<too" held
    assert at_prefix.shown_length == len("The answer is 42.\n")
    assert at_prefix.held == len("<too")


def test_emitted_blocks_are_located_in_the_input() -> None:
    run = open_session(SPLIT_MARKER).run
    run.finish_tracing()
    assert run.blocks == [(0, 80, "ToolCall")]


# --- verdicts ------------------------------------------------------------------------------


def test_violations_flag_the_steps_they_name() -> None:
    session = judged(open_session(SPLIT_MARKER, detector=PER_CHUNK_MARKERS))
    run = session.run
    assert run.violation_rows == [0, 8, 36]
    assert {v.check for v in run.view(8).violations} == {"no_leak"}


def test_the_reference_detector_passes_on_its_regression() -> None:
    session = judged(open_session(SPLIT_MARKER))
    assert session.run.verdict is not None and session.run.verdict.ok


def test_lost_bytes_are_flagged_on_the_finish_step() -> None:
    session = judged(open_session(END_IN_PREFIX, detector=DROPS_PENDING))
    run = session.run
    finish = run.view(run.finish_row)
    assert finish.is_finish
    assert [v.check for v in finish.violations] == ["conservation", "expected"]
    assert "lost 7 characters" in finish.violations[0].message


# --- the source, read incrementally --------------------------------------------------------


def test_a_recording_is_read_as_far_as_the_steps_need(tmp_path: Path) -> None:
    chunks = [f"word{i} " for i in range(2000)]
    path = chunks_recording(tmp_path / "long.msgpack", chunks)
    source = load_source(path, seconds=0)
    assert not source.done and 0 < len(source.chunks) < len(chunks)
    session = open_session(path, read_for=0)
    run = session.run
    view = run.view(1500)
    assert view.row == 1500 and view.chunk == "word1500 "
    assert not run.complete
    assert run.advance() is False  # the finish() step waits for the rest
    run.finish_tracing()
    assert run.done and run.complete and run.rows == 2001
    assert session.source.text == decode(read_recording(path)).text


def test_a_recording_cut_short_is_refused_while_reading_at_open(tmp_path: Path) -> None:
    path = tmp_path / "bad.msgpack"
    write_recording(path, new_header("sse"), [Frame(0, b"data: {not json}\n\n")])
    with pytest.raises(TcrError, match="frame 0"):
        open_session(path)


def test_a_defect_found_later_ends_the_content_and_is_kept(tmp_path: Path) -> None:
    good = [
        f'data: {{"choices":[{{"delta":{{"content":"w{i} "}}}}]}}\n\n'.encode() for i in range(300)
    ]
    path = tmp_path / "late.msgpack"
    write_recording(
        path, new_header("sse"), [Frame(i, d) for i, d in enumerate([*good, b"data: {x\n\n"])]
    )
    source = load_source(path, seconds=0)
    assert not source.done
    source.load_all()
    assert source.done and source.error is not None and "frame 300" in source.error
    assert len(source.chunks) == 300


# --- strategies ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("exhaustive", "makes many chunkings"),
        ("boundary", "makes many chunkings"),
        ("bytes:4", "transport bytes"),
        ("sideways", "unknown strategy"),
    ],
)
def test_strategies_that_are_not_one_content_chunking_are_refused(spec: str, message: str) -> None:
    with pytest.raises(TcrError, match=message):
        check_strategy(spec)


def test_splits_outside_the_text_are_refused_at_open() -> None:
    with pytest.raises(TcrError, match="not inside"):
        open_session(SPLIT_MARKER, rechunk=["splits:5000"])


def test_strategies_are_canonical_and_unique() -> None:
    session = open_session(SPLIT_MARKER, rechunk=["original", "random", "random:8", "char"])
    assert session.strategies == ("original", "random:8", "char")


def test_cycling_makes_each_run_once() -> None:
    session = open_session(SPLIT_MARKER, rechunk=["original", "char"])
    first = session.run
    assert session.cycle().spec == "char"
    assert len(session.run.chunks) == 80
    assert session.cycle() is first


def test_the_same_input_is_found_after_a_rechunk() -> None:
    session = open_session(SPLIT_MARKER, rechunk=["original", "char"])
    received = session.run.view(8).end  # 11 characters: "<tool_call>"
    char = session.cycle()
    assert char.row_for_received(received) == 10
    assert char.view(10).end == received
    assert char.row_for_received(0) == 0
    assert char.row_for_received(received, finish=True) == char.finish_row


# --- opening ---------------------------------------------------------------------------


def test_given_chunks_of_the_recorded_text_become_the_first_strategy() -> None:
    session = open_session(SPLIT_MARKER, chunks=["<", "tool_call>\n", SPLIT_MARKER_REST])
    assert session.strategies[0] == "splits:1,12"
    assert session.source.expect is not None  # same text: the expectation still applies


def test_given_chunks_of_another_text_are_the_text_under_test() -> None:
    session = open_session(SPLIT_MARKER, chunks=["<", "tool_call>"])
    assert session.strategies[0] == "original"
    assert session.source.text == "<tool_call>"
    assert session.source.expect is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"path": "missing.msgpack"}, "missing.msgpack"),
        ({"path": SPLIT_MARKER, "detector": "nope"}, "expected package.module:factory"),
        ({"path": SPLIT_MARKER, "detector": "tcr.nowhere:f"}, "cannot import"),
        (
            {"path": SPLIT_MARKER, "detector": "crashing_detectors:factory_raises"},
            "factory_raises raised",
        ),
        ({"path": None}, "nothing to open"),
    ],
)
def test_bad_input_raises_tcr_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(TcrError, match=message):
        open_session(**kwargs)  # type: ignore[arg-type]


def test_a_directory_is_not_a_recording(tmp_path: Path) -> None:
    with pytest.raises(TcrError, match="is a directory"):
        open_session(tmp_path)


def test_given_chunks_must_be_text() -> None:
    with pytest.raises(TcrError, match="chunk 1 is bytes"):
        source_from_chunks(["a", b"b"])  # type: ignore[list-item]


def test_a_foreign_state_is_named_by_its_mode() -> None:
    class State:
        mode = "in_block"

    assert state_label(State()) == "in_block"
    assert state_label(("a", 1)) == "('a', 1)"


# --- what should have been shown -----------------------------------------------------------


def test_the_whole_run_maps_input_to_what_it_shows() -> None:
    whole = run_trace(
        StreamDetector(), ['Hi <tool_call>{"name": "f", "arguments": {}}</tool_call> ok']
    )
    reference = reference_for(None, whole)
    assert reference is not None and reference.name == "whole run" and reference.mapped
    assert reference.text == "Hi  ok"
    assert reference.so_far(2) == 2
    assert reference.so_far(10) == 3  # inside the block: nothing more until it closes
    assert reference.so_far(len(whole.input)) == 6


def test_an_expectation_is_the_reference_when_there_is_one(tmp_path: Path) -> None:
    path = chunks_recording(tmp_path / "x.msgpack", ["ab", "c"], expect="abc")
    session = open_session(path)
    reference = session.reference()
    assert reference is not None and reference.name == "expectation" and reference.mapped


@pytest.mark.parametrize(
    ("shown", "received", "final", "status", "at", "behind"),
    [
        ("He", 2, False, "same", None, 0),
        ("H", 2, False, "behind", None, 1),
        ("Hello", 5, True, "same", None, 0),
        ("Hel", 5, True, "missing", None, 2),
        ("Hex", 3, False, "differs", 2, 0),
        ("Hello!", 5, True, "extra", 5, 0),
    ],
)
def test_diff_statuses(
    shown: str, received: int, final: bool, status: str, at: int | None, behind: int
) -> None:
    reference = reference_for(None, run_trace(StreamDetector(), ["Hello"]))
    assert reference is not None
    diff = diff_at(reference, shown, received, final=final)
    assert (diff.status, diff.at, diff.behind) == (status, at, behind)


def test_without_a_mapping_only_a_prefix_is_checked() -> None:
    diff = diff_at(Reference("expectation", "abc"), "ab", 1, final=False)
    assert diff.status == "same" and diff.expected_so_far is None


@pytest.mark.parametrize(
    ("a", "b"),
    [("", ""), ("abc", "abc"), ("abcd", "abxd"), ("ab", "abc"), ("x" * 9999 + "y", "x" * 10000)],
)
def test_common_prefix_length(a: str, b: str) -> None:
    expected = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    assert common_prefix_length(a, b) == expected


def test_the_detector_keeps_text_it_was_given() -> None:
    assert isinstance(open_session(chunks=["x"]).run.view(0).events[0], Text)


SPLIT_MARKER_REST = decode(read_recording(SPLIT_MARKER)).text[12:]


@pytest.mark.slow
def test_a_detector_over_the_time_limit_ends_the_run_on_a_timed_out_crash_row() -> None:
    chunks = ["Hi ", "<tool_call>", '{"name": "f", "arguments": {}}</tool_call>']
    session = open_session(chunks=chunks, detector=hangs_on_a_call, timeout=0.1)
    run = session.run
    run.finish_tracing()
    assert run.crash is not None and run.crash.timed_out
    assert run.view(1).crash == "took longer than 0.1 s"
    (violation,) = session.analyse(run).violations
    assert violation.check == "crash"
    assert violation.message == "the detector took longer than 0.1 s in feed() of chunk 1"
