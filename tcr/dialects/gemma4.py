"""Gemma 4: ``call:NAME{key:<|"|>v<|"|>,…}`` between its ``<|tool_call>`` special tokens.

Strings open and close with the ``<|"|>`` token and have no escapes; Gemma
falls back to a JSON call inside the same tokens. vLLM and SGLang both call its
parser ``gemma4`` (vLLM's registry maps it to gemma4_engine_tool_parser.py,
``Gemma4EngineToolParser``; SGLang's ``ToolCallParserEnum`` to ``Gemma4Detector``).
"""

from __future__ import annotations

import re

from tcr.dialects._call_literals import CallLiterals
from tcr.dialects._calls import ParsedCall, json_call
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
_LITERALS = CallLiterals(QUOTE, "<|'|>")
gemma_text = _LITERALS.text
gemma_safe = _LITERALS.safe


# --- reading ---------------------------------------------------------------------


def _parse(body: str) -> list[ParsedCall]:
    """``call:NAME{key:<|"|>text<|"|>,n:3,…}``, several in a row; or a JSON call."""
    text = body.strip()
    if text[:1] in ("{", "["):
        return json_call(body)
    return _LITERALS.calls(text)


# --- writing ---------------------------------------------------------------------


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
    id="gemma4",
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
            "gemma4",
            'Gemma 4 special-token call with <|"|> strings.',
            "What is the weather in Paris?",
            'sentence " <|tool_call>call:get_weather{city:<|\\"|>" word "<|\\"|>}<tool_call|>"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_gemma4.msgpack",
            bug="format-gemma4",
            note=(
                'Dialect gemma4: Gemma 4 writes call:NAME{key:<|"|>v<|"|>,…} between its '
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
    parser_names=("gemma4",),
    special_tokens=frozenset({OPEN, CLOSE, QUOTE}),
    lexer_by_first=(("{[", BodyLexer.JSON), ("c", BodyLexer.QUOTED)),
    quote=QUOTE,
    model_seeds=("gemma*",),
    tokens=(QUOTE,),
    markup=(OPEN, CLOSE, QUOTE),
)
