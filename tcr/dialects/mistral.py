"""Mistral: ``[TOOL_CALLS]`` then a JSON array of calls, or v11's ``NAME[ARGS]{…}``.

vLLM and SGLang call its parser ``mistral``. No closing marker: the block ends
at the bracket that balances the array, or the ``}`` of the arguments.
"""

from __future__ import annotations

import json
import re

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    canonical_arguments,
    check_name,
    decode_whole,
    json_calls,
)
from tcr.dialects._grammars import WEATHER, around, call_map, expectation
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
from tcr.dialects._writing import FLAVORS, MAX_CALLS, BodyText, Calls, json_text, rendered
from tcr.dialects._writing import json_calls as write_json_calls

__all__ = ["DIALECT"]

OPEN = "[TOOL_CALLS]"
ARGS = "[ARGS]"
_NAMED = re.compile(r"([^\[\]\s]+)(?:\[CALL_ID\][^\[]*)?\[ARGS\](.*)", re.S)


def _parse(body: str) -> list[ParsedCall]:
    """``[{…}, …]``, or v11's ``NAME[ARGS]{…}`` (maybe with ``[CALL_ID]ID``)."""
    text = body.strip()
    if text[:1] in ("[", "{"):
        return json_calls(body)
    match = _NAMED.fullmatch(text)
    if match is None:
        raise BodyError("malformed", "expected a JSON array or NAME[ARGS]{…}")
    name = check_name(match.group(1), "before [ARGS]")
    return [ParsedCall(name, canonical_arguments(decode_whole(match.group(2))))]


def _render(draws: Draws, tools: Tools) -> Rendered:
    form = draws.variant(("array", "args", "object"))
    if form == "args":  # Mistral v11: NAME[ARGS]{…}, one call per block
        # Without its name the body would start with "[" and close as an array (a
        # different block): this form is always named.
        named = Calls(draws, tools, most=1, flavors=("call",))
        name = named.names[0]
        args = draws.arguments()
        call_id = draws.option(1, ("", "[CALL_ID]a1B2c3D4e"))
        body = BodyText()
        body.add(f"{name}{call_id}{ARGS}{json_text(args, draws.style())}", fragile=True)
        return rendered(DIALECT, "args", body, named.accepted(), (Call(name, args),))
    calls = Calls(draws, tools, most=MAX_CALLS if form == "array" else 1, flavors=FLAVORS)
    objects, found = write_json_calls(draws, calls, optional=True)
    body = BodyText()
    body.add(draws.option(0, ("", " ")))
    value = objects if form == "array" else objects[0]
    body.add(json_text(value, draws.style()), fragile=True)
    return rendered(DIALECT, form, body, calls.accepted(), found)


def _expect_array(content: str) -> dict[str, object]:
    m = around(r"(.*?)\[TOOL_CALLS\](\[.*\])(.*)", content)
    return expectation(m[1] + m[3], json.loads(m[2]))


def _expect_args(content: str) -> dict[str, object]:
    m = around(r"(.*?)\[TOOL_CALLS\]get_weather\[ARGS\](\{.*?\})(.*)", content)
    return expectation(m[1] + m[3], [call_map("get_weather", json.loads(m[2]))])


DIALECT = Dialect(
    id="bracket_tool_calls",
    summary="Mistral: a JSON array of calls, or NAME[ARGS]{…}",
    opens=(OPEN,),
    closes=(),
    closing=Closing.BALANCED,
    parse=_parse,
    render=_render,
    example=Example(
        "Calling. ",
        f'{OPEN}get_weather{ARGS}{{"city": "Paris"}}{OPEN}get_time{ARGS}{{"tz": "CET"}}',
        " then",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "bracket_tool_calls_array",
            "Mistral [TOOL_CALLS] JSON array.",
            "What is the weather in Paris?",
            f'"[TOOL_CALLS][" {WEATHER} "]"',
            _expect_array,
        ),
        Grammar(
            "bracket_tool_calls_args",
            "Mistral v11 [TOOL_CALLS]NAME[ARGS]{…} form.",
            "What is the weather in Paris?",
            '"[TOOL_CALLS]get_weather[ARGS]{\\"city\\": " city "}"',
            _expect_args,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_bracket_array.msgpack",
            bug="format-bracket-array",
            note="Dialect bracket_tool_calls: Mistral v0.3's [TOOL_CALLS] then a JSON array.",
            model="mistral_v03",
            ask="Weather in Paris?",
            text=f'{OPEN} [{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}]',
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
        RegressionCase(
            file="format_bracket_args.msgpack",
            bug="format-bracket-args",
            note=(
                "Dialect bracket_tool_calls: Mistral Small 3.2's NAME[ARGS]{…} form, two calls, "
                "from llama-server's /completion endpoint."
            ),
            model="mistral_small",
            ask="Weather in Paris and the time there?",
            text=f'{OPEN}get_weather{ARGS}{{"city": "Paris"}}'
            f'{OPEN}get_time{ARGS}{{"tz": "Europe/Paris"}}',
            tools=("get_weather", "get_time"),
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Paris"}),
            ),
        ),
    ),
    parser_names=("mistral",),
    special_tokens=frozenset({OPEN, ARGS}),
    lexer_by_first=(("[", BodyLexer.BALANCED),),
    lexer_otherwise=BodyLexer.BEFORE_BRACE,
    model_seeds=("mistral*", "mixtral*"),
    tokens=(ARGS,),
    markup=(OPEN,),
)
