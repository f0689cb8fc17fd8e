"""Realistic messages, one or more per format row, with the events a correct detector emits.

Shared by the detector tests and the oracle tests; ``expectation`` turns a case
into the recording-expectation map the ``expected`` oracle reads.
"""

from __future__ import annotations

import json
from typing import Any

from tcr.detector import Reasoning, ToolCall


def args(**kw: object) -> str:
    return json.dumps(kw, ensure_ascii=False)


TOOL_CALL_JSON = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
QWEN_CODER = (
    "<tool_call>\n<function=run_sql>\n<parameter=query>\nSELECT * FROM t WHERE a = 'x'\n"
    "</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n</tool_call>"
)
GLM = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
GEMMA = '<|tool_call>call:get_weather{city:<|"|>Paris, FR<|"|>,days:3}<tool_call|>'
TOOLS_TAG = (
    '<tools>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
    '{"name": "get_time", "arguments": {"tz": "CET"}}]</tools>'
)
FENCED = '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'
MISTRAL_ARRAY = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'
MISTRAL_ARGS = (
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{"tz": "CET"}'
)
PYTHON_TAG = (
    '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; '
    '{"name": "get_time", "parameters": {"tz": "CET"}}<|eom_id|>'
)
BARE = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
THINK = "<think>The user wants the weather. I could write <tool_call> now.</think>"

WEATHER = ToolCall("get_weather", args(city="Paris"))
TIME = ToolCall("get_time", args(tz="CET"))

CASES = {
    "gemma_special": (
        f"I'll look that up. {GEMMA} Here it is.",
        [
            "I'll look that up. ",
            ToolCall("get_weather", args(city="Paris, FR", days=3)),
            " Here it is.",
        ],
    ),
    "tool_call_tag/json": (
        f"Let me check the weather.\n{TOOL_CALL_JSON}\nOne moment.",
        ["Let me check the weather.\n", WEATHER, "\nOne moment."],
    ),
    "tool_call_tag/qwen3_coder": (
        f"Running it: {QWEN_CODER} done",
        [
            "Running it: ",
            ToolCall("run_sql", args(query="SELECT * FROM t WHERE a = 'x'", limit="10")),
            " done",
        ],
    ),
    "tool_call_tag/glm": (f"Checking. {GLM} ok", ["Checking. ", WEATHER, " ok"]),
    "tools_tag": (f"Two calls: {TOOLS_TAG} bye", ["Two calls: ", WEATHER, TIME, " bye"]),
    "fenced_json": (f"Sure:\n{FENCED}\nLet me know.", ["Sure:\n", WEATHER, "\nLet me know."]),
    "bracket_tool_calls/array": (f"Calling. {MISTRAL_ARRAY} then", ["Calling. ", WEATHER, " then"]),
    "bracket_tool_calls/args": (
        f"Calling. {MISTRAL_ARGS} then",
        ["Calling. ", WEATHER, TIME, " then"],
    ),
    "python_tag": (f"Calling. {PYTHON_TAG}", ["Calling. ", WEATHER, TIME]),
    "bare_json": (f"{BARE}\nThat is the call.", [WEATHER, "\nThat is the call."]),
    "think": (
        f"{THINK}Let me check.\n{TOOL_CALL_JSON} Done.",
        [
            Reasoning("The user wants the weather. I could write <tool_call> now."),
            "Let me check.\n",
            WEATHER,
            " Done.",
        ],
    ),
}


def expectation(expected: list[object]) -> dict[str, Any]:
    """The ``{"text", "calls", "reasoning"}`` map of what the user must be shown."""
    text = "".join(e for e in expected if isinstance(e, str))
    calls = [
        {"name": e.name, "arguments": json.loads(e.arguments)}
        for e in expected
        if isinstance(e, ToolCall)
    ]
    reasoning = "".join(e.text for e in expected if isinstance(e, Reasoning))
    return {"text": text, "calls": calls, "reasoning": reasoning}
