"""Gemma 4: ``call:NAME{key:<|"|>v<|"|>,…}`` between its ``<|tool_call>`` special tokens.

Strings open and close with the ``<|"|>`` token and have no escapes; Gemma
falls back to a JSON call inside the same tokens.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    canonical_arguments,
    check_name,
    decode_at,
    decode_whole,
    json_call,
    skip_space,
)
from tcr.dialects._grammars import city_call
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Example,
    Grammar,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import (
    FLAVORS,
    MAX_CALLS,
    XML_FLAVORS,
    BodyText,
    Calls,
    json_calls,
    json_text,
    rendered,
)

__all__ = ["DIALECT", "QUOTE", "gemma_safe", "gemma_text"]

OPEN = "<|tool_call>"
CLOSE = "<tool_call|>"
QUOTE = '<|"|>'  # Gemma 4 opens and closes strings with this token; there are no escapes
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_KEY = re.compile(r'[^\s:,{}\[\]<>"]+')
_MAX_DEPTH = 200  # recursion stays far below Python's limit on adversarial input


# --- reading ---------------------------------------------------------------------


def _parse(body: str) -> list[ParsedCall]:
    """``call:NAME{key:<|"|>text<|"|>,n:3,…}``, several in a row; or a JSON call."""
    text = body.strip()
    if text[:1] in ("{", "["):
        return json_call(body)
    calls: list[ParsedCall] = []
    pos = 0
    while pos < len(text):
        if not text.startswith("call:", pos):
            raise BodyError("malformed", f"expected 'call:' at offset {pos}")
        brace = text.find("{", pos)
        if brace < 0:
            raise BodyError("malformed", f"no '{{' after 'call:' at offset {pos}")
        name = check_name(text[pos + 5 : brace], "after 'call:'")
        arguments, pos = _value(text, brace, 0)
        calls.append(ParsedCall(name, canonical_arguments(arguments)))
        while pos < len(text) and (text[pos].isspace() or text[pos] == ","):
            pos += 1
    return calls


def _value(text: str, pos: int, depth: int) -> tuple[object, int]:
    pos = skip_space(text, pos)
    if depth > _MAX_DEPTH:
        raise BodyError("malformed", f"nested deeper than {_MAX_DEPTH} at offset {pos}")
    if text.startswith(QUOTE, pos):
        end = text.find(QUOTE, pos + len(QUOTE))
        if end < 0:
            raise BodyError("malformed", f'unterminated <|"|> string at offset {pos}')
        return text[pos + len(QUOTE) : end], end + len(QUOTE)
    if text.startswith('"', pos):  # some renderers quote strings as JSON instead
        return decode_at(text, pos)
    if text.startswith("{", pos):
        return _container(text, pos, depth, "}")
    if text.startswith("[", pos):
        return _container(text, pos, depth, "]")
    match = _SCALAR.match(text, pos)
    if match is None:
        raise BodyError("malformed", f"expected a value at offset {pos}: {text[pos : pos + 20]!r}")
    return decode_whole(match.group()), match.end()


def _container(text: str, pos: int, depth: int, close: str) -> tuple[object, int]:
    """``{key:value,…}`` (bare or <|"|>-quoted keys) or ``[value,…]``, from its opening bracket."""
    items: list[object] = []
    fields: dict[str, object] = {}
    pos = skip_space(text, pos + 1)
    while not text.startswith(close, pos):
        if close == "}":
            key, pos = _key(text, pos)
            pos = skip_space(text, pos)
            if not text.startswith(":", pos):
                raise BodyError("malformed", f"expected ':' after key {key!r} at offset {pos}")
            fields[key], pos = _value(text, pos + 1, depth + 1)
        else:
            value, pos = _value(text, pos, depth + 1)
            items.append(value)
        pos = skip_space(text, pos)
        if text.startswith(",", pos):
            pos = skip_space(text, pos + 1)
        elif not text.startswith(close, pos):
            raise BodyError("malformed", f"expected ',' or {close!r} at offset {pos}")
    return (fields if close == "}" else items), pos + 1


def _key(text: str, pos: int) -> tuple[str, int]:
    if text.startswith(QUOTE, pos):
        key, end = _value(text, pos, 0)
        return str(key), end
    match = _KEY.match(text, pos)
    if match is None:
        raise BodyError("malformed", f"expected a key at offset {pos}: {text[pos : pos + 20]!r}")
    return match.group(), match.end()


# --- writing ---------------------------------------------------------------------


def gemma_text(value: object) -> str:
    """``value`` as Gemma 4 writes arguments: ``{key:<|"|>text<|"|>,n:3}``.

    Strings must not contain the ``<|"|>`` token (Gemma has no escapes): pass
    values through ``gemma_safe`` first.
    """
    if isinstance(value, str):
        return QUOTE + value + QUOTE
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ",".join(gemma_text(item) for item in value) + "]"
    if isinstance(value, dict):
        fields = (f"{_written_key(key)}:{gemma_text(item)}" for key, item in value.items())
        return "{" + ",".join(fields) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def _written_key(key: str) -> str:
    return key if _KEY.fullmatch(key) else QUOTE + key + QUOTE


def gemma_safe(value: Any) -> Any:
    """``value`` with the ``<|"|>`` token taken out of every string and key."""
    if isinstance(value, str):
        return value.replace(QUOTE, "<|'|>")
    if isinstance(value, list):
        return [gemma_safe(item) for item in value]
    if isinstance(value, dict):
        return {gemma_safe(key): gemma_safe(item) for key, item in value.items()}
    return value


def _render(draws: Draws, tools: Tools) -> Rendered:
    if draws.variant(("native", "json")) == "json":  # Gemma's JSON fallback in its own tokens
        json_plan = Calls(draws, tools, most=1, flavors=FLAVORS)
        (obj,), found = json_calls(draws, json_plan, optional=True)
        body = BodyText()
        body.add(json_text(obj, draws.style()), fragile=True)
        return rendered(DIALECT, "json", body, json_plan.accepted(), found)
    calls = Calls(draws, tools, most=MAX_CALLS, flavors=XML_FLAVORS)
    body = BodyText()
    written_calls: list[Call] = []
    separator = draws.option(0, ("", ",", "\n"))
    for k, (name, flavor) in enumerate(zip(calls.names, calls.flavors(), strict=True)):
        args = gemma_safe(draws.arguments())
        written = "" if flavor == "missing_name" else name
        if k:
            body.add(separator)
        body.add(f"call:{written}{gemma_text(args)}", fragile=True)
        if flavor == "call":
            written_calls.append(Call(name, args))
    return rendered(DIALECT, "native", body, calls.accepted(), tuple(written_calls))


_expect = city_call(
    rf"(.*?){re.escape(OPEN)}call:get_weather\{{city:{re.escape(QUOTE)}(\w+)"
    rf"{re.escape(QUOTE)}\}}{re.escape(CLOSE)}(.*)"
)


DIALECT = Dialect(
    id="gemma_special",
    summary='Gemma 4 call:NAME{key:<|"|>v<|"|>,…}, or JSON',
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "I'll look that up. ",
        f"{OPEN}call:get_weather{{city:{QUOTE}Paris, FR{QUOTE},days:3}}{CLOSE}",
        " Here it is.",
        (Call("get_weather", {"city": "Paris, FR", "days": 3}),),
    ),
    grammars=(
        Grammar(
            "gemma_special",
            'Gemma 4 special-token call with <|"|> strings.',
            "What is the weather in Paris?",
            'sentence " <|tool_call>call:get_weather{city:<|\\"|>" word "<|\\"|>}<tool_call|>"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_gemma_special.msgpack",
            bug="format-gemma-special",
            note=(
                'Dialect gemma_special: Gemma 4 writes call:NAME{key:<|"|>v<|"|>,…} between its '
                "special tokens, after a sentence of preamble."
            ),
            model="gemma4",
            ask="Three-day forecast for Paris, France?",
            text=f"I'll look that up. {OPEN}call:get_weather{{city:{QUOTE}Paris, FR{QUOTE},days:3}}"
            f"{CLOSE}",
            tools=("get_weather",),
            shown="I'll look that up. ",
            calls=(Call("get_weather", {"city": "Paris, FR", "days": 3}),),
        ),
    ),
    special_tokens=frozenset({OPEN, CLOSE, QUOTE}),
    lexer_by_first=(("{[", BodyLexer.JSON), ("c", BodyLexer.QUOTED)),
    quote=QUOTE,
    model_seeds=("gemma*",),
    tokens=(QUOTE,),
    markup=(OPEN, CLOSE, QUOTE),
)
