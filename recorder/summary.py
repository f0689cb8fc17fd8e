"""What a recording says, in a few numbers and a preview: ``tcr record``'s and
``tcr import``'s summary (frames, bytes, time to first byte, duration, content)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from tcr.corpus import Frame, Recording, RecordingReader
from tcr.errors import DecodeError
from tcr.stream import CallAssembler, Delta, StreamDecoder

__all__ = ["Summary", "summarize"]

_PREVIEW: Final = 120
_HEAD: Final = 4 * _PREVIEW  # bytes of an undecodable body kept: a preview's worth


@dataclass(frozen=True, slots=True)
class Summary:
    """One recording at a glance; times in milliseconds, ``None`` when unknown."""

    path: str
    kind: str
    status: int | None
    frames: int
    bytes: int
    ttfb_ms: float | None
    duration_ms: float | None
    complete: bool
    error: str | None
    preview: str
    chars: int
    calls: list[str]
    done: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _preview(text: str) -> str:
    flat = text.replace("\r", "␍").replace("\n", "↵")
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…"


def summarize(
    path: str | Path, *, ttfb_ns: int | None = None, duration_ns: int | None = None
) -> Summary:
    """Read a recording a frame at a time and decode it with :mod:`tcr.stream` for the
    preview: what is held is its content, never its frames nor a delta per event (a
    63 MB stream's summary took 285 MB, issue 36).

    A recorder knows the request's duration; pass it, else the last frame's time
    stands in. A body that does not decode (an HTML error page) is previewed raw.
    """
    with RecordingReader(path) as reader:
        seen = _Seen(reader.frames())
        said = _Said()
        with contextlib.suppress(DecodeError):
            decoder = StreamDecoder(reader.header["kind"], keep_deltas=False)
            for frame in seen:
                said.add(decoder.feed(frame.data))
            said.add(decoder.finish())
            said.whole = True
        seen.finish()  # the frames after one that does not decode count too
        recording = Recording(reader.header, [], reader.end, reader.expect, reader.path)
    if ttfb_ns is None:
        ttfb_ns = seen.first_ns
    if duration_ns is None:
        duration_ns = seen.last_ns
    calls: list[str] = []
    done = False
    text = ""
    chars = 0
    if said.whole:  # as the original did, nothing of a body that does not decode
        text, chars, done = said.text, said.chars, said.done
        calls = [call.name or "?" for call in said.calls.calls()]
        if not text and said.reasoning:
            text = "(reasoning) " + said.reasoning
        if not text and said.errors:
            text = "error: " + said.errors[0]
    if not text and not calls:  # nothing decoded (an HTML error page): show what arrived
        text = b"".join(seen.head).decode("utf-8", "replace")
    return Summary(
        path=str(path),
        kind=recording.kind,
        status=recording.header.get("response", {}).get("status"),
        frames=seen.frames,
        bytes=seen.bytes,
        ttfb_ms=None if ttfb_ns is None else ttfb_ns / 1e6,
        duration_ms=None if duration_ns is None else duration_ns / 1e6,
        complete=recording.complete,
        error=recording.incomplete_reason,
        preview=_preview(text),
        chars=chars,
        calls=calls,
        done=done,
    )


class _Said:
    """What the deltas said, as they go by: the content's length and its first
    characters, not all of it (its whole text was the content twice more at its end)."""

    def __init__(self) -> None:
        self.text = self.reasoning = ""  # the first characters of each, a preview's worth
        self.chars = 0
        self.done = self.whole = False
        self.errors: list[str] = []
        self.calls = CallAssembler()

    def add(self, deltas: Iterable[Delta]) -> None:
        for delta in deltas:
            if delta.content:
                self.chars += len(delta.content)
                if len(self.text) <= _PREVIEW:  # one more than shown: is there more?
                    self.text += delta.content[: _PREVIEW + 1]
            if delta.reasoning and len(self.reasoning) <= _PREVIEW:
                self.reasoning += delta.reasoning[: _PREVIEW + 1]
            for fragment in delta.tool_calls:
                self.calls.add(replace(fragment, arguments=""))  # only the names are shown
            if delta.error is not None:
                self.errors.append(delta.error)
            self.done = self.done or delta.done


class _Seen:
    """The frames as they go by: counted, timed, the first bytes kept for a raw preview."""

    def __init__(self, frames: Iterator[Frame]) -> None:
        self._frames = frames
        self.frames = self.bytes = 0
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self.head: list[bytes] = []  # at least _HEAD bytes, when the body has them

    def __iter__(self) -> Iterator[Frame]:
        for frame in self._frames:
            data = frame.data if isinstance(frame.data, bytes) else frame.data.encode()
            if self.first_ns is None:
                self.first_ns = frame.t_ns
            self.last_ns = frame.t_ns
            if self.bytes < _HEAD:
                self.head.append(data)
            self.frames += 1
            self.bytes += len(data)
            yield frame

    def finish(self) -> None:
        for _ in self:
            pass
