"""The stdio protocol's JSON: events as objects, and fast paths for the lines carrying them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall

__all__ = ["encode", "event_from_json", "event_to_json", "events_json", "loads"]

encode = json.JSONEncoder(separators=(",", ":")).encode  # one encoder: dumps() builds one per call
_string = encode_basestring_ascii  # a str as a JSON string, in C
_raw_decode = json.JSONDecoder().raw_decode


def event_to_json(event: Event) -> dict[str, Any]:
    """One event as the protocol's JSON object."""
    if isinstance(event, Text):
        return {"type": "text", "text": event.text}
    if isinstance(event, ToolCall):
        return {
            "type": "tool_call",
            "name": event.name,
            "arguments": event.arguments,
            "raw": event.raw,
            "format": event.format,
        }
    if isinstance(event, Reasoning):
        return {"type": "reasoning", "text": event.text, "raw": event.raw, "format": event.format}
    return {
        "type": "rejected",
        "raw": event.raw,
        "content": event.content,
        "format": event.format,
        "reason": event.reason,
    }


def event_from_json(data: object) -> Event:
    """The protocol's JSON object as an event; ``ValueError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"an event must be an object, not {type(data).__name__}")
    kind = data.get("type")
    if kind == "text":
        text = data.get("text")
        return Text(text if isinstance(text, str) else _text(data, "text"))
    if kind == "tool_call":
        return ToolCall(
            _text(data, "name"),
            _text(data, "arguments"),
            _raw(data),
            _text(data, "format", ""),
        )
    if kind == "reasoning":
        return Reasoning(_text(data, "text"), _raw(data), _text(data, "format", ""))
    if kind == "rejected":
        return Rejected(
            _raw(data),
            _text(data, "content"),
            _text(data, "format", ""),
            _text(data, "reason", "malformed"),
        )
    raise ValueError(f"unknown event type {kind!r}")


def _text(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"event field {key!r} must be a string, not {type(value).__name__}")
    return value


def _raw(data: dict[str, Any]) -> str | None:
    raw = data.get("raw")
    if raw is not None and not isinstance(raw, str):
        raise ValueError(f"event field 'raw' must be a string or null, not {type(raw).__name__}")
    return raw


def events_json(events: Sequence[Event]) -> str:
    """``{"events": [...]}`` as compact JSON text (ASCII: the rest is escaped)."""
    return '{"events":[' + ",".join(map(_event_json, events)) + "]}"


def _event_json(event: Event) -> str:
    if type(event) is Text:  # most events by far: spelled out, ~10x faster than the encoder
        return '{"type":"text","text":' + _string(event.text) + "}"
    return encode(event_to_json(event))


def loads(line: bytes) -> Any:
    """``json.loads(line)``, several times faster on the usual compact line."""
    try:
        text = line.decode("utf-8", "surrogatepass")
        value, end = _raw_decode(text)
    except ValueError:  # not UTF-8, leading blanks or not JSON: the slow path decides
        return json.loads(line)
    return value if end == len(text) else json.loads(line)
