"""GigaChat 3: one JSON call as a new message, ``function call<|role_sep|>\\n{…}``, to the end.

vLLM and SGLang both call its parser ``gigachat3``
(vllm/tool_parsers/gigachat3_tool_parser.py, ``GigaChat3ToolParser``;
python/sglang/srt/function_call/gigachat3_detector.py, ``GigaChat3Detector``, and its
test/registered/unit/function_call/test_gigachat3_detector.py). Both read the call
with the same two regexes: it begins at ``function call<|role_sep|>\\n`` (the header
of a new message, after ``<|message_sep|>`` when text comes first) or at the newer
``<|function_call|>`` token, and everything after it is one JSON object
``{"name", "arguments"}``; what is shown is the text before ``<|message_sep|>`` or
``<|function_call|>``. There is no closing marker: the message ends, with the ``</s>``
that both parsers strip when special tokens are kept. One call per message (both hard-code
tool index 0); the reference reads a second one all the same. llama.cpp has no
GigaChat parser.
"""

from __future__ import annotations

import json

from tcr.dialects._calls import json_call
from tcr.dialects._grammars import CITY, city_block
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Model,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import FLAVORS, BodyText, Calls, json_calls, json_text

__all__ = ["DIALECT"]

MESSAGE_SEP = "<|message_sep|>"
ROLE_SEP = "<|role_sep|>"
FUNCTION_CALL = "<|function_call|>"
HEADER = f"function call{ROLE_SEP}\n"  # the role header of the call's message
OPEN = MESSAGE_SEP + HEADER
END = "</s>"

_MODEL = Model(
    "vllm",
    "ai-sage/GigaChat3-10B-A1.8B",
    special_tokens=(MESSAGE_SEP, ROLE_SEP, FUNCTION_CALL, END),
    ms_per_chunk=20.0,
)


def _render(draws: Draws, tools: Tools) -> Rendered:
    # After text the call is a new message; the header alone opens it too (both engines
    # search for it anywhere), and GigaChat 3.x writes one token instead.
    variant = draws.variant(("message", "message", "header", "token"))
    opener = {"message": OPEN, "header": HEADER, "token": FUNCTION_CALL}[variant]
    calls = Calls(draws, tools, most=1, flavors=FLAVORS)
    (obj,), found = json_calls(draws, calls, optional=True)
    body = BodyText()
    body.add(json_text(obj, draws.style()), fragile=True)
    # The message ends the block: fuzz keeps one without its </s> last in the message.
    closer = draws.option(0, (END, ""))
    return Rendered(
        DIALECT.id,
        variant,
        opener,
        body.text,
        closer,
        "",
        tuple(Call(c.name, c.arguments, DIALECT.id) for c in found),
        calls.accepted(),
        tuple(body.fragile),
    )


def _call(call: Call, opener: str = OPEN) -> str:
    text = json.dumps({"name": call.name, "arguments": dict(call.arguments)}, ensure_ascii=False)
    return f"{opener}{text}{END}"


_PARIS = Call("get_weather", {"city": "Paris"})
_WRITE = Call("write_file", {"path": "cfg.json", "content": '{"lang": {"ru": true}}'})

DIALECT = Dialect(
    id="gigachat3",
    summary="GigaChat 3: a JSON {name, arguments} call after function call<|role_sep|>, "
    "to the end of the message",
    opens=(OPEN, HEADER, FUNCTION_CALL),
    closes=(END,),
    closing=Closing.MARKER,
    parse=json_call,
    render=_render,
    example=Example("Let me check the weather.", _call(_PARIS), "", (_PARIS,)),
    grammars=(
        city_block(
            "gigachat3",
            "GigaChat 3 call message after a sentence: <|message_sep|>function call<|role_sep|> "
            "and a JSON call, then </s>.",
            "What is the weather in Paris?",
            _call(Call("get_weather", {"city": CITY})),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_gigachat3.msgpack",
            bug="format-gigachat3",
            note=(
                "Dialect gigachat3: a sentence, then the call as a new message "
                "(<|message_sep|>function call<|role_sep|>\\n{…}) ended by </s>, which both "
                "engines keep special tokens for and strip."
            ),
            model=_MODEL,
            ask="What is the weather in Paris?",
            text="Let me check the weather." + _call(_PARIS),
            tools=("get_weather",),
            shown="Let me check the weather.",
            calls=(_PARIS,),
        ),
        RegressionCase(
            file="gigachat3_call_at_message_start.msgpack",
            bug="gigachat3-call-at-message-start",
            note=(
                "Dialect gigachat3: the call header at the very start, no <|message_sep|> "
                "before it; vLLM's streaming gigachat3 parser emits each delta as content "
                "until the whole header has arrived, so 'function call' leaks as text."
            ),
            model=_MODEL,
            ask="What is the weather in Paris?",
            text=_call(_PARIS, HEADER),
            tools=("get_weather",),
            calls=(_PARIS,),
        ),
        RegressionCase(
            file="gigachat3_inline_token_brace_ending.msgpack",
            bug="gigachat3-inline-token-brace-ending",
            note=(
                "Dialect gigachat3: GigaChat 3.x's <|function_call|> token and an argument "
                "string that ends in '}}'; both engines stream the arguments by cutting the "
                "last '}' once the rest parses, and a </s> cut short leaves '}</' in vLLM's "
                "streamed arguments."
            ),
            model=_MODEL,
            ask='Write {"lang": {"ru": true}} to cfg.json.',
            text="Writing it." + _call(_WRITE, FUNCTION_CALL),
            tools=("write_file",),
            shown="Writing it.",
            calls=(_WRITE,),
        ),
    ),
    engines=Engines(vllm=("gigachat3",), sglang=("gigachat3",)),
    special_tokens=frozenset({MESSAGE_SEP, ROLE_SEP, FUNCTION_CALL, END}),
    closed_by_end=True,
    lexer_by_first=(("{[", BodyLexer.JSON),),
    model_seeds=("gigachat*",),
    tokens=(MESSAGE_SEP, ROLE_SEP),
    markup=(END, FUNCTION_CALL, HEADER),
)
