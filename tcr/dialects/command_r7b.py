"""Cohere Command R7B: ``<|START_ACTION|>[{"tool_name", "parameters"}, …]<|END_ACTION|>``.

llama.cpp parses it as ``COMMON_CHAT_FORMAT_COMMAND_R7B`` (``common/chat.cpp``, with
``tests/test-chat.cpp``'s ``<|START_ACTION|>[\\n    {"tool_call_id": "0",
"tool_name": "special_function", "parameters": {"arg1": 1}}\\n]<|END_ACTION|>``):
the markers are special tokens, the body a JSON array whose items name the tool
under ``tool_name`` and its arguments under ``parameters`` (``tool_call_id``
beside them is ignored). vLLM's ``cohere_command3`` / ``cohere_command4`` parsers
(``vllm/tool_parsers/cohere_command_tool_parser.py``) read the same markup through
the ``cohere_melody`` library; SGLang's ``cohere_command4`` detector drops
``tool_call_id`` the same way. The reasoning before it, ``<|START_THINKING|>``, is
not this dialect.
"""

from __future__ import annotations

import json

from tcr.dialects._arrays import strict_array, strict_calls
from tcr.dialects._calls import ParsedCall
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
from tcr.dialects._writing import BodyText, json_text, rendered

__all__ = ["DIALECT"]

OPEN = "<|START_ACTION|>"
CLOSE = "<|END_ACTION|>"
NAME = "tool_name"
KEYS = ("parameters",)
_PARIS = '{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}'


def _parse(body: str) -> list[ParsedCall]:
    return strict_array(body, KEYS, NAME)


def _render(draws: Draws, tools: Tools) -> Rendered:
    objects, found, accepted = strict_calls(draws, tools, keys=KEYS, name_key=NAME)
    if draws.option(1, (True, False)):  # llama.cpp's template numbers the calls first
        objects = [
            {"tool_call_id": str(k), **o} for k, o in enumerate(objects) if isinstance(o, dict)
        ]
    space = draws.option(0, ("", "\n"))
    body = BodyText()
    body.add(json_text(objects, draws.style()), fragile=True)
    body.add(space)
    return rendered(DIALECT, "array", body, accepted, found)


def _expect(content: str) -> dict[str, object]:
    m = around(r"(.*?)<\|START_ACTION\|>(\[.*\])<\|END_ACTION\|>(.*)", content)
    calls = [call_map(c[NAME], c["parameters"]) for c in json.loads(m[2])]
    return expectation(m[1] + m[3], calls)


DIALECT = Dialect(
    id="command_r7b",
    summary="Command R7B: a JSON array of {tool_name, parameters} in <|START_ACTION|>",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "",
        f'{OPEN}[\n    {_PARIS},\n    {{"tool_call_id": "1", "tool_name": "get_time", '
        f'"parameters": {{"tz": "CET"}}}}\n]{CLOSE}',
        "",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "command_r7b",
            "Command R7B <|START_ACTION|> array of one {tool_call_id, tool_name, parameters}.",
            "What is the weather in Paris?",
            f'sentence " {OPEN}[{{\\"tool_call_id\\": \\"0\\", \\"tool_name\\": '
            f'\\"get_weather\\", \\"parameters\\": {{\\"city\\": " city "}}}}]{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_command_r7b.msgpack",
            bug="format-command-r7b",
            note="Dialect command_r7b: llama.cpp's own test message, one call in the array.",
            model="command_r7b",
            ask="Weather in Paris?",
            text=f"{OPEN}[\n    {_PARIS}\n]{CLOSE}",
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
        RegressionCase(
            file="command_r7b_name_key.msgpack",
            bug="command-r7b-name-key",
            note=(
                "Dialect command_r7b: the name is under tool_name and the arguments under "
                "parameters; a parser reading name/arguments finds no call."
            ),
            model="command_r7b",
            ask="Weather in Paris and the time in Berlin?",
            text=f'{OPEN}[{_PARIS}, {{"tool_call_id": "1", "tool_name": "get_time", '
            f'"parameters": {{"tz": "Europe/Berlin"}}}}]{CLOSE}',
            tools=("get_weather", "get_time"),
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Berlin"}),
            ),
        ),
        RegressionCase(
            file="command_r7b_end_marker_in_argument.msgpack",
            bug="command-r7b-end-marker-in-argument",
            note="Dialect command_r7b: <|END_ACTION|> inside a JSON string does not close.",
            model="command_r7b",
            ask="Note the closing token.",
            text=f'{OPEN}[{{"tool_call_id": "0", "tool_name": "write_file", "parameters": '
            f'{{"path": "n.txt", "content": "{CLOSE}"}}}}]{CLOSE}',
            tools=("write_file",),
            calls=(Call("write_file", {"path": "n.txt", "content": CLOSE}),),
        ),
    ),
    engines=Engines(
        vllm=("cohere_command3", "cohere_command4"),
        sglang=("cohere_command4",),
        llamacpp=("COMMAND_R7B",),
    ),
    special_tokens=frozenset({OPEN, CLOSE}),
    lexer_by_first=(("{[", BodyLexer.JSON),),
    model_seeds=("c4ai-command-r7b*", "command-r7b*", "command-a*"),
    markup=(CLOSE,),
)
