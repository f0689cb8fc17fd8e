"""``<seed:think>…</seed:think>``: Seed-OSS's reasoning; markers inside never open a call.

vLLM's ``seed_oss`` reasoning parser reads it
(``vllm/reasoning/seedoss_reasoning_parser.py``). Seed-OSS also writes its
thinking-budget notes, ``<seed:cot_budget_reflect>…</seed:cot_budget_reflect>``,
inside the reasoning: they are reasoning text.
"""

from __future__ import annotations

import re

from tcr.dialects._grammars import call_map
from tcr.dialects._reasoning import ThenCall, reasoning_dialect
from tcr.dialects._record import Call, Engines, RegressionCase
from tcr.dialects.seed_oss import CLOSE as CALL_CLOSE
from tcr.dialects.seed_oss import OPEN as CALL_OPEN

__all__ = ["DIALECT"]

OPEN = "<seed:think>"
CLOSE = "</seed:think>"
REFLECT = "<seed:cot_budget_reflect>"

# A Seed-OSS call after the reasoning, the city a word of the model's choosing.
_SEED_CALL = ThenCall(
    CALL_OPEN,
    f'"\\n{CALL_OPEN}\\n<function=get_weather>\\n<parameter=city>" word '
    f'"</parameter>\\n</function>\\n{CALL_CLOSE}"',
    rf"{re.escape(CALL_OPEN)}\n<function=get_weather>\n<parameter=city>(\w+)"
    rf"</parameter>\n</function>\n{re.escape(CALL_CLOSE)}",
    lambda city: call_map("get_weather", {"city": city}),
)

_REASONING = (
    "The user wants the weather in Paris. I'll write a "
    f"{CALL_OPEN} with get_weather.{REFLECT}I have used 31 tokens, and there are 481 tokens "
    "remaining for use.</seed:cot_budget_reflect>"
)

DIALECT = reasoning_dialect(
    id="seed_think",
    summary="Seed-OSS reasoning text",
    opens=OPEN,
    closes=CLOSE,
    then_call=_SEED_CALL,
    note="Seed-OSS reasoning that mentions <seed:tool_call> before a real call (policy 10).",
    cases=(
        RegressionCase(
            file="format_seed_think.msgpack",
            bug="format-seed-think",
            note=(
                "Dialect seed_think: Seed-OSS reasoning that names <seed:tool_call> and holds a "
                "<seed:cot_budget_reflect> note, then the real call."
            ),
            model="seed_oss",
            ask="What is the weather in Paris?",
            text=f"{OPEN}{_REASONING}{CLOSE}\n{CALL_OPEN}\n<function=get_weather>\n"
            f"<parameter=city>Paris</parameter>\n</function>\n{CALL_CLOSE}",
            tools=("get_weather",),
            shown="\n",
            calls=(Call("get_weather", {"city": "Paris"}),),
            reasoning=_REASONING,
        ),
    ),
    engines=Engines(vllm=("seed_oss",), llamacpp=("SEED_OSS",)),
)
