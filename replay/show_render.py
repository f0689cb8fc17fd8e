"""Printing a ``tcr show`` summary with rich: panels, tables, the content with its chunks.

Chunk boundaries are a dim ``¦`` (over alternating shades in colour), as in the
``tcr tui`` stream pane, so they show in a plain terminal too; a ``¦`` the stream
itself holds is drawn as ``⟨U+00A6⟩``, and invisible characters are always drawn
(``↵``, ``→``, trailing ``·``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text as RichText

from tcr._runtime.names import safe_text
from tcr.claims import Claim

if TYPE_CHECKING:
    from tcr.oracle import Verdict

    from .show_summary import ShowSummary

__all__ = ["BOUNDARY", "clip", "printable", "render", "visible"]

# Invisible characters made visible (the content view and every preview). A newline
# is shown as "↵" and, in the content view, followed by a real line break.
_VISIBLE: Final = {"\n": "↵", "\t": "→", "\r": "␍", "\x7f": "␡"}
# Drawn between two chunks, here and in the TUI. Not "│": models draw tables and trees
# with it, and panes' borders are one. A "¦" in the stream is drawn by its code point.
BOUNDARY: Final = "¦"
_SPECIAL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u00a0\u00a6\u200b-\u200f\u2028\u2029\u2060\ufeff]| +(?=\r?\n|\Z)"
)


def _visible(char: str) -> str:
    if char in _VISIBLE:
        return _VISIBLE[char]
    if char == " ":
        return "·"  # only trailing spaces are matched
    if ord(char) < 0x20:
        return chr(0x2400 + ord(char))  # the Unicode control picture, e.g. ␀
    return f"⟨U+{ord(char):04X}⟩"  # C1, zero-width, BOM, no-break space, ¦, line separators


def visible(text: str) -> str:
    """``text`` on one line with invisible characters shown (``↵``, ``→``, ``·``, ...)."""
    return _SPECIAL.sub(lambda m: "".join(_visible(c) for c in m.group()), text)


def printable(value: object) -> str:
    """A name or field from a recording or the file system, safe to print: never a
    terminal escape (an OSC in a header's id sets the window title, issue 36)."""
    return visible(safe_text(str(value)))


def _plain(value: object) -> RichText:
    """``printable(value)`` as rich text, never read as markup (``[/x]`` is no tag)."""
    return RichText(printable(value))


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# --- render ----------------------------------------------------------------------

_SHADES: Final = ("white on grey23", "white on grey39")
_MARK: Final = "cyan"  # a character tcr drew, not one the stream sent
_COLOURS: Final = {"Text": "default", "ToolCall": "green", "Reasoning": "magenta"}
_COLOURS_REJECTED: Final = "yellow"


def render(
    summary: ShowSummary, console: Console, *, frames_limit: int = 40, chunks_limit: int = 0
) -> None:
    """Print a summary: header, frames, decoded stream, content, events, verdict.

    Long tables show their first and last rows (``frames_limit`` in all, 0 for
    every row), the content its first and last chunks (``chunks_limit`` in all, 0
    for all of it), a dim ``¦`` between two chunks.
    """
    plain = console.color_system is None
    console.print(_header_panel(summary))
    console.print(Rule(f"Frames ({len(summary.frames)})", align="left"))
    console.print(_frames_table(summary.frames, frames_limit))
    console.print(Rule("Decoded stream", align="left"))
    console.print(_stream(summary.decoded, frames_limit))
    content, run, verdict = summary.content, summary.detector, summary.verdict
    if content is None or run is None or verdict is None:
        return
    chunks = content["chunks"]
    title = (
        f"Content: {len(content['text'])} characters in {len(chunks)} chunks ({content['label']})"
    )
    console.print(Rule(title, align="left"))
    console.print(_content(content, chunks_limit, plain))
    claim = run.get("claim")
    said = "" if claim is None else f"; judged against: {Claim.of(claim)}"
    console.print(Rule(f"Detector events ({run['spec']}{said})", align="left"))
    if run.get("judged_against"):
        console.print(str(run["judged_against"]), highlight=False, markup=False)
    console.print(_events_table(run, len(chunks), frames_limit))
    console.print(Rule("Verdict", align="left"))
    console.print(_verdict_text(verdict))
    for check, why in (run.get("not_judged") or {}).items():
        console.print(_plain(f"{check} not judged for the claim: {why}"), style="yellow")


def _header_panel(summary: ShowSummary) -> Panel:
    header = summary.header
    source = header.get("source") or {}
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    # Every field is the recording's, so outside input: drawn, never sent (issue 36).
    grid.add_row("file", _plain(summary.path))
    grid.add_row("kind", _plain(f"{header['kind']}, created {header.get('created') or '?'}"))
    where = [str(source[k]) for k in ("backend", "model", "endpoint") if source.get(k)]
    grid.add_row("source", _plain(" · ".join(where) or "-"))
    if header.get("request"):
        grid.add_row("request", _plain(_brief_map(header["request"])))
    status = (header.get("response") or {}).get("status")
    grid.add_row("response", _plain(f"status {status}" if status is not None else "-"))
    tools = header.get("tools")
    named = "any (none declared)" if tools is None else ", ".join(map(str, tools)) or "none"
    grid.add_row("tools", _plain(named))
    labels = {k: v for k, v in (header.get("labels") or {}).items() if v is not None}
    grid.add_row("labels", _plain(", ".join(f"{k}={v}" for k, v in labels.items()) or "-"))
    frames, size = summary.frames, summary.body_bytes
    duration = f", {frames[-1]['t_ms']:.1f} ms" if frames else ""
    if summary.complete:
        state = RichText.assemble(("complete", "green"), f": {len(frames)} frames, {size} bytes")
    else:
        reason = printable(summary.incomplete_reason)
        state = RichText.assemble(("INCOMPLETE", "bold red"), f" ({reason}): {len(frames)} frames")
    grid.add_row("status", state + duration)
    if summary.expect is not None:
        grid.add_row("expect", _plain(_brief_map(summary.expect)))
    title = RichText(f"recording {printable(header['id'])}")
    return Panel(grid, title=title, title_align="left")


def _brief_map(value: Mapping[str, Any]) -> str:
    """``{"model": "x", "messages": [3 items], ...}`` on one line."""
    parts = []
    for key, item in value.items():
        if isinstance(item, list):
            shown = f"[{len(item)} item{'s' * (len(item) != 1)}]"
        elif isinstance(item, Mapping):
            shown = f"{{{len(item)} keys}}"
        else:
            shown = clip(visible(repr(item) if isinstance(item, str) else str(item)), 40)
        parts.append(f"{key}: {shown}")
    return clip(", ".join(parts), 300)


def _table(*columns: str, wrap: bool = False) -> Table:
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold", expand=True)
    for name in columns[:-1]:
        table.add_column(name, justify="right", no_wrap=True)
    # ratio: the last column gets what the others leave, so they are never squashed
    table.add_column(
        columns[-1], overflow="fold" if wrap else "ellipsis", no_wrap=not wrap, ratio=1
    )
    return table


def _ends(count: int, limit: int) -> tuple[int, int]:
    """How many of ``count`` rows to show first and last, ``limit`` in all (0: every row)."""
    if 0 < limit < count:
        return limit - limit // 2, limit // 2
    return count, 0


def _rows(
    table: Table, rows: Sequence[Any], limit: int, cells: Callable[[Any], list[Any]], what: str
) -> Table:
    """The first and last rows, ``limit`` in all (0: every row), saying how many were left out."""
    head, tail = _ends(len(rows), limit)
    for row in rows[:head]:
        table.add_row(*cells(row))
    if head + tail < len(rows):
        elided = RichText(f"{len(rows) - head - tail} {what} elided", style="dim italic")
        table.add_row("…", *[""] * (len(table.columns) - 2), elided)
    for row in rows[len(rows) - tail :] if tail else ():
        table.add_row(*cells(row))
    return table


def _frames_table(frames: Sequence[Mapping[str, Any]], limit: int) -> Table | RichText:
    if not frames:
        return RichText("no frames", style="dim")
    table = _table("#", "t ms", "Δ ms", "bytes", "data")

    def cells(row: Mapping[str, Any]) -> list[str | RichText]:
        t, delta = f"{row['t_ms']:.1f}", f"{row['delta_ms']:+.1f}"
        return [str(row["index"]), t, delta, str(row["bytes"]), _plain(row["preview"])]

    return _rows(table, frames, limit, cells, "frames")


def _stream(decoded: Mapping[str, Any], limit: int) -> Table:
    deltas = decoded["deltas"]
    with_content = sum(1 for d in deltas if "content" in d)
    end = "end marker seen" if decoded["done"] else "no end marker"
    finish = decoded["finish_reason"]
    grid = Table.grid()
    grid.add_column()
    grid.add_row(
        _plain(
            f"framing {decoded['framing']}: {len(deltas)} deltas ({with_content} with content), "
            f"finish_reason {finish or '-'}, {end}"
        )
    )
    if deltas:
        table = _table("#", "delta")
        grid.add_row(
            _rows(
                table, deltas, limit, lambda d: [str(d["index"]), _plain(_brief_delta(d))], "deltas"
            )
        )
    for call in decoded["calls"]:
        text = f"native call {call['index']}: {call['name']}({clip(call['arguments'], 200)})"
        text = printable(text + (f" id {call['id']}" if call["id"] else ""))
        grid.add_row(RichText(text, style="green"))
    if decoded["reasoning"]:
        grid.add_row(RichText(f"reasoning: {clip(visible(decoded['reasoning']), 300)}", "magenta"))
    for error in decoded["errors"]:
        grid.add_row(RichText(f"stream error: {printable(error)}", style="red"))
    if decoded["unfinished"] is not None:
        tail = clip(visible(decoded["unfinished"]), 200)
        grid.add_row(RichText(f"unfinished tail (never completed): {tail}", style="yellow"))
    if decoded["error"] is not None:
        grid.add_row(RichText(f"decode error: {printable(decoded['error'])}", style="bold red"))
    return grid


def _brief_delta(delta: Mapping[str, Any]) -> str:
    parts = []
    for key, value in delta.items():
        if key == "index":
            continue
        if key == "done":
            parts.append("done")
        elif key == "tool_calls":
            for f in value:
                name = f" {f['name']}" if f["name"] else ""
                at = "" if f["index"] is None else f"[{f['index']}]"
                parts.append(f"tool_call{at}{name} {visible(f['arguments'])!r}")
        else:
            parts.append(f"{key}={visible(value)!r}" if key != "role" else f"role={value}")
    return " ".join(parts)


def _content(content: Mapping[str, Any], limit: int, plain: bool) -> RichText:
    """The content with its chunk boundaries: the first and last chunks, ``limit`` in all."""
    text, chunks = content["text"], content["chunks"]
    if not text:
        return RichText("(no content)", style="dim")
    # Where each invisible character sits, found on the whole text: a space is
    # trailing when the newline after it arrives in a later chunk.
    special = [(m.start() + i, c) for m in _SPECIAL.finditer(text) for i, c in enumerate(m.group())]
    positions = [position for position, _ in special]
    head, tail = _ends(len(chunks), limit)
    first, last = chunks[:head], chunks[len(chunks) - tail :] if tail else []
    out = RichText()
    for chunk in first:
        _append_chunk(out, chunk, special, positions, plain, separated=chunk["index"] > 0)
    if head + tail < len(chunks):
        end = first[-1]["offset"] + len(first[-1]["text"])
        chars = (last[0]["offset"] if last else len(text)) - end
        elided = f"… {len(chunks) - head - tail:,} chunks elided ({chars:,} characters)"
        out.append(("" if out.plain.endswith("\n") else "\n") + elided + "\n", "dim italic")
    for number, chunk in enumerate(last):
        _append_chunk(out, chunk, special, positions, plain, separated=number > 0)
    shades = "" if plain else " over alternating shades"
    legend = (
        f"chunk boundaries: {BOUNDARY}{shades} (a {BOUNDARY} in the stream: {visible(BOUNDARY)})"
    )
    out.append(f"\n({legend}; ↵ newline, → tab, · trailing space)", style="dim")
    return out


def _append_chunk(
    out: RichText,
    chunk: Mapping[str, Any],
    special: Sequence[tuple[int, str]],
    positions: Sequence[int],
    plain: bool,
    *,
    separated: bool,
) -> None:
    """One chunk, shaded in colour, after a dim ``¦`` when ``separated``, invisible
    characters drawn."""
    index, offset, piece = chunk["index"], chunk["offset"], chunk["text"]
    if separated:
        out.append(BOUNDARY, style="dim")
    shade = "" if plain else _SHADES[index % 2]
    start, at = 0, bisect_left(positions, offset)
    while at < len(special) and special[at][0] < offset + len(piece):
        position, char = special[at]
        out.append(piece[start : position - offset], style=shade)
        out.append(_visible(char), style=f"{shade} {_MARK}".strip())  # the mark wins
        if char == "\n":
            out.append("\n")
        start, at = position - offset + 1, at + 1
    out.append(piece[start:], style=shade)


def _events_table(run: Mapping[str, Any], chunk_count: int, limit: int) -> Table | RichText:
    events = run["events"]
    rows = _merged_text_rows(events)
    crash = run["crash"]
    if not rows and crash is None:
        return RichText("no events", style="dim")
    table = _table("#", "chunk", "raw span", "event", wrap=True)

    def cells(row: range) -> list[str | RichText]:
        first, last = events[row[0]], events[row[-1]]
        merged = len(row) > 1
        number = f"{first['index']}-{last['index']}" if merged else str(first["index"])
        chunk = _step_name(first["chunk"], chunk_count)
        if merged:
            chunk = f"{chunk}-{_step_name(last['chunk'], chunk_count)}"
        span = (
            "?"
            if first["start"] is None or last["end"] is None
            else f"{first['start']}:{last['end']}"
        )
        return [number, chunk, span, _describe(events, row)]

    _rows(table, rows, limit, cells, "event rows")
    if crash is not None:
        step = crash["chunk"]
        where = f"feed() of chunk {step}" if step is not None and step < chunk_count else "finish()"
        where = "the factory" if step is None else where
        said = f"CRASH in {where}: {printable(crash['error'])}"
        table.add_row("", "", "", RichText(said, style="bold red"))
    return table


def _step_name(step: int, chunk_count: int) -> str:
    return "finish" if step == chunk_count else str(step)


def _merged_text_rows(events: Sequence[Mapping[str, Any]]) -> list[range]:
    """The events of each row, adjacent Text events in one row: a char chunking makes
    hundreds. A row is a range of event indexes, so only the rows shown are read again."""
    rows: list[range] = []
    after_text = False
    for index, event in enumerate(events):
        text = event["type"] == "Text"
        if text and after_text:
            rows[-1] = range(rows[-1].start, index + 1)
        else:
            rows.append(range(index, index + 1))
        after_text = text
    return rows


def _describe(events: Sequence[Mapping[str, Any]], row: range) -> RichText:
    fields = events[row[0]]["fields"]
    kind = events[row[0]]["type"]
    style = _COLOURS.get(kind, _COLOURS_REJECTED)
    if kind == "Text":
        joined = "".join(events[index]["fields"]["text"] for index in row)
        count = f" ({len(row)} events)" if len(row) > 1 else ""
        return RichText.assemble((f"Text{count} ", "bold"), repr(clip(visible(joined), 200)))
    if kind == "ToolCall":
        body = printable(f"{fields['name']}({clip(fields['arguments'], 200)})")
    elif kind == "Reasoning":
        body = repr(clip(visible(fields["text"]), 200))
    else:
        body = f"{fields['reason']}: shows {clip(visible(fields['content']), 200)!r}"
    format_ = f"  [{printable(fields['format'])}]" if fields.get("format") else ""
    return RichText.assemble((f"{kind} ", f"bold {style}"), (body, style), (format_, "dim"))


def _verdict_text(verdict: Verdict) -> RichText:
    out = RichText()
    violations = verdict.violations
    if verdict.ok:
        out.append("PASS", style="bold green")
    else:
        out.append(f"FAIL: {len(violations)} violation{'s' * (len(violations) != 1)}", "bold red")
    out.append(f"  (checks run: {', '.join(verdict.ran) or 'none'})", style="dim")
    for found in violations:
        out.append(f"\n✗ {found.check}", style="bold red")
        out.append(f" at {found.where}: {printable(found.message)}")
        if found.excerpt:
            out.append(f"\n    {printable(found.excerpt)}", style="cyan")
    for check, why in verdict.skipped.items():
        out.append(f"\nskipped {check}: {printable(why)}", style="dim")
    return out
