"""Grammar-constrained requests that make a real model write each dialect of ARCHITECTURE.md §5.4.

SmolLM2-135M knows none of these formats; a GBNF grammar in the request makes
it write them anyway, and llama-server streams the result split the way its
tokenizer splits it (``<tool_call>`` arrives as ``<``, ``t``, ``oo``, ``l``, …).
The words inside (preamble, city, reasoning) are the model's own.

The grammars live in the dialect records (``tcr.dialects``); each also says
what a correct detector must make of the text, computed from the grammar's
structure with a regular expression, independently of tcr's detector, so the
recording's expectation is real ground truth.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcr.dialects import DIALECTS as REGISTRY

Expect = dict[str, Any]

# Shared rules: a short sentence of the model's choosing, a quoted city name.
_COMMON = r"""
sentence ::= [A-Z] [a-z]{1,9} (" " [a-z]{1,9}){2,8} "."
word ::= [A-Z] [a-z]{2,9}
city ::= "\"" word "\""
"""


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str  # file stem
    dialect: str  # the dialect id
    note: str
    prompt: str
    grammar: str
    expect: Callable[[str], Expect]  # content -> expectation


# One recording per grammar of every registered dialect (tcr.dialects).
DIALECTS: tuple[Dialect, ...] = tuple(
    Dialect(g.name, d.id, g.note, g.prompt, f"root ::= {g.root}\n{_COMMON}", g.expect)
    for d in REGISTRY
    for g in d.grammars
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
