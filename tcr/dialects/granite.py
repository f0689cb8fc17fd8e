"""IBM Granite 3.0: the ``<|tool_call|>`` token, then a JSON array of calls.

vLLM calls its parser ``granite`` (``vllm/tool_parsers/granite_tool_parser.py``):
``<|tool_call|>`` is one token, the array is ``json.loads``-ed as a list of
``{"name", "arguments"}``. No closing marker: the block ends at the bracket that
balances the array. vLLM looks for the token only at message start; the reference
opens on it anywhere (policy 3: a distinctive marker after a preamble is a call).
Granite 3.1 writes the same array after the plain string ``<tool_call>``, which is
Hermes's opener and is not this dialect.
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

OPEN = "<|tool_call|>"
_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def _render(draws: Draws, tools: Tools) -> Rendered:
    objects, found, accepted = strict_calls(draws, tools)
    body = BodyText()
    body.add(draws.option(0, ("", " ", "\n")))
    body.add(json_text(objects, draws.style()), fragile=True)
    return rendered(DIALECT, "array", body, accepted, found)


def _expect(content: str) -> dict[str, object]:
    m = around(r"(.*?)<\|tool_call\|>(\[.*\])(.*)", content)
    return expectation(m[1] + m[3], json.loads(m[2]))


DIALECT = Dialect(
    id="granite",
    summary="Granite 3.0: <|tool_call|> then a JSON array of calls",
    opens=(OPEN,),
    closes=(),
    closing=Closing.BALANCED,
    parse=strict_array,
    render=_render,
    example=Example(
        "",
        f'{OPEN}[{_PARIS}, {{"name": "get_time", "arguments": {{"tz": "CET"}}}}]',
        "",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "granite",
            "Granite 3.0 <|tool_call|> token, then a JSON array of two calls.",
            "Get the weather in Paris and the time in Berlin.",
            f'"{OPEN}[" {WEATHER} ", " {TIME} "]"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_granite.msgpack",
            bug="format-granite",
            note="Dialect granite: the whole message is <|tool_call|> and a one-call array.",
            model="granite",
            ask="Weather in Paris?",
            text=f"{OPEN}[{_PARIS}]",
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
        RegressionCase(
            file="granite_bracket_in_argument.msgpack",
            bug="granite-bracket-in-argument",
            note=(
                "Dialect granite: a ] inside an argument string does not end the array; "
                "the block ends at the bracket that balances it, and the text after is shown."
            ),
            model="granite",
            ask="Read the first tag of every row.",
            text=f'{OPEN} [{{"name": "run_sql", "arguments": {{"query": "SELECT tags[1] FROM t '
            f'-- ] ["}}}}]\nDone.',
            tools=("run_sql",),
            shown="\nDone.",
            calls=(Call("run_sql", {"query": "SELECT tags[1] FROM t -- ] ["}),),
        ),
        RegressionCase(
            file="granite_after_preamble.msgpack",
            bug="granite-after-preamble",
            note=(
                "Dialect granite: the token after a preamble still opens a call (vLLM's "
                "granite parser looks only at message start and shows the array as text)."
            ),
            model="granite",
            ask="Weather in Paris?",
            text=f"Let me look that up.\n{OPEN}[{_PARIS}]",
            tools=("get_weather",),
            shown="Let me look that up.\n",
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
    ),
    engines=Engines(vllm=("granite",), llamacpp=("GRANITE",)),
    special_tokens=frozenset({OPEN}),
    first_lexer=BodyLexer.BALANCED,  # anything else ends at its own balancing bracket
    model_seeds=("granite-3.0*",),
    markup=(OPEN,),
)
