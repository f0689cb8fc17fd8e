"""Realistic messages, one or more per dialect, with the events a correct detector emits.

Each registered dialect's example (``tcr.dialects``) is a case, keyed by its id;
a few more cases cover body variants the examples do not. Shared by the detector
tests and the oracle tests; ``expectation`` turns a case into the
recording-expectation map the ``expected`` oracle reads.
"""

from __future__ import annotations

import json
from typing import Any

from tcr.detector import Reasoning, ToolCall
from tcr.dialects import DIALECTS, Call, Dialect, Kind


def args(**kw: object) -> str:
    return json.dumps(kw, ensure_ascii=False)


def tool_call(call: Call) -> ToolCall:
    return ToolCall(call.name, json.dumps(dict(call.arguments), ensure_ascii=False))


def example_events(dialect: Dialect) -> list[object]:
    """What a correct detector makes of the dialect's example (adjacent text merged)."""
    example = dialect.example
    if dialect.kind == Kind.REASONING:
        body = example.block[len(dialect.opens[0]) : -len(dialect.closes[0])]
        found: list[object] = [Reasoning(body)]
    else:
        found = [tool_call(c) for c in example.calls]
    return [part for part in (example.before, *found, example.after) if part != ""]


TOOL_CALL_JSON = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
MISTRAL_ARRAY = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'
THINK = "<think>The user wants the weather. I could write <tool_call> now.</think>"

WEATHER = ToolCall("get_weather", args(city="Paris"))

CASES: dict[str, tuple[str, list[object]]] = {
    **{d.id: (d.example.text, example_events(d)) for d in DIALECTS},
    "mistral/array": (f"Calling. {MISTRAL_ARRAY} then", ["Calling. ", WEATHER, " then"]),
    "think/then_call": (
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
