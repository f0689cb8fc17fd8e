"""Granite-20B-FunctionCalling: ``<function_call>`` then one JSON call, repeated per call.

vLLM calls its parser ``granite-20b-fc``
(``vllm/tool_parsers/granite_20b_fc_tool_parser.py``): every ``<function_call>``
(then white space) starts one ``{"name", "arguments"}`` object, read with
``JSONDecoder.raw_decode``; the text before the first marker is content. No closing
marker: a call ends at the ``}`` that balances its object. The marker is plain text
to the tokenizer, not a special token.
"""

from __future__ import annotations

import json

from tcr.dialects._arrays import strict_call, strict_calls
from tcr.dialects._calls import ParsedCall, decode_whole
from tcr.dialects._grammars import TIME, WEATHER, around, expectation
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
from tcr.dialects._writing import BodyText, json_text, rendered

__all__ = ["DIALECT"]

OPEN = "<function_call>"
_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
_TIME = '{"name": "get_time", "arguments": {"tz": "CET"}}'


def _parse(body: str) -> list[ParsedCall]:
    return [strict_call(decode_whole(body))]


def _render(draws: Draws, tools: Tools) -> Rendered:
    (obj,), found, accepted = strict_calls(draws, tools, most=1)
    body = BodyText()
    body.add(draws.option(0, (" ", "", "\n")))
    body.add(json_text(obj, draws.style()), fragile=True)
    return rendered(DIALECT, "object", body, accepted, found)


def _expect(content: str) -> dict[str, object]:
    m = around(rf"(.*?){OPEN} (\{{.*?\}})( ){OPEN} (\{{.*\}})(.*)", content)
    return expectation(m[1] + m[3] + m[5], [json.loads(m[2]), json.loads(m[4])])


DIALECT = Dialect(
    id="granite_20b_fc",
    summary="Granite-20B-FC: <function_call> then one JSON call, the marker per call",
    opens=(OPEN,),
    closes=(),
    closing=Closing.BALANCED,
    parse=_parse,
    render=_render,
    example=Example(
        "",
        f"{OPEN} {_PARIS}{OPEN} {_TIME}",
        "",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "granite_20b_fc",
            "Granite-20B-FC: two calls, each after its own <function_call> marker.",
            "Get the weather in Paris and the time in Berlin.",
            f'sentence " {OPEN} " {WEATHER} " {OPEN} " {TIME}',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_granite_20b_fc.msgpack",
            bug="format-granite-20b-fc",
            note="Dialect granite_20b_fc: two calls, each after its own <function_call>.",
            model="granite_20b_fc",
            ask="Weather in Paris and the time in Berlin?",
            text=f'{OPEN} {_PARIS} {OPEN} {{"name": "get_time", "arguments": '
            f'{{"tz": "Europe/Berlin"}}}}',
            tools=("get_weather", "get_time"),
            shown=" ",
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Berlin"}),
            ),
        ),
        RegressionCase(
            file="granite_20b_fc_marker_in_argument.msgpack",
            bug="granite-20b-fc-marker-in-argument",
            note=(
                "Dialect granite_20b_fc: a <function_call> and a } inside an argument string "
                "neither end the call nor start another (vLLM's parser cuts the text at every "
                "<function_call> it finds, strings included)."
            ),
            model="granite_20b_fc",
            ask="Save the template.",
            text=f'{OPEN} {{"name": "write_file", "arguments": {{"path": "t.txt", '
            f'"content": "}} {OPEN} {{"}}}}',
            tools=("write_file",),
            calls=(Call("write_file", {"path": "t.txt", "content": f"}} {OPEN} {{"}),),
        ),
        RegressionCase(
            file="granite_20b_fc_after_preamble.msgpack",
            bug="granite-20b-fc-after-preamble",
            note=(
                "Dialect granite_20b_fc: a preamble before the marker is shown, and the call "
                "after it still read (vLLM's streaming path opens only at message start)."
            ),
            model="granite_20b_fc",
            ask="Weather in Paris?",
            text=f"Sure, checking.\n{OPEN} {_PARIS}",
            tools=("get_weather",),
            shown="Sure, checking.\n",
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
    ),
    engines=Engines(vllm=("granite-20b-fc",)),
    first_lexer=BodyLexer.BALANCED,
    model_seeds=("granite-20b-functioncalling*",),
    markup=(OPEN,),
)
