"""Harmony (gpt-oss): a message addressed ``to=functions.NAME``, its JSON after ``<|message|>``.

gpt-oss writes every turn as Harmony messages, ``<|start|>assistant<|channel|>C …
<|message|>…`` ended by ``<|end|>``, ``<|call|>`` or ``<|return|>`` (the prompt
already holds the first ``<|start|>assistant``). A message whose recipient is
``functions.NAME`` is a call; its content is the JSON arguments. What the engines
accept, and so what this record reads:

- llama.cpp's GPT-OSS parser (``common/chat-parser.cpp``,
  ``common_chat_parse_gpt_oss``): the recipient `` to=functions.NAME`` (NAME
  ``[^<\\s]+``) in the channel header (``<|channel|>commentary to=…``) or in the
  role header before it (``<|start|>assistant to=…<|channel|>commentary``), on
  the ``commentary`` or the ``analysis`` channel, then an optional content type
  (``<|constrain|>json`` or a bare ``json``), ``<|message|>`` and the JSON; the
  stream may end right after it (``<|call|>`` is a stop token), and a turn holds
  several messages.
- vLLM's ``openai`` tool parser (``vllm/tool_parsers/openai_tool_parser.py``,
  reading token ids with ``openai_harmony``): every message whose recipient
  starts with ``functions.`` is a call named by what follows (dots stay), its
  content JSON when the content type says json or says nothing.
- SGLang's ``gpt-oss`` detector (``python/sglang/srt/function_call/
  gpt_oss_detector.py``) matches ``to=NAME\\s*<|constrain|>json<|message|>``
  only, and keeps the part of NAME after its last dot: its two known bug shapes
  are regression cases here.

A call is one message, so a block holds one call; several calls are several
blocks. The ``analysis`` channel is reasoning (``harmony_analysis``); ``final``
and ``commentary`` messages without a recipient are what the user is shown. Their
headers stay text here: tcr's events have no span for framing that is consumed
but shown nowhere. The content llama-server streams for gpt-oss with
``reasoning_format: none`` is just this shape (its parser keeps the analysis
message verbatim and drops the final header), and the engines' trigger is
`` to=functions.``, so a message to a built-in tool (``to=python``) or
gpt-oss-20b's stray ``<|channel|>commentary to=assistant`` opens nothing. Every
marker is a special token of the o200k_harmony vocabulary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    canonical_arguments,
    check_name,
    decode_at,
    skip_space,
)
from tcr.dialects._grammars import CITY_ARGUMENTS, around, call_map, expectation
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    Model,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import BodyText, Calls, json_text

__all__ = ["DIALECT", "GPT_OSS", "TOKENS", "analysis", "message", "plan_then_call"]

START = "<|start|>"
CHANNEL = "<|channel|>"
MESSAGE = "<|message|>"
CONSTRAIN = "<|constrain|>"
END = "<|end|>"
CALL = "<|call|>"
RETURN = "<|return|>"
TOKENS = (START, CHANNEL, MESSAGE, CONSTRAIN, END, CALL, RETURN)
ASSISTANT = f"{START}assistant"
PREFIX = "functions."

# Where the recipient may stand (llama.cpp's tool_call1/tool_call2 headers): in the
# channel header, on commentary or analysis, or in the role header before the channel;
# a later message of the turn starts with its own <|start|>assistant. The openers end
# in "functions." as the engines' triggers do: a built-in tool's message (to=python,
# to=browser.search) is no function call, and gpt-oss-20b's stray
# "<|channel|>commentary to=assistant" before its analysis must not swallow it.
CHANNEL_TO = f"{CHANNEL}commentary to={PREFIX}"
ANALYSIS_TO = f"{CHANNEL}analysis to={PREFIX}"
ROLE_TO = f"{ASSISTANT} to={PREFIX}"
OPENERS = (CHANNEL_TO, ANALYSIS_TO, ROLE_TO, ASSISTANT + CHANNEL_TO, ASSISTANT + ANALYSIS_TO)

# After the opener: the name, the channel when the recipient was in the role header,
# an optional content type (" <|constrain|>json", " json"), then <|message|>.
_HEADER_RE = re.compile(
    rf"(?P<name>[^<\s]+)(?:{re.escape(CHANNEL)}(?:commentary|analysis))?"
    rf"(?:\s*(?:{re.escape(CONSTRAIN)})?[A-Za-z0-9_-]+)?\s*{re.escape(MESSAGE)}"
)

# How a call goes wrong: arguments that are no object, no <|message|> before them.
_FLAVORS = ("call", "call", "call", "array_arguments", "no_message")


# --- reading ---------------------------------------------------------------------


def _parse(body: str) -> list[ParsedCall]:
    """``NAME[<|channel|>commentary][ <|constrain|>json]<|message|>{…}``, after ``to=functions.``

    The JSON is decoded from where it starts, so a marker inside one of its strings
    is content (policy 4); only white space may follow it.
    """
    header = _HEADER_RE.match(body)
    if header is None:
        raise BodyError("malformed", f"no NAME …{MESSAGE} header in {body[:40]!r}")
    name = check_name(header["name"], "in to=functions.NAME")
    value, end = decode_at(body, skip_space(body, header.end()))
    if body[end:].strip():
        raise BodyError("malformed", f"text after the arguments at offset {end}")
    return [ParsedCall(name, canonical_arguments(value))]


# --- writing ---------------------------------------------------------------------

_VARIANTS = {
    "channel": CHANNEL_TO,
    "next_message": ASSISTANT + CHANNEL_TO,
    "role": ROLE_TO,
    "analysis": ANALYSIS_TO,
}


def _render(draws: Draws, tools: Tools) -> Rendered:
    variant = draws.variant(tuple(_VARIANTS))
    calls = Calls(draws, tools, most=1, flavors=_FLAVORS)
    name, flavor = calls.names[0], calls.flavor
    content_type = draws.option(0, (f" {CONSTRAIN}json", CONSTRAIN + "json", " json", ""))
    # <|call|> is a stop token, so the stream often ends on the JSON: such a block is kept last.
    closer = draws.option(1, (CALL, CALL, END, ""))
    args = draws.arguments()
    channel = f"{CHANNEL}commentary" if variant == "role" else ""
    header = name + channel + content_type + ("" if flavor == "no_message" else MESSAGE)
    written: object = [args] if flavor == "array_arguments" else args
    body = BodyText()
    body.add(header + json_text(written, draws.style()), fragile=True)
    found = (Call(name, args, DIALECT.id),) if flavor == "call" else ()
    return Rendered(
        DIALECT.id,
        variant,
        _VARIANTS[variant],
        body.text,
        closer,
        "",
        found,
        calls.accepted(),
        tuple(body.fragile),
    )


def message(name: str, arguments: str, *, role: bool = False) -> str:
    """A call message as gpt-oss writes one after the turn's first: its own <|start|>assistant,
    the recipient in the channel header (with <|constrain|>json) or in the role header."""
    if role:
        head = f"{ROLE_TO}{name}{CHANNEL}commentary json"
    else:
        head = f"{ASSISTANT}{CHANNEL_TO}{name} {CONSTRAIN}json"
    return f"{head}{MESSAGE}{arguments}{CALL}"


def analysis(text: str) -> str:
    """An analysis (reasoning) message, the first of a turn."""
    return f"{CHANNEL}analysis{MESSAGE}{text}{END}"


# --- forcing it from llama-server ---------------------------------------------------


def _gbnf(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


_CALL_HEAD = f"{ASSISTANT}{CHANNEL_TO}get_weather {CONSTRAIN}json{MESSAGE}"


def plan_then_call(head: str) -> Callable[[str], dict[str, Any]]:
    """The expectation of an analysis message, then one get_weather call written after ``head``."""

    def expect(content: str) -> dict[str, Any]:
        m = around(
            rf"{re.escape(CHANNEL)}analysis{re.escape(MESSAGE)}(.*?){re.escape(END)}"
            rf"{re.escape(head)}(\{{.*?\}}){re.escape(CALL)}",
            content,
        )
        return expectation("", [call_map("get_weather", json.loads(m[2]))], reasoning=m[1])

    return expect


GPT_OSS = Model("llama-server", "gpt-oss-20b-mxfp4.gguf", TOKENS, ms_per_chunk=18.0)

_PARIS = Call("get_weather", {"city": "Paris"})
_PLAN = "The user asks for the weather in Paris. Call get_weather."

DIALECT = Dialect(
    id="harmony",
    summary="Harmony (gpt-oss): a message to=functions.NAME, JSON after <|message|>",
    opens=OPENERS,
    closes=(CALL, END),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "",
        f'{CHANNEL_TO}get_weather {CONSTRAIN}json{MESSAGE}{{"city":"Paris"}}' + CALL,
        "",
        (_PARIS,),
    ),
    grammars=(
        Grammar(
            "harmony",
            "Harmony: an analysis message, then a commentary message to=functions.get_weather "
            "with <|constrain|>json, ended by <|call|>.",
            "What is the weather in Paris?",
            f'"{CHANNEL}analysis{MESSAGE}" sentence {_gbnf(END + _CALL_HEAD)} '
            f"{CITY_ARGUMENTS} {_gbnf(CALL)}",
            plan_then_call(_CALL_HEAD),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_harmony.msgpack",
            bug="format-harmony",
            note=(
                "Dialect harmony: gpt-oss's analysis, then two call messages in one turn "
                "(the second with its own <|start|>assistant); a parser that stops at the "
                "first <|call|> drops the second."
            ),
            model=GPT_OSS,
            ask="Weather in Paris and the time in Berlin?",
            text=analysis(_PLAN + " Then get_time.")
            + message("get_weather", '{"city":"Paris"}')
            + message("get_time", '{"tz":"Europe/Berlin"}'),
            tools=("get_weather", "get_time"),
            calls=(_PARIS, Call("get_time", {"tz": "Europe/Berlin"})),
            reasoning=_PLAN + " Then get_time.",
        ),
        RegressionCase(
            file="harmony_recipient_in_role.msgpack",
            bug="harmony-recipient-in-role",
            note=(
                "Dialect harmony: the recipient in the role header, <|start|>assistant "
                "to=functions.get_weather<|channel|>commentary json<|message|>; llama.cpp and "
                "openai_harmony accept it, SGLang's gpt-oss detector matches only "
                "to=NAME<|constrain|>json and drops the call."
            ),
            model=GPT_OSS,
            ask="What is the weather in Paris?",
            text=analysis(_PLAN) + message("get_weather", '{"city": "Paris"}', role=True),
            tools=("get_weather",),
            calls=(_PARIS,),
            reasoning=_PLAN,
        ),
        RegressionCase(
            file="harmony_dotted_name.msgpack",
            bug="harmony-dotted-name",
            note=(
                "Dialect harmony: an MCP-style name with a dot, to=functions.github.create_issue; "
                "vLLM and llama.cpp keep github.create_issue, SGLang keeps the part after the "
                "last dot (create_issue)."
            ),
            model=GPT_OSS,
            ask="File an issue about the crash.",
            text=analysis("File it.")
            + message("github.create_issue", '{"title":"Crash on start"}'),
            tools=("github.create_issue",),
            offered=(),
            calls=(Call("github.create_issue", {"title": "Crash on start"}),),
            reasoning="File it.",
        ),
        RegressionCase(
            file="harmony_call_marker_in_argument.msgpack",
            bug="harmony-call-marker-in-argument",
            note=(
                "Dialect harmony: the arguments hold <|call|> and <|end|> inside a JSON string "
                "(a model asked to write Harmony docs); a parser that ends the message at the "
                "first <|call|> cuts the JSON."
            ),
            model="smollm2",
            ask="Save a note that says how a Harmony call ends.",
            text=message("save_note", '{"text":"A call ends with <|call|>, not <|end|>."}'),
            tools=("save_note",),
            offered=(),
            calls=(Call("save_note", {"text": "A call ends with <|call|>, not <|end|>."}),),
        ),
    ),
    engines=Engines(vllm=("openai",), sglang=("gpt-oss",), llamacpp=("GPT_OSS",)),
    special_tokens=frozenset(TOKENS),
    closed_by_end=True,  # <|call|> is a stop token: the stream often ends on the JSON
    first_lexer=BodyLexer.JSON,
    model_seeds=("gpt-oss*", "gpt_oss*"),
    tokens=(MESSAGE, CONSTRAIN, CHANNEL),
    markup=(CALL, END, MESSAGE, CHANNEL_TO),
)
