"""Reading call bodies: strict JSON, the call shapes models write, XML-ish pairs.

The pieces every dialect's body parser is made of. Every failure is a
``BodyError`` whose ``reason`` the detector copies into ``Rejected(reason=...)``:
``malformed`` (does not parse as the dialect) or ``not_a_call`` (valid JSON that
is not call-shaped). Nothing else escapes: the fuzz harness holds the parsers to
"parse, or raise the one error", as h11's does.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from tcr.errors import TcrError

__all__ = [
    "ARGUMENT_KEYS",
    "ArgumentKeys",
    "BodyError",
    "ParsedCall",
    "Trim",
    "call",
    "call_from_json",
    "canonical_arguments",
    "check_name",
    "decode_at",
    "decode_whole",
    "json_call",
    "json_calls",
    "matches",
    "skip_space",
    "text_arguments",
    "text_call",
    "unmarked_json_call",
    "walk",
]

Reason = Literal["malformed", "not_a_call"]


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One call found in a block; ``arguments`` is canonical JSON-object text.

    ``texts``: for a body that carries no JSON types (XML-ish pairs), each value as
    written, so that a tool's schema can type it (``tcr.tool_specs``); ``None`` for
    a JSON body, whose values keep their JSON types.
    """

    name: str
    arguments: str
    texts: tuple[tuple[str, str], ...] | None = field(default=None, compare=False)


class BodyError(TcrError):
    """A block body that is not a call; the detector turns it into ``Rejected``."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: Reason = reason
        self.detail = detail


# --- strict JSON -----------------------------------------------------------------


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 would come back out as the non-JSON "Infinity"
        raise ValueError(f"{text} overflows a float")
    return value


# strict=False: models writing code into an argument often put raw newlines and
# tabs inside JSON strings; the meaning is unambiguous and the canonical text
# re-escapes them. NaN/Infinity are refused because canonical text must be JSON.
_DECODER = json.JSONDecoder(
    strict=False, parse_constant=_reject_constant, parse_float=_finite_float
)


def decode_at(text: str, pos: int) -> tuple[object, int]:
    """One JSON value starting at ``pos`` (no leading white space), and where it ends."""
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise BodyError("malformed", f"invalid JSON: {exc.msg} at offset {exc.pos}") from None
    except (ValueError, RecursionError) as exc:  # huge ints, NaN, 1e999, deep nesting
        raise BodyError(
            "malformed", f"invalid JSON value starting at offset {pos}: {exc}"
        ) from None


def decode_whole(text: str) -> object:
    """The single JSON value that is all of ``text`` (white space around allowed)."""
    start = len(text) - len(text.lstrip())
    value, end = decode_at(text, start)
    if text[end:].strip():
        raise BodyError("malformed", f"text after the JSON value at offset {end}")
    return value


# json.dumps with these options builds a new encoder per call: one, made once, instead.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def canonical_arguments(value: object) -> str:
    """The canonical text of an arguments object: ``json.dumps(obj, ensure_ascii=False)``."""
    if not isinstance(value, dict):
        raise BodyError("not_a_call", f"arguments are a {_json_kind(value)}, not an object")
    try:
        text = _ENCODER.encode(value)
    except (ValueError, TypeError, RecursionError) as exc:
        raise BodyError("malformed", f"arguments are not representable as JSON: {exc}") from None
    if not _is_unicode(text):
        raise BodyError("malformed", "arguments hold a lone surrogate escape (\\ud800-\\udfff)")
    return text


def _is_unicode(text: str) -> bool:
    # json accepts "\ud800" alone, but such a str cannot be encoded: it would crash
    # whatever writes the call out (a recording, a terminal), far from the cause.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_kind(value: object) -> str:
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(value), "number" if isinstance(value, int | float) else "non-JSON value")


# --- JSON call shapes ------------------------------------------------------------

# Keys that may sit beside "name" when arguments are missing (see _call_or_error).
_ENVELOPE_KEYS = frozenset({"name", "type", "id"})

ArgumentKeys = tuple[str, ...]
# The keys a call's arguments may sit under: Meta's Llama prompts write "parameters".
ARGUMENT_KEYS: ArgumentKeys = ("arguments", "parameters")


def call_from_json(
    obj: object, *, arguments_optional: bool = False, keys: ArgumentKeys = ARGUMENT_KEYS
) -> ParsedCall | None:
    """The call a decoded JSON value spells, or ``None`` if it is not call-shaped.

    Accepted: ``{"name", "arguments" | "parameters"}`` (arguments an object, or a
    string holding one, or a blank string meaning ``{}``); ``keys`` narrows the
    arguments keys a dialect's engines read. OpenAI's ``{"type": "function",
    "function": {…}}`` is the API's delta shape, not a model's call: no engine reads
    it (vLLM's hermes parser indexes ``function_call["name"]``, SGLang's
    ``BaseFormatDetector.parse_base_json`` ``act.get("name")``, llama.cpp's Hermes
    parser opens on ``{"name"``), so it is not a call. Llama 3.2's
    ``{"type": "function", "function": NAME, "parameters": {…}}`` has no
    ``name`` and is not a call: PR #2262 settled that such JSON is content (ARCHITECTURE.md §15.3),
    and the bare_json row of ARCHITECTURE.md §5.3 asks for ``name``. Missing
    arguments mean ``{}`` only when ``arguments_optional`` (a distinctive marker
    already said "this is a call") and nothing but ``name``/``type``/``id`` is
    present. Never raises.
    """
    found = _call_or_error(obj, arguments_optional, keys)
    return found if isinstance(found, ParsedCall) else None


def _not_a_call(detail: str) -> BodyError:
    return BodyError("not_a_call", detail)


def _call_or_error(
    obj: object, arguments_optional: bool, keys: ArgumentKeys = ARGUMENT_KEYS
) -> ParsedCall | BodyError:
    """The call, or the error saying why ``obj`` is not one (returned, not raised)."""
    if not isinstance(obj, dict):
        return _not_a_call(f"a JSON {_json_kind(obj)} is not a call object")
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        if isinstance(obj.get("function"), dict):
            return _not_a_call('the OpenAI {"function": {…}} shape, which no engine reads')
        return _not_a_call('an object without a non-empty string "name"')
    if not _is_unicode(name):
        return BodyError("malformed", "the name holds a lone surrogate escape")
    for key in keys:
        if key in obj:
            return _with_arguments(name, obj[key], key)
    # A bare {"name": "Alice"} is an answer as often as a call: only a marker makes it one.
    if arguments_optional and obj.keys() <= _ENVELOPE_KEYS:
        return ParsedCall(name, "{}")
    return _not_a_call(f"{name!r} has no {' or '.join(map(repr, keys))}")


def _with_arguments(name: str, value: object, key: str) -> ParsedCall | BodyError:
    if isinstance(value, str):  # OpenAI style: the arguments object serialised as a string
        if not value.strip():
            return ParsedCall(name, "{}")
        try:
            value = decode_whole(value)
        except BodyError:
            return _not_a_call(f"{key!r} of {name!r} is a string that is not a JSON object")
    try:
        return ParsedCall(name, canonical_arguments(value))
    except BodyError as exc:
        return BodyError(exc.reason, f"{key!r} of {name!r}: {exc.detail}")


def call(obj: object, arguments_optional: bool, keys: ArgumentKeys = ARGUMENT_KEYS) -> ParsedCall:
    found = _call_or_error(obj, arguments_optional, keys)
    if isinstance(found, BodyError):
        raise found
    return found


def json_call(body: str, arguments_optional: bool = True) -> list[ParsedCall]:
    return [call(decode_whole(body), arguments_optional)]


def json_calls(body: str, keys: ArgumentKeys = ARGUMENT_KEYS) -> list[ParsedCall]:
    """A call object, or a non-empty array of them (``<tools>``, ``[TOOL_CALLS]``), their
    arguments under one of ``keys``."""
    value = decode_whole(body)
    if not isinstance(value, list):
        return [call(value, True, keys)]
    if not value:
        raise BodyError("not_a_call", "an empty array holds no call")
    return [call(item, True, keys) for item in value]


# --- names and XML-ish pairs ------------------------------------------------------

# A tool name written outside JSON: OpenAI's ^[a-zA-Z0-9_-]{1,64}$ (so "9search" too; the
# engines take the name as written), widened to any word character and "." for MCP-style
# "server.tool". No white space, so prose is refused.
_NAME = re.compile(r"[\w\-][\w.\-]*")


def check_name(name: str, where: str) -> str:
    if not _NAME.fullmatch(name):
        raise BodyError("malformed", f"{name[:40]!r} is not a tool name ({where})")
    return name


class Trim(Enum):
    """What a dialect's engines cut from the ends of an XML-ish value before typing it."""

    # The value as written: GLM's and MiniMax M2's templates write it inline, and the
    # engines keep its white space (vLLM 0.34 vllm/parser/glm47_moe.py and minimax_m2.py:
    # "surrounding whitespace is data"; SGLang's glm47 ``_parse_argument_pairs`` and
    # minimax-m2 streaming ``_parse_and_stream_parameters``).
    NOTHING = "nothing"
    # One newline at each end: Qwen3-Coder's template puts the value on its own line
    # (vLLM ``_trim_wrapping_newlines``, SGLang ``Qwen3CoderDetector``); more would eat
    # white space the value really has.
    ONE_NEWLINE = "one_newline"
    # All white space at each end (vLLM's and SGLang's step3 parsers: ``value.strip()``).
    WHITESPACE = "whitespace"

    def __call__(self, raw: str) -> str:
        if self is Trim.ONE_NEWLINE:
            return raw.removeprefix("\n").removesuffix("\n")
        if self is Trim.WHITESPACE:
            return raw.strip()
        return raw


def _text_value(raw: str, trim: Trim) -> object:
    """An XML-ish argument value: text, or JSON when it plainly is an object or array
    (without a schema; ``tcr.tool_specs`` types it by one)."""
    value = trim(raw)
    if value[:1] in ("{", "["):
        try:
            return decode_whole(value)
        except BodyError:
            pass  # "[draft] notes" is text, not broken JSON
    return value


def matches(pattern: re.Pattern[str], text: str, what: str) -> list[re.Match[str]]:
    """Consecutive matches of ``pattern`` covering all of ``text``; else ``BodyError``."""
    found: list[re.Match[str]] = []
    pos = 0
    while pos < len(text):
        match = pattern.match(text, pos)
        if match is None:
            raise BodyError(
                "malformed", f"expected {what} at offset {pos}: {text[pos : pos + 30]!r}"
            )
        found.append(match)
        pos = match.end()
    return found


def walk(pattern: re.Pattern[str], text: str, what: str) -> list[tuple[str, str]]:
    """Consecutive matches of a two-group pattern covering all of ``text``."""
    return [(match.group(1), match.group(2)) for match in matches(pattern, text, what)]


def text_arguments(pairs: list[tuple[str, str]], trim: Trim) -> str:
    """Arguments from XML-ish key/value pairs; a repeated key keeps its last value, as in JSON."""
    arguments: dict[str, object] = {}
    for key, value in pairs:
        if not key.strip():
            raise BodyError("malformed", "an argument with an empty name")
        arguments[key.strip()] = _text_value(value, trim)
    return canonical_arguments(arguments)


def text_call(name: str, pairs: list[tuple[str, str]], trim: Trim) -> ParsedCall:
    """A call of an untyped body: its arguments read without a schema, and the texts."""
    texts = tuple((key.strip(), trim(value)) for key, value in pairs)
    return ParsedCall(name, text_arguments(pairs, trim), texts)


def skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def unmarked_json_call(body: str) -> list[ParsedCall]:
    # ```json fences and bare "{" also open on ordinary JSON answers, so missing
    # arguments are not read as a call there (ARCHITECTURE.md §5.3: "name + arguments/parameters").
    return json_call(body, arguments_optional=False)
