"""Gemma 4: ``call:NAME{key:<|"|>v<|"|>,…}`` between its ``<|tool_call>`` special tokens.

Strings open and close with the ``<|"|>`` token and have no escapes. One call per
block, and nothing but the call: llama.cpp's grammar repeats the whole
``<|tool_call>call:NAME{…}<tool_call|>`` block per call (common/parsers/gemma4.cpp,
``common_chat_params_init_gemma4``), vLLM's parser engine (vllm/parser/gemma4.py) ends
a call's arguments only at ``<tool_call|>``, SGLang's ``Gemma4Detector._extract_tool_calls``
takes one call per block, and none of them reads JSON inside the tokens. vLLM and
SGLang both call its parser ``gemma4`` (vLLM's registry maps it to gemma4_engine_tool_parser.py,
``Gemma4EngineToolParser``; SGLang's ``ToolCallParserEnum`` to ``Gemma4Detector``);
llama.cpp's format is ``COMMON_CHAT_FORMAT_PEG_GEMMA4``.
"""

from __future__ import annotations

import re

from tcr.dialects._call_literals import CallLiterals
from tcr.dialects._calls import BodyError, ParsedCall
from tcr.dialects._grammars import city_call
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import XML_FLAVORS, BodyText, Calls, rendered

__all__ = ["DIALECT", "QUOTE", "gemma_safe", "gemma_text"]

OPEN = "<|tool_call>"
CLOSE = "<tool_call|>"
QUOTE = '<|"|>'  # Gemma 4 opens and closes strings with this token; there are no escapes
_LITERALS = CallLiterals(QUOTE, "<|'|>")
gemma_text = _LITERALS.text
gemma_safe = _LITERALS.safe


# --- reading ---------------------------------------------------------------------


def _parse(body: str) -> list[ParsedCall]:
    """``call:NAME{key:<|"|>text<|"|>,n:3,…}``: one call."""
    calls = _LITERALS.calls(body.strip())
    if len(calls) != 1:
        raise BodyError("malformed", f"{len(calls)} calls in one block; Gemma 4 writes one")
    return calls


# --- writing ---------------------------------------------------------------------


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=1, flavors=XML_FLAVORS)
    (name,) = calls.names
    args = gemma_safe(draws.arguments())
    written = "" if calls.flavor == "missing_name" else name
    body = BodyText()
    body.add(f"call:{written}{gemma_text(args)}", fragile=True)
    found = (Call(name, args),) if calls.flavor == "call" else ()
    return rendered(DIALECT, "native", body, calls.accepted(), found)


_expect = city_call(
    rf"(.*?){re.escape(OPEN)}call:get_weather\{{city:{re.escape(QUOTE)}(\w+)"
    rf"{re.escape(QUOTE)}\}}{re.escape(CLOSE)}(.*)"
)


DIALECT = Dialect(
    id="gemma4",
    summary='Gemma 4 call:NAME{key:<|"|>v<|"|>,…} between its special tokens',
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
    engines=Engines(vllm=("gemma4",), sglang=("gemma4",), llamacpp=("PEG_GEMMA4",)),
    special_tokens=frozenset({OPEN, CLOSE, QUOTE}),
    lexer_by_first=(("c", BodyLexer.QUOTED),),
    quote=QUOTE,
    model_seeds=("gemma*",),
    tokens=(QUOTE,),
    markup=(OPEN, CLOSE, QUOTE),
)
