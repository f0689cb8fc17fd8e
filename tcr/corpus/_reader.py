"""Reading recordings (private): a streaming reader, a whole-file loader, and the
walk that finds recording files.

Memory is one msgpack object, not the file. A truncated final object is the end
of an interrupted recording; every other defect raises ``CorpusError`` naming
the file and the byte offset of the object at fault.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from tcr.corpus._model import (
    Frame,
    Invalid,
    Recording,
    blob_len,
    check_end,
    check_expect,
    check_frame,
    check_header,
    type_name,
)
from tcr.corpus._msgpack import EOF, ObjectStream, Tail, where

__all__ = ["RecordingReader", "iter_recordings", "read_recording"]


def _open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading if it is a regular file: opened without blocking, so a
    FIFO (whose open waits for a writer) or a device is refused in one line, not read
    forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise where(path, None, f"cannot open: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise where(path, None, "not a regular file: a recording is a file written by tcr")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


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
        self._file: IO[bytes] = _open_regular(self.path)
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
            checked = check_header(header)
        except Invalid as exc:
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
                    raise Invalid(
                        f"object {count} after the header is neither a frame "
                        "nor the trailer (and the file ends inside it)"
                    )
                if isinstance(obj, list):
                    frame = check_frame(obj, kind, count)
                elif isinstance(obj, dict):
                    end = check_end(obj, count, nbytes)
                    break
                else:
                    raise Invalid(
                        f"object {count} after the header is {type_name(obj)}, "
                        "neither a frame nor the trailer"
                    )
            except Invalid as exc:
                raise where(self.path, offset, str(exc)) from None
            count += 1
            nbytes += blob_len(frame.data)
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
                f"the trailer, not {type_name(obj)}",
            )
        try:
            expectation = check_expect(obj["expect"])
        except Invalid as exc:
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


def find_recordings(paths: Iterable[str | Path] | str | Path) -> list[Path]:
    """``iter_recordings`` as a list that is never empty: a command that finds no
    recording to work on says so (a ``CorpusError`` naming where it looked) instead of
    reporting that all of none passed, as pytest exits 5 when it collects no test."""
    found = list(iter_recordings(paths))
    if not found:
        given = [str(paths)] if isinstance(paths, str | Path) else [str(p) for p in paths]
        raise where(", ".join(given), None, "no recording (*.msgpack) found there")
    return found


def _walk(root: Path) -> list[Path]:
    found = [
        Path(folder, name)
        for folder, _, names in os.walk(root)
        for name in names
        if name.endswith(".msgpack") and Path(folder, name).is_file()
    ]
    return sorted(found, key=lambda path: path.relative_to(root).parts)
