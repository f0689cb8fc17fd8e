"""A recording's body to its content chunk sequence, reasoning and native calls.

:class:`StreamDecoder` is the sans-I/O core (``feed`` a read or a chunk, get
the :class:`Delta` values it completed); :func:`decode`, :func:`decode_bytes`
and :func:`decode_chunks` are loops around it. The result never depends on
how a body was split into reads, so the byte rechunker can re-split a raw
body and expect the same :class:`Decoded`.

What an unterminated tail means follows each format's own clients: an SSE
event without its blank line is never interpreted (the spec discards it;
tcr reports it in ``Decoded.unfinished``), while a final NDJSON line without
a line break is read if it parses (JSON Lines allows it) and reported in
``unfinished`` if it does not (a body cut mid-line).
"""

from __future__ import annotations

import codecs
import json
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from tcr.errors import DecodeError
from tcr.stream.deltas import CallAssembler, Delta, NativeCall, SurrogateJoiner, printable_delta
from tcr.stream.ndjson import NDJSONDecoder, NDJSONLine
from tcr.stream.payloads import (
    JSONObject,
    detect_framing,
    error_text,
    parse_json_object,
    parse_payload,
)
from tcr.stream.sse import SSEDecoder, SSEEvent

__all__ = [
    "DEFAULT_FRAMINGS",
    "Decoded",
    "FrameLike",
    "Pieces",
    "RecordingLike",
    "StreamDecoder",
    "decode",
    "decode_bytes",
    "decode_chunks",
]

#: Recording kinds (ARCHITECTURE.md §3), each with the framing reported until a payload
#: says otherwise.
DEFAULT_FRAMINGS: Mapping[str, str] = MappingProxyType(
    {"sse": "openai", "ndjson": "ollama", "chunks": "chunks"}
)

_DONE = "[DONE]"


class FrameLike(Protocol):
    """What :func:`decode` reads from a frame: the bytes read, or the text chunk."""

    @property
    def data(self) -> bytes | str: ...


class RecordingLike(Protocol):
    """What :func:`decode` reads from a recording (``tcr.corpus.Recording`` has it)."""

    @property
    def kind(self) -> str: ...

    @property
    def header(self) -> Mapping[str, object]: ...

    @property
    def frames(self) -> Iterable[FrameLike]: ...


class Pieces(Sequence[str]):
    """Content chunks held as one string and the offset each ends at.

    A long stream sends a few characters per event: a string object per chunk costs
    ten times its text (247,622 chunks of a 50 MB recording held 13 MB), this one
    string and four bytes a chunk (eight past 4 G characters, as ``tcr.rechunk.Cuts``).
    A read-only sequence of the chunks, equal to any sequence of the same strings.
    """

    __slots__ = ("_ends", "text")
    text: str
    _ends: array[int]

    def __init__(self, chunks: Iterable[str] = ()) -> None:
        builder = _PiecesBuilder()
        for chunk in chunks:
            builder.append(chunk)
        built = builder.pieces()
        self.text, self._ends = built.text, built._ends

    @classmethod
    def of(cls, text: str, ends: array[int]) -> Pieces:
        pieces = cls.__new__(cls)
        pieces.text, pieces._ends = text, ends
        return pieces

    def __len__(self) -> int:
        return len(self._ends)

    def _piece(self, index: int) -> str:
        start = self._ends[index - 1] if index else 0
        return self.text[start : self._ends[index]]

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._piece(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("Pieces index out of range")
        return self._piece(index)

    def __iter__(self) -> Iterator[str]:
        start = 0
        for end in self._ends:
            yield self.text[start:end]
            start = end

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Pieces):
            return self.text == other.text and self._ends == other._ends
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which do not hash

    def __repr__(self) -> str:
        return f"Pieces({list(self)!r})"


#: Chunks joined into one string at a time while a :class:`Pieces` is built.
_BATCH = 1024


class _PiecesBuilder:
    """A :class:`Pieces` built a chunk at a time, holding little more than it will.

    Chunks wait in a batch of at most ``_BATCH`` strings, then are joined into a block.
    A list of every chunk, or ``io.StringIO`` (Python 3.11's keeps up to 100,000 small
    strings before it joins them), held a string object of about 60 bytes a chunk:
    up to 6 MB beside the 0.8 MB of content of a 50 MB recording (benchmarks/RESULTS.md,
    Reliability). The offsets are lent to each result, copied only if more follow.
    """

    __slots__ = ("_batch", "_blocks", "_ends", "_length", "_lent")

    def __init__(self) -> None:
        self._batch: list[str] = []
        self._blocks: list[str] = []
        self._ends: array[int] = array("I")
        self._length = 0
        self._lent = False  # a Pieces holds ``_ends``: copy it before it changes

    def append(self, chunk: str) -> None:
        self._length += len(chunk)
        if self._lent or (self._length >> 32 and self._ends.typecode == "I"):
            self._ends = array("I" if self._length >> 32 == 0 else "q", self._ends)
            self._lent = False
        self._ends.append(self._length)
        self._batch.append(chunk)
        if len(self._batch) == _BATCH:
            self._blocks.append("".join(self._batch))
            self._batch.clear()

    def pieces(self) -> Pieces:
        """The chunks so far; appending more later leaves this result as it is."""
        text = "".join([*self._blocks, *self._batch])
        self._blocks, self._batch = [text], []
        self._lent = True
        return Pieces.of(text, self._ends)


@dataclass(frozen=True, slots=True)
class Decoded:
    """Everything a stream said.

    ``content`` is the content chunk sequence, one entry per non-empty content
    delta: the detector's input. ``done`` is true when an in-band end marker
    was seen (``[DONE]``, ``done: true``, ``stop: true``); engine chunks have
    none, so for them the recording's trailer says whether it completed.
    """

    framing: str
    content: Sequence[str] = field(default_factory=Pieces)
    reasoning: list[str] = field(default_factory=list)
    calls: list[NativeCall] = field(default_factory=list)
    deltas: list[Delta] = field(default_factory=list)
    finish_reason: str | None = None
    done: bool = False
    errors: list[str] = field(default_factory=list)
    unfinished: str | None = None

    @property
    def text(self) -> str:
        content = self.content
        return content.text if isinstance(content, Pieces) else "".join(content)

    @property
    def reasoning_text(self) -> str:
        return "".join(self.reasoning)


def _lenient_error(text: str) -> str:
    """An error's message from text that may or may not be JSON."""
    try:
        return error_text(json.loads(text))
    except (ValueError, RecursionError):
        return text


class StreamDecoder:
    """Incremental, sans-I/O decoder of one stream of ``kind`` sse, ndjson or chunks.

    ``feed`` takes one read of the body (or one engine chunk) and returns the
    deltas it completed; ``finish`` ends the stream; ``result`` summarises
    everything so far and may be called at any time. ``keep_deltas=False``
    leaves ``Decoded.deltas`` empty: a replay needs only the content, and a delta
    per event is most of what a long stream's decoding holds.
    """

    def __init__(self, kind: str, *, keep_deltas: bool = True) -> None:
        if kind not in DEFAULT_FRAMINGS:
            raise DecodeError(
                f"unknown stream kind {kind!r}: expected one of {', '.join(DEFAULT_FRAMINGS)}"
            )
        self._kind = kind
        self._keep_deltas = keep_deltas
        self._framing: str | None = "chunks" if kind == "chunks" else None
        self._sse = SSEDecoder(keep_unknown_fields=True)
        self._ndjson = NDJSONDecoder()
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._reads = 0
        self._events = 0
        self._lines = 0
        self._content = _PiecesBuilder()
        self._reasoning: list[str] = []
        self._deltas: list[Delta] = []
        self._errors: list[str] = []
        self._calls = CallAssembler()
        self._content_pairs = SurrogateJoiner()
        self._reasoning_pairs = SurrogateJoiner()
        self._finish_reason: str | None = None
        self._done = False
        self._unfinished: str | None = None

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def framing(self) -> str | None:
        """The framing detected so far, ``None`` before the first payload."""
        return self._framing

    def feed(self, data: bytes | str) -> list[Delta]:
        """Decode one read (sse, ndjson) or one chunk (chunks)."""
        data = self._check_read(data)
        if self._kind == "chunks":
            text = self._utf8.decode(data) if isinstance(data, bytes) else data
            return self._apply(Delta(content=text)) if text else []
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if self._kind == "sse":
            return [d for event in self._sse.feed(raw) for d in self._on_event(event)]
        return [d for line in self._ndjson.feed(raw) for d in self._on_line(line)]

    def finish(self) -> list[Delta]:
        """End of stream: flush what is held and note an unterminated tail."""
        return self._finish_body() + self._finish_surrogates()

    def _finish_body(self) -> list[Delta]:
        if self._kind == "chunks":
            text = self._utf8.decode(b"", final=True)
            return self._apply(Delta(content=text)) if text else []
        if self._kind == "sse":
            for event in self._sse.finish():
                tail = [event.data] if event.data else []
                tail += [f"{name}: {value}" for name, value in event.extra]
                self._unfinished = "\n".join(tail)
            return []
        return [d for line in self._ndjson.finish() for d in self._on_line(line)]

    def _finish_surrogates(self) -> list[Delta]:
        """A high surrogate still waiting for its low half, as U+FFFD."""
        content, reasoning = self._content_pairs.finish(), self._reasoning_pairs.finish()
        if not (content or reasoning):
            return []
        return self._apply(Delta(content=content or None, reasoning=reasoning or None))

    def result(self) -> Decoded:
        """What the stream said so far (after :meth:`finish`: all of it)."""
        return Decoded(
            framing=self._framing or DEFAULT_FRAMINGS[self._kind],
            content=self._content.pieces(),
            reasoning=list(self._reasoning),
            calls=self._calls.calls(),
            deltas=list(self._deltas),
            finish_reason=self._finish_reason,
            done=self._done,
            errors=list(self._errors),
            unfinished=self._unfinished,
        )

    def _check_read(self, data: object) -> bytes | str:
        index = self._reads
        self._reads += 1
        if isinstance(data, bytes | str):
            return data
        if isinstance(data, bytearray | memoryview):
            return bytes(data)
        raise DecodeError(f"read {index}: expected bytes or str, got {type(data).__name__}")

    def _on_event(self, event: SSEEvent) -> list[Delta]:
        index = self._events
        self._events += 1
        where = f"SSE event {index} (body bytes {event.start}-{event.end})"
        deltas: list[Delta] = []
        # llama.cpp's server reports a failure mid-stream as an ``error:``
        # field, which the spec ignores as an unknown field.
        for name, value in event.extra:
            if name == "error":
                deltas += self._apply(Delta(error=_lenient_error(value)))
        if event.event == "error":
            message = _lenient_error(event.data) or "error event without data"
            return deltas + self._apply(Delta(error=message))
        if event.data.strip():
            deltas += self._on_payload(event.data, where)
        return deltas

    def _on_line(self, line: NDJSONLine) -> list[Delta]:
        index = self._lines
        self._lines += 1
        where = f"NDJSON line {index} (body bytes {line.start}-{line.end})"
        if line.complete:
            return self._on_payload(line.text, where)
        try:
            return self._on_payload(line.text, where)
        except DecodeError:
            if self._parses(line.text):
                raise  # a whole line with a bad shape is malformed, not cut short
            self._unfinished = line.text
            return []

    @staticmethod
    def _parses(text: str) -> bool:
        try:
            json.loads(text)
        except (ValueError, RecursionError):
            return False
        return True

    def _on_payload(self, text: str, where: str) -> list[Delta]:
        if text.strip() == _DONE:
            return self._apply(Delta(done=True))
        obj = parse_json_object(text, where)
        if obj.get("error") is not None:
            return self._apply(Delta(error=error_text(obj)))
        return self._apply(parse_payload(self._framing_of(obj, where), obj, where))

    def _framing_of(self, obj: JSONObject, where: str) -> str:
        if self._framing is None:
            self._framing = detect_framing(obj)
            if self._framing is None:
                # repr() a key that would break the message's one printable line
                shown = (key if key.isprintable() else repr(key) for key in sorted(obj)[:8])
                keys = ", ".join(shown) or "none"
                raise DecodeError(
                    f"{where}: unrecognised payload (keys: {keys}); expected an OpenAI "
                    'chat-completion chunk ("choices"), a llama.cpp /completion chunk '
                    '("content", "stop") or an Ollama line ("message", "done")'
                )
        return self._framing

    def _apply(self, raw: Delta) -> list[Delta]:
        for fragment in raw.tool_calls:
            # the raw fragments: a pair split between two argument pieces rejoins
            self._calls.add(fragment)
        delta = printable_delta(
            raw,
            content=self._content_pairs.feed(raw.content) if raw.content else raw.content,
            reasoning=self._reasoning_pairs.feed(raw.reasoning) if raw.reasoning else raw.reasoning,
        )
        if self._keep_deltas:
            self._deltas.append(delta)
        if delta.content:
            self._content.append(delta.content)
        if delta.reasoning:
            self._reasoning.append(delta.reasoning)
        if delta.finish_reason is not None:
            self._finish_reason = delta.finish_reason
        if delta.error is not None:
            self._errors.append(delta.error)
        self._done = self._done or delta.done
        return [delta]


def _label(recording: RecordingLike) -> str:
    path = getattr(recording, "path", None)
    if path:
        return str(path)
    header = recording.header
    ident = header.get("id") if isinstance(header, Mapping) else None
    return f"recording {ident!r}" if ident else "recording"


def decode(recording: RecordingLike, *, keep_deltas: bool = True) -> Decoded:
    """Decode a recording's frames; errors name the recording and the frame.

    ``recording.frames`` is read once, so it may be a reader's frame iterator.
    """
    label = _label(recording)
    try:
        decoder = StreamDecoder(recording.kind, keep_deltas=keep_deltas)
    except DecodeError as exc:
        raise DecodeError(f"{label}: {exc}") from exc
    for index, frame in enumerate(recording.frames):
        try:
            decoder.feed(frame.data)
        except DecodeError as exc:
            raise DecodeError(f"{label}, frame {index}: {exc}") from exc
    try:
        decoder.finish()
    except DecodeError as exc:
        raise DecodeError(f"{label}, end of stream: {exc}") from exc
    return decoder.result()


def decode_bytes(kind: str, reads: Iterable[bytes]) -> Decoded:
    """Decode a body given as reads; the split into reads does not change the result."""
    decoder = StreamDecoder(kind)
    for read in reads:
        decoder.feed(read)
    decoder.finish()
    return decoder.result()


def decode_chunks(chunks: Iterable[str]) -> Decoded:
    """An engine's chunk sequence as a :class:`Decoded` (framing ``chunks``)."""
    decoder = StreamDecoder("chunks")
    for chunk in chunks:
        decoder.feed(chunk)
    decoder.finish()
    return decoder.result()
