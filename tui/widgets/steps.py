"""The steps pane: one row per ``feed`` and the final ``finish``.

Each row shows the chunk index, the chunk, the state before → after and the
events emitted; rows that change state stand out and rows an oracle flags are
marked ``✗``. The table is virtual: only the rows on screen are drawn, straight
from the run's flat per-step lists, so a 262,144-step run costs what a 20-step
one does. Rows not traced yet show ``…``.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall
from tcr.replay.show import visible

from ..model import Run

__all__ = [
    "StepsTable",
    "cells_width",
    "event_summary",
    "header_line",
    "row_cells",
    "row_line",
    "short_state",
]

CHUNK_WIDTH = 8
STATE_WIDTH = 15  # "prefix→printing"
EVENTS_WIDTH = 8  # narrower than this, the events column is left out (the detail has them)


def short_state(label: str | None) -> str:
    """``matching_prefix`` → ``prefix``, ``in_block`` → ``block``: the last word."""
    if label is None:
        return "·"
    word = label.rsplit("_", 1)[-1]
    return word if len(word) <= 8 else word[:7] + "…"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def event_summary(events: tuple[Event, ...]) -> str:
    """A few words per event: ``'text'``, ``call NAME``, ``think``, ``rej REASON``."""
    parts: list[str] = []
    for event in events:
        if isinstance(event, Text):
            parts.append(repr(visible(event.text)))
        elif isinstance(event, ToolCall):
            parts.append(f"call {event.name}")
        elif isinstance(event, Reasoning):
            parts.append(f"think {visible(event.text)!r}")
        elif isinstance(event, Rejected):
            parts.append(f"rej {event.reason}")
    return " ".join(parts)


def row_cells(run: Run, row: int) -> tuple[str, str, str, str, str]:
    """(flag, index, chunk, state, events) of one row, as plain strings."""
    flag = "✗" if row in run.violations else ("●" if run.changed(row) else " ")
    complete = run.complete
    index = "fin" if row == run.finish_row and complete else str(row)
    if row < len(run.chunks):
        chunk = repr(visible(run.chunks[row]))
    else:
        chunk = "finish()" if complete else "…"
    if run.crash is not None and row == run.crash.index:
        return "✗", index, chunk, "crash", run.crash.error
    if row >= len(run.steps):
        return flag, index, chunk, "…", ""
    after = run.label(row)
    if run.stateful and run.changed(row):
        state = f"{short_state(run.label_before(row))}→{short_state(after)}"
    else:
        state = short_state(after) if run.stateful else "·"
    return flag, index, chunk, state, event_summary(run.steps[row].events)


def _index_width(run: Run) -> int:
    return max(len(str(run.finish_row)), 3)


def cells_width(run: Run) -> int:
    """Cells of a row up to the end of its state column: what the pane must fit."""
    return 2 + _index_width(run) + 1 + CHUNK_WIDTH + 1 + STATE_WIDTH


def _events_fit(run: Run, width: int) -> bool:
    return width - cells_width(run) - 1 >= EVENTS_WIDTH


def header_line(run: Run, width: int) -> str:
    """The header row at ``width`` cells (``events`` only where the column fits)."""
    header = f"  {'#':>{_index_width(run)}} {'chunk':<{CHUNK_WIDTH}} {'state':<{STATE_WIDTH}}"
    return header + " events" if _events_fit(run, width) else header.rstrip()


def row_line(run: Run, row: int, width: int) -> tuple[str, str, str]:
    """(flag, the row up to its state, its events) at ``width`` cells; the events are
    left out where their column does not fit."""
    flag, index, chunk, state, summary = row_cells(run, row)
    line = (
        f"{flag} {index:>{_index_width(run)}} {_clip(chunk, CHUNK_WIDTH):<{CHUNK_WIDTH}} "
        f"{_clip(state, STATE_WIDTH):<{STATE_WIDTH}} "
    )
    return flag, line, summary if _events_fit(run, width) else ""


class StepsTable(Widget, can_focus=False):
    """A virtual table of a run's steps with a cursor on the selected one."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "steps--header",
        "steps--cursor",
        "steps--changed",
        "steps--violation",
        "steps--untraced",
        "steps--events",
    }

    class Selected(Message):
        """A row was clicked."""

        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run: Run | None = None
        self.cursor = 0
        self.top = 0

    def show(self, run: Run, cursor: int) -> None:
        """Select ``cursor``, scrolling only as far as needed to keep it in view."""
        if run is not self.run:
            self.top = 0
        self.run, self.cursor = run, cursor
        visible_rows = max(self.size.height - 1, 1)
        if cursor < self.top or cursor >= self.top + visible_rows:
            far = cursor < self.top - visible_rows or cursor >= self.top + 2 * visible_rows
            if far:
                self.top = max(cursor - visible_rows // 3, 0)
            elif cursor < self.top:
                self.top = cursor
            else:
                self.top = cursor - visible_rows + 1
        self.refresh()

    def on_resize(self) -> None:
        if self.run is not None:
            self.show(self.run, self.cursor)

    # -- drawing ---------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        run = self.run
        if run is None:
            return Strip.blank(width, base)
        if y == 0:
            style = base + self.get_component_rich_style("steps--header", partial=True)
            header = header_line(run, width)
            return Strip([Segment(header, style)]).adjust_cell_length(width, style)
        row = self.top + y - 1
        if row >= run.rows:
            return Strip.blank(width, base)
        flag, cells, summary = row_line(run, row, width)
        style = base
        if row >= run.traced:
            style += self.get_component_rich_style("steps--untraced", partial=True)
        if flag == "●":
            style += self.get_component_rich_style("steps--changed", partial=True)
        if flag == "✗":
            style += self.get_component_rich_style("steps--violation", partial=True)
        if row == self.cursor:
            style += self.get_component_rich_style("steps--cursor", partial=True)
        events_style: Style = style + self.get_component_rich_style("steps--events", partial=True)
        if row == self.cursor or flag == "✗":
            events_style = style
        segments = [Segment(cells, style), Segment(summary, events_style)]
        return Strip(segments).crop(0, width).adjust_cell_length(width, style)

    # -- mouse -----------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        if self.run is not None and event.y >= 1:
            row = self.top + event.y - 1
            if row < self.run.rows:
                self.post_message(self.Selected(row))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        if self.run is not None:
            self.top = min(self.top + 3, max(self.run.rows - 1, 0))
            self.refresh()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.top = max(self.top - 3, 0)
        self.refresh()
