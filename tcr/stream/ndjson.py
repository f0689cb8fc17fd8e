"""Newline-delimited JSON: body bytes to lines of text (no JSON parsing here).

Lines end at LF; a CR before the LF is part of the line ending (CRLF). A lone
CR is left in the line: it is JSON whitespace, and NDJSON writers never use
it as a separator. As in :mod:`tcr.stream.sse`, lines are cut from the raw
bytes and decoded whole (LF never occurs inside a UTF-8 sequence), so a
character split across reads is never mangled and every line knows its byte
offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NDJSONDecoder", "NDJSONLine"]

_JSON_WHITESPACE = " \t\r\n"


@dataclass(frozen=True, slots=True)
class NDJSONLine:
    """One non-blank line: ``text`` came from body bytes ``start`` to ``end``.

    ``complete`` is ``False`` for a final line that had no line break. JSON
    Lines allows that, and clients read it, but it is also what a body cut
    mid-line looks like, so the caller decides.
    """

    text: str
    start: int
    end: int
    complete: bool = True


class NDJSONDecoder:
    """Incremental, sans-I/O NDJSON line decoder: ``feed(bytes)`` and ``finish()``.

    Blank (whitespace-only) lines are skipped. A partial line is kept as a
    list of parts and joined once, when its LF arrives, so per-read work is
    proportional to the read.
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._received = 0
        self._line_start = 0
        self._finished = False

    @property
    def bytes_received(self) -> int:
        return self._received

    def feed(self, data: bytes) -> list[NDJSONLine]:
        """Decode one read of the body; return the lines it completed."""
        if self._finished:
            raise RuntimeError("NDJSONDecoder.feed() called after finish()")
        if not data:
            return []
        position = self._received
        self._received += len(data)
        *complete, rest = data.split(b"\n")
        lines: list[NDJSONLine] = []
        for piece in complete:
            position += len(piece) + 1
            if self._parts:
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts.clear()
            line = self._line(piece.removesuffix(b"\r"), end=position, complete=True)
            if line is not None:
                lines.append(line)
            self._line_start = position
        if rest:
            self._parts.append(rest)
        return lines

    def finish(self) -> list[NDJSONLine]:
        """End of stream: return the final line if it had no line break."""
        if self._finished:
            return []
        self._finished = True
        if not self._parts:
            return []
        piece = b"".join(self._parts)
        self._parts.clear()
        line = self._line(piece, end=self._received, complete=False)
        return [] if line is None else [line]

    def _line(self, piece: bytes, *, end: int, complete: bool) -> NDJSONLine | None:
        text = piece.decode("utf-8", "replace")
        if self._line_start == 0:
            # A BOM at the start of the body is an encoding mark, not content;
            # json.loads() would reject it.
            text = text.removeprefix("\ufeff")
        if not text.strip(_JSON_WHITESPACE):
            return None
        return NDJSONLine(text=text, start=self._line_start, end=end, complete=complete)
