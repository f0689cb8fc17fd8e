"""The debugger's screen and keys, and the factory shared by ``tcr tui`` and the tests.

:func:`make_app` validates everything before the app exists (bad input raises
``TcrError``, so the command can fail with one line and exit code 2). The app
shows the first steps at once; the rest of the run is traced in slices between
key presses and the oracles then run in a worker thread, so a 1 MB recording
opens as fast as a small one.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Footer

from tcr.detector.loader import DetectorSpec, Factory
from tcr.errors import TcrError
from tcr.oracle import Verdict
from tcr.time_limit import DEFAULT_TIMEOUT
from tcr.trace import describe_error

from . import navigation as nav
from .model import Run, Session, StepView, open_session
from .navigation import Target
from .screens import BreakpointScreen, HelpScreen, SearchScreen
from .widgets import DetailPane, DetailView, StatusBar, StepsTable, StreamView
from .widgets.stream import step_spans

__all__ = ["DebuggerApp", "make_app", "open_at_failure"]

READ_FOR = 0.15  # seconds of reading the recording before the app starts
FIRST_SLICE = 0.03  # seconds of tracing before the first screen
SLICE = 0.003  # seconds of reading or tracing between two looks at the keyboard
STATUS_EVERY = 0.25  # seconds between progress updates while tracing
TYPING = 0.3  # seconds after a key press during which background work yields longer
YIELD_TYPING = 0.004  # ...this long between slices, so the key's redraw comes first
# A traced run of this many steps holds millions of objects: a full garbage
# collection over them takes a quarter of a second, which a key press would feel.
BIG_RUN = 50_000

_STEP = Binding.Group("step", compact=True)
_CHANGE = Binding.Group("change", compact=True)
_ENDS = Binding.Group("ends", compact=True)
_BREAK = Binding.Group("break", compact=True)


class DebuggerApp(App[None]):
    """Step a detector through one recording, chunk by chunk."""

    CSS_PATH = "tcr.tcss"
    TITLE = "tcr tui"
    ENABLE_COMMAND_PALETTE = False
    AUTO_FOCUS = None  # the arrows step; tab focuses the detail pane to scroll it

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,down,j,right", "next_step", "next", key_display="n", group=_STEP,
                tooltip="Next step: the next feed(), or the final finish()"),
        Binding("p,up,k,left", "previous_step", "prev", key_display="p", group=_STEP,
                tooltip="Previous step (the same unit as next)"),
        Binding("right_square_bracket", "next_change", "next change", key_display="]",
                group=_CHANGE, tooltip="Next step that changes the FSM state or block format"
                " (a detector without state: that emits events)"),
        Binding("left_square_bracket", "previous_change", "prev change", key_display="[",
                group=_CHANGE, tooltip="Previous step that changes the state"),
        Binding("v", "first_violation", "fail",
                tooltip="Jump to the first step an oracle flags"),
        Binding("g,home", "first_step", "start", key_display="g", group=_ENDS,
                tooltip="First step"),
        Binding("G,end", "last_step", "end", key_display="G", group=_ENDS,
                tooltip="Last step: finish() (traces the whole run)"),
        Binding("r", "rechunk", "rechunk",
                tooltip="Next rechunking strategy: re-runs, keeps the input received so far"),
        Binding("slash", "search", "find", key_display="/",
                tooltip="Search the content; enter again finds the next match"),
        Binding("d", "toggle_diff", "diff",
                tooltip="Show or hide what was shown against what should have been"),
        Binding("b", "breakpoint", "break", group=_BREAK,
                tooltip="Breakpoint: run forward until the FSM enters a state or a format"),
        Binding("c", "continue", "cont", group=_BREAK,
                tooltip="Continue to the next hit of the breakpoint"),
        Binding("C", "reverse_continue", "back", group=_BREAK,
                tooltip="Reverse-continue to the previous hit of the breakpoint (as rr's)"),
        Binding("question_mark", "help", "help", key_display="?", tooltip="This help"),
        Binding("q", "quit", "quit", tooltip="Quit"),
    ]  # fmt: skip

    def __init__(self, session: Session, *, start_at_first_violation: bool = False) -> None:
        super().__init__()
        self.session = session
        self.row = 0
        self.show_diff = True
        self.target: Target | None = None
        self.query_text = ""
        self.match: tuple[int, int] | None = None
        self._jump_to_violation = start_at_first_violation
        self._analysing: set[int] = set()
        self._last_status = 0.0
        self._frozen = False
        self._gc_paused = False
        self._working: set[int] = set()
        self._last_key = 0.0

    # -- layout ------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Vertical(id="stream-pane") as stream:
            stream.border_title = "Stream"
            yield StreamView(id="stream")
        with Horizontal(id="lower"):
            with Vertical(id="steps-pane") as steps:
                steps.border_title = "Steps"
                yield StepsTable(id="steps")
            with DetailPane(id="detail-pane") as detail:
                detail.border_title = "Detail"
                yield DetailView(id="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        # Kept, not queried: a modal screen on top would hide them from query_one.
        self._status = self.query_one(StatusBar)
        self._stream = self.query_one(StreamView)
        self._stream_pane = self.query_one("#stream-pane")
        self._steps = self.query_one(StepsTable)
        self._steps_pane = self.query_one("#steps-pane")
        self._detail = self.query_one(DetailView)
        run = self.session.run
        run.advance(seconds=FIRST_SLICE)
        self.select(0)
        self._start(run)

    def on_unmount(self) -> None:
        if self._gc_paused:
            gc.enable()
            self._gc_paused = False
        if self._frozen:  # give the frozen objects back to the collector
            gc.unfreeze()
            self._frozen = False

    # -- state -------------------------------------------------------------------

    @property
    def active_run(self) -> Run:
        """The run of the current rechunking strategy."""
        return self.session.run

    @property
    def view(self) -> StepView:
        return self.active_run.view(self.row)

    def select(self, row: int) -> None:
        """Make ``row`` the current step and redraw every pane for it."""
        run = self.active_run
        view = run.view(row)
        self.row = view.row
        if self.match is not None and not view.offset <= self.match[0] <= view.end:
            self.match = None
        self._draw(run, view)

    def _draw(self, run: Run, view: StepView) -> None:
        if not self._alive():
            return
        anchor = view.end - 1 if view.end > view.offset else view.offset
        text = self.session.source.text
        self._stream.show(text, anchor, step_spans(run, view, text, self.match), run.starts)
        self._subtitle(self._stream_pane, f"{run.spec} · {run.length} chars")
        self._steps.show(run, view.row)
        self._subtitle(self._steps_pane, f"{run.rows} steps")
        self._detail.show(
            run, view, reference=self.session.cached_reference, show_diff=self.show_diff
        )
        self._draw_status()

    def _alive(self) -> bool:
        """Whether the main screen's widgets are there to draw on (not while closing)."""
        status = self._status
        return status.is_mounted and status.is_attached and status.display

    @staticmethod
    def _subtitle(pane: Widget, text: str) -> None:
        if str(pane.border_subtitle) != text:  # redrawing a border costs as much as a pane
            pane.border_subtitle = text

    def _draw_status(self) -> None:
        if not self._alive():
            return
        target = None if self.target is None else str(self.target)
        self._status.show(self.session, self.active_run, self.row, target=target)

    # -- background work: tracing in slices, then the oracles in a thread -------------

    def _start(self, run: Run) -> None:
        if run.done:
            self._analyse(run)
        else:
            self.run_worker(self._trace(run), group="trace", exclusive=True)

    async def _trace(self, run: Run) -> None:
        big = not self.session.source.done or run.rows > BIG_RUN  # small files read at once
        self._busy(run, big=big)
        try:
            await self._trace_slices(run)  # ends in _analyse, whose result ends in _idle
        except asyncio.CancelledError:  # another strategy took over; this run waits
            self._idle(run)
            raise

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self._last_key = time.perf_counter()
        await super().on_event(event)

    async def _yield(self) -> None:
        """Between two slices of background work. A key travels through several
        tasks before it redraws the screen: right after one, give them room."""
        typing = time.perf_counter() - self._last_key < TYPING
        await asyncio.sleep(YIELD_TYPING if typing else 0)

    def _busy(self, run: Run, *, big: bool = False) -> None:
        """A run entered background work. A big one holds millions of objects, and a
        full garbage collection over them would stall the keys for a quarter of a
        second: collections pause until the work is done (see ``_idle``)."""
        if big and gc.isenabled() and not self._gc_paused:
            gc.disable()
            self._gc_paused = True
        self._working.add(id(run))

    def _idle(self, run: Run) -> None:
        """A run's background work ended. When none is left, what is alive is frozen
        out of later collections (handed back on exit) and collections resume; no
        full collection now, it would be the very stall this avoids."""
        self._working.discard(id(run))
        if not self._working and self._gc_paused:
            gc.freeze()
            gc.enable()
            self._gc_paused = False
            self._frozen = True

    async def _trace_slices(self, run: Run) -> None:
        source = self.session.source
        while True:
            if not source.done:
                if source.load(seconds=SLICE) and source.error is not None:
                    self.notify(f"read failed: {source.error}", severity="error", timeout=10)
                await self._yield()
            if run.advance(seconds=SLICE):
                break
            now = time.perf_counter()
            if now - self._last_status > STATUS_EVERY and run is self.active_run:
                self._last_status = now
                self._draw_status()
                self._steps.refresh()
            await self._yield()
        if run is self.active_run:
            self.select(self.row)
        self._analyse(run)

    def _analyse(self, run: Run) -> None:
        if id(run) in self._analysing:
            return
        if run.verdict is not None or run.analysis_error is not None:
            self._idle(run)
            return
        self._analysing.add(id(run))
        trace = run.trace()
        session = self.session
        session.source.text  # noqa: B018  (joined here: the worker thread only reads it)

        def work() -> None:
            try:
                result: Verdict | str = session.analyse_trace(trace)
                session.reference()
            except TcrError as error:  # e.g. an expectation with unknown keys
                result = str(error)
            except Exception as error:  # an oracle's own bug: shown, not a crash of the app
                result = f"an oracle raised {describe_error(error)}"
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self._analysed, run, result)

        self.run_worker(work, group="analysis", thread=True)

    def _analysed(self, run: Run, result: Verdict | str) -> None:
        self._analysing.discard(id(run))
        self._idle(run)
        if isinstance(result, str):
            run.analysis_error = result
        else:
            run.apply(result)
        if run is not self.active_run:
            return
        if self._jump_to_violation:
            self._jump_to_violation = False
            self.action_first_violation()
        else:
            self.select(self.row)

    async def wait_for_verdict(self, timeout: float = 60.0) -> None:
        """Until the current run is traced and judged (tests and benchmarks await it)."""
        deadline = time.perf_counter() + timeout
        while self.active_run.verdict is None and self.active_run.analysis_error is None:
            if time.perf_counter() > deadline:
                raise TimeoutError("the oracles did not finish")
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)

    # -- actions -----------------------------------------------------------------

    def on_steps_table_selected(self, message: StepsTable.Selected) -> None:
        self.select(message.row)

    def action_next_step(self) -> None:
        self.select(nav.next_step(self.active_run, self.row))

    def action_previous_step(self) -> None:
        self.select(nav.previous_step(self.active_run, self.row))

    def action_next_change(self) -> None:
        self._go(nav.next_change(self.active_run, self.row), "no later state change")

    def action_previous_change(self) -> None:
        self._go(nav.previous_change(self.active_run, self.row), "no earlier state change")

    def action_first_step(self) -> None:
        self.select(0)

    def action_last_step(self) -> None:
        self.select(nav.last_step(self.active_run))

    def action_first_violation(self) -> None:
        run = self.active_run
        if run.verdict is None and run.analysis_error is None:
            self._jump_to_violation = True
            self.notify("the oracles are still running: jumping when they are done")
            return
        self._go(nav.first_violation(run), "no violation: every check passes")

    def action_rechunk(self) -> None:
        if len(self.session.strategies) < 2:
            self.notify("one strategy only: give tcr tui several --rechunk")
            return
        view = self.view
        run = self.session.cycle()
        self.match = None
        self.select(run.row_for_received(view.end, finish=view.is_finish))
        self._start(run)

    def action_toggle_diff(self) -> None:
        self.show_diff = not self.show_diff
        self.select(self.row)

    def action_search(self) -> None:
        self.push_screen(SearchScreen(self.query_text), self._searched)

    def _searched(self, query: str | None) -> None:
        if not query:
            return
        view = self.view
        start = view.offset
        if query == self.query_text and self.match is not None:
            start = self.match[0] + 1
        self.query_text = query
        self.session.source.load_all()  # the search covers all of it
        found = nav.find(self.session.source.text, query, start)
        if found is None:
            self.notify(f"not found: {query}", severity="warning")
            return
        self.match = found
        row = self.active_run.chunk_at(found[0])
        self.select(row)

    def action_breakpoint(self) -> None:
        self._ask_for_target(then=self.action_continue)

    def _ask_for_target(self, *, then: Callable[[], None]) -> None:
        """Pick a breakpoint, then run to it (``then``); escape keeps the old one."""

        def chosen(target: Target | None) -> None:
            if target is not None:
                self.target = target
                then()

        self.push_screen(BreakpointScreen(nav.targets(), self.target), chosen)

    def action_continue(self) -> None:
        self._continue(nav.run_to, "is not entered again", again=self.action_continue)

    def action_reverse_continue(self) -> None:
        self._continue(
            nav.run_back, "was not entered before this step", again=self.action_reverse_continue
        )

    def _continue(
        self,
        search: Callable[[Run, int, Target], int | None],
        otherwise: str,
        *,
        again: Callable[[], None],
    ) -> None:
        """To the row ``search`` finds for the breakpoint (asked for first if none is set)."""
        if self.target is None:
            self._ask_for_target(then=again)
            return
        if self.target.kind == "state" and not self.active_run.stateful:
            self.notify("this detector has no state: break on a format instead", severity="warning")
            return
        self._go(search(self.active_run, self.row, self.target), f"{self.target} {otherwise}")

    def action_help(self) -> None:
        self.push_screen(HelpScreen([b for b in self.BINDINGS if isinstance(b, Binding)]))

    def _go(self, row: int | None, otherwise: str) -> None:
        if row is None:
            self.notify(otherwise)
            self._draw_status()
        else:
            self.select(row)


def make_app(
    path: str | Path | None,
    *,
    detector: str | Factory | DetectorSpec | None = None,
    rechunk: str | Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
    start_at_first_violation: bool = False,
    seed: int = 0,
    chunks: Sequence[str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> DebuggerApp:
    """The debugger for one recording (or given ``chunks``); bad input raises ``TcrError``.

    ``rechunk``: the strategies ``r`` cycles through (default ``original`` then
    ``char``); ``tools`` overrides the recording's declared tools; ``timeout``: seconds a
    run of the message may take (``open_session``).
    """
    session = open_session(
        path,
        chunks=chunks,
        detector=detector,
        tools=tools,
        rechunk=rechunk,
        seed=seed,
        read_for=READ_FOR,
        timeout=timeout,
    )
    return DebuggerApp(session, start_at_first_violation=start_at_first_violation)


def open_at_failure(
    path: str | Path,
    *,
    detector: str | Factory | DetectorSpec | None = None,
    tools: Sequence[str] | None = None,
    chunks_or_strategy: str | Sequence[str] = "original",
    timeout: float | None = DEFAULT_TIMEOUT,
) -> None:
    """Run the debugger positioned at the first violation (``tcr replay --debug``).

    ``chunks_or_strategy`` is a strategy spec (``"splits:12,40"``) or the failing
    chunks themselves (a shrunk text is stepped through as it is).
    """
    if isinstance(chunks_or_strategy, str):
        strategies = [chunks_or_strategy, "original", "char"]
        app = make_app(
            path,
            detector=detector,
            tools=tools,
            rechunk=strategies,
            start_at_first_violation=True,
            timeout=timeout,
        )
    else:
        app = make_app(
            path,
            detector=detector,
            tools=tools,
            chunks=list(chunks_or_strategy),
            start_at_first_violation=True,
            timeout=timeout,
        )
    app.run()
