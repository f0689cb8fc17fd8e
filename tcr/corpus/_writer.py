"""Writing recordings (private): headers with their defaults, the append-only
writer, whole-recording writes, and blessing a closed recording with its expectation.

The writer flushes after every object, so a killed recorder leaves a readable
file that reads as incomplete. Nothing is written that the reader would refuse.

A writer holds an exclusive lock on its file until it closes (``flock``, where the
system has it): a second writer of the same path, in this process or another (three
``tcr record --out same.msgpack`` at once), is refused in one line before it truncates
anything, where it used to interleave with the first and leave neither readable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any
from uuid import uuid4

import msgpack  # type: ignore[import-untyped]

from tcr.corpus._model import (
    FORMAT_VERSION,
    KINDS,
    NO_TRAILER,
    ORIGINS,
    Frame,
    Invalid,
    as_dict,
    blob_len,
    check_expect,
    check_frame,
    check_header,
)
from tcr.corpus._msgpack import MAX_BLOB, one_line, unpack_one, where
from tcr.corpus._reader import RecordingReader
from tcr.errors import CorpusError

if sys.platform != "win32":
    import fcntl

__all__ = [
    "RecordingWriter",
    "new_header",
    "write_expectation",
    "write_recording",
]


def new_header(
    kind: str,
    *,
    id: str | None = None,
    source: Mapping[str, Any] | None = None,
    request: Mapping[str, Any] | None = None,
    response: Mapping[str, Any] | None = None,
    tools: Iterable[str] | None = None,
    labels: Mapping[str, Any] | None = None,
    created: datetime | str | None = None,
) -> dict[str, Any]:
    """A complete version-1 header; absent fields get their defaults.

    ``created`` defaults to now; a ``datetime`` must be timezone-aware and is stored
    in UTC. ``labels['origin']`` defaults to ``"handmade"``.
    """
    if kind not in KINDS:
        raise CorpusError(f"corpus: unknown recording kind {kind!r}: expected one of {KINDS}")
    all_labels = {"dialect": None, "origin": "handmade", "note": None, "bug": None}
    all_labels.update(labels or {})
    if all_labels["origin"] not in ORIGINS:
        raise CorpusError(
            f"corpus: label origin {all_labels['origin']!r}: expected one of {ORIGINS}"
        )
    header = {
        "tcr": FORMAT_VERSION,
        "id": uuid4().hex if id is None else id,
        "kind": kind,
        "created": _iso_utc(created),
        "source": {"endpoint": None, "backend": None, "model": None, **(source or {})},
        "request": dict(request or {}),
        "response": {"status": None, "headers": {}, **(response or {})},
        "tools": None if tools is None else list(tools),
        "labels": all_labels,
    }
    try:
        return check_header(header)
    except Invalid as exc:
        raise CorpusError(f"corpus: invalid header: {exc}") from None


def _iso_utc(created: datetime | str | None) -> str:
    if isinstance(created, str):
        try:
            created = datetime.fromisoformat(created)
        except ValueError:
            raise CorpusError(f"corpus: created {created!r} is not ISO-8601") from None
    if created is None:
        created = datetime.now(UTC)
    if created.utcoffset() is None:
        raise CorpusError(f"corpus: created {created.isoformat()} has no time zone; give UTC")
    return created.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _pack(path: Path, obj: object, what: str, *, verify: bool = True) -> bytes:
    """``obj`` as msgpack; with ``verify``, refused if the reader would refuse it."""
    try:
        packed: bytes = msgpack.packb(obj, use_bin_type=True)
        if verify:
            unpack_one(packed)
    except Exception as exc:  # unsupported type, too deep, over a limit
        raise where(path, None, f"cannot store {what}: {one_line(exc)}") from exc
    return packed


class RecordingWriter:
    """Writes one recording (replacing any file at ``path``), append-only, flushing
    after every object.

    Use as a context manager: a clean exit closes the recording as complete; an
    exception closes it as incomplete with the exception as its ``error``.
    """

    def __init__(self, path: str | Path, header: Mapping[str, Any]) -> None:
        self.path = Path(path)
        try:
            self.header = check_header(as_dict(header))
        except Invalid as exc:
            raise where(self.path, None, f"invalid header: {exc}") from None
        self.kind: str = self.header["kind"]
        self.frame_count = self.byte_count = 0
        self.closed = False
        self._expect: bytes | None = None
        packed = _pack(self.path, self.header, "the header")
        self._file: IO[bytes] = _open_alone(self.path)
        self._write(packed)

    def _write(self, packed: bytes) -> None:
        # One write and one flush per object: a killed process loses at most the
        # object being written, which the reader sees as a cut-short final object.
        self._file.write(packed)
        self._file.flush()

    def rekind(self, kind: str) -> None:
        """Change the recording's kind while no frame is written: a recorder writes the
        header the moment a response's status arrives (so a kill before the body keeps
        the status), and may learn the kind only from the first body bytes."""
        if self.closed or self.frame_count:
            raise where(self.path, None, "the kind can change only before the first frame")
        if kind == self.kind:
            return
        header = {**self.header, "kind": kind}
        try:
            check_header(header)
        except Invalid as exc:
            raise where(self.path, None, f"invalid header: {exc}") from None
        packed = _pack(self.path, header, "the header")
        # A kill between truncate and write leaves an empty file for an instant;
        # without the early header there would have been no file at all.
        self._file.seek(0)
        self._file.truncate()
        self._write(packed)
        self.header, self.kind = header, kind

    def frame(self, t_ns: int, data: bytes | str, meta: Mapping[str, Any] | None = None) -> None:
        """Append one frame: ``data`` is bytes for sse/ndjson, str for chunks."""
        if self.closed:
            raise where(self.path, None, "frame written after close")
        if isinstance(data, bytearray | memoryview):
            data = bytes(data)
        if isinstance(meta, Mapping):
            meta = dict(meta)
        obj: list[Any] = [t_ns, data] if meta is None else [t_ns, data, meta]
        try:
            frame = check_frame(obj, self.kind, self.frame_count)
        except Invalid as exc:
            raise where(self.path, None, str(exc)) from None
        # Without meta only the data can break a limit, and only by its size.
        verify = meta is not None or len(data) > MAX_BLOB // 4
        self._write(_pack(self.path, obj, f"frame {self.frame_count}", verify=verify))
        self.frame_count += 1
        self.byte_count += blob_len(frame.data)

    def frames(self, t_ns: int, reads: Sequence[bytes]) -> None:
        """Append several body reads that arrived together (sse/ndjson), with one
        write and one flush.

        Everything received before the recorder waits again is in the file, as
        with ``frame()``, for one system call instead of one per read: what lets
        a recording proxy keep pace with a fast upstream. The bytes written are
        exactly those of one ``frame()`` per read.
        """
        if (
            self.closed
            or self.kind == "chunks"
            or t_ns < 0
            or any(not isinstance(d, bytes) or len(d) > MAX_BLOB // 4 for d in reads)
        ):
            for data in reads:  # the general path, with every check
                self.frame(t_ns, data)
            return
        pack = msgpack.packb
        self._write(b"".join([pack([t_ns, data], use_bin_type=True) for data in reads]))
        self.frame_count += len(reads)
        self.byte_count += sum(map(len, reads))

    def expect(self, expectation: Mapping[str, Any]) -> None:
        """Attach a blessed result: held and written after the trailer at close, or,
        once closed, written at once by ``write_expectation``."""
        if self.closed:
            write_expectation(self.path, expectation)
            return
        try:
            checked = check_expect(as_dict(expectation))
        except Invalid as exc:
            raise where(self.path, None, str(exc)) from None
        self._expect = _pack(self.path, {"expect": checked}, "the expectation")

    def close(self, *, complete: bool = True, error: str | None = None) -> None:
        """Write the trailer (and a held expectation). Calling it again does nothing."""
        if self.closed:
            return
        if not isinstance(complete, bool) or not (error is None or isinstance(error, str)):
            raise where(self.path, None, "close() needs complete: bool and error: str | None")
        self.closed = True
        end = {
            "complete": complete,
            "error": error,
            "frames": self.frame_count,
            "bytes": self.byte_count,
        }
        try:
            self._write(_pack(self.path, {"end": end}, "the trailer"))
            if self._expect is not None:
                self._write(self._expect)
        finally:
            self._file.close()

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.close()
        else:
            self.close(complete=False, error=one_line(exc))


def _open_alone(path: Path) -> IO[bytes]:
    """``path`` opened for writing from its start, locked against every other writer,
    and truncated only once the lock is held."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)
    except OSError as exc:
        raise where(path, None, f"cannot write: {exc.strerror or exc}") from exc
    try:
        if sys.platform != "win32":
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
    except BlockingIOError:
        os.close(fd)
        raise where(
            path, None, "another writer has it open (a second tcr with the same --out?)"
        ) from None
    except OSError as exc:
        os.close(fd)
        raise where(path, None, f"cannot write: {exc.strerror or exc}") from exc
    return os.fdopen(fd, "wb")


def write_recording(
    path: str | Path,
    header: Mapping[str, Any],
    frames: Iterable[Frame | tuple[Any, ...]],
    *,
    complete: bool = True,
    error: str | None = None,
    expect: Mapping[str, Any] | None = None,
) -> Path:
    """Write a whole recording; frames are ``Frame`` or ``(t_ns, data[, meta])``."""
    with RecordingWriter(path, header) as writer:
        for frame in frames:
            if isinstance(frame, Frame):
                writer.frame(frame.t_ns, frame.data, frame.meta)
            elif isinstance(frame, tuple) and len(frame) in (2, 3):
                writer.frame(*frame)
            else:
                raise where(
                    writer.path,
                    None,
                    f"frame {writer.frame_count} is not a Frame or a (t_ns, data[, meta]) tuple",
                )
        if expect is not None:
            writer.expect(expect)
        writer.close(complete=complete, error=error)
    return writer.path


def write_expectation(path: str | Path, expectation: Mapping[str, Any]) -> None:
    """Bless a closed recording: add its expectation, replacing any earlier one.

    An interrupted recording first gets the trailer it lacked, as incomplete with
    the error ``"interrupted: no trailer"`` (so it still reads as before), and its
    cut-short final object, which no reader could see, is dropped.
    """
    path = Path(path)
    try:
        checked = check_expect(as_dict(expectation))
    except Invalid as exc:
        raise where(path, None, str(exc)) from None
    packed = _pack(path, {"expect": checked}, "the expectation")
    with RecordingReader(path) as reader:
        try:
            for _ in reader.frames():
                pass
        except CorpusError:
            if reader._trailer_end is None:  # broken before the expectation: not ours to mend
                raise
        keep = reader._trailer_end
        if keep is None:
            frames, nbytes = reader._counts
            end = {"complete": False, "error": NO_TRAILER, "frames": frames, "bytes": nbytes}
            packed = _pack(path, {"end": end}, "the trailer") + packed
            keep = reader._frames_end
    try:
        with open(path, "r+b") as file:
            file.truncate(keep)
            file.seek(keep)
            file.write(packed)
    except OSError as exc:
        raise where(path, None, f"cannot write: {exc.strerror or exc}") from exc
