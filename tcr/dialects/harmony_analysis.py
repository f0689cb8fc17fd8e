"""Harmony's ``analysis`` channel: gpt-oss's reasoning, ``<|channel|>analysis<|message|>…<|end|>``.

vLLM reads it with the ``openai_gptoss`` reasoning parser
(``vllm/reasoning/gptoss_reasoning_parser.py``), llama.cpp's GPT-OSS parser as
the reasoning of ``try_parse_reasoning("<|channel|>analysis<|message|>",
"<|end|>")`` (``common/chat-parser.cpp``). A turn's first message is usually
this one, so it opens without ``<|start|>assistant`` (the prompt holds it); a
later analysis message has its own. The plan often names the call it is about
to make, markers and all: they are reasoning text (policy 10). An analysis
message with a recipient is a call (``harmony``), not reasoning.
"""

from __future__ import annotations

from tcr.dialects._grammars import CITY_ARGUMENTS
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
from tcr.dialects.harmony import (
    ASSISTANT,
    CHANNEL,
    CHANNEL_TO,
    END,
    GPT_OSS,
    MESSAGE,
    ROLE_TO,
    TOKENS,
    analysis,
    message,
    plan_then_call,
)

__all__ = ["DIALECT"]

OPEN = f"{CHANNEL}analysis{MESSAGE}"
OPEN_LATER = ASSISTANT + OPEN  # a later analysis message of the turn


def _render(draws: Draws, tools: Tools) -> Rendered:
    opener = draws.variant((OPEN, OPEN_LATER))
    text = draws.prose()
    while END in text:  # the first one would end the reasoning
        text = text.replace(END, "<|end |>")
    fragile = ((-1, len(text)),)  # the message may end anywhere in reasoning
    variant = "first" if opener == OPEN else "later"
    return Rendered(DIALECT.id, variant, opener, text, END, "", (), False, fragile)


_MENTION = f"{CHANNEL_TO}get_weather"
_ROLE_HEAD = f"{ROLE_TO}get_weather{CHANNEL}commentary json{MESSAGE}"


_PLAN = f"The user wants the weather in Paris. I will write {_MENTION} next."

DIALECT = Dialect(
    id="harmony_analysis",
    summary="Harmony (gpt-oss) analysis channel: reasoning text",
    opens=(OPEN, OPEN_LATER),
    closes=(END,),
    closing=Closing.MARKER,
    parse=None,
    render=_render,
    example=Example("", analysis("The user wants the weather. Call get_weather."), ""),
    grammars=(
        Grammar(
            "harmony_analysis_then_call",
            "Harmony analysis that names <|channel|>commentary to=functions.get_weather, then "
            "the real call with the recipient in the role header (policy 10).",
            "What is the weather in Paris? Think first.",
            f'"{OPEN}" sentence " I will write {_MENTION} next.{END}'
            f'{_ROLE_HEAD}" {CITY_ARGUMENTS} "<|call|>"',
            plan_then_call(_ROLE_HEAD),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_harmony_analysis.msgpack",
            bug="format-harmony-analysis",
            note=(
                "Dialect harmony_analysis: gpt-oss's plan names "
                "<|channel|>commentary to=functions.get_weather, then the real call message "
                "(markers inside reasoning never open a call)."
            ),
            model=GPT_OSS,
            ask="What is the weather in Paris?",
            text=analysis(_PLAN) + message("get_weather", '{"city":"Paris"}'),
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
            reasoning=_PLAN,
        ),
        RegressionCase(
            file="harmony_analysis_in_content.msgpack",
            bug="harmony-analysis-in-content",
            note=(
                "Dialect harmony_analysis: llama-server with reasoning_format none streams "
                "gpt-oss's analysis message verbatim in the content and the final answer "
                "without its header; the answer is the only text."
            ),
            model=GPT_OSS,
            ask="What is the capital of Australia?",
            text=analysis("Capital of Australia: Canberra, not Sydney.")
            + "The capital of Australia is Canberra.",
            tools=None,
            shown="The capital of Australia is Canberra.",
            reasoning="Capital of Australia: Canberra, not Sydney.",
            extra=(("reasoning_format", "none"),),
        ),
        RegressionCase(
            file="harmony_stray_commentary.msgpack",
            bug="harmony-stray-commentary",
            note=(
                "Dialect harmony_analysis: gpt-oss-20b's stray <|channel|>commentary "
                "to=assistant before its analysis (llama.cpp's PEG GPT-OSS parser, "
                "common/chat-parsers/gpt-oss.cpp, skips it); a "
                "parser that opens a call on ' to=' reads the analysis as a broken call and "
                "shows the reasoning to the user."
            ),
            model=GPT_OSS,
            ask="What is the weather in Paris?",
            text=f"{CHANNEL}commentary to=assistant"
            + analysis("The user wants the weather in Paris.")
            + message("get_weather", '{"city":"Paris"}'),
            tools=("get_weather",),
            shown=f"{CHANNEL}commentary to=assistant",
            calls=(Call("get_weather", {"city": "Paris"}),),
            reasoning="The user wants the weather in Paris.",
        ),
    ),
    engines=Engines(vllm=("openai_gptoss",), sglang=("gpt-oss",), llamacpp=("GPT_OSS",)),
    special_tokens=frozenset(TOKENS),
    kind=Kind.REASONING,
    first_lexer=BodyLexer.PLAIN,
    markup=(END, OPEN, CHANNEL_TO),
)
