"""What a recording says, in a few numbers and a preview: ``tcr record``'s and
``tcr import``'s summary (frames, bytes, time to first byte, duration, content)."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from tcr.corpus import read_recording
from tcr.errors import TcrError
from tcr.stream import decode

__all__ = ["Summary", "summarize"]

_PREVIEW: Final = 120


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
    """Read a recording and decode it with :mod:`tcr.stream` for the preview.

    A recorder knows the request's duration; pass it, else the last frame's time
    stands in. A body that does not decode (an HTML error page) is previewed raw.
    """
    recording = read_recording(path)
    frames = recording.frames
    nbytes = sum(len(f.data if isinstance(f.data, bytes) else f.data.encode()) for f in frames)
    if ttfb_ns is None and frames:
        ttfb_ns = frames[0].t_ns
    if duration_ns is None and frames:
        duration_ns = frames[-1].t_ns
    calls: list[str] = []
    done = False
    text = ""
    chars = 0
    with contextlib.suppress(TcrError):
        decoded = decode(recording)
        text, chars, done = decoded.text, len(decoded.text), decoded.done
        calls = [call.name or "?" for call in decoded.calls]
        if not text and decoded.reasoning_text:
            text = "(reasoning) " + decoded.reasoning_text
        if not text and decoded.errors:
            text = "error: " + decoded.errors[0]
    if not text and not calls:  # nothing decoded (an HTML error page): show what arrived
        raw = b"".join(f.data if isinstance(f.data, bytes) else f.data.encode() for f in frames)
        text = raw.decode("utf-8", "replace")
    return Summary(
        path=str(path),
        kind=recording.kind,
        status=recording.header.get("response", {}).get("status"),
        frames=len(frames),
        bytes=nbytes,
        ttfb_ms=None if ttfb_ns is None else ttfb_ns / 1e6,
        duration_ms=None if duration_ns is None else duration_ns / 1e6,
        complete=recording.complete,
        error=recording.incomplete_reason,
        preview=_preview(text),
        chars=chars,
        calls=calls,
        done=done,
    )
