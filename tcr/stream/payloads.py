"""JSON payloads of the streaming APIs to :class:`Delta` values.

One parser per framing, chosen once per stream from the shape of its first
payload (:data:`FRAMINGS`, checked in order):

``openai``
    OpenAI chat-completion chunks, ``{"choices": [{"delta": {...}}]}``, as
    sent by OpenAI, llama.cpp ``/v1/chat/completions``, vLLM, Ollama ``/v1``.
``llamacpp``
    llama.cpp's native ``/completion``: ``{"content", "stop", "tokens"}``.
``ollama``
    Ollama's native NDJSON: ``{"message": {...}, "done"}`` (``/api/chat``)
    or ``{"response", "done"}`` (``/api/generate``).

Missing fields are tolerated (servers differ in what they send); fields of
the wrong type are a :class:`DecodeError` naming the field path, because a
decoder that guesses would hide exactly the bugs tcr exists to show.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeAlias

from tcr.errors import DecodeError
from tcr.stream.deltas import Delta, ToolCallFragment

__all__ = [
    "FRAMINGS",
    "Framing",
    "detect_framing",
    "error_text",
    "parse_json_object",
    "parse_payload",
]

JSONObject: TypeAlias = dict[str, object]

_EXCERPT = 60


def _excerpt(text: str) -> str:
    return repr(text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def parse_json_object(text: str, where: str) -> JSONObject:
    """``text`` as a JSON object, or a :class:`DecodeError` saying where and why."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise DecodeError(f"{where}: JSON nested too deeply: {_excerpt(text)}") from None
    except json.JSONDecodeError as exc:
        raise DecodeError(
            f"{where}: invalid JSON ({exc.msg} at character {exc.pos}): {_excerpt(text)}"
        ) from None
    except ValueError as exc:  # e.g. an integer beyond int_max_str_digits
        raise DecodeError(f"{where}: invalid JSON ({exc}): {_excerpt(text)}") from None
    if not isinstance(value, dict):
        raise DecodeError(
            f"{where}: expected a JSON object, got {_json_type(value)}: {_excerpt(text)}"
        )
    return value


class _Fields:
    """Typed reads from one JSON object; a wrong type names the field's path."""

    __slots__ = ("_obj", "_path", "_where")

    def __init__(self, obj: JSONObject, path: str, where: str) -> None:
        self._obj = obj
        self._path = path
        self._where = where

    def _wrong(self, key: str, expected: str, value: object) -> DecodeError:
        path = f"{self._path}.{key}" if self._path else key
        return DecodeError(
            f"{self._where}: field {path} should be {expected}, got {_json_type(value)}"
        )

    def get_str(self, key: str) -> str | None:
        value = self._obj.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self._wrong(key, "a string", value)

    def get_bool(self, key: str) -> bool | None:
        value = self._obj.get(key)
        if value is None or isinstance(value, bool):
            return value
        raise self._wrong(key, "a boolean", value)

    def get_int(self, key: str) -> int | None:
        value = self._obj.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        raise self._wrong(key, "an integer", value)

    def get_object(self, key: str) -> _Fields | None:
        value = self._obj.get(key)
        if value is None:
            return None
        if isinstance(value, dict):
            return _Fields(value, f"{self._path}.{key}" if self._path else key, self._where)
        raise self._wrong(key, "an object", value)

    def get_objects(self, key: str) -> list[_Fields]:
        """An array of objects; a missing or null array is empty."""
        value = self._obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._wrong(key, "an array", value)
        items: list[_Fields] = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self._wrong(f"{key}[{i}]", "an object", item)
            prefix = f"{self._path}.{key}" if self._path else key
            items.append(_Fields(item, f"{prefix}[{i}]", self._where))
        return items

    def get_arguments(self, key: str) -> str:
        """Tool-call arguments as JSON text; Ollama (and some others) send an object."""
        value = self._obj.get(key)
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        raise self._wrong(key, "a string or an object", value)


def error_text(value: object) -> str:
    """A readable message from an error payload: a string, or an object with ``message``.

    Handles ``{"error": {...}}`` wrappers (OpenAI), bare error objects
    (llama.cpp's ``error:`` field) and plain strings (Ollama).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = value.get("error")
        if isinstance(inner, str | dict):
            return error_text(inner)
        message = value.get("message")
        if isinstance(message, str):
            return message
    return json.dumps(value, ensure_ascii=False)


def _openai(obj: JSONObject, where: str) -> Delta:
    fields = _Fields(obj, "", where)
    # Only the first choice is the message; with n > 1 the others are
    # separate messages, sent as chunks of their own (or alongside it).
    choice = next(
        (c for c in fields.get_objects("choices") if (c.get_int("index") or 0) == 0), None
    )
    if choice is None:
        return Delta()  # a usage-only chunk, or another choice's
    delta = choice.get_object("delta") or _Fields({}, "", where)
    reasoning = delta.get_str("reasoning_content")
    if reasoning is None:
        reasoning = delta.get_str("reasoning")
    return Delta(
        role=delta.get_str("role"),
        content=delta.get_str("content"),
        reasoning=reasoning,
        tool_calls=tuple(
            _openai_tool_call(call, position)
            for position, call in enumerate(delta.get_objects("tool_calls"))
        ),
        finish_reason=choice.get_str("finish_reason"),
    )


def _openai_tool_call(call: _Fields, position: int) -> ToolCallFragment:
    # Some OpenAI-compatible servers omit ``index`` and send each call whole;
    # its position in the array is then the only index there is.
    index = call.get_int("index")
    function = call.get_object("function")
    return ToolCallFragment(
        index=position if index is None else index,
        id=call.get_str("id"),
        name=None if function is None else function.get_str("name"),
        arguments="" if function is None else function.get_arguments("arguments"),
    )


def _llamacpp(obj: JSONObject, where: str) -> Delta:
    fields = _Fields(obj, "", where)
    stop = bool(fields.get_bool("stop"))
    return Delta(
        content=fields.get_str("content"),
        finish_reason=fields.get_str("stop_type") if stop else None,
        done=stop,
    )


def _ollama(obj: JSONObject, where: str) -> Delta:
    fields = _Fields(obj, "", where)
    # /api/chat nests the message; /api/generate puts the text at top level.
    message = fields.get_object("message")
    source = fields if message is None else message
    content = source.get_str("response" if message is None else "content")
    fragments: list[ToolCallFragment] = []
    for call in source.get_objects("tool_calls"):
        function = call.get_object("function")
        # Ollama parses calls server-side and sends each one whole, so each
        # is a new call (index None), whatever ``function.index`` says.
        fragments.append(
            ToolCallFragment(
                index=None,
                id=call.get_str("id"),
                name=None if function is None else function.get_str("name"),
                arguments="" if function is None else function.get_arguments("arguments"),
            )
        )
    return Delta(
        role=source.get_str("role"),
        content=content,
        reasoning=source.get_str("thinking"),
        tool_calls=tuple(fragments),
        finish_reason=fields.get_str("done_reason"),
        done=bool(fields.get_bool("done")),
    )


Framing: TypeAlias = tuple[str, Callable[[JSONObject], bool], Callable[[JSONObject, str], Delta]]

#: ``(name, looks_like, parse)``, checked in order on the first payload.
FRAMINGS: tuple[Framing, ...] = (
    ("openai", lambda obj: "choices" in obj, _openai),
    ("llamacpp", lambda obj: "content" in obj, _llamacpp),
    ("ollama", lambda obj: "message" in obj or "response" in obj or "done" in obj, _ollama),
)

_PARSERS = {name: parse for name, _, parse in FRAMINGS}


def detect_framing(obj: JSONObject) -> str | None:
    """The framing whose shape ``obj`` has, or ``None``."""
    return next((name for name, looks_like, _ in FRAMINGS if looks_like(obj)), None)


def parse_payload(framing: str, obj: JSONObject, where: str) -> Delta:
    """One payload of a stream already known to use ``framing``."""
    return _PARSERS[framing](obj, where)
