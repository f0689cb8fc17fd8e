"""The debugger driven by its keys (Textual's Pilot): the step selected, the state shown,
the buffers, the verdict. Each test presses one key (or one short sequence) and reads
the panes back."""

from __future__ import annotations

import gc
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Footer
from textual.widgets._footer import FooterKey
from tui_helpers import (
    CRASHES,
    DROPS_PENDING,
    END_IN_PREFIX,
    PER_CHUNK_MARKERS,
    SPLIT_MARKER,
    STATELESS,
    run,
    settle,
)

import tcr.tui.app as tui_app
from tcr.corpus import Frame, new_header, write_recording
from tcr.tui import DebuggerApp, make_app, open_at_failure
from tcr.tui.model import Session
from tcr.tui.screens import BreakpointScreen, HelpScreen, SearchScreen
from tcr.tui.widgets import DetailPane, DetailView, StatusBar, StepsTable, StreamView
from tcr.tui.widgets.detail import LABEL
from tcr.tui.widgets.steps import cells_width

Test = Callable[[DebuggerApp, Any], Awaitable[None]]


def drive(app: DebuggerApp, test: Test, *, size: tuple[int, int] = (100, 30)) -> None:
    """Open the app headless, wait for the verdict, then run ``test(app, pilot)``."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(app)
            await pilot.pause()
            await test(app, pilot)

    run(main)


def detail(app: DebuggerApp) -> str:
    return app.query_one(DetailView).plain


def notes(app: DebuggerApp) -> list[str]:
    """Record the app's notifications from now on."""
    said: list[str] = []
    app.notify = lambda message, **_: said.append(message)  # type: ignore[method-assign]
    return said


# --- opening --------------------------------------------------------------------------


def test_opens_on_the_first_step_with_every_pane_drawn() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        assert app.row == 0
        assert "split_marker_llama_server.msgpack · original 1/2 · step 0/36" in (
            app.query_one(StatusBar).plain
        )
        assert "✓ every check passes" in app.query_one(StatusBar).plain
        assert app.query_one(StreamView).plain.startswith("<¦t¦oo¦l¦_¦c¦al¦l¦>¦↵\n¦{")
        assert app.query_one(StepsTable).cursor == 0
        assert "step     chunk 0/36 '<'" in detail(app)
        assert "state    printing ─prefix→ matching_prefix" in detail(app)
        assert "pending  '<' (1)" in detail(app)

    drive(make_app(SPLIT_MARKER), test)


# --- stepping -----------------------------------------------------------------------------


def test_n_steps_forward_one_feed_at_a_time() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press(*"nnnnnnnn")
        assert app.row == 8
        assert app.query_one(StepsTable).cursor == 8
        assert "step     chunk 8/36 '>'" in detail(app)
        assert "state    matching_prefix ─open→ in_block" in detail(app)
        assert "pending  '' (0)" in detail(app)
        assert "block    '<tool_call>' (11)" in detail(app)

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.slow
def test_p_steps_back_by_the_same_unit() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press(*"nnnnnnnn", "p")
        assert app.row == 7
        assert "state    matching_prefix  (unchanged)" in detail(app)
        assert "pending  '<tool_call' (10)" in detail(app)
        await pilot.press("p", "p")
        assert app.row == 5

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.parametrize(("forward", "back"), [("down", "up"), ("right", "left"), ("j", "k")])
@pytest.mark.slow
def test_arrows_and_vi_keys_step_like_n_and_p(forward: str, back: str) -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press(forward, forward, forward)
        assert app.row == 3
        await pilot.press(back)
        assert app.row == 2

    drive(make_app(SPLIT_MARKER), test)


def test_stepping_stops_at_both_ends() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("p")
        assert app.row == 0
        await pilot.press("G", "n")
        assert app.row == 36

    drive(make_app(SPLIT_MARKER), test)


def test_brackets_jump_between_state_changes() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("right_square_bracket")
        assert app.row == 8
        assert "state    matching_prefix ─open→ in_block" in detail(app)
        await pilot.press("right_square_bracket")
        assert app.row == 35
        assert "state    in_block ─close→ printing" in detail(app)
        assert "ToolCall get_weather" in detail(app)
        await pilot.press("left_square_bracket")
        assert app.row == 8

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.slow
def test_g_and_shift_g_go_to_the_start_and_the_finish() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("G")
        assert app.row == 36
        assert "step     finish() after 36 chunks" in detail(app)
        assert "state    printing  (unchanged)" in detail(app)
        await pilot.press("g")
        assert app.row == 0
        await pilot.press("end")
        assert app.row == 36
        await pilot.press("home")
        assert app.row == 0

    drive(make_app(SPLIT_MARKER), test)


def test_clicking_a_row_selects_its_step() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.click(StepsTable, offset=(5, 4))  # the header, then rows 0, 1, 2, 3
        assert app.row == 3

    drive(make_app(SPLIT_MARKER), test)


# --- violations ------------------------------------------------------------------------------


def test_v_lands_where_a_split_marker_starts_to_leak() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("n", "n", "v")
        assert app.row == 0
        assert "events   Text '<'" in detail(app)
        assert "✗        invariance: event 0 is Text('<tool_call>" in detail(app)
        assert "diff     vs expectation: ✗ shows more than it at char 0" in detail(app)
        assert app.query_one(StepsTable).cursor == 0

    drive(make_app(SPLIT_MARKER, detector=PER_CHUNK_MARKERS), test)


@pytest.mark.slow
def test_v_lands_on_the_finish_step_that_loses_the_held_prefix() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("v")
        assert app.row == app.active_run.finish_row == 12
        assert "step     finish() after 12 chunks" in detail(app)
        assert "state    matching_prefix ─flush→ printing" in detail(app)
        assert "events   none" in detail(app)
        assert "conservation: lost 7 characters at end: finish() never emitted '<tool_c'" in (
            detail(app)
        )
        assert app.query_one(StreamView).plain == "The¦ answer¦ is¦ 42¦.¦↵\n¦<¦t¦oo¦l¦_¦c"

    drive(make_app(END_IN_PREFIX, detector=DROPS_PENDING), test)


def test_opening_at_the_first_violation() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        assert app.row == 12

    drive(make_app(END_IN_PREFIX, detector=DROPS_PENDING, start_at_first_violation=True), test)


def test_v_when_every_check_passes_stays_and_says_so() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        said = notes(app)
        await pilot.press("n", "v")
        assert app.row == 1
        assert said == ["no violation: every check passes"]

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.slow
def test_v_before_the_oracles_are_done_jumps_when_they_are() -> None:
    release = threading.Event()
    app = make_app(END_IN_PREFIX, detector=DROPS_PENDING)
    analyse = app.session.analyse_trace

    def slow(trace: Any) -> Any:
        release.wait(30)
        return analyse(trace)

    app.session.analyse_trace = slow  # type: ignore[method-assign]

    async def main() -> None:
        async with app.run_test() as pilot:
            said = notes(app)
            await pilot.press("v")
            assert app.row == 0 and "still running" in said[0]
            release.set()
            await settle(app)
            await pilot.pause()
            assert app.row == 12

    run(main)


# --- rechunking, search, diff ------------------------------------------------------------------


@pytest.mark.slow
def test_r_reruns_under_the_next_strategy_and_keeps_the_input_received() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press(*"nnnnnnnn")
        assert app.view.end == 11
        await pilot.press("r")
        await settle(app)
        assert app.active_run.spec == "char"
        assert (app.row, app.view.end) == (10, 11)
        assert "original" not in app.query_one(StatusBar).plain
        assert "char 2/2 · step 10/80" in app.query_one(StatusBar).plain
        assert "state    matching_prefix ─open→ in_block" in detail(app)
        await pilot.press("r")
        assert (app.active_run.spec, app.row) == ("original", 8)

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.slow
def test_slash_finds_text_in_the_content_and_enter_again_finds_the_next() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("slash")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"tool", "enter")
        assert app.match == (1, 5) and app.row == 1
        await pilot.press("slash", "enter")  # the query is kept
        assert app.match == (70, 74)
        assert app.active_run.chunk_at(70) == app.row == 28

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.slow
def test_a_search_that_finds_nothing_says_so() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        said = notes(app)
        await pilot.press("slash", *"xyz", "enter")
        assert app.row == 0 and said == ["not found: xyz"]
        await pilot.press("slash", "escape")
        assert not isinstance(app.screen, SearchScreen)

    drive(make_app(SPLIT_MARKER), test)


def test_d_toggles_the_diff() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        assert "diff     vs expectation" in detail(app)
        await pilot.press("d")
        assert "vs expectation" not in detail(app)
        await pilot.press("d")
        assert "diff     vs expectation" in detail(app)

    drive(make_app(SPLIT_MARKER), test)


# --- breakpoints ---------------------------------------------------------------------------


@pytest.mark.slow
def test_b_runs_forward_until_the_chosen_state_is_entered() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("b")
        assert isinstance(app.screen, BreakpointScreen)
        await pilot.press("down", "down", "enter")  # printing, matching_prefix, in_block
        assert app.row == 8
        assert "state    matching_prefix ─open→ in_block" in detail(app)
        assert "break at state in_block" in app.query_one(StatusBar).plain
        said = notes(app)
        await pilot.press("c")
        assert app.row == 8 and said == ["state in_block is not entered again"]

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.slow
def test_c_continues_to_the_next_time_a_format_opens() -> None:
    chunks = ["a <tool_call>", '{"name": "f", "arguments": {}}</tool_call> b ', "<tool_call>", "{}"]

    async def test(app: DebuggerApp, pilot: Any) -> None:
        app.target = next(t for t in tui_app.nav.targets() if t.value == "hermes")
        await pilot.press("c")  # row 0 opened the first block; row 1 only closed it
        assert app.row == 2
        assert "format   hermes  block hermes" in detail(app)

    drive(make_app(None, chunks=chunks), test)


def test_shift_c_reverse_continues_to_the_previous_hit_of_the_breakpoint() -> None:
    chunks = ["a <tool_call>", '{"name": "f", "arguments": {}}</tool_call> b ', "<tool_call>", "{}"]

    async def test(app: DebuggerApp, pilot: Any) -> None:
        app.target = next(t for t in tui_app.nav.targets() if t.value == "in_block")
        await pilot.press("G", "C")
        assert app.row == 2
        assert "state    printing ─open→ in_block" in detail(app)
        await pilot.press("C")
        assert app.row == 0
        said = notes(app)
        await pilot.press("C")
        assert app.row == 0 and said == ["state in_block was not entered before this step"]
        await pilot.press("c")
        assert app.row == 2

    drive(make_app(None, chunks=chunks), test)


@pytest.mark.slow
def test_shift_c_without_a_breakpoint_asks_for_one_then_goes_back() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("G", "C")
        assert isinstance(app.screen, BreakpointScreen)
        await pilot.press("down", "down", "enter")  # printing, matching_prefix, in_block
        assert app.row == 8
        assert "break at state in_block" in app.query_one(StatusBar).plain

    drive(make_app(SPLIT_MARKER), test)


@pytest.mark.slow
def test_c_without_a_breakpoint_asks_for_one() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("c")
        assert isinstance(app.screen, BreakpointScreen)
        await pilot.press("escape")
        assert app.target is None and app.row == 0

    drive(make_app(SPLIT_MARKER), test)


# --- the layout at 80x24 -----------------------------------------------------------------------


def detail_on_screen(app: DebuggerApp) -> str:
    """The detail pane's lines in view, without their labels, joined without white space."""
    pane = app.query_one(DetailPane)
    top, height = round(pane.scroll_y), pane.scrollable_content_region.height
    lines = app.query_one(DetailView).lines[top : top + height]
    return "".join("".join(line[LABEL:] for line in lines).split())


@pytest.mark.parametrize(
    ("path", "detector"),
    [(SPLIT_MARKER, PER_CHUNK_MARKERS), (END_IN_PREFIX, DROPS_PENDING)],
    ids=["split-marker", "held-prefix"],
)
def test_at_80x24_every_violation_of_the_step_is_in_view(path: Path, detector: str) -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("v")
        await pilot.pause()
        shown = detail_on_screen(app)
        assert app.view.violations
        for found in app.view.violations:
            assert "".join(f"{found.check}: {found.message}".split()) in shown

    drive(make_app(path, detector=detector), test, size=(80, 24))


def test_at_80_columns_the_steps_pane_fits_its_columns_and_the_detail_gets_the_rest() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        needed = cells_width(app.active_run)
        assert needed <= app.query_one(StepsTable).size.width <= needed + 3
        assert app.query_one(DetailView).size.width >= 42

    drive(make_app(SPLIT_MARKER), test, size=(80, 24))


# --- help, footer, quit ----------------------------------------------------------------------


@pytest.mark.slow
def test_question_mark_shows_every_binding_and_closes() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True, color_system=None)
        console.print(app.screen.help)
        text = console.export_text()
        for binding in DebuggerApp.BINDINGS:
            assert binding.tooltip in text  # type: ignore[union-attr]
        assert "matching_prefix" in text and "open → in_block" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    drive(make_app(SPLIT_MARKER), test, size=(120, 60))


def test_the_footer_shows_every_key() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        footer = app.query_one(Footer)
        shown = {key.key_display for key in footer.query(FooterKey)}
        wanted = {app.get_key_display(b) for b in DebuggerApp.BINDINGS}  # type: ignore[arg-type]
        assert shown == wanted
        assert all(key.region.right <= 80 for key in footer.query(FooterKey))

    drive(make_app(SPLIT_MARKER), test, size=(80, 24))


def test_q_quits() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("q")
        assert app.return_code == 0 and not app.is_running

    drive(make_app(SPLIT_MARKER), test)


# --- any detector ---------------------------------------------------------------------------


@pytest.mark.slow
def test_a_detector_without_state_is_stepped_by_its_events() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        assert "state    none: no state attribute; stepped by its events" in detail(app)
        assert "held     'one' (3, from raw spans)" in detail(app)
        await pilot.press("right_square_bracket")
        assert app.row == 1
        assert "events   Text 'one↵'" in detail(app)
        await pilot.press("right_square_bracket")
        assert app.row == 2
        assert "ToolCall f({}) [line]" in detail(app)
        said = notes(app)
        await pilot.press("b", "enter")  # a state: this detector has none
        assert said == ["this detector has no state: break on a format instead"]

    drive(make_app(None, chunks=["one", "\nCALL f", "\nrest"], detector=STATELESS), test)


def test_a_detector_that_crashes_ends_on_a_flagged_crash_row() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("v")
        assert app.row == 1
        assert "step     crash in feed() of chunk 1" in detail(app)
        assert "ValueError: boom" in detail(app)
        await pilot.press("G")
        assert app.row == 1

    drive(make_app(None, chunks=["a\n", "boom", "c"], detector=CRASHES), test)


# --- big recordings and replay --debug ------------------------------------------------------


def test_a_recording_too_long_to_read_at_once_is_read_while_stepping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "long.msgpack"
    chunks = [f"w{i} " if i % 500 else "<tool_call>{}</tool_call>" for i in range(3000)]
    write_recording(path, new_header("chunks"), [Frame(i, c) for i, c in enumerate(chunks)])
    monkeypatch.setattr(tui_app, "READ_FOR", 0.0)
    monkeypatch.setattr(tui_app, "FIRST_SLICE", 0.0)
    app = make_app(path)
    assert not app.session.source.done

    async def main() -> None:
        async with app.run_test() as pilot:
            await pilot.press("n")
            assert app.row == 1
            await settle(app)
            await pilot.press("G")
            assert app.row == 3000
            assert "✓ every check passes" in app.query_one(StatusBar).plain
            assert gc.isenabled() and gc.get_freeze_count() > 0  # the traced run is frozen

    run(main)
    assert gc.isenabled() and gc.get_freeze_count() == 0  # handed back on exit


def test_open_at_failure_runs_the_app_at_the_first_violation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[DebuggerApp] = []
    monkeypatch.setattr(DebuggerApp, "run", lambda self, **_: started.append(self))
    open_at_failure(
        SPLIT_MARKER, detector=PER_CHUNK_MARKERS, tools=None, chunks_or_strategy=["<", "tool_call>"]
    )
    open_at_failure(SPLIT_MARKER, detector=PER_CHUNK_MARKERS, chunks_or_strategy="splits:1")
    shrunk, split = started
    assert shrunk.session.source.text == "<tool_call>"
    assert split.session.strategies == ("splits:1", "original", "char")

    async def test(app: DebuggerApp, pilot: Any) -> None:
        assert app.row == 0
        assert {v.check for v in app.view.violations} >= {"invariance"}

    drive(split, test)
    drive(shrunk, test)


def test_the_session_is_shared_by_the_command_and_the_tests() -> None:
    assert isinstance(make_app(SPLIT_MARKER).session, Session)


@pytest.mark.slow
def test_arrows_step_even_when_the_detail_overflows_and_tab_lets_them_scroll_it() -> None:
    async def test(app: DebuggerApp, pilot: Any) -> None:
        await pilot.press("v")
        pane = app.query_one(DetailPane)
        assert pane.max_scroll_y > 0  # the finish step's detail is taller than the pane
        await pilot.press("up")
        assert app.row == 11
        await pilot.press("down", "tab", "down", "down")
        assert app.row == 12 and pane.has_focus and pane.scroll_y > 0
        await pilot.press("escape", "up")
        assert not pane.has_focus and app.row == 11

    drive(make_app(END_IN_PREFIX, detector=DROPS_PENDING), test, size=(80, 24))
