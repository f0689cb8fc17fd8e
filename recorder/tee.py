"""Engine capture: ``tee(chunks, path)`` records an engine's text chunks as they pass.

Wrap the iterator (or async iterator) an engine hands its text to the client
with, and keep using what ``tee`` returns: every chunk comes out unchanged and
is recorded as a ``chunks`` recording, one frame per chunk, stamped with
``time.monotonic_ns()`` since iteration began. Bytes chunks are recorded as the
text they decode to (UTF-8, a character split across chunks completing in the
frame that finishes it), so the frames join to exactly the decoded stream.

The recording closes complete when the source is exhausted, and incomplete
when the source raises (the exception is recorded and re-raised), the consumer
stops early, or the task is cancelled.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar, overload

from tcr.corpus import RecordingWriter, new_header
from tcr.recorder.capture import interrupted, new_recording_path, one_line

__all__ = ["tee"]

Chunk = TypeVar("Chunk", str, bytes)

_HEADER_FIELDS: Final = frozenset(
    {"id", "source", "request", "response", "tools", "labels", "created"}
)
_SOURCE_FIELDS: Final = frozenset({"endpoint", "backend", "model"})
_STOPPED_EARLY: Final = "interrupted: the consumer stopped reading"


def _header(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Header fields from ``tee``'s keywords: header fields as they are, ``endpoint``,
    ``backend`` and ``model`` into ``source``, anything else into ``labels``."""
    fields = {k: v for k, v in meta.items() if k in _HEADER_FIELDS}
    source = {**dict(fields.get("source") or {})}
    labels = {"origin": "recorded", **dict(fields.get("labels") or {})}
    for key, value in meta.items():
        if key in _SOURCE_FIELDS:
            source[key] = value
        elif key not in _HEADER_FIELDS:
            labels[key] = value
    fields.update(source=source, labels=labels)
    return new_header("chunks", **fields)


class _Recorder:
    def __init__(self, path: str | Path, meta: Mapping[str, Any]) -> None:
        header = _header(meta)
        self.writer = RecordingWriter(new_recording_path(path, header["id"]), header)
        self.start_ns = time.monotonic_ns()
        self.utf8 = codecs.getincrementaldecoder("utf-8")("replace")

    def add(self, chunk: str | bytes) -> None:
        t_ns = time.monotonic_ns() - self.start_ns
        if isinstance(chunk, str):
            self.writer.frame(t_ns, chunk)
        elif isinstance(chunk, bytes | bytearray | memoryview):
            self.writer.frame(t_ns, self.utf8.decode(bytes(chunk)))
        else:
            raise TypeError(f"tee records str or bytes chunks, not {type(chunk).__name__}")

    def close(self, error: str | None = None) -> None:
        tail = self.utf8.decode(b"", final=True)
        if tail:
            self.writer.frame(time.monotonic_ns() - self.start_ns, tail)
        self.writer.close(complete=error is None, error=error)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, GeneratorExit):
        return _STOPPED_EARLY
    if isinstance(exc, KeyboardInterrupt | asyncio.CancelledError):
        return interrupted(exc)
    return f"the source raised {one_line(exc)}"


def _tee_sync(
    chunks: Iterable[Chunk], path: str | Path, meta: Mapping[str, Any]
) -> Iterator[Chunk]:
    recorder = _Recorder(path, meta)
    try:
        for chunk in chunks:
            recorder.add(chunk)
            yield chunk
    except BaseException as exc:
        recorder.close(_failure(exc))
        raise
    recorder.close()


async def _tee_async(
    chunks: AsyncIterable[Chunk], path: str | Path, meta: Mapping[str, Any]
) -> AsyncIterator[Chunk]:
    recorder = _Recorder(path, meta)
    try:
        async for chunk in chunks:
            recorder.add(chunk)
            yield chunk
    except BaseException as exc:
        recorder.close(_failure(exc))
        raise
    recorder.close()


@overload
def tee(chunks: AsyncIterable[Chunk], path: str | Path, **meta: Any) -> AsyncIterator[Chunk]: ...


@overload
def tee(chunks: Iterable[Chunk], path: str | Path, **meta: Any) -> Iterator[Chunk]: ...


def tee(
    chunks: Iterable[Chunk] | AsyncIterable[Chunk], path: str | Path, **meta: Any
) -> Iterator[Chunk] | AsyncIterator[Chunk]:
    """Yield ``chunks`` unchanged and record them at ``path`` (a file, or a directory
    to create a new time-stamped file in).

    ``meta`` fills the header: ``tools``, ``labels``, ``request``, ``source``,
    ``id`` as in :func:`tcr.corpus.new_header`; ``model``, ``backend`` and
    ``endpoint`` go into ``source``; any other keyword (``dialect``, ``note``,
    ``bug``) becomes a label. ``labels['origin']`` defaults to ``"recorded"``.
    The file is created when iteration starts, not before.
    """
    _header(meta)  # bad metadata fails here, at the call, not at the first chunk
    if isinstance(chunks, AsyncIterable):
        return _tee_async(chunks, path, meta)
    return _tee_sync(chunks, path, meta)
