"""Jamba (AI21) and Hunyuan A13B: a JSON array of calls between ``<tool_calls>`` tokens.

vLLM calls its parsers ``jamba`` (``vllm/tool_parsers/jamba_tool_parser.py``:
``<tool_calls>`` and ``</tool_calls>`` are single tokens, the body is
``json.loads``-ed as a list of ``{"name", "arguments"}``, the text before the
block is content) and ``hunyuan_a13b``
(``vllm/tool_parsers/hunyuan_a13b_tool_parser.py``: the same tags and body, an
array required, ``<think>`` regions skipped). The two read the same markup, so
one record holds both parser names: a block cannot say which model wrote it.
Hunyuan's streaming path also takes a bare ``[`` at message start; that is
``xlam``'s shape and stays there.
"""

from __future__ import annotations

import json

from tcr.dialects._arrays import strict_array, strict_calls
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

OPEN = "<tool_calls>"
CLOSE = "</tool_calls>"
_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def _render(draws: Draws, tools: Tools) -> Rendered:
    objects, found, accepted = strict_calls(draws, tools)
    space = draws.option(0, ("", "\n"))
    body = BodyText()
    body.add(space)
    body.add(json_text(objects, draws.style()), fragile=True)
    body.add(space)
    return rendered(DIALECT, "array", body, accepted, found)


def _expect(content: str) -> dict[str, object]:
    m = around(rf"(.*?){OPEN}(\[.*\]){CLOSE}(.*)", content)
    return expectation(m[1] + m[3], json.loads(m[2]))


DIALECT = Dialect(
    id="jamba",
    summary="Jamba / Hunyuan A13B: a JSON array of calls in <tool_calls>",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=strict_array,
    render=_render,
    example=Example(
        "Checking both. ",
        f'{OPEN}[{_PARIS}, {{"name": "get_time", "arguments": {{"tz": "CET"}}}}]{CLOSE}',
        " Done.",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "jamba",
            "Jamba <tool_calls> block holding a JSON array of two calls.",
            "Get the weather in Paris and the time in Berlin.",
            f'sentence " {OPEN}[" {WEATHER} ", " {TIME} "]{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_jamba.msgpack",
            bug="format-jamba",
            note="Dialect jamba: a preamble, then two calls in one <tool_calls> array.",
            model="jamba",
            ask="Weather in Paris and the time in Berlin?",
            text=f'Let me check. {OPEN}[{_PARIS}, {{"name": "get_time", "arguments": '
            f'{{"tz": "Europe/Berlin"}}}}]{CLOSE}',
            tools=("get_weather", "get_time"),
            shown="Let me check. ",
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Berlin"}),
            ),
        ),
        RegressionCase(
            file="jamba_end_marker_in_argument.msgpack",
            bug="jamba-end-marker-in-argument",
            note=(
                "Dialect jamba: </tool_calls> inside a JSON string of the arguments does not "
                "close the block (vLLM's jamba and hunyuan_a13b regex stops at the first one)."
            ),
            model="jamba",
            ask="Write the closing tag into notes.txt.",
            text=f'{OPEN}[{{"name": "write_file", "arguments": {{"path": "notes.txt", '
            f'"content": "end with {CLOSE}"}}}}]{CLOSE}',
            tools=("write_file",),
            calls=(Call("write_file", {"path": "notes.txt", "content": f"end with {CLOSE}"}),),
        ),
        RegressionCase(
            file="jamba_not_hermes.msgpack",
            bug="jamba-not-hermes",
            note=(
                "Dialect jamba: <tool_calls> shares its first ten characters with Hermes's "
                "<tool_call>; a detector that opens on the shorter tag reads 's>[' as JSON."
            ),
            model="jamba",
            ask="Weather in Paris?",
            text=f"{OPEN}\n[{_PARIS}]\n{CLOSE}",
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
    ),
    engines=Engines(vllm=("jamba", "hunyuan_a13b")),
    special_tokens=frozenset({OPEN, CLOSE}),
    lexer_by_first=(("{[", BodyLexer.JSON),),
    model_seeds=("*jamba*", "*hunyuan*"),
    markup=(CLOSE,),
)
