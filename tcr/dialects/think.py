"""``<think>…</think>``: reasoning text; markers inside it never open a call (policy 10).

vLLM's ``deepseek_r1`` and ``qwen3`` reasoning parsers read it.
"""

from __future__ import annotations

import json

from tcr.dialects._grammars import WEATHER, around, expectation
from tcr.dialects._record import (
    BodyLexer,
    Closing,
    Dialect,
    Draws,
    Example,
    Grammar,
    Kind,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects.hermes import CLOSE as CALL_CLOSE
from tcr.dialects.hermes import OPEN as CALL_OPEN

__all__ = ["DIALECT"]

OPEN = "<think>"
CLOSE = "</think>"


def _render(draws: Draws, tools: Tools) -> Rendered:
    text = draws.prose()
    while CLOSE in text:  # the first one would end the reasoning
        text = text.replace(CLOSE, "</ think>")
    fragile = ((-1, len(text)),)  # the message may end anywhere in reasoning
    return Rendered(DIALECT.id, "text", OPEN, text, CLOSE, "", (), False, fragile)


def _expect(content: str) -> dict[str, object]:
    m = around(rf"{OPEN}(.*?){CLOSE}(.*?){CALL_OPEN}\n(\{{.*?\}})\n{CALL_CLOSE}(.*)", content)
    return expectation(m[2] + m[4], [json.loads(m[3])], reasoning=m[1])


DIALECT = Dialect(
    id="think",
    summary="reasoning text",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=None,
    render=_render,
    example=Example(
        "",
        f"{OPEN}The user wants the weather. I could write {CALL_OPEN} now.{CLOSE}",
        "Let me check.",
    ),
    grammars=(
        Grammar(
            "think_then_call",
            "Reasoning that mentions <tool_call> before a real call (policy 10).",
            "What is the weather in Paris? Think first.",
            f'"{OPEN}" sentence " I will write {CALL_OPEN} next. " sentence "{CLOSE}" sentence '
            f'"\\n{CALL_OPEN}\\n" {WEATHER} "\\n{CALL_CLOSE}"',
            _expect,
        ),
    ),
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
    parser_names=("deepseek_r1", "qwen3"),
    special_tokens=frozenset({OPEN, CLOSE}),
    kind=Kind.REASONING,
    first_lexer=BodyLexer.PLAIN,
    markup=(CLOSE, OPEN),
)
