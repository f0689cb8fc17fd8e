"""Kimi K2: ``functions.NAME:N`` calls with JSON arguments inside a tool-calls section.

vLLM and SGLang call its parser ``kimi_k2``. One section holds every call of a
turn (parallel calls are consecutive ``<|tool_call_begin|>…<|tool_call_end|>``
pairs); ``N`` is the call's index in the conversation, not a name part. As in
vLLM's parser, the section markers also come in a singular spelling
(``<|tool_call_section_begin|>``), and the ``functions.`` prefix may be missing.
"""

from __future__ import annotations

import json
import re

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    canonical_arguments,
    check_name,
    decode_at,
    skip_space,
)
from tcr.dialects._grammars import CITY_ARGUMENTS, TZ_ARGUMENTS, calls_between
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
    Variant,
)
from tcr.dialects._writing import MAX_CALLS, BodyText, Calls, json_text

__all__ = ["DIALECT"]

OPEN = "<|tool_calls_section_begin|>"
CLOSE = "<|tool_calls_section_end|>"
# vLLM's kimi_k2 parser accepts these too (and looks their ids up in the vocabulary
# without requiring them): they are not known to be single tokens.
OPEN_SINGULAR = "<|tool_call_section_begin|>"
CLOSE_SINGULAR = "<|tool_call_section_end|>"
BEGIN = "<|tool_call_begin|>"
ARGUMENT = "<|tool_call_argument_begin|>"
END = "<|tool_call_end|>"
PREFIX = "functions."

# How a call goes wrong: no name before ":N", no ":N", arguments that are no object.
_FLAVORS = ("call", "call", "call", "missing_name", "no_index", "array_arguments")


# --- reading ---------------------------------------------------------------------


def _name(call_id: str) -> str:
    """The tool name of ``functions.NAME:N`` (or ``NAME:N``); dots inside NAME stay."""
    name, colon, index = call_id.strip().removeprefix(PREFIX).rpartition(":")
    if not colon or not index.isdigit():
        raise BodyError("malformed", f"{call_id[:40]!r} is not functions.NAME:INDEX")
    return check_name(name, "in functions.NAME:INDEX")


def _parse(body: str) -> list[ParsedCall]:
    """``<|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{…}<|tool_call_end|>``…

    The arguments are decoded as JSON from where they start, so a marker inside one
    of their strings is content (policy 4).
    """
    calls: list[ParsedCall] = []
    pos = skip_space(body, 0)
    while pos < len(body):
        if not body.startswith(BEGIN, pos):
            raise BodyError("malformed", f"expected {BEGIN} at offset {pos}")
        argument = body.find(ARGUMENT, pos)
        if argument < 0:
            raise BodyError("malformed", f"no {ARGUMENT} after the call at offset {pos}")
        name = _name(body[pos + len(BEGIN) : argument])
        value, end = decode_at(body, skip_space(body, argument + len(ARGUMENT)))
        end = skip_space(body, end)
        if not body.startswith(END, end):
            raise BodyError("malformed", f"expected {END} after the arguments at offset {end}")
        calls.append(ParsedCall(name, canonical_arguments(value)))
        pos = skip_space(body, end + len(END))
    return calls


# --- writing ---------------------------------------------------------------------


def _render(draws: Draws, tools: Tools) -> Rendered:
    singular = draws.variant(("section", "singular")) == "singular"
    calls = Calls(draws, tools, most=MAX_CALLS, flavors=_FLAVORS)
    prefix = draws.option(0, (PREFIX, PREFIX, ""))
    first_index = draws.option(1, (0, 0, 1, 7))  # later turns go on counting
    space = draws.option(2, ("", "\n", " "))
    body = BodyText()
    found: list[Call] = []
    body.add(space)
    for k, (name, flavor) in enumerate(zip(calls.names, calls.flavors(), strict=True)):
        args = draws.arguments()
        written_args: object = [args] if flavor == "array_arguments" else args
        call_id = f"{prefix}{'' if flavor == 'missing_name' else name}"
        if flavor != "no_index":
            call_id += f":{first_index + k}"
        arguments = json_text(written_args, draws.style())
        body.add(f"{BEGIN}{call_id}{ARGUMENT}{arguments}{END}", fragile=True)
        body.add(space)
        if flavor == "call":
            found.append(Call(name, args, DIALECT.id))
    return Rendered(
        DIALECT.id,
        "singular" if singular else "section",
        OPEN_SINGULAR if singular else OPEN,
        body.text,
        CLOSE_SINGULAR if singular else CLOSE,
        "",
        tuple(found),
        calls.accepted(),
        tuple(body.fragile),
    )


# --- forcing it from llama-server ---------------------------------------------------

_CALL_RE = (
    rf"{re.escape(BEGIN)}functions\.(\w+):(\d+){re.escape(ARGUMENT)}(\{{.*?\}}){re.escape(END)}"
)


def _gbnf_call(name: str, index: int, arguments: str) -> str:
    return f'"{BEGIN}functions.{name}:{index}{ARGUMENT}" {arguments} "{END}"'


def _section(text: str, *calls: Call) -> str:
    """A section the way Kimi K2 writes one: ``functions.NAME:N``, N counting from 0."""
    return (
        text
        + OPEN
        + "".join(
            f"{BEGIN}{PREFIX}{c.name}:{k}{ARGUMENT}{json.dumps(dict(c.arguments))}{END}"
            for k, c in enumerate(calls)
        )
        + CLOSE
    )


_PARIS = Call("get_weather", {"city": "Paris"})
_CET = Call("get_time", {"tz": "CET"})


DIALECT = Dialect(
    id="kimi_k2",
    summary="Kimi K2: functions.NAME:N + JSON arguments, calls in one tool-calls section",
    opens=(OPEN, OPEN_SINGULAR),
    closes=(CLOSE, CLOSE_SINGULAR),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example("Checking both. ", _section("", _PARIS, _CET), "", (_PARIS, _CET)),
    grammars=(
        Grammar(
            "kimi_k2",
            "Kimi K2 tool-calls section with one functions.NAME:0 call after a sentence.",
            "What is the weather in Paris?",
            f'sentence " {OPEN}" {_gbnf_call("get_weather", 0, CITY_ARGUMENTS)} "{CLOSE}"',
            calls_between(_CALL_RE, 1, opens=OPEN, closes=CLOSE),
        ),
        Grammar(
            "kimi_k2_two_calls",
            "Kimi K2 parallel calls: two functions.NAME:N calls in one section.",
            "Get the weather in Paris and the time in Berlin.",
            f'sentence " {OPEN}" {_gbnf_call("get_weather", 0, CITY_ARGUMENTS)} '
            f'{_gbnf_call("get_time", 1, TZ_ARGUMENTS)} "{CLOSE}"',
            calls_between(_CALL_RE, 2, opens=OPEN, closes=CLOSE),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_kimi_k2.msgpack",
            bug="format-kimi-k2",
            note=(
                "Dialect kimi_k2: two parallel calls in one tool-calls section, indices 0 and 1; "
                "a parser that reads one call per section drops the second."
            ),
            model="kimi_k2",
            ask="Weather in Paris and the time in Berlin?",
            text=_section("Checking both. ", _PARIS, Call("get_time", {"tz": "Europe/Berlin"})),
            tools=("get_weather", "get_time"),
            shown="Checking both. ",
            calls=(_PARIS, Call("get_time", {"tz": "Europe/Berlin"})),
        ),
        RegressionCase(
            file="kimi_k2_dotted_name.msgpack",
            bug="kimi-k2-dotted-name",
            note=(
                "Dialect kimi_k2: an MCP-style tool name with a dot, "
                "functions.github.create_issue:0; vLLM's kimi_k2 parser takes the name after "
                "the last dot (create_issue)."
            ),
            model="kimi_k2",
            ask="File an issue about the crash.",
            text=_section("", Call("github.create_issue", {"title": "Crash on start"})),
            tools=("github.create_issue",),
            offered=(),  # the bundled request schemas know no such tool: declared only
            calls=(Call("github.create_issue", {"title": "Crash on start"}),),
        ),
        RegressionCase(
            file="kimi_k2_hyphen_name.msgpack",
            bug="kimi-k2-hyphen-name",
            note=(
                "Dialect kimi_k2: a tool name with a hyphen, functions.shell-exec:0; SGLang's "
                "KimiK2Detector matches ids with [\\w.]+:\\d+ and silently drops the call."
            ),
            model="kimi_k2",
            ask="List the files here.",
            text=_section("Listing them. ", Call("shell-exec", {"cmd": "ls -la"})),
            tools=("shell-exec",),
            offered=(),
            shown="Listing them. ",
            calls=(Call("shell-exec", {"cmd": "ls -la"}),),
        ),
        RegressionCase(
            file="kimi_k2_spelled_markers.msgpack",
            bug="kimi-k2-spelled-markers",
            note=(
                "Dialect kimi_k2: the section as llama-server streams it when a grammar makes a "
                "model without Kimi's special tokens spell it: every marker split into pieces, "
                "which a parser counting special-token ids never sees."
            ),
            model="smollm2",
            ask="What is the weather in Paris? Answer with a tool call.",
            text=_section("Sure. ", Call("get_weather", {"city": "Paris"})),
            tools=None,
            shown="Sure. ",
            calls=(_PARIS,),
        ),
    ),
    engines=Engines(vllm=("kimi_k2",), sglang=("kimi_k2",), llamacpp=("KIMI_K2",)),
    variants=(
        Variant(
            "singular",
            f"the singular section markers, {OPEN_SINGULAR!r} and {CLOSE_SINGULAR!r}",
            lambda raw, before: raw.startswith(OPEN_SINGULAR),
            f"Ok {OPEN_SINGULAR}{BEGIN}{PREFIX}get_weather:0{ARGUMENT}"
            f'{{"city": "Paris"}}{END}{CLOSE_SINGULAR} done',
            reads=(("older vLLM kimi_k2", "vllm/tool_parsers/kimi_k2_tool_parser.py"),),
            skips=(("vLLM 0.34 kimi_k2", "vllm/parser/kimi_k2.py: plural section markers only"),),
        ),
    ),
    special_tokens=frozenset({OPEN, CLOSE, BEGIN, ARGUMENT, END}),
    lexer_by_first=(("<", BodyLexer.JSON),),
    model_seeds=("kimi-k2*", "kimi_k2*"),
    tokens=(BEGIN, ARGUMENT, END),
    markup=(CLOSE, END, BEGIN),
)
