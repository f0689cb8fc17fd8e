"""Llama 4: a pythonic call list between ``<|python_start|>`` and ``<|python_end|>``.

vLLM calls its parser ``llama4_pythonic``
(``vllm/entrypoints/openai/tool_parsers/llama4_pythonic_tool_parser.py``): when the
output starts with ``<|python_start|>`` it strips that token and every
``<|python_end|>`` and reads the rest as ``pythonic`` does (``ast``, a list of calls
with literal keyword arguments). So the marker opens at message start only, and the end
of the message closes the list as well as ``<|python_end|>`` does (policy 5). The same
parser reads a bare ``[…]`` list at message start: that is the ``pythonic`` record's
block, so a detector for vLLM's ``llama4_pythonic`` claims both ids.
"""

from __future__ import annotations

import re

from tcr.dialects._grammars import around, call_map, expectation
from tcr.dialects._pythonic import MARKUP, call_list, call_text, write_call_list
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    Model,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import rendered

__all__ = ["DIALECT"]

OPEN = "<|python_start|>"
CLOSE = "<|python_end|>"
LLAMA4 = Model("vllm", "meta-llama/Llama-4-Scout-17B-16E-Instruct", (OPEN, CLOSE, "<|eom|>"), 18.0)


def _render(draws: Draws, tools: Tools) -> Rendered:
    body, found, accepted = write_call_list(draws, tools)
    written = rendered(DIALECT, "list", body, accepted, found)
    if draws.option(1, (True, False)):
        return written
    return Rendered(
        written.dialect,
        "list_to_end",
        written.opener,
        written.body,
        calls=written.calls,
        accepted=written.accepted,
        fragile=written.fragile,
    )


def _expect(content: str) -> dict[str, object]:
    m = around(rf'{re.escape(OPEN)}\[get_weather\(city="(\w+)"\)\]{re.escape(CLOSE)}(.*)', content)
    return expectation(m[2], [call_map("get_weather", {"city": m[1]})])


DIALECT = Dialect(
    id="llama4_pythonic",
    summary="Llama 4: a pythonic call list in <|python_start|>, at message start",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=call_list,
    render=_render,
    example=Example(
        "",
        f"{OPEN}{call_text([('get_weather', {'city': 'Paris'})])}{CLOSE}",
        "",
        (Call("get_weather", {"city": "Paris"}),),
    ),
    grammars=(
        Grammar(
            "llama4_pythonic",
            "Llama 4 <|python_start|> pythonic call list, closed by <|python_end|>.",
            "What is the weather in Paris?",
            f'"{OPEN}[get_weather(city=" city ")]{CLOSE}" ("\\n" sentence)?',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_llama4_pythonic.msgpack",
            bug="format-llama4-pythonic",
            note=(
                "Dialect llama4_pythonic: Llama 4 wraps two calls in "
                "<|python_start|>…<|python_end|>."
            ),
            model=LLAMA4,
            ask="Weather in Paris and the time in Berlin?",
            text=f"{OPEN}"
            + call_text([("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Berlin"})])
            + CLOSE,
            tools=("get_weather", "get_time"),
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Berlin"}),
            ),
        ),
        RegressionCase(
            file="llama4_pythonic_end_marker_in_string.msgpack",
            bug="llama4-pythonic-end-marker-in-string",
            note=(
                "Dialect llama4_pythonic: <|python_end|> inside a single-quoted argument is "
                "content; the list ends at the one outside strings."
            ),
            model=LLAMA4,
            ask="Write the end token into notes.txt.",
            text=f"{OPEN}[write_file(path='notes.txt', content='ends with {CLOSE}')]{CLOSE}",
            tools=("write_file",),
            calls=(Call("write_file", {"path": "notes.txt", "content": f"ends with {CLOSE}"}),),
        ),
        RegressionCase(
            file="llama4_pythonic_closed_by_end.msgpack",
            bug="llama4-pythonic-closed-by-end",
            note=(
                "Dialect llama4_pythonic: the stream stops at <|eom|> before <|python_end|>; "
                "the end of the message closes the list (vLLM strips the end token if present)."
            ),
            model=LLAMA4,
            ask="Weather in Paris?",
            text=f'{OPEN}[get_weather(city="Paris", days=3)]',
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris", "days": 3}),),
        ),
    ),
    engines=Engines(vllm=("llama4_pythonic",), sglang=("pythonic",)),
    special_tokens=frozenset({OPEN, CLOSE}),
    anywhere=False,
    closed_by_end=True,
    first_lexer=BodyLexer.PYTHON,
    model_seeds=("llama-4*", "llama4*"),
    markup=(CLOSE, *MARKUP),
)
