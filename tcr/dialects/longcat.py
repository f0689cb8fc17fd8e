"""Meituan LongCat-Flash: Hermes's JSON call between ``<longcat_tool_call>`` tags.

vLLM calls its parser ``longcat`` (vllm/frontend/processing/tool_parsers/
longcat_tool_parser.py: ``LongcatFlashToolParser`` is ``Hermes2ProToolParser`` with
the tags and ``tool_call_regex`` swapped, so the tags are single tokens it looks up
in the vocabulary); SGLang's python/sglang/srt/function_call/longcat_detector.py
writes each call as ``<longcat_tool_call>\\n{"name", "arguments"}\\n</longcat_tool_call>``,
several calls as consecutive blocks with nothing between them. The body is Hermes's
(``tcr.dialects.hermes``): one JSON call per block, values with their JSON types.
llama.cpp has no LongCat parser of its own; the one it derives from a template that
renders the tags (scripts/templates/longcat.jinja) gives the native recordings.
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
from tcr.dialects._writing import one_json_call

__all__ = ["DIALECT"]

OPEN = "<longcat_tool_call>"
CLOSE = "</longcat_tool_call>"

_MODEL = Model(
    "sglang", "meituan-longcat/LongCat-Flash-Chat", special_tokens=(OPEN, CLOSE), ms_per_chunk=20.0
)


def _render(draws: Draws, tools: Tools) -> Rendered:
    return one_json_call(DIALECT, draws, tools)


def _block(call: Call, space: str = "\n") -> str:
    """One call as SGLang's template writes it: the JSON on its own line."""
    text = json.dumps({"name": call.name, "arguments": dict(call.arguments)}, ensure_ascii=False)
    return f"{OPEN}{space}{text}{space}{CLOSE}"


_PARIS = Call("get_weather", {"city": "Paris"})
_BERLIN = Call("get_time", {"tz": "Europe/Berlin"})

DIALECT = Dialect(
    id="longcat",
    summary="LongCat-Flash: JSON {name, arguments} between <longcat_tool_call> tags",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=json_call,
    render=_render,
    example=Example("Checking both.\n", _block(_PARIS) + _block(_BERLIN), "", (_PARIS, _BERLIN)),
    grammars=(
        city_block(
            "longcat",
            "LongCat-Flash JSON call in <longcat_tool_call> tags after a sentence.",
            "What is the weather in Paris?",
            _block(Call("get_weather", {"city": CITY})),
            before="\n",
        ),
    ),
    cases=(
        RegressionCase(
            file="format_longcat_consecutive.msgpack",
            bug="format-longcat-consecutive",
            note=(
                "Dialect longcat: two calls as two blocks with nothing between them (SGLang's "
                "tool_call_separator is ''), and the text after them kept (SGLang's "
                "non-streaming LongCatDetector keeps only the text before the first)."
            ),
            model=_MODEL,
            ask="Weather in Paris and the time in Berlin?",
            text="Checking both.\n" + _block(_PARIS) + _block(_BERLIN) + "\nBack shortly.",
            tools=("get_weather", "get_time"),
            shown="Checking both.\n\nBack shortly.",
            calls=(_PARIS, _BERLIN),
        ),
        RegressionCase(
            file="longcat_block_on_one_line.msgpack",
            bug="longcat-block-on-one-line",
            note=(
                "Dialect longcat: the call written on one line, no newline inside the tags; "
                "SGLang's LongCatDetector waits for '<longcat_tool_call>\\n' and the call "
                "leaks as text."
            ),
            model=_MODEL,
            ask="Weather in Paris?",
            text=_block(_PARIS, space=""),
            tools=("get_weather",),
            calls=(_PARIS,),
        ),
        RegressionCase(
            file="longcat_end_tag_in_text.msgpack",
            bug="longcat-end-tag-in-text",
            note=(
                f"Dialect longcat: an answer that names the {CLOSE} tag, no call; SGLang's "
                "streaming LongCatDetector deletes that tag from all normal text, so the "
                "sentence loses it."
            ),
            model=_MODEL,
            ask="How does a LongCat call end?",
            text=f"A call ends with {CLOSE} on its own line.",
            tools=("get_weather",),
            shown=f"A call ends with {CLOSE} on its own line.",
        ),
    ),
    engines=Engines(vllm=("longcat",)),
    special_tokens=frozenset({OPEN, CLOSE}),
    lexer_by_first=(("{[", BodyLexer.JSON),),
    model_seeds=("longcat*",),
    markup=(CLOSE, OPEN),
)
