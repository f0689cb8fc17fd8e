"""``<tools>…</tools>``: a JSON call object or an array of them (a Gemma fallback)."""

from __future__ import annotations

import json

from tcr.dialects._calls import json_calls as parse_json_calls
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
from tcr.dialects._writing import (
    FLAVORS,
    MAX_CALLS,
    BodyText,
    Calls,
    json_calls,
    json_text,
    rendered,
)

__all__ = ["DIALECT"]

OPEN = "<tools>"
CLOSE = "</tools>"


def _render(draws: Draws, tools: Tools) -> Rendered:
    array = draws.variant(("array", "object")) == "array"
    calls = Calls(draws, tools, most=MAX_CALLS if array else 1, flavors=FLAVORS)
    objects, found = json_calls(draws, calls, optional=True)
    body = BodyText()
    space = draws.option(0, ("", "\n"))
    body.add(space)
    body.add(json_text(objects if array else objects[0], draws.style()), fragile=True)
    body.add(space)
    return rendered(DIALECT, "array" if array else "object", body, calls.accepted(), found)


def _expect(content: str) -> dict[str, object]:
    m = around(rf"(.*?){OPEN}(\[.*\]){CLOSE}(.*)", content)
    return expectation(m[1] + m[3], json.loads(m[2]))


DIALECT = Dialect(
    id="tools_tag",
    summary="JSON object or array of calls",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=parse_json_calls,
    render=_render,
    example=Example(
        "Two calls: ",
        f'{OPEN}[{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}, '
        f'{{"name": "get_time", "arguments": {{"tz": "CET"}}}}]{CLOSE}',
        " bye",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "tools_tag",
            "Gemma fallback <tools> block holding an array of two calls.",
            "Get the weather in Paris and the time in Berlin.",
            f'sentence " {OPEN}[" {WEATHER} ", " {TIME} "]{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_tools_tag.msgpack",
            bug="format-tools-tag",
            note="Dialect tools_tag: Gemma's fallback, one JSON call object inside <tools>.",
            model="gemma4",
            ask="Weather in Paris?",
            text=f'One lookup: {OPEN}{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}'
            f"{CLOSE}",
            tools=("get_weather",),
            shown="One lookup: ",
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
    ),
    lexer_by_first=(("{[", BodyLexer.JSON),),
    markup=(CLOSE,),
    # llama.cpp's Hermes 2 Pro parser reads it; vLLM and SGLang have none.
    engines=Engines(llamacpp=("HERMES_2_PRO",)),
)
