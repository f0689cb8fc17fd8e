"""FunctionGemma: ``<start_function_call>call:NAME{key:<escape>v<escape>,…}<end_function_call>``.

vLLM calls its parser ``functiongemma`` (``vllm/tool_parsers/functiongemma_tool_parser.py``,
for ``google/functiongemma-270m-it``): the start and end markers and ``<escape>`` are
special tokens (the parser turns ``skip_special_tokens`` off), one call per marker
pair, the text before the first call is content. The body is Gemma's call literal
with ``<escape>`` as its string quote (``_call_literals``): a quoted value is a
string, a bare one a JSON scalar, ``{…}`` and ``[…]`` nest. vLLM's regex reads only
``key:<escape>v<escape>`` pairs of ``\\w+`` names and ``json.loads`` each value, so
it turns the string ``"75001"`` into a number and drops bare ``n:3``; the
reference reads what the template wrote.
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

__all__ = ["DIALECT"]

OPEN = "<start_function_call>"
CLOSE = "<end_function_call>"
QUOTE = "<escape>"
_LITERALS = CallLiterals(QUOTE, "<esc>")


def _parse(body: str) -> list[ParsedCall]:
    calls = _LITERALS.calls(body.strip())
    if len(calls) != 1:
        raise BodyError("malformed", f"{len(calls)} calls in one block; FunctionGemma writes one")
    return calls


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=1, flavors=XML_FLAVORS)
    (name,) = calls.names
    args = _LITERALS.safe(draws.arguments())
    written = "" if calls.flavor == "missing_name" else name
    body = BodyText()
    body.add(f"call:{written}{_LITERALS.text(args)}", fragile=True)
    found = (Call(name, args),) if calls.flavor == "call" else ()
    return rendered(DIALECT, "call", body, calls.accepted(), found)


_expect = city_call(
    rf"(.*?){re.escape(OPEN)}call:get_weather\{{city:{re.escape(QUOTE)}(\w+)"
    rf"{re.escape(QUOTE)}\}}{re.escape(CLOSE)}(.*)"
)


DIALECT = Dialect(
    id="functiongemma",
    summary="FunctionGemma: call:NAME{key:<escape>v<escape>,…} between its markers",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "Checking. ",
        f"{OPEN}call:get_weather{{city:{QUOTE}Paris, FR{QUOTE},days:3}}{CLOSE}",
        "",
        (Call("get_weather", {"city": "Paris, FR", "days": 3}),),
    ),
    grammars=(
        Grammar(
            "functiongemma",
            "FunctionGemma call with <escape> strings between its start and end markers.",
            "What is the weather in Paris?",
            f'sentence " {OPEN}call:get_weather{{city:{QUOTE}" word "{QUOTE}}}{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_functiongemma.msgpack",
            bug="format-functiongemma",
            note="Dialect functiongemma: two calls, each in its own marker pair.",
            model="functiongemma",
            ask="Weather in Paris and the time in Berlin?",
            text=f"{OPEN}call:get_weather{{city:{QUOTE}Paris{QUOTE}}}{CLOSE}"
            f"{OPEN}call:get_time{{tz:{QUOTE}Europe/Berlin{QUOTE}}}{CLOSE}",
            tools=("get_weather", "get_time"),
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Berlin"}),
            ),
        ),
        RegressionCase(
            file="functiongemma_numeric_string.msgpack",
            bug="functiongemma-numeric-string",
            note=(
                "Dialect functiongemma: <escape>75001<escape> is the string '75001' and a bare "
                "3 the number 3 (vLLM json.loads-es quoted values and drops bare ones)."
            ),
            model="functiongemma",
            ask="Orders for postcode 75001, three of them?",
            text=f"{OPEN}call:run_sql{{query:{QUOTE}75001{QUOTE},limit:3}}{CLOSE}",
            tools=("run_sql",),
            calls=(Call("run_sql", {"query": "75001", "limit": 3}),),
        ),
        RegressionCase(
            file="functiongemma_end_marker_in_string.msgpack",
            bug="functiongemma-end-marker-in-string",
            note=(
                "Dialect functiongemma: the end marker and a } inside an <escape> string do "
                "not end the call (vLLM's regex stops at the first }<end_function_call>)."
            ),
            model="functiongemma",
            ask="Save the tag list.",
            text=f"{OPEN}call:write_file{{path:{QUOTE}t.txt{QUOTE},content:{QUOTE}a}}{CLOSE} b"
            f"{QUOTE}}}{CLOSE} Saved.",
            tools=("write_file",),
            shown=" Saved.",
            calls=(Call("write_file", {"path": "t.txt", "content": f"a}}{CLOSE} b"}),),
        ),
    ),
    engines=Engines(vllm=("functiongemma",)),
    special_tokens=frozenset({OPEN, CLOSE, QUOTE}),
    lexer_otherwise=BodyLexer.QUOTED,
    quote=QUOTE,
    model_seeds=("functiongemma*",),
    tokens=(QUOTE,),
    markup=(OPEN, CLOSE, QUOTE),
)
