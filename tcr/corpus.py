"""Recording format version 1 (DESIGN §3): one msgpack stream per ``*.msgpack`` file.

Objects, in order: a header map; frames ``[t_ns, data]`` or ``[t_ns, data, meta]``;
on close a trailer ``{"end": {...}}``; optionally an expectation ``{"expect": {...}}``.

Frame ``data`` must fit the recording's kind: ``bytes`` for ``sse`` and ``ndjson``
(raw body bytes, exactly as read), ``str`` for ``chunks`` (engine text chunks).
Anything else is refused on write and on read, so consumers never guess.

The writer flushes after every object, so a killed recorder leaves a readable
file that reads as incomplete. The reader streams: memory is one object, not
the file. A truncated final object is the end of an interrupted recording; every
other defect raises ``CorpusError`` naming the file and the byte offset of the
object at fault.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final
from uuid import uuid4

import msgpack  # type: ignore[import-untyped]

from tcr._msgpack_stream import (
    EOF,
    MAX_BLOB,
    MAX_ITEMS,
    ObjectStream,
    Tail,
    one_line,
    unpack_one,
    where,
)
from tcr.errors import CorpusError

__all__ = [
    "FORMAT_VERSION",
    "KINDS",
    "MAX_BLOB",
    "MAX_ITEMS",
    "ORIGINS",
    "Frame",
    "Recording",
    "RecordingReader",
    "RecordingWriter",
    "iter_recordings",
    "new_header",
    "read_recording",
    "write_expectation",
    "write_recording",
]

FORMAT_VERSION: Final = 1
KINDS: Final = ("chunks", "ndjson", "sse")
ORIGINS: Final = ("fuzz", "handmade", "recorded")

_NO_TRAILER: Final = "interrupted: no trailer"


@dataclass(frozen=True, slots=True)
class Frame:
    """What arrived at ``t_ns`` nanoseconds after the request started."""

    t_ns: int
    data: bytes | str
    meta: dict[str, Any] | None = None


@dataclass(slots=True)
class Recording:
    """A fully loaded recording. ``end`` is the trailer's map, ``None`` if interrupted."""

    header: dict[str, Any]
    frames: list[Frame]
    end: dict[str, Any] | None
    expect: dict[str, Any] | None
    path: Path | None = None

    @property
    def id(self) -> str:
        return str(self.header["id"])

    @property
    def kind(self) -> str:
        return str(self.header["kind"])

    @property
    def tools(self) -> list[str] | None:
        tools: list[str] | None = self.header.get("tools")
        return tools

    @property
    def labels(self) -> dict[str, Any]:
        labels: dict[str, Any] = self.header.get("labels") or {}
        return labels

    @property
    def complete(self) -> bool:
        return self.end is not None and self.end["complete"] is True

    @property
    def incomplete_reason(self) -> str | None:
        if self.end is None:
            return _NO_TRAILER
        if self.end["complete"] is True:
            return None
        return self.end["error"] or "closed as incomplete (no reason given)"


class _Invalid(Exception):
    """A validation failure, before the path and offset are known."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_name(value: object) -> str:
    return {dict: "map", list: "array", bytes: "bin", type(None): "nil"}.get(
        type(value), type(value).__name__
    )


def _check_header(header: object) -> dict[str, Any]:
    if not isinstance(header, dict):
        raise _Invalid(f"not a tcr recording: the first object is {_type_name(header)}, not a map")
    if "tcr" not in header:
        raise _Invalid("not a tcr recording: the header map has no 'tcr' format version")
    version = header["tcr"]
    if not _is_int(version) or version < 1:
        raise _Invalid(f"not a tcr recording: 'tcr' is {version!r}, not a format version")
    if version > FORMAT_VERSION:
        raise _Invalid(
            f"recording was written by a newer tcr (format {version}); "
            f"this tcr reads format {FORMAT_VERSION}: upgrade tcr"
        )
    if not isinstance(header.get("id"), str):
        raise _Invalid("header 'id' must be a str")
    if header.get("kind") not in KINDS:
        raise _Invalid(f"header 'kind' is {header.get('kind')!r}; expected one of {KINDS}")
    for key in ("source", "request", "response", "labels"):
        if key in header and not isinstance(header[key], dict):
            raise _Invalid(f"header {key!r} must be a map, not {_type_name(header[key])}")
    if "created" in header and not isinstance(header["created"], str):
        raise _Invalid("header 'created' must be an ISO-8601 str")
    tools = header.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(name, str) for name in tools)
    ):
        raise _Invalid("header 'tools' must be a list of str or nil")
    return header


def _check_frame(obj: list[Any], kind: str, index: int) -> Frame:
    if len(obj) not in (2, 3):
        raise _Invalid(f"frame {index} is not [t_ns, data(, meta)]: it has {len(obj)} items")
    t_ns, data = obj[0], obj[1]
    meta = obj[2] if len(obj) == 3 else None
    if not _is_int(t_ns) or t_ns < 0:
        raise _Invalid(f"frame {index} is not [t_ns, data(, meta)]: t_ns is {t_ns!r}")
    wanted, wanted_name = (str, "str") if kind == "chunks" else (bytes, "bin (bytes)")
    if not isinstance(data, wanted):
        raise _Invalid(
            f"frame {index}: data is {_type_name(data)}, "
            f"but a {kind!r} recording stores {wanted_name}"
        )
    if meta is not None and not isinstance(meta, dict):
        raise _Invalid(f"frame {index}: meta is {_type_name(meta)}, not a map or nil")
    return Frame(t_ns, data, meta)


def _check_end(obj: dict[str, Any], frames: int, nbytes: int) -> dict[str, Any]:
    if set(obj) != {"end"} or not isinstance(obj["end"], dict):
        raise _Invalid(f"expected a frame or the trailer {{'end': ...}}, got a map {sorted(obj)}")
    end: dict[str, Any] = obj["end"]
    if not isinstance(end.get("complete"), bool):
        raise _Invalid("trailer 'complete' must be a bool")
    if not (end.get("error") is None or isinstance(end["error"], str)):
        raise _Invalid("trailer 'error' must be a str or nil")
    if not (_is_int(end.get("frames")) and _is_int(end.get("bytes"))):
        raise _Invalid("trailer 'frames' and 'bytes' must be ints")
    if (end["frames"], end["bytes"]) != (frames, nbytes):
        raise _Invalid(
            f"trailer counts {end['frames']} frames of {end['bytes']} bytes, "
            f"but the file holds {frames} frames of {nbytes} bytes: frames were lost or added"
        )
    return end


def _check_expect(expectation: object) -> dict[str, Any]:
    if not isinstance(expectation, dict):
        raise _Invalid(f"expectation must be a map, not {_type_name(expectation)}")
    for key in ("text", "reasoning"):
        if key in expectation and not isinstance(expectation[key], str):
            raise _Invalid(f"expectation {key!r} must be a str")
    calls = expectation.get("calls", [])
    if not (isinstance(calls, list) and all(isinstance(call, dict) for call in calls)):
        raise _Invalid("expectation 'calls' must be a list of maps")
    return expectation


def _as_dict(value: object) -> object:
    return dict(value) if isinstance(value, Mapping) else value


def _blob_len(data: bytes | str) -> int:
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8"))


class RecordingReader:
    """Streams one recording. The header is read and checked at once; frames lazily.

    After ``frames()`` is exhausted, ``end`` (``None`` when interrupted) and
    ``expect`` are set. Each ``frames()`` call starts again from the first frame;
    the reader shares one file, so run one iteration at a time.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.end: dict[str, Any] | None = None
        self.expect: dict[str, Any] | None = None
        self._frames_end = 0  # offset after the last whole frame
        self._trailer_end: int | None = None
        self._counts = (0, 0)
        try:
            self._file: IO[bytes] = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise where(self.path, None, f"cannot open: {exc.strerror or exc}") from exc
        try:
            self.header = self._read_header()
        except BaseException:
            self._file.close()
            raise

    def _read_header(self) -> dict[str, Any]:
        if os.fstat(self._file.fileno()).st_size == 0:
            raise where(self.path, 0, "empty file: not a tcr recording")
        objects = ObjectStream(self.path, self._file, 0)
        _, header = objects.read()
        if header is EOF:
            raise where(self.path, 0, "empty file: not a tcr recording")
        if isinstance(header, Tail):
            raise where(self.path, 0, "not a tcr recording: the file ends inside the header")
        try:
            checked = _check_header(header)
        except _Invalid as exc:
            raise where(self.path, 0, str(exc)) from None
        self._body_offset = self._frames_end = objects.offset
        return checked

    def frames(self) -> Iterator[Frame]:
        if self._file.closed:
            raise where(self.path, None, "the reader is closed")
        self.end = self.expect = None
        self._trailer_end, self._frames_end, self._counts = None, self._body_offset, (0, 0)
        objects = ObjectStream(self.path, self._file, self._body_offset)
        kind: str = self.header["kind"]
        count = nbytes = 0
        while True:
            offset, obj = objects.read()
            if obj is EOF:
                return
            try:
                if isinstance(obj, Tail):
                    if obj.container == "map" or (
                        obj.container == "array" and obj.items in (2, 3, None)
                    ):
                        return  # a recording interrupted mid-object
                    raise _Invalid(
                        f"object {count} after the header is neither a frame "
                        "nor the trailer (and the file ends inside it)"
                    )
                if isinstance(obj, list):
                    frame = _check_frame(obj, kind, count)
                elif isinstance(obj, dict):
                    end = _check_end(obj, count, nbytes)
                    break
                else:
                    raise _Invalid(
                        f"object {count} after the header is {_type_name(obj)}, "
                        "neither a frame nor the trailer"
                    )
            except _Invalid as exc:
                raise where(self.path, offset, str(exc)) from None
            count += 1
            nbytes += _blob_len(frame.data)
            self._frames_end, self._counts = objects.offset, (count, nbytes)
            yield frame
        self._trailer_end = objects.offset
        self.end, self.expect = end, self._read_expect(objects)

    def _read_expect(self, objects: ObjectStream) -> dict[str, Any] | None:
        offset, obj = objects.read()
        if obj is EOF:
            return None
        if isinstance(obj, Tail):
            raise where(
                self.path,
                offset,
                "the expectation is cut short (an interrupted bless): write it again",
            )
        if not (isinstance(obj, dict) and set(obj) == {"expect"}):
            raise where(
                self.path,
                offset,
                "only an expectation {'expect': ...} may follow "
                f"the trailer, not {_type_name(obj)}",
            )
        try:
            expectation = _check_expect(obj["expect"])
        except _Invalid as exc:
            raise where(self.path, offset, str(exc)) from None
        offset, extra = objects.read()
        if extra is not EOF:
            raise where(self.path, offset, "unexpected data after the expectation")
        return expectation

    def __iter__(self) -> Iterator[Frame]:
        return self.frames()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordingReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def read_recording(path: str | Path) -> Recording:
    """Load a whole recording (header, frames, trailer, expectation)."""
    with RecordingReader(path) as reader:
        frames = list(reader.frames())
        return Recording(reader.header, frames, reader.end, reader.expect, reader.path)


def iter_recordings(paths: Iterable[str | Path] | str | Path) -> Iterator[Path]:
    """Recording files: each file as given, each directory searched for ``*.msgpack``.

    Directories are walked recursively in sorted order (symlinked directories are
    not followed); a file reached twice is yielded once. Every path is checked
    before the first is yielded, so a typo fails fast.
    """
    roots = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    for root in roots:
        if not root.exists():
            raise where(root, None, "no such file or directory")
        if not (root.is_file() or root.is_dir()):
            raise where(root, None, "not a file or directory")
    seen: set[Path] = set()
    for root in roots:
        found = [root] if root.is_file() else _walk(root)
        for path in found:
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                yield path


def _walk(root: Path) -> list[Path]:
    found = [
        Path(folder, name)
        for folder, _, names in os.walk(root)
        for name in names
        if name.endswith(".msgpack") and Path(folder, name).is_file()
    ]
    return sorted(found, key=lambda path: path.relative_to(root).parts)


# --- writing -----------------------------------------------------------------


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
        return _check_header(header)
    except _Invalid as exc:
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
    """``obj`` as msgpack; with ``verify``, refused if this module's reader would refuse it."""
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
            self.header = _check_header(_as_dict(header))
        except _Invalid as exc:
            raise where(self.path, None, f"invalid header: {exc}") from None
        self.kind: str = self.header["kind"]
        self.frame_count = self.byte_count = 0
        self.closed = False
        self._expect: bytes | None = None
        packed = _pack(self.path, self.header, "the header")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file: IO[bytes] = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise where(self.path, None, f"cannot write: {exc.strerror or exc}") from exc
        self._write(packed)

    def _write(self, packed: bytes) -> None:
        # One write and one flush per object: a killed process loses at most the
        # object being written, which the reader sees as a cut-short final object.
        self._file.write(packed)
        self._file.flush()

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
            frame = _check_frame(obj, self.kind, self.frame_count)
        except _Invalid as exc:
            raise where(self.path, None, str(exc)) from None
        # Without meta only the data can break a limit, and only by its size.
        verify = meta is not None or len(data) > MAX_BLOB // 4
        self._write(_pack(self.path, obj, f"frame {self.frame_count}", verify=verify))
        self.frame_count += 1
        self.byte_count += _blob_len(frame.data)

    def expect(self, expectation: Mapping[str, Any]) -> None:
        """Attach a blessed result: held and written after the trailer at close, or,
        once closed, written at once by ``write_expectation``."""
        if self.closed:
            write_expectation(self.path, expectation)
            return
        try:
            checked = _check_expect(_as_dict(expectation))
        except _Invalid as exc:
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
        checked = _check_expect(_as_dict(expectation))
    except _Invalid as exc:
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
            end = {"complete": False, "error": _NO_TRAILER, "frames": frames, "bytes": nbytes}
            packed = _pack(path, {"end": end}, "the trailer") + packed
            keep = reader._frames_end
    try:
        with open(path, "r+b") as file:
            file.truncate(keep)
            file.seek(keep)
            file.write(packed)
    except OSError as exc:
        raise where(path, None, f"cannot write: {exc.strerror or exc}") from exc
