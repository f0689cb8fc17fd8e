"""The stream pane: the content around the current chunk, as the detector received it.

Chunk boundaries are a dim ``¦`` over alternating shades, so they show without
colour too (a ``¦`` the stream itself holds is drawn as ``⟨U+00A6⟩``); the current
chunk is highlighted, input not yet received is dim, markers are bold, emitted
blocks are coloured by event type, the open block and the held-back text are
marked, and invisible characters are drawn (``↵`` then a line break, ``→``,
trailing ``·``).

Only a window around the current chunk is laid out (:func:`layout`, pure), so a
step costs the same on a 1 MB recording as on a 100-character one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from tcr.detector.formats import FORMATS, alternation
from tcr.replay.show import BOUNDARY, visible

from ..model import Run, StepView

__all__ = [
    "BOUNDARY",
    "Cell",
    "StreamView",
    "chunk_spans",
    "layout",
    "marker_spans",
    "step_spans",
]

# BOUNDARY ("¦", shared with tcr show) is drawn between two chunks; visible() draws a
# "¦" in the content by its code point.
_BOUNDARY_CELL = frozenset({"boundary"})

# Opening markers that may open anywhere and every closing marker: what the
# pane emphasises. bare_json's "{" would light up every brace, so it is left out.
_OPENERS = {m for f in FORMATS if f.anywhere for m in f.opens}
_MARKERS = _OPENERS | {m for f in FORMATS for m in f.closes}
_MARKER_RE = alternation(_MARKERS)
_REACH = max(len(m) for m in _MARKERS) - 1  # a marker ending in the window may start this early


def marker_spans(text: str, low: int = 0, high: int | None = None) -> list[Span]:
    """Spans of every marker that overlaps [low, high) of ``text``, in order."""
    high = len(text) if high is None else high
    found = _MARKER_RE.finditer(text, max(0, low - _REACH), min(len(text), high + _REACH))
    return [(m.start(), m.end(), "marker") for m in found if m.end() > low and m.start() < high]


@cache
def _glyph(char: str) -> str:
    return visible(char)


@cache
def _width(glyph: str) -> int:
    return cell_len(glyph)


@dataclass(frozen=True, slots=True)
class Cell:
    """A run of characters drawn with one set of classes."""

    text: str
    classes: frozenset[str]


Span = tuple[int, int, str]  # input start, end, class name


def _trailing_space(text: str, at: int) -> bool:
    end = at
    while end < len(text) and text[end] == " ":
        end += 1
    return end == len(text) or text[end] == "\n" or text.startswith("\r\n", end)


def layout(
    text: str,
    anchor: int,
    width: int,
    height: int,
    spans_for: Callable[[int, int], list[Span]],
    breaks: Sequence[int] = (),
) -> tuple[list[list[Cell]], int]:
    """Rows of ``width`` cells around input offset ``anchor``: (rows, first offset).

    ``spans_for(low, high)`` gives the classed spans (they may overlap) of the
    window [low, high) that is laid out. ``breaks``: the chunks' start offsets,
    ascending; a ``¦`` cell is drawn before each one inside the text. The anchor's
    row lands about two thirds down, so what led up to it stays in view. Lines
    fold at ``width`` cells; a newline is drawn as ``↵`` and ends its row.
    """
    width, height = max(width, 1), max(height, 1)
    before = max(1, (height * 2) // 3)
    anchor = max(0, min(anchor, len(text)))
    start = max(0, anchor - (before + 1) * width)
    line_start = text.rfind("\n", 0, start) + 1
    # Long lines fold on a grid from their line start, so rows do not shift per step.
    start = line_start + ((start - line_start) // width) * width
    stop = min(len(text), anchor + (height - before + 1) * width + 1)
    window = spans_for(start, stop)
    marks = breaks[bisect_right(breaks, max(start - 1, 0)) : bisect_left(breaks, stop)]
    rows, anchor_row, starts = _fold(text, start, stop, width, window, anchor, marks)
    first = max(0, min(anchor_row - before, len(rows) - height))
    return rows[first : first + height], starts[first] if starts else start


def _segments(
    start: int, stop: int, spans: Iterable[Span]
) -> Iterator[tuple[int, int, frozenset[str]]]:
    """[start, stop) cut where the set of covering spans changes: a sweep, O(n log n)."""
    changes: dict[int, list[tuple[int, str]]] = {}
    for low, high, name in spans:
        low, high = max(low, start), min(high, stop)
        if low < high:
            changes.setdefault(low, []).append((1, name))
            changes.setdefault(high, []).append((-1, name))
    active: dict[str, int] = {}
    points = sorted({start, stop, *changes})
    for a, b in pairwise(points):
        for delta, name in changes.get(a, ()):
            count = active.get(name, 0) + delta
            if count:
                active[name] = count
            else:
                active.pop(name, None)
        yield a, b, frozenset(active)


def _fold(
    text: str,
    start: int,
    stop: int,
    width: int,
    spans: Iterable[Span],
    anchor: int,
    breaks: Sequence[int],
) -> tuple[list[list[Cell]], int, list[int]]:
    rows: list[list[Cell]] = [[]]
    row_starts = [start]
    used = 0
    anchor_row = 0
    marks = iter(breaks)  # ascending, each inside (0, len(text)) and the window
    mark = next(marks, -1)
    for a, b, classes in _segments(start, stop, spans):
        run: list[str] = []
        for position in range(a, b):
            char = text[position]
            if position == mark:
                mark = next(marks, -1)
                if run:
                    rows[-1].append(Cell("".join(run), classes))
                    run = []
                if used + 1 > width and used:
                    rows.append([])
                    row_starts.append(position)
                    used = 0
                rows[-1].append(Cell(BOUNDARY, _BOUNDARY_CELL))
                used += 1
            if char == " " and not _trailing_space(text, position):
                glyph, special = " ", False
            else:
                glyph = "·" if char == " " else _glyph(char)
                special = glyph != char
            size = _width(glyph)
            if used + size > width and used:
                if run:
                    rows[-1].append(Cell("".join(run), classes))
                    run = []
                rows.append([])
                row_starts.append(position)
                used = 0
            if position == anchor:
                anchor_row = len(rows) - 1
            if special:
                if run:
                    rows[-1].append(Cell("".join(run), classes))
                    run = []
                rows[-1].append(Cell(glyph, classes | {"glyph"}))
            else:
                run.append(glyph)
            used += size
            if char == "\n":
                if run:
                    rows[-1].append(Cell("".join(run), classes))
                    run = []
                rows.append([])
                row_starts.append(position + 1)
                used = 0
        if run:
            rows[-1].append(Cell("".join(run), classes))
    if anchor >= stop:
        anchor_row = len(rows) - 1
    return rows, anchor_row, row_starts


def chunk_spans(starts: Sequence[int], low: int, high: int) -> list[Span]:
    """Alternating shade spans of the chunks that overlap [low, high)."""
    first = max(bisect_right(starts, low) - 1, 0)
    last = min(bisect_left(starts, high), len(starts) - 1)
    spans: list[Span] = []
    for index in range(first, last):
        spans.append((starts[index], starts[index + 1], "odd" if index % 2 else "even"))
    return spans


class StreamView(Widget):
    """The content with its chunks, markers, blocks and held text, around one step."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "stream--even",
        "stream--odd",
        "stream--current",
        "stream--ahead",
        "stream--held",
        "stream--lost",
        "stream--open",
        "stream--ToolCall",
        "stream--Reasoning",
        "stream--Rejected",
        "stream--marker",
        "stream--glyph",
        "stream--match",
        "stream--boundary",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = ""
        self.anchor_at = 0
        self.spans_for: Callable[[int, int], list[Span]] = lambda low, high: []
        self.breaks: Sequence[int] = ()
        self._styles: dict[frozenset[str], Style] = {}
        self.plain = ""  # the rows last drawn, as text (what tests read)
        self._lines: list[Strip] | None = None

    def _style(self, classes: frozenset[str]) -> Style:
        style = self._styles.get(classes)
        if style is None:
            style = Style()
            for name in sorted(classes, key=_ORDER.index):
                style += self.get_component_rich_style(f"stream--{name}", partial=True)
            self._styles[classes] = style
        return style

    def on_mount(self) -> None:
        self.watch(self.app, "theme", lambda _: self._styles.clear(), init=False)

    def show(
        self,
        text: str,
        anchor: int,
        spans_for: Callable[[int, int], list[Span]],
        breaks: Sequence[int] = (),
    ) -> None:
        """Draw ``text`` around ``anchor``; ``breaks``: the chunks' start offsets."""
        self.text, self.anchor_at, self.spans_for, self.breaks = text, anchor, spans_for, breaks
        self._lines = None
        self.refresh()

    def on_resize(self) -> None:
        self._lines = None

    def _layout(self) -> list[Strip]:
        width, height = self.size
        base = self.rich_style
        rows, _ = layout(self.text, self.anchor_at, width, height, self.spans_for, self.breaks)
        lines = []
        for row in rows:
            segments = [Segment(cell.text, base + self._style(cell.classes)) for cell in row]
            lines.append(Strip(segments).adjust_cell_length(width, base))
        self.plain = "\n".join("".join(cell.text for cell in row) for row in rows)
        return lines

    def render_line(self, y: int) -> Strip:
        if self._lines is None:
            self._lines = self._layout()
        if y < len(self._lines):
            return self._lines[y]
        return Strip.blank(self.size.width, self.rich_style)


# Later classes win: shade first, marks last.
_ORDER = [
    "even",
    "odd",
    "current",
    "ToolCall",
    "Reasoning",
    "Rejected",
    "open",
    "held",
    "lost",
    "marker",
    "glyph",
    "ahead",
    "match",
    "boundary",
]


def step_spans(
    run: Run, view: StepView, text: str, match: tuple[int, int] | None = None
) -> Callable[[int, int], list[Span]]:
    """The classed spans of one step, computed for the window being laid out."""

    def spans_for(low: int, high: int) -> list[Span]:
        spans = chunk_spans(run.starts, low, high)
        spans.append((view.offset, view.end, "current"))
        spans.append((view.end, len(text), "ahead"))
        emitted = view.emitted
        if emitted is not None:
            first = bisect_right(run.blocks, low, key=lambda block: block[1])
            for start, end, kind in run.blocks[first:]:
                if start >= high or end > emitted:
                    break
                spans.append((start, end, kind))
        after = view.after
        block_start = view.end
        if after is not None and after.block:
            block_start = view.end - len(after.block)
            spans.append((block_start, view.end, "open"))
        if emitted is not None and emitted < block_start:
            # Received, neither emitted nor in the open block (as the raw spans say,
            # whatever the detector): held back, or after finish() lost.
            spans.append((emitted, block_start, "lost" if view.is_finish else "held"))
        elif after is not None and after.pending:
            spans.append((view.end - len(after.pending), view.end, "held"))
        spans += marker_spans(text, low, high)
        if match is not None:
            spans.append((match[0], match[1], "match"))
        return spans

    return spans_for
