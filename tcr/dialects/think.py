"""``<think>…</think>``: reasoning text; markers inside it never open a call (policy 10).

vLLM's ``deepseek_r1`` and ``qwen3`` reasoning parsers read it.
"""

from __future__ import annotations

import json
import re

from tcr.dialects._grammars import WEATHER
from tcr.dialects._reasoning import ThenCall, reasoning_dialect
from tcr.dialects._record import Engines, RegressionCase
from tcr.dialects.hermes import CLOSE as CALL_CLOSE
from tcr.dialects.hermes import OPEN as CALL_OPEN

__all__ = ["DIALECT"]

OPEN = "<think>"
CLOSE = "</think>"

# A Hermes call after the reasoning, the JSON written by the grammar.
_HERMES_CALL = ThenCall(
    CALL_OPEN,
    f'"\\n{CALL_OPEN}\\n" {WEATHER} "\\n{CALL_CLOSE}"',
    rf"{re.escape(CALL_OPEN)}\n(\{{.*?\}})\n{re.escape(CALL_CLOSE)}",
    json.loads,
)

DIALECT = reasoning_dialect(
    id="think",
    summary="reasoning text",
    opens=OPEN,
    closes=CLOSE,
    then_call=_HERMES_CALL,
    note="Reasoning that mentions <tool_call> before a real call (policy 10).",
    cases=(
        RegressionCase(
            file="format_think.msgpack",
            bug="format-think",
            note="Dialect think: Qwen3's <think>…</think> reasoning, then a plain answer.",
            model="qwen3_8b",
            ask="What is the capital of Australia?",
            text=f"{OPEN}\nOkay, the user asks for the capital of Australia. It's Canberra, not "
            f"Sydney.\n{CLOSE}\n\nThe capital of Australia is Canberra.",
            tools=None,
            shown="\n\nThe capital of Australia is Canberra.",
            reasoning="\nOkay, the user asks for the capital of Australia. It's Canberra, not "
            "Sydney.\n",
            extra=(("reasoning_format", "none"),),
        ),
    ),
    engines=Engines(
        vllm=("deepseek_r1", "qwen3"),
        sglang=("deepseek-r1", "qwen3", "qwen3-thinking"),
        llamacpp=("DEEPSEEK_R1",),
    ),
)
