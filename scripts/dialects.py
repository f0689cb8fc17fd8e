"""Grammar-constrained requests that make a real model write each dialect of DESIGN §5.

SmolLM2-135M knows none of these formats; a GBNF grammar in the request makes
it write them anyway, and llama-server streams the result split the way its
tokenizer splits it (``<tool_call>`` arrives as ``<``, ``t``, ``oo``, ``l``, …).
The words inside (preamble, city, reasoning) are the model's own.

Each case also says what a correct detector must make of the text, computed
here from the grammar's structure with a regular expression, independently of
tcr's detector, so the recording's expectation is real ground truth.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Expect = dict[str, Any]

# Shared rules: a short sentence of the model's choosing, a quoted city name.
_COMMON = r"""
sentence ::= [A-Z] [a-z]{1,9} (" " [a-z]{1,9}){2,8} "."
word ::= [A-Z] [a-z]{2,9}
city ::= "\"" word "\""
"""


def _grammar(root: str) -> str:
    return f"root ::= {root}\n{_COMMON}"


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": args}


def _expect(
    text: str = "", calls: list[dict[str, Any]] | None = None, reasoning: str = ""
) -> Expect:
    return {"text": text, "calls": calls or [], "reasoning": reasoning}


def _around(pattern: str, content: str) -> re.Match[str]:
    match = re.fullmatch(pattern, content, re.S)
    if match is None:
        raise ValueError(f"the model's output does not have the expected shape: {content!r}")
    return match


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str  # file stem
    dialect: str  # the format row
    note: str
    prompt: str
    grammar: str
    expect: Callable[[str], Expect]  # content -> expectation
    tools: tuple[str, ...] | None = ("get_weather", "get_time")
    params: dict[str, Any] = field(default_factory=dict)


def _tool_call_json(content: str) -> Expect:
    m = _around(r"(.*?)<tool_call>\n(\{.*?\})\n</tool_call>(.*)", content)
    return _expect(m[1] + m[3], [json.loads(m[2])])


def _two_tool_calls(content: str) -> Expect:
    m = _around(
        r"(.*?)<tool_call>\n(\{.*?\})\n</tool_call>(\n)<tool_call>\n(\{.*?\})\n</tool_call>(.*)",
        content,
    )
    return _expect(m[1] + m[3] + m[5], [json.loads(m[2]), json.loads(m[4])])


def _qwen3_coder(content: str) -> Expect:
    m = _around(
        r"(.*?)<tool_call>\n<function=get_weather>\n<parameter=city>\n(\w+)\n"
        r"</parameter>\n</function>\n</tool_call>(.*)",
        content,
    )
    return _expect(m[1] + m[3], [_call("get_weather", {"city": m[2]})])


def _glm(content: str) -> Expect:
    m = _around(
        r"(.*?)<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>(\w+)</arg_value>\n"
        r"</tool_call>(.*)",
        content,
    )
    return _expect(m[1] + m[3], [_call("get_weather", {"city": m[2]})])


def _gemma(content: str) -> Expect:
    m = _around(
        r'(.*?)<\|tool_call>call:get_weather\{city:<\|"\|>(\w+)<\|"\|>\}<tool_call\|>(.*)', content
    )
    return _expect(m[1] + m[3], [_call("get_weather", {"city": m[2]})])


def _tools_tag(content: str) -> Expect:
    m = _around(r"(.*?)<tools>(\[.*\])</tools>(.*)", content)
    return _expect(m[1] + m[3], json.loads(m[2]))


def _fenced(content: str) -> Expect:
    m = _around(r"(.*?)```json\n(\{.*\})\n```(.*)", content)
    return _expect(m[1] + m[3], [json.loads(m[2])])


def _bracket_array(content: str) -> Expect:
    m = _around(r"(.*?)\[TOOL_CALLS\](\[.*\])(.*)", content)
    return _expect(m[1] + m[3], json.loads(m[2]))


def _bracket_args(content: str) -> Expect:
    m = _around(r"(.*?)\[TOOL_CALLS\]get_weather\[ARGS\](\{.*?\})(.*)", content)
    return _expect(m[1] + m[3], [_call("get_weather", json.loads(m[2]))])


def _python_tag(content: str) -> Expect:
    m = _around(r"(.*?)<\|python_tag\|>(.*)<\|eom_id\|>", content)
    calls = [json.loads(part) for part in m[2].split("; ")]
    return _expect(m[1], [_call(c["name"], c["parameters"]) for c in calls])


def _bare_json(content: str) -> Expect:
    m = _around(r"(\{.*\})(.*)", content)
    return _expect(m[2], [json.loads(m[1])])


def _think(content: str) -> Expect:
    m = _around(r"<think>(.*?)</think>(.*?)<tool_call>\n(\{.*?\})\n</tool_call>(.*)", content)
    return _expect(m[2] + m[4], [json.loads(m[3])], reasoning=m[1])


def _json_answer(content: str) -> Expect:
    return _expect(content)  # not a call: shown verbatim


_WEATHER = '"{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": " city "}}"'
_TIME = '"{\\"name\\": \\"get_time\\", \\"arguments\\": {\\"tz\\": \\"CET\\"}}"'

DIALECTS: tuple[Dialect, ...] = (
    Dialect(
        "tool_call_tag_json",
        "tool_call_tag",
        "Hermes/Qwen2.5 JSON call after a preamble sentence, markers as the tokenizer splits them.",
        "What is the weather in Paris? Use the get_weather tool.",
        _grammar(f'sentence "\\n<tool_call>\\n" {_WEATHER} "\\n</tool_call>" ("\\n" sentence)?'),
        _tool_call_json,
    ),
    Dialect(
        "tool_call_tag_two_calls",
        "tool_call_tag",
        "Two <tool_call> blocks in a row, then a closing sentence.",
        "Get the weather in Paris and the time in Berlin.",
        _grammar(
            f'sentence "\\n<tool_call>\\n" {_WEATHER} "\\n</tool_call>\\n<tool_call>\\n" '
            f'{_TIME} "\\n</tool_call>" "\\n" sentence'
        ),
        _two_tool_calls,
    ),
    Dialect(
        "tool_call_tag_qwen3_coder",
        "tool_call_tag",
        "Qwen3-Coder <function=…><parameter=…> call.",
        "What is the weather in Paris?",
        _grammar(
            'sentence "\\n<tool_call>\\n<function=get_weather>\\n<parameter=city>\\n" word '
            '"\\n</parameter>\\n</function>\\n</tool_call>"'
        ),
        _qwen3_coder,
    ),
    Dialect(
        "tool_call_tag_glm",
        "tool_call_tag",
        "GLM <arg_key>/<arg_value> call.",
        "What is the weather in Paris?",
        _grammar(
            'sentence "\\n<tool_call>get_weather\\n<arg_key>city</arg_key>\\n<arg_value>" word '
            '"</arg_value>\\n</tool_call>"'
        ),
        _glm,
    ),
    Dialect(
        "gemma_special",
        "gemma_special",
        'Gemma 4 special-token call with <|"|> strings.',
        "What is the weather in Paris?",
        _grammar(
            'sentence " <|tool_call>call:get_weather{city:<|\\"|>" word "<|\\"|>}<tool_call|>"'
        ),
        _gemma,
    ),
    Dialect(
        "tools_tag",
        "tools_tag",
        "Gemma fallback <tools> block holding an array of two calls.",
        "Get the weather in Paris and the time in Berlin.",
        _grammar(f'sentence " <tools>[" {_WEATHER} ", " {_TIME} "]</tools>"'),
        _tools_tag,
    ),
    Dialect(
        "fenced_json",
        "fenced_json",
        "Qwen2.5 without a template: a JSON call in a ```json fence.",
        "What is the weather in Paris?",
        _grammar(f'sentence "\\n```json\\n" {_WEATHER} "\\n```" ("\\n" sentence)?'),
        _fenced,
    ),
    Dialect(
        "bracket_tool_calls_array",
        "bracket_tool_calls",
        "Mistral [TOOL_CALLS] JSON array.",
        "What is the weather in Paris?",
        _grammar(f'"[TOOL_CALLS][" {_WEATHER} "]"'),
        _bracket_array,
    ),
    Dialect(
        "bracket_tool_calls_args",
        "bracket_tool_calls",
        "Mistral v11 [TOOL_CALLS]NAME[ARGS]{…} form.",
        "What is the weather in Paris?",
        _grammar('"[TOOL_CALLS]get_weather[ARGS]{\\"city\\": " city "}"'),
        _bracket_args,
    ),
    Dialect(
        "python_tag",
        "python_tag",
        "Llama 3.1 <|python_tag|> with two ;-separated calls, closed by <|eom_id|>.",
        "Get the weather in Paris and the time in Berlin.",
        _grammar(
            '"<|python_tag|>{\\"name\\": \\"get_weather\\", \\"parameters\\": {\\"city\\": " city '
            '"}}; {\\"name\\": \\"get_time\\", \\"parameters\\": {\\"tz\\": \\"CET\\"}}<|eom_id|>"'
        ),
        _python_tag,
    ),
    Dialect(
        "bare_json",
        "bare_json",
        "Llama 3.2 unmarked JSON call as the whole message start.",
        "What is the weather in Paris?",
        _grammar(f'{_WEATHER} ("\\n" sentence)?'),
        _bare_json,
    ),
    Dialect(
        "think_then_call",
        "think",
        "Reasoning that mentions <tool_call> before a real call (policy 10).",
        "What is the weather in Paris? Think first.",
        _grammar(
            '"<think>" sentence " I will write <tool_call> next. " sentence "</think>" sentence '
            f'"\\n<tool_call>\\n" {_WEATHER} "\\n</tool_call>"'
        ),
        _think,
    ),
    Dialect(
        "json_answer",
        "bare_json",
        "A JSON answer that is not a call, at message start (PR #2262): content, shown verbatim.",
        "Give the temperature in Paris as JSON.",
        _grammar(
            '"{\\"temperature\\": " [1-3] [0-9] ", \\"unit\\": \\"C\\", \\"city\\": " city "}"'
        ),
        _json_answer,
    ),
)


# -- native tool_calls: the server parses <tool_call> itself (scripts/templates/hermes.jinja) --

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
]


def _shown_call(city: str, n: int) -> list[dict[str, Any]]:
    arguments = json.dumps({"city": city})
    call = {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    return [
        {"role": "user", "content": f"What is the weather in {city}?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]


# Two example calls in the conversation: without them the 135M model imitates
# tool results instead of writing a call (tried; see the issue note).
NATIVE_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You answer weather questions only by calling get_weather."},
    *_shown_call("Oslo", 1),
    *_shown_call("Rome", 2),
    {"role": "user", "content": "What is the weather in Paris?"},
]
