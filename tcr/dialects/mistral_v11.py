"""Mistral v11+ compact: ``[TOOL_CALLS]NAME{…}``, the name straight before its JSON arguments.

vLLM calls its parser ``mistral``: for a Mistral tokenizer of version 11 or later
it reads ``content[TOOL_CALLS]add{"a": 3.5}[TOOL_CALLS]multiply{"a": 3}``, the
name being what stands before the first ``{`` (vllm/tool_parsers/mistral_tool_parser.py,
``extract_tool_calls``; tests/tool_parsers/test_mistral_tool_parser.py has this
very example for Mistral-Small-3.2). mistral-common's ``InstructTokenizerV11``
writes an ``[ARGS]`` control token (and ``[CALL_ID]ID``) between the name and the
arguments; the text without it is what such a parser is handed. SGLang's
``mistral`` detector (python/sglang/srt/function_call/mistral_detector.py) reads
the array (dialect ``mistral``) and ``NAME[ARGS]{…}`` (``mistral_v13``) but not this
form, so it is a dialect of its own, claimed apart.

One call per ``[TOOL_CALLS]``: parallel calls repeat the marker, each a block
that ends at the ``}`` balancing its arguments. It shares its opener with
``mistral_v13`` and ``mistral`` and owns the bodies that are a tool name then ``{``;
it is registered first so that ``mistral``'s catch-all does not take them.
"""

from __future__ import annotations

import json
import re

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    canonical_arguments,
    check_name,
    decode_whole,
)
from tcr.dialects._grammars import calls_between
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import BodyText, Calls, json_text, rendered
from tcr.dialects.mistral import OPEN

__all__ = ["DIALECT"]

# How a call goes wrong: a name a parser must refuse (no tool can have it: OpenAI's names are
# ^[a-zA-Z0-9_-]{1,64}$).
_FLAVORS = ("call", "call", "call", "bad_name")


def _split(body: str) -> tuple[str, str]:
    """The name before the first ``{`` and the arguments from it; ``BodyError`` if none."""
    name, brace, arguments = body.partition("{")
    if not brace:
        raise BodyError("malformed", "expected NAME{…}: no { after the name")
    return name.strip(), brace + arguments


def _owns(body: str) -> bool:
    """A tool name, then ``{`` (not an array, an object or ``NAME[ARGS]{…}``)."""
    try:
        check_name(_split(body)[0], "before its arguments")
    except BodyError:
        return False
    return True


def _parse(body: str) -> list[ParsedCall]:
    name, arguments = _split(body)
    name = check_name(name, "before its arguments")
    return [ParsedCall(name, canonical_arguments(decode_whole(arguments)))]


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=1, flavors=_FLAVORS)
    name = calls.names[0]
    args = draws.arguments()
    written = name + "$" if calls.flavor == "bad_name" else name
    body = BodyText()
    body.add(draws.option(0, ("", "", " ")))
    body.add(written + json_text(args, draws.style()), fragile=True)
    found = (Call(name, args),) if calls.flavor == "call" else ()
    return rendered(DIALECT, "compact", body, calls.accepted(), found)


# --- forcing it from llama-server ---------------------------------------------------

_CALL_RE = rf"{re.escape(OPEN)}(\w+)(\{{.*?\}})"


_WEATHER = f'"{OPEN}get_weather{{\\"city\\": " city "}}"'
_TIME = f'"{OPEN}get_time{{\\"tz\\": \\"CET\\"}}"'


def _calls(text: str, *calls: Call) -> str:
    """Calls the way the model writes them: each its own marker, ``json.dumps`` arguments."""
    return text + "".join(f"{OPEN}{c.name}{json.dumps(dict(c.arguments))}" for c in calls)


_ADD = Call("add", {"a": 3.5, "b": 4})
_MULTIPLY = Call("multiply", {"a": 3, "b": 6})
_PARIS = Call("get_weather", {"city": "Paris"})


DIALECT = Dialect(
    id="mistral_v11",
    summary="Mistral v11+ compact: [TOOL_CALLS]NAME{…}, the marker repeated per call",
    opens=(OPEN,),
    closes=(),
    closing=Closing.BALANCED,
    parse=_parse,
    render=_render,
    example=Example("Computing. ", _calls("", _ADD, _MULTIPLY), "", (_ADD, _MULTIPLY)),
    grammars=(
        Grammar(
            "mistral_v11",
            "Mistral v11+ compact [TOOL_CALLS]NAME{…} after a sentence.",
            "What is the weather in Paris?",
            f'sentence " " {_WEATHER}',
            calls_between(_CALL_RE, 1),
        ),
        Grammar(
            "mistral_v11_two_calls",
            "Mistral v11+ compact parallel calls: [TOOL_CALLS] before each of two calls.",
            "Get the weather in Paris and the time in Berlin.",
            f"{_WEATHER} {_TIME}",
            calls_between(_CALL_RE, 2),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_mistral_v11.msgpack",
            bug="format-mistral-v11",
            note=(
                "Dialect mistral_v11: two calls, each after its own [TOOL_CALLS], the name "
                "straight before its JSON (vLLM's mistral parser test for Mistral-Small-3.2); a "
                "parser that waits for [ARGS] (SGLang's mistral detector) finds no call at all."
            ),
            model="mistral_small_vllm",
            ask="Add 3.5 and 4, and multiply 3 by 6.",
            text=_calls("", _ADD, _MULTIPLY),
            tools=("add", "multiply"),
            offered=(),  # the bundled request schemas know no such tools: declared only
            calls=(_ADD, _MULTIPLY),
        ),
        RegressionCase(
            file="mistral_v11_brace_in_string.msgpack",
            bug="mistral-v11-brace-in-string",
            note=(
                "Dialect mistral_v11: a } inside an argument string; a parser that cuts the "
                "arguments at the first } after the name (a non-greedy \\{.*?\\} regex) reads "
                "broken JSON and loses the call."
            ),
            model="mistral_small_vllm",
            ask="Find how to write an empty dict in Python.",
            text=_calls("Searching. ", Call("search", {"query": "python {} vs dict()"})),
            tools=("search",),
            offered=(),
            shown="Searching. ",
            calls=(Call("search", {"query": "python {} vs dict()"}),),
        ),
        RegressionCase(
            file="mistral_v11_text_after.msgpack",
            bug="mistral-v11-text-after",
            note=(
                "Dialect mistral_v11: a sentence after the call; vLLM's mistral parser (v11+) "
                "takes all that follows the name as its arguments, the sentence included; a "
                "correct parser ends the call at its balancing } and shows the sentence."
            ),
            model="mistral_small_vllm",
            ask="Weather in Paris?",
            text=_calls("", _PARIS) + " I will tell you once I know.",
            tools=("get_weather",),
            shown=" I will tell you once I know.",
            calls=(_PARIS,),
        ),
    ),
    engines=Engines(vllm=("mistral",), sglang=("mistral",)),
    special_tokens=frozenset({OPEN}),
    lexer_by_first=(("[", BodyLexer.BALANCED),),
    lexer_otherwise=BodyLexer.BEFORE_BRACE,
    owns=_owns,
    markup=(OPEN,),
)
