"""The detail pane: everything about the selected step.

The violations flagged at this step (first, so they are in view at 80x24), the
FSM move (drawn from ``tcr.detector.machine.TRANSITIONS``), the formats, the
pending and block buffers, the events emitted, what the user has been shown so
far and, with the diff on, how that differs from what should have been shown.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import ClassVar

from rich.console import Console
from rich.style import Style
from rich.text import Text as RichText
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.formats import BY_ID
from tcr.detector.machine import TRANSITIONS
from tcr.replay.show import visible

from ..diff import Diff, Reference, diff_at
from ..model import Run, StepView, moves_between

__all__ = ["DetailPane", "DetailView", "describe", "plain", "wrap_rows"]

LABEL = 9  # width of the label column (plain text)
TAIL = 240  # characters of a long buffer or of the shown text kept in view
CONTEXT = 24  # characters either side of where a diff starts

StyleOf = Callable[[str], Style]


def _tail(text: str, limit: int = TAIL) -> str:
    shown = visible(text[-limit:])
    return ("…" if len(text) > limit else "") + shown


def _event(event: Event) -> str:
    if isinstance(event, Text):
        return f"Text {visible(event.text)!r}"
    if isinstance(event, ToolCall):
        fmt = f" [{event.format}]" if event.format else ""
        return f"ToolCall {event.name}({visible(event.arguments)}){fmt}"
    if isinstance(event, Reasoning):
        return f"Reasoning {_tail(event.text, 120)!r}"
    assert isinstance(event, Rejected)
    return f"Rejected {event.reason}: shows {_tail(event.content, 120)!r}"


Row = tuple[str, RichText]  # a label and its value


class _Rows:
    def __init__(self, style: StyleOf) -> None:
        self.rows: list[Row] = []
        self.style = style

    def add(self, label: str, *parts: tuple[str, str] | str) -> RichText:
        value = RichText()
        for part in parts:
            if isinstance(part, str):
                value.append(part)
            else:
                value.append(part[0], self.style(part[1]))
        self.rows.append((label, value))
        return value


def describe(
    run: Run,
    view: StepView,
    *,
    reference: Reference | None,
    show_diff: bool,
    style: StyleOf = lambda _: Style(),
) -> list[Row]:
    """The detail pane's rows for one step (``style`` maps a role to a style)."""
    rows = _Rows(style)
    _title(rows, run, view)
    _violations(rows, view)  # first: in view however small the terminal
    _state(rows, run, view)
    _events(rows, view)
    shown = run.shown[: view.shown_length]
    rows.add("shown", (f"{len(shown)} chars ", "dim"), _tail(shown) if shown else "")
    if show_diff:
        _diff(rows, view, shown, reference)
    return rows.rows


def plain(rows: list[Row]) -> str:
    """The rows as text, one per line (what tests read)."""
    return "\n".join(f"{label:<{LABEL}}{value.plain}".rstrip() for label, value in rows)


def _title(rows: _Rows, run: Run, view: StepView) -> None:
    total = len(run.chunks)
    if view.crash is not None:
        where = "finish()" if view.chunk is None else f"feed() of chunk {view.row}"
        rows.add("step", (f"crash in {where}", "bad"))
        rows.add("", (view.crash, "bad"))
    elif view.is_finish:
        rows.add("step", (f"finish() after {total} chunks", "title"))
    else:
        rows.add(
            "step",
            (f"chunk {view.row}/{total}", "title"),
            f" {visible(view.chunk or '')!r}",
        )
    more = "" if run.complete else "+ (still reading)"
    rows.add("input", (f"{view.offset}..{view.end} of {run.length}{more}", "dim"))


def _state(rows: _Rows, run: Run, view: StepView) -> None:
    before, after = view.before, view.after
    if not run.stateful:
        rows.add("state", ("none: no state attribute; stepped by its events", "dim"))
        held = run.held_text(view)
        if held is None:
            rows.add("held", ("unknown (events carry no raw spans)", "dim"))
        else:
            rows.add("held", f"{_tail(held)!r} ({len(held)}, from raw spans)")
        return
    if after is None:
        return
    moves = moves_between(before, after)
    if before is not None and moves:  # moves_between says none without a before
        line = rows.add("state", before.label)
        for trigger, reached in moves:
            line.append(f" ─{trigger}→ ", rows.style("dim"))
            line.append(reached, rows.style("changed"))
    else:
        rows.add("state", after.label, ("  (unchanged)", "dim"))
    if after.label in {state.value for state in TRANSITIONS}:
        fsm = rows.add("fsm")
        for number, state in enumerate(TRANSITIONS):
            current = state.value == after.label
            mark = ("●" if current else "○") + state.value.rsplit("_", 1)[-1]
            fsm.append((" " if number else "") + mark, rows.style("current" if current else "dim"))
    rows.add("format", after.format or "—", ("  block ", "dim"), after.block_format or "—")
    record = BY_ID.get(after.block_format or "")
    if record is not None:  # what the open block's dialect is, and which engines parse it
        rows.add("dialect", record.summary, (f"  ({record.engines.shown()})", "dim"))
    if after.pending is not None:
        rows.add("pending", f"{_tail(after.pending)!r} ({len(after.pending)})")
    if after.block is not None:
        rows.add("block", f"{_tail(after.block)!r} ({len(after.block)})")


def _events(rows: _Rows, view: StepView) -> None:
    if not view.events:
        rows.add("events", ("none", "dim"))
    for number, event in enumerate(view.events):
        rows.add("" if number else "events", (_event(event), type(event).__name__))


def _violations(rows: _Rows, view: StepView) -> None:
    for found in view.violations:
        rows.add("✗", (f"{found.check}: {found.message}", "bad"))
        if found.excerpt:
            rows.add("", (found.excerpt, "dim"))


def _diff(rows: _Rows, view: StepView, shown: str, reference: Reference | None) -> None:
    if reference is None:
        rows.add("diff", ("waiting for the whole run…", "dim"))
        return
    diff = diff_at(reference, shown, view.end, final=view.is_finish or view.crash is not None)
    head = (f"vs {diff.reference}: ", "dim")
    status = diff.status
    if status == "same":
        rows.add("diff", head, ("✓ same" + ("" if diff.final else " so far"), "good"))
    elif status == "behind":
        rows.add("diff", head, (f"✓ {diff.behind} chars held back so far", "good"))
    elif status == "missing":
        rows.add("diff", head, (f"✗ {diff.behind} chars never shown", "bad"))
        _side_by_side(rows, diff, len(shown))
    else:
        assert diff.at is not None
        what = "shows more than" if status == "extra" else "differs from"
        rows.add("diff", head, (f"✗ {what} it at char {diff.at}", "bad"))
        _side_by_side(rows, diff, diff.at)


def _side_by_side(rows: _Rows, diff: Diff, at: int) -> None:
    low = max(0, at - CONTEXT)
    lead = "…" if low else ""
    for label, text in (("shown", diff.shown), ("expect", diff.expected)):
        rest = text[at : at + CONTEXT]
        more = "…" if len(text) > at + CONTEXT else ""
        rows.add(
            f" {label}",
            lead + visible(text[low:at]),
            (visible(rest) + more, "bad") if rest else ("(end)", "dim"),
        )


class DetailView(Static):
    """The selected step, described (see :func:`describe`).

    Rows are wrapped here, under their label, so the height of the pane's content
    is known: a step whose description has as many lines as the last one is
    redrawn without a layout pass over the whole screen.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "detail--title",
        "detail--label",
        "detail--dim",
        "detail--bad",
        "detail--good",
        "detail--changed",
        "detail--current",
        "detail--Text",
        "detail--ToolCall",
        "detail--Reasoning",
        "detail--Rejected",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.plain = ""  # the text last shown (what tests read)
        self.lines: list[str] = []  # ...and as wrapped to the pane's width
        self._rows: list[Row] = []
        self._height = -1

    def _style(self, role: str) -> Style:
        return self.get_component_rich_style(f"detail--{role}", partial=True)

    def show(
        self, run: Run, view: StepView, *, reference: Reference | None, show_diff: bool
    ) -> None:
        self._rows = describe(
            run, view, reference=reference, show_diff=show_diff, style=self._style
        )
        self.plain = plain(self._rows)
        self._draw()

    def on_resize(self) -> None:
        self._height = -1  # a new width: wrap again, and measure again
        self._draw()

    def _draw(self) -> None:
        width = self.size.width or 40
        text = wrap_rows(self._rows, width, self._style("label"))
        self.lines = text.plain.splitlines()
        lines = len(self.lines)
        # The height only grows (blank lines pad a shorter description): a new
        # height costs a layout pass over the whole screen, which a step should not.
        if lines < self._height:
            text.append("\n" * (self._height - lines))
        self.update(text, layout=lines > self._height)
        self._height = max(lines, self._height)


@cache
def _console(width: int) -> Console:
    return Console(width=width, color_system=None, legacy_windows=False)


def wrap_rows(rows: list[Row], width: int, label_style: Style) -> RichText:
    """Each value folded to the width left of its label, continued under it."""
    space = max(width - LABEL, 8)
    console = _console(space)
    out = RichText(no_wrap=True, overflow="crop")
    for label, value in rows:
        lines = value.wrap(console, space, overflow="fold") if value.plain else [RichText()]
        for number, line in enumerate(lines):
            if out.plain:
                out.append("\n")
            out.append(f"{label if number == 0 else '':<{LABEL}}", label_style)
            line.rstrip()
            out.append_text(line)
    return out


class DetailPane(VerticalScroll):
    """The detail's scrolling frame. Focus it (tab or a click) to scroll it with the
    arrows and page keys; escape gives the arrows back to stepping."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "steps", show=False, tooltip="Back to stepping"),
    ]

    def action_leave(self) -> None:
        self.screen.set_focus(None)
