"""Server-sent events: body bytes to events, by the WHATWG event-stream rules.

The rules are those of
https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
("the spec" below). The decoder has two layers, each carrying its own state
across reads: bytes to lines (:class:`_LineSplitter`), lines to events
(:class:`SSEDecoder`).

Lines are split on bytes and decoded one whole line at a time. CR and LF are
ASCII, so they never occur inside a UTF-8 sequence: a line cut out of the raw
bytes never cuts a character, and decoding line by line gives exactly the text
that decoding the whole body with the spec's UTF-8 decode (invalid sequences
become U+FFFD) would give, whatever the read boundaries. It also lets every
event say which body bytes it came from.

Two deliberate departures from the spec, both so that tcr shows what a
browser would hide:

* An event still being built when the stream ends is returned by
  :meth:`SSEDecoder.finish` with ``complete=False``. The spec discards it
  ("any pending data must be discarded"); a truncated recording must show it.
* With ``keep_unknown_fields=True`` a block carrying only unknown fields is
  dispatched (with empty ``data``), because llama.cpp's server sends stream
  errors as an ``error:`` field, which a spec client silently ignores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SSEDecoder", "SSEEvent"]

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    ``id`` is the stream's last event ID when the event was dispatched: it
    persists across events until an ``id`` field changes it (spec, "dispatch
    the event", step 1), and is ``None`` while no ``id`` field has been seen.
    ``retry`` is the reconnection time set by a ``retry`` field in this
    event's own block, if any. ``extra`` holds the block's unknown fields as
    ``(name, value)`` pairs, in order.

    ``start`` and ``end`` are body byte offsets: the event's lines occupy
    ``body[start:end]``, and the blank line that dispatched it begins at
    ``end``. They do not take part in equality, so an event compares equal to
    one written by hand.
    """

    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None
    complete: bool = True
    extra: tuple[tuple[str, str], ...] = ()
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)


class _LineSplitter:
    """Body bytes to ``(line, start)`` pairs; a line ends at CR, LF or CRLF.

    A partial line is kept as a list of parts and joined once, when it ends,
    so a long line arriving in many small reads costs linear time. A read
    that ends in CR sets ``_skip_lf``: the CR already ended the line, and an
    LF starting the next read is the second half of that CRLF, not a blank
    line (spec: "a single U+000D CARRIAGE RETURN U+000A LINE FEED pair").
    """

    __slots__ = ("_line_start", "_parts", "_received", "_skip_lf")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._skip_lf = False
        self._received = 0
        self._line_start = 0

    @property
    def received(self) -> int:
        return self._received

    def feed(self, data: bytes) -> list[tuple[bytes, int]]:
        if not data:
            return []
        position = self._received
        self._received += len(data)
        if self._skip_lf:
            self._skip_lf = False
            if data[:1] == b"\n":
                data = data[1:]
                position += 1
                self._line_start = position
        lines: list[tuple[bytes, int]] = []
        for piece in data.splitlines(keepends=True):
            position += len(piece)
            if piece.endswith(b"\r\n"):
                body = piece[:-2]
            elif piece.endswith((b"\r", b"\n")):
                body = piece[:-1]
            else:
                self._parts.append(piece)  # only the last piece can lack an ending
                break
            if self._parts:
                self._parts.append(body)
                body = b"".join(self._parts)
                self._parts.clear()
            lines.append((body, self._line_start))
            self._line_start = position
        else:
            self._skip_lf = data.endswith(b"\r")
        return lines

    def finish(self) -> tuple[bytes, int] | None:
        """The final line if the body did not end with a line break."""
        if not self._parts:
            return None
        line = b"".join(self._parts)
        self._parts.clear()
        return line, self._line_start


class SSEDecoder:
    """Incremental, sans-I/O SSE decoder: ``feed(bytes)`` and ``finish()``.

    The result never depends on how the body was split into reads.
    """

    def __init__(self, *, keep_unknown_fields: bool = False) -> None:
        self._lines = _LineSplitter()
        self._keep_unknown = keep_unknown_fields
        self._finished = False
        # Buffers of the spec's "interpret the event stream" processing model.
        self._data: list[str] = []
        self._event_type = ""
        self._last_event_id: str | None = None
        self._retry: int | None = None
        self._block_retry: int | None = None
        self._extra: list[tuple[str, str]] = []
        self._block_start: int | None = None

    @property
    def last_event_id(self) -> str | None:
        """The last event ID set by an ``id`` field, or ``None`` if never set."""
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The reconnection time (ms) from the latest valid ``retry`` field."""
        return self._retry

    @property
    def bytes_received(self) -> int:
        return self._lines.received

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Decode one read of the body; return the events it completed."""
        if self._finished:
            raise RuntimeError("SSEDecoder.feed() called after finish()")
        events: list[SSEEvent] = []
        for line, start in self._lines.feed(data):
            event = self._process_line(self._text(line, start), start)
            if event is not None:
                events.append(event)
        return events

    def finish(self) -> list[SSEEvent]:
        """End of stream: return the unfinished event, if any, with ``complete=False``.

        A final line without a line break is still read as a line first, so a
        body cut mid-line shows what it had.
        """
        if self._finished:
            return []
        self._finished = True
        tail = self._lines.finish()
        if tail is not None:
            line, start = tail
            self._process_line(self._text(line, start), start)
        if self._data or (self._keep_unknown and self._extra):
            return [self._make_event(complete=False, end=self._lines.received)]
        return []

    @staticmethod
    def _text(line: bytes, start: int) -> str:
        text = line.decode("utf-8", "replace")
        # The spec's UTF-8 decode drops one BOM at the start of the stream only;
        # anywhere else U+FEFF is an ordinary character.
        if start == 0 and text.startswith(_BOM):
            return text[1:]
        return text

    def _process_line(self, line: str, start: int) -> SSEEvent | None:
        if self._block_start is None:
            self._block_start = start
        if not line:
            return self._dispatch(end=start)
        if line[0] == ":":
            return None  # comment
        # A line without a colon is a field name with an empty value; one space
        # after the colon is not part of the value.
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\x00" not in value:
                self._last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = self._block_retry = int(value)
        else:
            self._extra.append((name, value))
        return None

    def _dispatch(self, *, end: int) -> SSEEvent | None:
        # Spec step 2: an empty data buffer resets the block and fires nothing.
        # The data buffer is "each value plus LF", so it is empty exactly when
        # no data line was seen.
        event = None
        if self._data or (self._keep_unknown and self._extra):
            event = self._make_event(complete=True, end=end)
        self._data = []
        self._event_type = ""
        self._block_retry = None
        self._extra = []
        self._block_start = None
        return event

    def _make_event(self, *, complete: bool, end: int) -> SSEEvent:
        # Joining with LF equals the spec's "append value and LF, then remove
        # the final LF".
        return SSEEvent(
            event=self._event_type or "message",
            data="\n".join(self._data),
            id=self._last_event_id,
            retry=self._block_retry,
            complete=complete,
            extra=tuple(self._extra),
            start=self._block_start or 0,
            end=end,
        )
