"""Llama 3.1: ``<|python_tag|>`` then JSON calls separated by ``;``.

Part of what vLLM's ``llama3_json`` parser reads. Closed by ``<|eom_id|>``,
``<|eot_id|>`` or the end of the message.
"""

from __future__ import annotations

import json

from tcr.dialects._calls import BodyError, ParsedCall, call, decode_at, skip_space
from tcr.dialects._grammars import around, call_map, expectation
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
from tcr.dialects._writing import FLAVORS, MAX_CALLS, BodyText, Calls, json_calls, json_text

__all__ = ["DIALECT"]

OPEN = "<|python_tag|>"
CLOSES = ("<|eom_id|>", "<|eot_id|>")


def _parse(body: str) -> list[ParsedCall]:
    """JSON calls separated by ``;``; raw_decode keeps a ``;`` in a string whole."""
    calls: list[ParsedCall] = []
    pos = 0
    while True:
        pos = skip_space(body, pos)
        value, pos = decode_at(body, pos)
        calls.append(call(value, True))
        pos = skip_space(body, pos)
        if pos < len(body) and body[pos] == ";":
            pos = skip_space(body, pos + 1)
        elif pos < len(body):
            raise BodyError("malformed", f"expected ';' between calls at offset {pos}")
        if pos == len(body):  # a trailing ';' is tolerated
            return calls


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=MAX_CALLS, flavors=FLAVORS)
    objects, found = json_calls(draws, calls, optional=True)
    separator = draws.option(0, (";", "; ", " ; ", ";\n"))
    body = BodyText()
    for k, obj in enumerate(objects):
        if k:
            body.add(separator)
        body.add(json_text(obj, draws.style()), fragile=True)
    body.add(draws.option(1, ("", ";")))
    # Closed by the end of the message too: the message keeps such a block last.
    closer = draws.option(2, (*CLOSES, ""))
    return Rendered(
        DIALECT.id,
        "json",
        OPEN,
        body.text,
        closer,
        "",
        found,
        calls.accepted(),
        tuple(body.fragile),
    )


def _expect(content: str) -> dict[str, object]:
    m = around(r"(.*?)<\|python_tag\|>(.*)<\|eom_id\|>", content)
    calls = [json.loads(part) for part in m[2].split("; ")]
    return expectation(m[1], [call_map(c["name"], c["parameters"]) for c in calls])


DIALECT = Dialect(
    id="python_tag",
    summary="Llama: JSON call(s) separated by ';'; closed by <|eom_id|>, <|eot_id|> or the end",
    opens=(OPEN,),
    closes=CLOSES,
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "Calling. ",
        f'{OPEN}{{"name": "get_weather", "parameters": {{"city": "Paris"}}}}; '
        f'{{"name": "get_time", "parameters": {{"tz": "CET"}}}}{CLOSES[0]}',
        "",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "python_tag",
            "Llama 3.1 <|python_tag|> with two ;-separated calls, closed by <|eom_id|>.",
            "Get the weather in Paris and the time in Berlin.",
            '"<|python_tag|>{\\"name\\": \\"get_weather\\", \\"parameters\\": {\\"city\\": " city '
            '"}}; {\\"name\\": \\"get_time\\", \\"parameters\\": {\\"tz\\": \\"CET\\"}}<|eom_id|>"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_python_tag.msgpack",
            bug="format-python-tag",
            note=(
                "Dialect python_tag: Llama 3.1 writes ;-separated JSON calls after "
                "<|python_tag|> and ends the message with <|eom_id|>."
            ),
            model="llama_cpp_python",
            ask="Weather in Paris and the time there?",
            text=f'{OPEN}{{"name": "get_weather", "parameters": {{"city": "Paris"}}}}; '
            f'{{"name": "get_time", "parameters": {{"tz": "Europe/Paris"}}}}{CLOSES[0]}',
            tools=("get_weather", "get_time"),
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Paris"}),
            ),
            system="Environment: ipython\nCutting Knowledge Date: December 2023",
        ),
    ),
    engines=Engines(
        vllm=("llama3_json", "llama4_json"), sglang=("llama3",), llamacpp=("LLAMA_3_X",)
    ),
    special_tokens=frozenset({OPEN, *CLOSES}),
    closed_by_end=True,
    lexer_by_first=(("{[", BodyLexer.JSON),),
    model_seeds=("*llama*",),
    markup=(CLOSES[0], OPEN),
)
