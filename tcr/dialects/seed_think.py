"""``<seed:think>…</seed:think>``: Seed-OSS's reasoning; markers inside never open a call.

vLLM's ``seed_oss`` reasoning parser reads it
(``vllm/reasoning/seedoss_reasoning_parser.py``). Seed-OSS also writes its
thinking-budget notes, ``<seed:cot_budget_reflect>…</seed:cot_budget_reflect>``,
inside the reasoning: they are reasoning text.
"""

from __future__ import annotations

from tcr.dialects._grammars import around, call_map, expectation
from tcr.dialects._record import (
    BodyLexer,
    Call,
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
from tcr.dialects.seed_oss import CLOSE as CALL_CLOSE
from tcr.dialects.seed_oss import OPEN as CALL_OPEN

__all__ = ["DIALECT"]

OPEN = "<seed:think>"
CLOSE = "</seed:think>"
REFLECT = "<seed:cot_budget_reflect>"


def _render(draws: Draws, tools: Tools) -> Rendered:
    text = draws.prose()
    while CLOSE in text:  # the first one would end the reasoning
        text = text.replace(CLOSE, "</ seed:think>")
    fragile = ((-1, len(text)),)  # the message may end anywhere in reasoning
    return Rendered(DIALECT.id, "text", OPEN, text, CLOSE, "", (), False, fragile)


def _expect(content: str) -> dict[str, object]:
    m = around(
        rf"{OPEN}(.*?){CLOSE}(.*?){CALL_OPEN}\n<function=get_weather>\n<parameter=city>(\w+)"
        rf"</parameter>\n</function>\n{CALL_CLOSE}(.*)",
        content,
    )
    return expectation(m[2] + m[4], [call_map("get_weather", {"city": m[3]})], reasoning=m[1])


_REASONING = (
    "The user wants the weather in Paris. I'll write a "
    f"{CALL_OPEN} with get_weather.{REFLECT}I have used 31 tokens, and there are 481 tokens "
    "remaining for use.</seed:cot_budget_reflect>"
)

DIALECT = Dialect(
    id="seed_think",
    summary="Seed-OSS reasoning text",
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
            "seed_think_then_call",
            "Seed-OSS reasoning that mentions <seed:tool_call> before a real call (policy 10).",
            "What is the weather in Paris? Think first.",
            f'"{OPEN}" sentence " I will write {CALL_OPEN} next. " sentence "{CLOSE}" sentence '
            f'"\\n{CALL_OPEN}\\n<function=get_weather>\\n<parameter=city>" word '
            f'"</parameter>\\n</function>\\n{CALL_CLOSE}"',
            _expect,
        ),
    ),
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
    parser_names=("seed_oss",),
    special_tokens=frozenset({OPEN, CLOSE}),
    kind=Kind.REASONING,
    first_lexer=BodyLexer.PLAIN,
    markup=(CLOSE, OPEN),
)
