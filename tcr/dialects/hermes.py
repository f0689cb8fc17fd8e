"""Hermes (Qwen2.5, Qwen3, Hermes 3): a JSON call between ``<tool_call>`` tags.

vLLM and SGLang call its parser ``hermes``. Qwen3-Coder and GLM-4.5 use the
same tags with other bodies; a body that starts like JSON is this dialect's.
"""

from __future__ import annotations

import json

from tcr.dialects._calls import json_call
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
from tcr.dialects._writing import one_json_call

__all__ = ["DIALECT"]

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


def _owns(body: str) -> bool:
    return body.lstrip()[:1] in ("{", "[", '"')


def _render(draws: Draws, tools: Tools) -> Rendered:
    return one_json_call(DIALECT, draws, tools)


def _one_call(content: str) -> dict[str, object]:
    m = around(rf"(.*?){OPEN}\n(\{{.*?\}})\n{CLOSE}(.*)", content)
    return expectation(m[1] + m[3], [json.loads(m[2])])


def _two_calls(content: str) -> dict[str, object]:
    m = around(
        rf"(.*?){OPEN}\n(\{{.*?\}})\n{CLOSE}(\n){OPEN}\n(\{{.*?\}})\n{CLOSE}(.*)",
        content,
    )
    return expectation(m[1] + m[3] + m[5], [json.loads(m[2]), json.loads(m[4])])


DIALECT = Dialect(
    id="hermes",
    summary="JSON {name, arguments} between <tool_call> tags",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=json_call,
    render=_render,
    example=Example(
        "Let me check the weather.\n",
        f'{OPEN}\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}\n{CLOSE}',
        "\nOne moment.",
        (Call("get_weather", {"city": "Paris"}),),
    ),
    grammars=(
        Grammar(
            "tool_call_tag_json",
            "Hermes/Qwen2.5 JSON call after a preamble sentence, markers as the tokenizer "
            "splits them.",
            "What is the weather in Paris? Use the get_weather tool.",
            f'sentence "\\n{OPEN}\\n" {WEATHER} "\\n{CLOSE}" ("\\n" sentence)?',
            _one_call,
        ),
        Grammar(
            "tool_call_tag_two_calls",
            "Two <tool_call> blocks in a row, then a closing sentence.",
            "Get the weather in Paris and the time in Berlin.",
            f'sentence "\\n{OPEN}\\n" {WEATHER} "\\n{CLOSE}\\n{OPEN}\\n" '
            f'{TIME} "\\n{CLOSE}" "\\n" sentence',
            _two_calls,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_tool_call_tag_json.msgpack",
            bug="format-tool-call-tag-json",
            note=(
                "Dialect hermes: Hermes 3 writes arguments before name, as its system prompt's "
                "schema lists them."
            ),
            model="hermes3",
            ask="Weather in Paris in Celsius?",
            text=f"Let me check the weather.\n{OPEN}\n"
            '{"arguments": {"city": "Paris", "unit": "celsius"}, "name": "get_weather"}'
            f"\n{CLOSE}",
            tools=("get_weather",),
            shown="Let me check the weather.\n",
            calls=(Call("get_weather", {"city": "Paris", "unit": "celsius"}),),
        ),
    ),
    engines=Engines(
        vllm=("hermes", "qwen3_json", "ernie45"),  # Ernie45ToolParser.tool_call_regex
        sglang=("hermes", "qwen25", "qwen", "trinity"),  # TrinityDetector(Qwen25Detector)
        llamacpp=("HERMES_2_PRO",),
    ),
    special_tokens=frozenset({OPEN, CLOSE}),
    lexer_by_first=(("{[", BodyLexer.JSON),),
    owns=_owns,
    model_seeds=("qwen*", "hermes*"),
    markup=(CLOSE, OPEN),
)
