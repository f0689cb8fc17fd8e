"""What ``tcr show`` found about one recording: a ``ShowSummary``.

The recording's parts (header, frames, decoded stream, chunks, events) are kept
as the JSON data ``tcr show --json`` prints; the verdict is a ``Verdict``. What
the command needs to decide (the exit code, why it is 2) are properties, so the
renderer, the report writers and the command read one type, not string keys.

Its long tables (frames, deltas, chunks, events) are ``Rows``, each row made when
it is read: ``tcr show --frames 4`` of a recording of 250,000 frames reads four,
and a row kept for each was most of what show held (issue 14). ``iter_json()``
writes ``--json`` a row at a time for the same reason.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, overload

from tcr.errors import EXIT_ERROR
from tcr.oracle import Verdict, Violation

__all__ = ["Rows", "ShowSummary"]

Row = dict[str, Any]


class Rows(Sequence[Row]):
    """``count`` rows of a table, row ``i`` made by ``row(i)`` each time it is read.

    Compared as the list of its rows, so it stands where a list of rows stood."""

    __slots__ = ("_count", "_row")

    def __init__(self, count: int, row: Callable[[int], Row]) -> None:
        self._count = count
        self._row = row

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("row index out of range")
        return self._row(index)

    def __iter__(self) -> Iterator[Row]:
        return map(self._row, range(self._count))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"Rows({self._count} rows)"


@dataclass(frozen=True, slots=True)
class ShowSummary:
    """One recording, decoded, chunked once, run through a detector and judged."""

    path: str
    header: dict[str, Any]
    complete: bool
    incomplete_reason: str | None
    trailer: Any
    frames: Sequence[Row]  # Rows
    decoded: dict[str, Any]  # ``decoded["error"]``: the body does not decode past it
    expect: Any
    content: dict[str, Any] | None = None  # None when the body does not decode
    detector: dict[str, Any] | None = None  # spec, tools, events, shown, crash
    verdict: Verdict | None = None
    body_bytes: int = 0  # the frames' bytes (data of a chunks recording as UTF-8)

    @property
    def decode_error(self) -> str | None:
        """Why the body does not decode (then no detector ran), else None."""
        error: str | None = self.decoded["error"]
        return error

    @property
    def crash(self) -> Violation | None:
        """The detector's crash (or its factory's failure), when it had one."""
        found = self.verdict.violations if self.verdict is not None else ()
        return next((v for v in found if v.check.is_error), None)

    @property
    def exit_code(self) -> int:
        """The codes of ``tcr replay``: 0 pass, 1 a violation, 2 a body that does not
        decode or a detector that crashed."""
        if self.decode_error is not None or self.verdict is None:
            return EXIT_ERROR
        return self.verdict.exit_code

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, the keys in the order ``--json`` prints them (every row made)."""
        plain: dict[str, Any] = _plain(self._parts())
        return plain

    def to_json(self) -> str:
        """What ``tcr show --json`` prints."""
        return "".join(self.iter_json())

    def iter_json(self) -> Iterator[str]:
        """``to_json()`` in pieces, a row at a time, for writing as it is made."""
        return _json_pieces(self._parts(), 0)

    def _parts(self) -> dict[str, Any]:
        verdict = self.verdict
        return {
            "path": self.path,
            "header": self.header,
            "complete": self.complete,
            "incomplete_reason": self.incomplete_reason,
            "trailer": self.trailer,
            "frames": self.frames,
            "decoded": self.decoded,
            "content": self.content,
            "detector": self.detector,
            "verdict": None
            if verdict is None
            else {
                "ok": verdict.ok,
                "violations": [
                    {**dataclasses.asdict(v), "check": str(v.check)} for v in verdict.violations
                ],
                "ran": [str(check) for check in verdict.ran],
                "skipped": {str(check): why for check, why in verdict.skipped.items()},
            },
            "expect": self.expect,
        }


def _plain(value: Any) -> Any:
    if isinstance(value, Rows):
        return list(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


_INDENT: Final = "  "  # json.dumps(indent=2)
_ENCODER: Final = json.JSONEncoder(indent=2, ensure_ascii=False)
_BATCH: Final = 512  # rows dumped at once: one dumps() per row took a third of --json


def _json_pieces(value: Any, level: int) -> Iterator[str]:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` with ``Rows`` read a batch at a time.

    Indentation is by nesting level alone and a JSON string holds no newline, so a
    value dumped on its own and re-indented is the text it has inside its parent."""
    if isinstance(value, Rows):
        yield from _rows_json(value, level)
    elif isinstance(value, Mapping) and _holds_rows(value):
        inner = _INDENT * (level + 1)
        yield "{"
        for number, (key, item) in enumerate(value.items()):
            yield f"{',' if number else ''}\n{inner}{json.dumps(key, ensure_ascii=False)}: "
            yield from _json_pieces(item, level + 1)
        yield f"\n{_INDENT * level}}}"
    else:
        yield _dumped(value, level)


def _rows_json(rows: Rows, level: int) -> Iterator[str]:
    if not rows:
        yield "[]"
        return
    close = f"\n{_INDENT * level}]"
    yield "[\n"
    for start in range(0, len(rows), _BATCH):
        batch = _dumped(rows[start : start + _BATCH], level)  # "[\n", its rows, close
        yield ("" if start == 0 else ",\n") + batch[2 : -len(close)]
    yield close


def _holds_rows(value: Mapping[str, Any]) -> bool:
    return any(
        isinstance(item, Rows) or (isinstance(item, Mapping) and _holds_rows(item))
        for item in value.values()
    )


def _dumped(value: Any, level: int) -> str:
    return _ENCODER.encode(value).replace("\n", "\n" + _INDENT * level)
