"""Bounded msgpack objects from a file, for ``tcr.corpus`` (private).

msgpack's streaming ``Unpacker`` checks a str/bin length only once the body has
arrived, and stops silently both at end of file and when its buffer is full. A
recording reader needs more: the byte offset of every object, "clean end" told
apart from "cut short", and a hostile length prefix (4 GB claimed, never sent)
refused rather than mistaken for an interrupted recording. This module adds
exactly that; what the objects mean is ``tcr.corpus``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import msgpack  # type: ignore[import-untyped]

from tcr.errors import CorpusError

__all__ = [
    "EOF",
    "LIMITS",
    "MAX_BLOB",
    "MAX_BUFFER",
    "MAX_ITEMS",
    "ObjectStream",
    "Tail",
    "one_line",
    "unpack_one",
    "where",
]

MAX_BLOB: Final = 16 << 20  # one str or bin: far above any single read or chunk
MAX_ITEMS: Final = 1 << 18  # one array or map (msgpack preallocates arrays)
MAX_BUFFER: Final = 2 * MAX_BLOB  # one whole object plus read-ahead
_MAX_DEPTH: Final = 1024  # msgpack's own stack depth
_READ_SIZE: Final = 64 << 10
LIMITS: Final[dict[str, int]] = {
    "max_buffer_size": MAX_BUFFER,
    "max_bin_len": MAX_BLOB,
    "max_str_len": MAX_BLOB,
    "max_array_len": MAX_ITEMS,
    "max_map_len": MAX_ITEMS,
    "max_ext_len": 0,  # extension types are never written by tcr
}

EOF: Final = object()
"""What ``ObjectStream.read`` returns at a clean end of file."""


@dataclass(frozen=True, slots=True)
class Tail:
    """A final object cut short by the end of the file."""

    container: str  # "array", "map" or "other"
    items: int | None  # declared array/map size, when its length field arrived


def where(path: Path | str, offset: int | None, what: str) -> CorpusError:
    at = "" if offset is None else f"byte {offset}: "
    return CorpusError(f"corpus: {path}: {at}{what}")


def one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    return text.splitlines()[0][:300]


def unpack_one(packed: bytes) -> Any:
    """Unpack one whole object under the reader's limits (so a writer can refuse in time)."""
    unpacker = msgpack.Unpacker(raw=False, **LIMITS)
    unpacker.feed(packed)
    return next(unpacker)


class _TooLarge(Exception):
    pass


class _CountingSource:
    """Tells how many bytes msgpack took, whether it stopped at end of file, and
    stops one object from growing past ``MAX_BUFFER``.

    msgpack also stops, silently, when its buffer is full; only this tells the two
    apart. And msgpack builds an object while its bytes stream through, so its
    buffer limit bounds one str or bin, not one object: this bounds the object.
    """

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self.delivered = 0
        self.object_start = 0
        self.at_eof = False

    def read(self, size: int) -> bytes:
        if self.delivered - self.object_start > MAX_BUFFER:
            raise _TooLarge
        data = self._file.read(size)
        if size > 0 and not data:
            self.at_eof = True
        self.delivered += len(data)
        return data


class ObjectStream:
    """The msgpack objects of one file from ``start``, each with its absolute offset."""

    def __init__(self, path: Path, file: IO[bytes], start: int) -> None:
        file.seek(start)
        self._path, self._file, self._start = path, file, start
        self._source = _CountingSource(file)
        self._unpacker = msgpack.Unpacker(self._source, read_size=_READ_SIZE, raw=False, **LIMITS)

    @property
    def offset(self) -> int:
        """Where the next object starts."""
        consumed: int = self._unpacker.tell()
        return self._start + consumed

    def read(self) -> tuple[int, Any]:
        """The next ``(offset, object)``; at the end the object is ``EOF`` or a ``Tail``."""
        offset = self.offset
        self._source.object_start = offset - self._start
        try:
            return offset, next(self._unpacker)
        except StopIteration:
            pass
        except (_TooLarge, msgpack.BufferFull):
            raise self._too_large(offset) from None
        except Exception as exc:  # msgpack raises a dozen types; all mean "corrupt"
            raise where(self._path, offset, f"corrupt msgpack ({one_line(exc)})") from exc
        pending = self._source.delivered - self._source.object_start
        if pending == 0:
            return offset, EOF
        if not self._source.at_eof:
            raise self._too_large(offset)
        self._file.seek(offset)
        tail = self._file.read(pending)
        problem = _tail_problem(tail)
        if problem is not None:
            raise where(self._path, offset, problem)
        return offset, _tail_shape(tail)

    def _too_large(self, offset: int) -> CorpusError:
        return where(self._path, offset, f"object is larger than the {MAX_BUFFER}-byte limit")


def _tail_shape(tail: bytes) -> Tail:
    first = tail[0]
    if 0x90 <= first <= 0x9F:
        return Tail("array", first & 0x0F)
    if 0x80 <= first <= 0x8F:
        return Tail("map", first & 0x0F)
    if first in (0xDC, 0xDD, 0xDE, 0xDF):
        width = 2 if first in (0xDC, 0xDE) else 4
        items = int.from_bytes(tail[1 : 1 + width]) if len(tail) > width else None
        return Tail("array" if first <= 0xDD else "map", items)
    return Tail("other", None)


# type byte -> (what, bytes in its length field); fixed-size scalars are in _SCALAR.
_SIZED: Final[dict[int, tuple[str, int]]] = {
    0xC4: ("bin", 1), 0xC5: ("bin", 2), 0xC6: ("bin", 4),
    0xD9: ("str", 1), 0xDA: ("str", 2), 0xDB: ("str", 4),
    0xDC: ("array", 2), 0xDD: ("array", 4), 0xDE: ("map", 2), 0xDF: ("map", 4),
}  # fmt: skip
_SCALAR: Final[dict[int, int]] = {
    0xC0: 1, 0xC2: 1, 0xC3: 1, 0xCA: 5, 0xCB: 9, 0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9,
    0xD0: 2, 0xD1: 3, 0xD2: 5, 0xD3: 9,
}  # fmt: skip


def _tail_problem(tail: bytes) -> str | None:
    """Why a cut-short object cannot be the start of one that tcr writes, or ``None``.

    Walks the type bytes that did arrive, so a length prefix claiming gigabytes is
    refused without waiting for (or allocating) its body.
    """
    pending = [1]  # items still due at each nesting level
    pos = 0
    while pos < len(tail) and pending:
        first = tail[pos]
        what, items, size = "", 0, _SCALAR.get(first, 0)
        if first <= 0x7F or first >= 0xE0:
            size = 1
        elif 0xA0 <= first <= 0xBF:
            what, size = "str", 1 + (first & 0x1F)
        elif 0x90 <= first <= 0x9F:
            what, items, size = "array", first & 0x0F, 1
        elif 0x80 <= first <= 0x8F:
            what, items, size = "map", first & 0x0F, 1
        elif first in _SIZED:
            what, width = _SIZED[first]
            if pos + 1 + width > len(tail):
                return None
            length = int.from_bytes(tail[pos + 1 : pos + 1 + width])
            container = what in ("array", "map")
            limit, unit = (MAX_ITEMS, "items") if container else (MAX_BLOB, "bytes")
            if length > limit:
                return f"{what} declares {length} {unit}; the limit is {limit}"
            items, size = (length, 1 + width) if container else (0, 1 + width + length)
        elif size == 0:
            return f"type byte {first:#04x} is not used by tcr (extension type or reserved)"
        pos += size
        pending[-1] -= 1
        if items:
            pending.append(2 * items if what == "map" else items)
            if len(pending) > _MAX_DEPTH:
                return f"objects nested deeper than {_MAX_DEPTH}"
        while pending and pending[-1] == 0:
            pending.pop()
    return None
