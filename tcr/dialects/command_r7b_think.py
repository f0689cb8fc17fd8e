"""``<|START_THINKING|>…<|END_THINKING|>``: Command R7B's reasoning; markers inside are text.

llama.cpp reads it as the reasoning of ``COMMON_CHAT_FORMAT_COMMAND_R7B``
(``common/chat.cpp``; ``tests/test-chat.cpp`` writes
``<|START_THINKING|>I'm not so sure<|END_THINKING|>`` before the action). Both
markers are special tokens. The plan often names the action it is about to take.
"""

from __future__ import annotations

from tcr.dialects._grammars import around, call_map, expectation
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    Kind,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects.command_r7b import CLOSE as ACTION_CLOSE
from tcr.dialects.command_r7b import OPEN as ACTION_OPEN

__all__ = ["DIALECT"]

OPEN = "<|START_THINKING|>"
CLOSE = "<|END_THINKING|>"
_ACTION = (
    f'{ACTION_OPEN}[{{"tool_call_id": "0", "tool_name": "get_weather", '
    f'"parameters": {{"city": "Paris"}}}}]{ACTION_CLOSE}'
)


def _render(draws: Draws, tools: Tools) -> Rendered:
    text = draws.prose()
    while CLOSE in text:  # the first one would end the reasoning
        text = text.replace(CLOSE, "<|END THINKING|>")
    fragile = ((-1, len(text)),)  # the message may end anywhere in reasoning
    return Rendered(DIALECT.id, "text", OPEN, text, CLOSE, "", (), False, fragile)


def _expect(content: str) -> dict[str, object]:
    m = around(
        r"<\|START_THINKING\|>(.*?)<\|END_THINKING\|>(.*?)<\|START_ACTION\|>\[\{"
        r'"tool_call_id": "0", "tool_name": "get_weather", "parameters": \{"city": "(\w+)"\}'
        r"\}\]<\|END_ACTION\|>(.*)",
        content,
    )
    return expectation(m[2] + m[4], [call_map("get_weather", {"city": m[3]})], reasoning=m[1])


_PLAN = f"The user wants the weather in Paris. I will write {ACTION_OPEN} with get_weather."

DIALECT = Dialect(
    id="command_r7b_think",
    summary="Command R7B reasoning text",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=None,
    render=_render,
    example=Example("", f"{OPEN}I'm not so sure{CLOSE}", "Let me check."),
    grammars=(
        Grammar(
            "command_r7b_think_then_call",
            "Command R7B plan that mentions <|START_ACTION|> before the real action (policy 10).",
            "What is the weather in Paris? Think first.",
            f'"{OPEN}" sentence " I will write {ACTION_OPEN} next.{CLOSE}'
            f'{ACTION_OPEN}[{{\\"tool_call_id\\": \\"0\\", \\"tool_name\\": \\"get_weather\\", '
            f'\\"parameters\\": {{\\"city\\": \\"" word "\\"}}}}]{ACTION_CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_command_r7b_think.msgpack",
            bug="format-command-r7b-think",
            note=(
                "Dialect command_r7b_think: a plan that names <|START_ACTION|>, then the real "
                "action (markers inside reasoning never open a call)."
            ),
            model="command_r7b",
            ask="What is the weather in Paris?",
            text=f"{OPEN}{_PLAN}{CLOSE}{_ACTION}",
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
            reasoning=_PLAN,
        ),
    ),
    engines=Engines(
        vllm=("cohere_command3", "cohere_command4"),
        sglang=("cohere_command4",),
        llamacpp=("COMMAND_R7B",),
    ),
    special_tokens=frozenset({OPEN, CLOSE}),
    kind=Kind.REASONING,
    first_lexer=BodyLexer.PLAIN,
    markup=(CLOSE, OPEN),
)
