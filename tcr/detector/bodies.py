"""Body parsers: the text inside a tool-call block → calls (DESIGN §5, "body" column).

Pure functions, one small reader per dialect. The streaming state machine in
``tcr.detector.core`` finds where a block starts and ends; this module only
judges what is between the markers. Every failure is a ``BodyError`` whose
``reason`` the detector copies into ``Rejected(reason=...)``: ``malformed``
(does not parse as the dialect) or ``not_a_call`` (valid JSON that is not
call-shaped). Nothing else escapes: the fuzz harness holds us to "parse, or
raise the one error", as h11's does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tcr.detector.formats import BY_ID
from tcr.errors import TcrError

__all__ = [
    "BodyError",
    "ParsedCall",
    "call_from_json",
    "canonical_arguments",
    "parse_body",
    "strip_markers",
]

Reason = Literal["malformed", "not_a_call"]


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One call found in a block; ``arguments`` is canonical JSON-object text."""

    name: str
    arguments: str


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


def _decode_at(text: str, pos: int) -> tuple[object, int]:
    """One JSON value starting at ``pos`` (no leading white space), and where it ends."""
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise BodyError("malformed", f"invalid JSON: {exc.msg} at offset {exc.pos}") from None
    except (ValueError, RecursionError) as exc:  # huge ints, NaN, 1e999, deep nesting
        raise BodyError(
            "malformed", f"invalid JSON value starting at offset {pos}: {exc}"
        ) from None


def _decode_whole(text: str) -> object:
    """The single JSON value that is all of ``text`` (white space around allowed)."""
    start = len(text) - len(text.lstrip())
    value, end = _decode_at(text, start)
    if text[end:].strip():
        raise BodyError("malformed", f"text after the JSON value at offset {end}")
    return value


def canonical_arguments(value: object) -> str:
    """The canonical text of an arguments object: ``json.dumps(obj, ensure_ascii=False)``."""
    if not isinstance(value, dict):
        raise BodyError("not_a_call", f"arguments are a {_json_kind(value)}, not an object")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
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

# Keys that may sit beside "name" when arguments are missing (see _flat_call).
_ENVELOPE_KEYS = frozenset({"name", "type", "id"})


def call_from_json(obj: object, *, arguments_optional: bool = False) -> ParsedCall | None:
    """The call a decoded JSON value spells, or ``None`` if it is not call-shaped.

    Accepted: ``{"name", "arguments" | "parameters"}`` (arguments an object, or a
    string holding one, or a blank string meaning ``{}``); OpenAI's
    ``{"type": "function", "function": {…}}``. Llama 3.2's
    ``{"type": "function", "function": NAME, "parameters": {…}}`` has no
    ``name`` and is not a call: PR #2262 settled that such JSON is content, and
    DESIGN's bare_json row asks for ``name``. Missing
    arguments mean ``{}`` only when ``arguments_optional`` (a distinctive marker
    already said "this is a call") and nothing but ``name``/``type``/``id`` is
    present. Never raises.
    """
    found = _call_or_error(obj, arguments_optional)
    return found if isinstance(found, ParsedCall) else None


def _not_a_call(detail: str) -> BodyError:
    return BodyError("not_a_call", detail)


def _call_or_error(obj: object, arguments_optional: bool) -> ParsedCall | BodyError:
    """The call, or the error saying why ``obj`` is not one (returned, not raised)."""
    if not isinstance(obj, dict):
        return _not_a_call(f"a JSON {_json_kind(obj)} is not a call object")
    if "name" in obj or "function" not in obj:
        return _flat_call(obj, arguments_optional)
    if obj.get("type", "function") != "function":
        return _not_a_call(f'"type" is {obj.get("type")!r}, not "function"')
    function = obj["function"]
    if isinstance(function, dict):
        return _flat_call(function, arguments_optional)
    return _not_a_call(f'"function" is a {_json_kind(function)}, not an object with a "name"')


def _flat_call(obj: dict[str, object], arguments_optional: bool) -> ParsedCall | BodyError:
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return _not_a_call('an object without a non-empty string "name"')
    if not _is_unicode(name):
        return BodyError("malformed", "the name holds a lone surrogate escape")
    for key in ("arguments", "parameters"):
        if key in obj:
            return _with_arguments(name, obj[key], key)
    # A bare {"name": "Alice"} is an answer as often as a call: only a marker makes it one.
    if arguments_optional and obj.keys() <= _ENVELOPE_KEYS:
        return ParsedCall(name, "{}")
    return _not_a_call(f'{name!r} has no "arguments" or "parameters"')


def _with_arguments(name: str, value: object, key: str) -> ParsedCall | BodyError:
    if isinstance(value, str):  # OpenAI style: the arguments object serialised as a string
        if not value.strip():
            return ParsedCall(name, "{}")
        try:
            value = _decode_whole(value)
        except BodyError:
            return _not_a_call(f"{key!r} of {name!r} is a string that is not a JSON object")
    try:
        return ParsedCall(name, canonical_arguments(value))
    except BodyError as exc:
        return BodyError(exc.reason, f"{key!r} of {name!r}: {exc.detail}")


def _call(obj: object, arguments_optional: bool) -> ParsedCall:
    found = _call_or_error(obj, arguments_optional)
    if isinstance(found, BodyError):
        raise found
    return found


def _json_call(body: str, arguments_optional: bool = True) -> list[ParsedCall]:
    return [_call(_decode_whole(body), arguments_optional)]


def _json_calls(body: str) -> list[ParsedCall]:
    """A call object, or a non-empty array of them (``<tools>``, ``[TOOL_CALLS]``)."""
    value = _decode_whole(body)
    if not isinstance(value, list):
        return [_call(value, True)]
    if not value:
        raise BodyError("not_a_call", "an empty array holds no call")
    return [_call(item, True) for item in value]


# --- dialects --------------------------------------------------------------------

# A tool name written outside JSON: a letter or "_" first, then word characters,
# "." or "-" (MCP-style "server.tool", "shell-exec"). No white space, so prose is refused.
_NAME = re.compile(r"[^\W\d][\w.\-]*")


def _check_name(name: str, where: str) -> str:
    if not _NAME.fullmatch(name):
        raise BodyError("malformed", f"{name[:40]!r} is not a tool name ({where})")
    return name


def _text_value(raw: str) -> object:
    """An XML-ish argument value: text, or JSON when it plainly is an object or array.

    Exactly one newline is trimmed at each end because the templates put the
    value on its own line; more would eat white space the value really has.
    """
    value = raw.removeprefix("\n").removesuffix("\n")
    if value[:1] in ("{", "["):
        try:
            return _decode_whole(value)
        except BodyError:
            pass  # "[draft] notes" is text, not broken JSON
    return value


# The lookaheads make a closing tag count only where the structure may go on, so a
# value that mentions "</parameter>" in passing does not end early.
_QWEN_FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)</function>\s*(?=<function=|\Z)", re.S)
_QWEN_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>\s*(?=<parameter=|\Z)", re.S)


def _qwen_coder(body: str) -> list[ParsedCall]:
    """Qwen3-Coder: ``<function=N><parameter=K>\\nV\\n</parameter>…</function>``, one or more."""
    calls: list[ParsedCall] = []
    for name, inner in _walk(_QWEN_FUNCTION, body.strip(), "a <function=…> block"):
        params = _walk(_QWEN_PARAMETER, inner.strip(), "a <parameter=…> pair")
        calls.append(ParsedCall(_check_name(name.strip(), "<function=…>"), _text_arguments(params)))
    return calls


_GLM_PAIR = re.compile(
    r"<arg_key>([^<]*)</arg_key>\s*<arg_value>(.*?)</arg_value>\s*(?=<arg_key>|\Z)", re.S
)


def _glm(body: str) -> list[ParsedCall]:
    """GLM-4.5: ``NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>…``; no pairs, no args."""
    text = body.strip()
    first = text.find("<arg_key>")
    head, rest = (text, "") if first < 0 else (text[:first], text[first:])
    name = _check_name(head.strip(), "the name before <arg_key>")
    return [ParsedCall(name, _text_arguments(_walk(_GLM_PAIR, rest, "a pair")))]


def _walk(pattern: re.Pattern[str], text: str, what: str) -> list[tuple[str, str]]:
    """Consecutive matches of a two-group pattern covering all of ``text``."""
    found: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = pattern.match(text, pos)
        if match is None:
            raise BodyError(
                "malformed", f"expected {what} at offset {pos}: {text[pos : pos + 30]!r}"
            )
        found.append((match.group(1), match.group(2)))
        pos = match.end()
    return found


def _text_arguments(pairs: list[tuple[str, str]]) -> str:
    """Arguments from XML-ish key/value pairs; a repeated key keeps its last value, as in JSON."""
    arguments: dict[str, object] = {}
    for key, value in pairs:
        if not key.strip():
            raise BodyError("malformed", "an argument with an empty name")
        arguments[key.strip()] = _text_value(value)
    return canonical_arguments(arguments)


def _tool_call_tag(body: str) -> list[ParsedCall]:
    text = body.lstrip()
    if text.startswith("<function="):
        return _qwen_coder(body)
    if text[:1] in ("{", "[", '"'):
        return _json_call(body)
    return _glm(body)


def _bracket_tool_calls(body: str) -> list[ParsedCall]:
    """Mistral: ``[{…}, …]``, or v11's ``NAME[ARGS]{…}`` (maybe with ``[CALL_ID]ID``)."""
    text = body.strip()
    if text[:1] in ("[", "{"):
        return _json_calls(body)
    match = re.fullmatch(r"([^\[\]\s]+)(?:\[CALL_ID\][^\[]*)?\[ARGS\](.*)", text, re.S)
    if match is None:
        raise BodyError("malformed", "expected a JSON array or NAME[ARGS]{…}")
    name = _check_name(match.group(1), "before [ARGS]")
    return [ParsedCall(name, canonical_arguments(_decode_whole(match.group(2))))]


def _python_tag(body: str) -> list[ParsedCall]:
    """Llama 3.1: JSON calls separated by ``;``; raw_decode keeps a ``;`` in a string whole."""
    calls: list[ParsedCall] = []
    pos = 0
    while True:
        pos = _skip_space(body, pos)
        value, pos = _decode_at(body, pos)
        calls.append(_call(value, True))
        pos = _skip_space(body, pos)
        if pos < len(body) and body[pos] == ";":
            pos = _skip_space(body, pos + 1)
        elif pos < len(body):
            raise BodyError("malformed", f"expected ';' between calls at offset {pos}")
        if pos == len(body):  # a trailing ';' is tolerated
            return calls


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


# --- Gemma 4 ---------------------------------------------------------------------

_QUOTE = '<|"|>'  # Gemma 4 opens and closes strings with this token; there are no escapes
_GEMMA_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_GEMMA_KEY = re.compile(r'[^\s:,{}\[\]<>"]+')
_GEMMA_MAX_DEPTH = 200  # recursion stays far below Python's limit on adversarial input


def _gemma(body: str) -> list[ParsedCall]:
    """Gemma 4: ``call:NAME{key:<|"|>text<|"|>,n:3,…}``, several in a row; or a JSON call."""
    text = body.strip()
    if text[:1] in ("{", "["):
        return _json_call(body)
    calls: list[ParsedCall] = []
    pos = 0
    while pos < len(text):
        if not text.startswith("call:", pos):
            raise BodyError("malformed", f"expected 'call:' at offset {pos}")
        brace = text.find("{", pos)
        if brace < 0:
            raise BodyError("malformed", f"no '{{' after 'call:' at offset {pos}")
        name = _check_name(text[pos + 5 : brace], "after 'call:'")
        arguments, pos = _gemma_value(text, brace, 0)
        calls.append(ParsedCall(name, canonical_arguments(arguments)))
        while pos < len(text) and (text[pos].isspace() or text[pos] == ","):
            pos += 1
    return calls


def _gemma_value(text: str, pos: int, depth: int) -> tuple[object, int]:
    pos = _skip_space(text, pos)
    if depth > _GEMMA_MAX_DEPTH:
        raise BodyError("malformed", f"nested deeper than {_GEMMA_MAX_DEPTH} at offset {pos}")
    if text.startswith(_QUOTE, pos):
        end = text.find(_QUOTE, pos + len(_QUOTE))
        if end < 0:
            raise BodyError("malformed", f'unterminated <|"|> string at offset {pos}')
        return text[pos + len(_QUOTE) : end], end + len(_QUOTE)
    if text.startswith('"', pos):  # some renderers quote strings as JSON instead
        return _decode_at(text, pos)
    if text.startswith("{", pos):
        return _gemma_container(text, pos, depth, "}")
    if text.startswith("[", pos):
        return _gemma_container(text, pos, depth, "]")
    match = _GEMMA_SCALAR.match(text, pos)
    if match is None:
        raise BodyError("malformed", f"expected a value at offset {pos}: {text[pos : pos + 20]!r}")
    return _decode_whole(match.group()), match.end()


def _gemma_container(text: str, pos: int, depth: int, close: str) -> tuple[object, int]:
    """``{key:value,…}`` (bare or <|"|>-quoted keys) or ``[value,…]``, from its opening bracket."""
    items: list[object] = []
    fields: dict[str, object] = {}
    pos = _skip_space(text, pos + 1)
    while not text.startswith(close, pos):
        if close == "}":
            key, pos = _gemma_key(text, pos)
            pos = _skip_space(text, pos)
            if not text.startswith(":", pos):
                raise BodyError("malformed", f"expected ':' after key {key!r} at offset {pos}")
            fields[key], pos = _gemma_value(text, pos + 1, depth + 1)
        else:
            value, pos = _gemma_value(text, pos, depth + 1)
            items.append(value)
        pos = _skip_space(text, pos)
        if text.startswith(",", pos):
            pos = _skip_space(text, pos + 1)
        elif not text.startswith(close, pos):
            raise BodyError("malformed", f"expected ',' or {close!r} at offset {pos}")
    return (fields if close == "}" else items), pos + 1


def _gemma_key(text: str, pos: int) -> tuple[str, int]:
    if text.startswith(_QUOTE, pos):
        key, end = _gemma_value(text, pos, 0)
        return str(key), end
    match = _GEMMA_KEY.match(text, pos)
    if match is None:
        raise BodyError("malformed", f"expected a key at offset {pos}: {text[pos : pos + 20]!r}")
    return match.group(), match.end()


# --- dispatch --------------------------------------------------------------------


def _unmarked_json_call(body: str) -> list[ParsedCall]:
    # ```json fences and bare "{" also open on ordinary JSON answers, so missing
    # arguments are not read as a call there (DESIGN: "name + arguments/parameters").
    return _json_call(body, arguments_optional=False)


_PARSERS: dict[str, Callable[[str], list[ParsedCall]]] = {
    "gemma_special": _gemma,
    "tool_call_tag": _tool_call_tag,
    "tools_tag": _json_calls,
    "fenced_json": _unmarked_json_call,
    "bracket_tool_calls": _bracket_tool_calls,
    "python_tag": _python_tag,
    "bare_json": _unmarked_json_call,
}


def parse_body(format_id: str, body: str) -> list[ParsedCall]:
    """The calls in a block body (the text between its markers); raises only ``BodyError``."""
    parser = _PARSERS.get(format_id)
    if parser is None:
        raise BodyError("malformed", f"{format_id!r} is not a call format")
    if not body.strip():
        raise BodyError("malformed", "the block is empty")
    return parser(body)


def strip_markers(format_id: str, raw: str, *, closed: bool = True) -> str:
    """What the user is shown for a rejected block: ``raw`` without its markers (policy 12).

    Read from the format table: the opening marker less the characters it keeps
    for the body (the ``{`` of a fence), and a trailing closing marker if present.
    Pass ``closed=False`` for an unterminated block, whose raw may end in a closing
    marker that sat inside a JSON string (policy 4) and so is content.
    """
    fmt = BY_ID.get(format_id)
    if fmt is None:
        return raw
    text = raw
    for opener in fmt.opens:
        marker = opener[: len(opener) - fmt.keep]
        if marker and text.startswith(marker):
            text = text[len(marker) :]
            break
    if closed:
        for closer in fmt.closes:
            if text.endswith(closer):
                return text[: -len(closer)]
    return text
