"""Llama 3.2: an unmarked JSON call that is the start of the message.

Part of what vLLM's ``llama3_json`` parser reads. ``{`` also starts ordinary
JSON answers (PR #2262, ARCHITECTURE.md §15.3): JSON that is not call-shaped is
content, shown verbatim and released as soon as it is certain (policy 8).
"""

from __future__ import annotations

import json

from tcr.dialects._calls import unmarked_json_call
from tcr.dialects._grammars import WEATHER, around, expectation
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
from tcr.dialects._writing import FLAVORS, BodyText, Calls, json_calls, json_text

__all__ = ["DIALECT"]


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=1, flavors=FLAVORS)
    accepted = calls.accepted(optional=False)
    # A rejected answer is released as text as soon as it is certain (policy 8): text after
    # that point must hold no marker, or it would open a block of its own.
    (obj,), found = json_calls(draws, calls, optional=False, markup=accepted)
    body = BodyText()
    body.add(json_text(obj, draws.style()), fragile=True)
    return Rendered(
        DIALECT.id, "object", "", body.text, "", "", found, accepted, tuple(body.fragile)
    )


def _expect_call(content: str) -> dict[str, object]:
    m = around(r"(\{.*\})(.*)", content)
    return expectation(m[2], [json.loads(m[1])])


def _expect_answer(content: str) -> dict[str, object]:
    return expectation(content)  # not a call: shown verbatim


DIALECT = Dialect(
    id="bare_json",
    summary="a JSON call that is the start of the message",
    opens=("{",),
    closes=(),
    closing=Closing.BALANCED,
    parse=unmarked_json_call,
    render=_render,
    example=Example(
        "",
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        "\nThat is the call.",
        (Call("get_weather", {"city": "Paris"}),),
    ),
    grammars=(
        Grammar(
            "bare_json",
            "Llama 3.2 unmarked JSON call as the whole message start.",
            "What is the weather in Paris?",
            f'{WEATHER} ("\\n" sentence)?',
            _expect_call,
        ),
        Grammar(
            "json_answer",
            "A JSON answer that is not a call, at message start (PR #2262): content, shown "
            "verbatim.",
            "Give the temperature in Paris as JSON.",
            '"{\\"temperature\\": " [1-3] [0-9] ", \\"unit\\": \\"C\\", \\"city\\": " city "}"',
            _expect_answer,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_bare_json.msgpack",
            bug="format-bare-json",
            note=(
                "Dialect bare_json: Llama 3.2 writes the call as the whole message, a JSON "
                "object with name and parameters."
            ),
            model="llama32_3b",
            ask="Weather in Paris?",
            text='{"name": "get_weather", "parameters": {"city": "Paris"}}',
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
    ),
    engines=Engines(
        vllm=("llama3_json", "llama4_json"), sglang=("llama3",), llamacpp=("LLAMA_3_X",)
    ),
    anywhere=False,
    keep=1,
    answer_like=True,
    first_lexer=BodyLexer.BALANCED,
)
