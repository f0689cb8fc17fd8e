"""What a valid version-1 recording is (private): the format's constants, ``Frame``
and ``Recording``, and the checks of each object that both the reader and the
writer apply, so a file one accepts is a file the other accepts.

The checks raise ``Invalid`` without a path or offset; the caller knows both and
turns it into a ``CorpusError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tcr.errors import CorpusError, TcrError
from tcr.tool_specs import ToolSpecs, read_tool_specs

__all__ = [
    "FORMAT_VERSION",
    "KINDS",
    "MAX_NESTING",
    "MAX_T_NS",
    "NO_TRAILER",
    "ORIGINS",
    "Frame",
    "Invalid",
    "Recording",
    "as_dict",
    "blob_len",
    "check_end",
    "check_expect",
    "check_frame",
    "check_header",
    "nests_too_deep",
    "type_name",
]

FORMAT_VERSION: Final = 1
KINDS: Final = ("chunks", "ndjson", "sse")
ORIGINS: Final = ("fuzz", "handmade", "recorded")

NO_TRAILER: Final = "interrupted: no trailer"

#: How deep a header, a frame's meta, a trailer or an expectation may nest (the
#: map itself is level 1). Far deeper than any request a client sends, and
#: shallow enough that code walking a recording recursively (``show``'s JSON,
#: a pretty-printer) stays well inside Python's recursion limit.
MAX_NESTING: Final = 100

MAX_T_NS: Final = 2**64 - 1  # a frame's time: msgpack's largest integer


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
    def tool_specs(self) -> ToolSpecs | None:
        """The tools the request offered, as OpenAI tool objects with their schemas
        (``tcr.tool_specs``; ARCHITECTURE.md §5.2, "Tool specs"); ``None`` when it offered
        none. The header's ``tools`` (the names) stays what it is. A ``tools`` list that
        is not one raises ``CorpusError`` naming the file."""
        request = self.header.get("request")
        if not isinstance(request, dict) or request.get("tools") is None:
            return None
        where = f"{self.path or self.id}: header request.tools"
        try:
            return read_tool_specs(request["tools"], where)
        except TcrError as error:  # it names where: a corpus error, as any bad header
            raise CorpusError(str(error)) from None

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
            return NO_TRAILER
        if self.end["complete"] is True:
            return None
        return self.end["error"] or "closed as incomplete (no reason given)"


class Invalid(Exception):
    """A validation failure, before the path and offset are known."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def type_name(value: object) -> str:
    return {dict: "map", list: "array", bytes: "bin", type(None): "nil"}.get(
        type(value), type(value).__name__
    )


def _sorted_keys(obj: dict[Any, Any]) -> list[Any]:
    """A map's keys in order for a message; msgpack keys may mix str and bytes."""
    return sorted(obj, key=lambda key: (type(key).__name__, key))


def nests_too_deep(value: object) -> bool:
    """Whether ``value`` nests deeper than ``MAX_NESTING`` (found without recursing,
    so a hostile value cannot exhaust the stack)."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth == MAX_NESTING:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


def check_nesting(value: object, what: str) -> None:
    if nests_too_deep(value):
        raise Invalid(f"{what} nests deeper than {MAX_NESTING} levels")


def check_header(header: object) -> dict[str, Any]:
    if not isinstance(header, dict):
        raise Invalid(f"not a tcr recording: the first object is {type_name(header)}, not a map")
    if "tcr" not in header:
        raise Invalid("not a tcr recording: the header map has no 'tcr' format version")
    version = header["tcr"]
    if not _is_int(version) or version < 1:
        raise Invalid(f"not a tcr recording: 'tcr' is {version!r}, not a format version")
    if version > FORMAT_VERSION:
        raise Invalid(
            f"recording was written by a newer tcr (format {version}); "
            f"this tcr reads format {FORMAT_VERSION}: upgrade tcr"
        )
    if not isinstance(header.get("id"), str):
        raise Invalid("header 'id' must be a str")
    if header.get("kind") not in KINDS:
        raise Invalid(f"header 'kind' is {header.get('kind')!r}; expected one of {KINDS}")
    for key in ("source", "request", "response", "labels"):
        if key in header and not isinstance(header[key], dict):
            raise Invalid(f"header {key!r} must be a map, not {type_name(header[key])}")
    if "created" in header and not isinstance(header["created"], str):
        raise Invalid("header 'created' must be an ISO-8601 str")
    tools = header.get("tools")
    if tools is not None and not (
        isinstance(tools, list) and all(isinstance(name, str) for name in tools)
    ):
        raise Invalid("header 'tools' must be a list of str or nil")
    check_nesting(header, "the header")
    return header


def check_frame(obj: list[Any], kind: str, index: int) -> Frame:
    if len(obj) not in (2, 3):
        raise Invalid(f"frame {index} is not [t_ns, data(, meta)]: it has {len(obj)} items")
    t_ns, data = obj[0], obj[1]
    meta = obj[2] if len(obj) == 3 else None
    if not _is_int(t_ns) or not 0 <= t_ns <= MAX_T_NS:
        raise Invalid(f"frame {index} is not [t_ns, data(, meta)]: t_ns is {t_ns!r}")
    wanted, wanted_name = (str, "str") if kind == "chunks" else (bytes, "bin (bytes)")
    if not isinstance(data, wanted):
        raise Invalid(
            f"frame {index}: data is {type_name(data)}, "
            f"but a {kind!r} recording stores {wanted_name}"
        )
    if meta is not None and not isinstance(meta, dict):
        raise Invalid(f"frame {index}: meta is {type_name(meta)}, not a map or nil")
    check_nesting(meta, f"frame {index}: meta")
    return Frame(t_ns, data, meta)


def check_end(obj: dict[str, Any], frames: int, nbytes: int) -> dict[str, Any]:
    if set(obj) != {"end"} or not isinstance(obj["end"], dict):
        keys = _sorted_keys(obj)
        raise Invalid(f"expected a frame or the trailer {{'end': ...}}, got a map {keys}")
    end: dict[str, Any] = obj["end"]
    if not isinstance(end.get("complete"), bool):
        raise Invalid("trailer 'complete' must be a bool")
    if not (end.get("error") is None or isinstance(end["error"], str)):
        raise Invalid("trailer 'error' must be a str or nil")
    if not (_is_int(end.get("frames")) and _is_int(end.get("bytes"))):
        raise Invalid("trailer 'frames' and 'bytes' must be ints")
    if (end["frames"], end["bytes"]) != (frames, nbytes):
        raise Invalid(
            f"trailer counts {end['frames']} frames of {end['bytes']} bytes, "
            f"but the file holds {frames} frames of {nbytes} bytes: frames were lost or added"
        )
    check_nesting(obj, "the trailer")
    return end


def check_expect(expectation: object) -> dict[str, Any]:
    if not isinstance(expectation, dict):
        raise Invalid(f"expectation must be a map, not {type_name(expectation)}")
    for key in ("text", "reasoning"):
        if key in expectation and not isinstance(expectation[key], str):
            raise Invalid(f"expectation {key!r} must be a str")
    calls = expectation.get("calls", [])
    if not (isinstance(calls, list) and all(isinstance(call, dict) for call in calls)):
        raise Invalid("expectation 'calls' must be a list of maps")
    check_nesting(expectation, "the expectation")
    return expectation


def as_dict(value: object) -> object:
    return dict(value) if isinstance(value, Mapping) else value


def blob_len(data: bytes | str) -> int:
    return len(data) if isinstance(data, bytes) else len(data.encode("utf-8"))
