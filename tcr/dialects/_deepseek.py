"""DeepSeek's tool-calls section, shared by V3 and V3.1 (``deepseek_v3``, ``deepseek_v31``).

Both write every call of a turn inside one ``<｜tool▁calls▁begin｜>`` …
``<｜tool▁calls▁end｜>`` section, each call between ``<｜tool▁call▁begin｜>`` and
``<｜tool▁call▁end｜>`` with a ``<｜tool▁sep｜>`` inside; they differ in what stands
around the separator (vllm/entrypoints/openai/tool_parsers/deepseekv3_tool_parser.py
and deepseekv31_tool_parser.py; SGLang's python/sglang/srt/function_call/
deepseekv3_detector.py and deepseekv31_detector.py). The bars are full-width
(U+FF5C) and the word breaks U+2581: each marker is one special token, and a
parser that compares them with ASCII ``|`` or ``_`` never sees one.

Here: the markers, and ``DeepSeekCalls``, a call's spelling (how one is read and
written) turned into the section's parser, renderer, recording grammars and the
rest of the dialect record the two versions share.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcr.dialects._calls import BodyError, ParsedCall, canonical_arguments, decode_at, skip_space
from tcr.dialects._grammars import calls_between, gbnf_literal
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Example,
    Grammar,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import MAX_CALLS, BodyText, Calls, json_text, rendered

__all__ = [
    "BEGIN",
    "CLOSE",
    "END",
    "FLAVORS",
    "OPEN",
    "SEP",
    "DeepSeekCalls",
    "arguments_at",
    "expect",
    "find_sep",
]

OPEN = "<｜tool▁calls▁begin｜>"
CLOSE = "<｜tool▁calls▁end｜>"
BEGIN = "<｜tool▁call▁begin｜>"
SEP = "<｜tool▁sep｜>"
END = "<｜tool▁call▁end｜>"

# How the first call of a section goes wrong: no name, arguments that are no object.
FLAVORS = ("call", "call", "call", "missing_name", "array_arguments")

# One call from just after its <｜tool▁call▁begin｜>: the call and where its END must stand.
CallReader = Callable[[str, int], tuple[ParsedCall, int]]
# One call as written: the drawn name (or "" for a missing one) and its arguments' text.
CallWriter = Callable[[str, str], str]

_PARIS = Call("get_weather", {"city": "Paris"})
_BERLIN = Call("get_time", {"tz": "Europe/Berlin"})


def expect(body: str, token: str, pos: int, what: str) -> int:
    """Where ``token`` ends, standing at ``pos`` (after white space); else ``BodyError``."""
    pos = skip_space(body, pos)
    if not body.startswith(token, pos):
        raise BodyError("malformed", f"expected {token} {what} at offset {pos}")
    return pos + len(token)


def arguments_at(body: str, pos: int) -> tuple[str, int]:
    """The JSON object starting at ``pos`` (after white space) as canonical text, and its end.

    Decoded from where it starts, so a marker inside one of its strings is content
    (policy 4).
    """
    value, end = decode_at(body, skip_space(body, pos))
    return canonical_arguments(value), end


def find_sep(body: str, pos: int) -> int:
    """Where the call's ``<｜tool▁sep｜>`` stands; ``BodyError`` if it has none."""
    sep = body.find(SEP, pos)
    if sep < 0:
        raise BodyError("malformed", f"no {SEP} in the call at offset {pos}")
    return sep


@dataclass(frozen=True, slots=True)
class DeepSeekCalls:
    """One spelling of a call inside the section: how it is read and how it is written.

    ``between``: what the model writes between two calls of a section.
    """

    read: CallReader
    write: CallWriter
    between: str = ""

    def parse(self, body: str) -> list[ParsedCall]:
        """``<｜tool▁call▁begin｜>…<｜tool▁call▁end｜>`` calls, white space between them."""
        calls: list[ParsedCall] = []
        pos = skip_space(body, 0)
        while pos < len(body):
            call, end = self.read(body, expect(body, BEGIN, pos, "to begin a call"))
            calls.append(call)
            pos = skip_space(body, expect(body, END, end, "after the arguments"))
        return calls

    def render(self, dialect: Dialect, draws: Draws, tools: Tools) -> Rendered:
        """A section of drawn calls (the first maybe a near miss)."""
        calls = Calls(draws, tools, most=MAX_CALLS, flavors=FLAVORS)
        between = draws.option(0, ("", "\n"))  # V3's template puts a newline between calls
        body = BodyText()
        found: list[Call] = []
        for k, (name, flavor) in enumerate(zip(calls.names, calls.flavors(), strict=True)):
            args = draws.arguments()
            written: object = [args] if flavor == "array_arguments" else args
            text = self.write(
                "" if flavor == "missing_name" else name, json_text(written, draws.style())
            )
            body.add(between if k else "")
            body.add(f"{BEGIN}{text}{END}", fragile=True)
            if flavor == "call":
                found.append(Call(name, args))
        return rendered(dialect, "section", body, calls.accepted(), tuple(found))

    def section(self, text: str, *calls: Call) -> str:
        """``text`` then a section the way the model writes one: ``json.dumps`` arguments."""
        written = (
            f"{BEGIN}{self.write(c.name, json.dumps(dict(c.arguments)))}{END}" for c in calls
        )
        return text + OPEN + self.between.join(written) + CLOSE

    def grammar(self, name: str, note: str, prompt: str, *calls: tuple[str, str]) -> Grammar:
        """A sentence, then a section of ``calls`` (a name and its GBNF arguments each)."""
        name_mark, arguments_mark = "\x00", "\x01"
        written = f"{BEGIN}{self.write(name_mark, arguments_mark)}{END}"
        head, rest = written.split(name_mark)
        middle, tail = rest.split(arguments_mark)

        gbnf = " ".join(
            f"{gbnf_literal(head + n + middle)} {a} {gbnf_literal(tail)}" for n, a in calls
        )
        call_re = rf"{re.escape(head)}(\w+){re.escape(middle)}(\{{.*?\}}){re.escape(tail)}"
        root = f'sentence "{OPEN}" {gbnf} "{CLOSE}"'
        return Grammar(
            name, note, prompt, root, calls_between(call_re, len(calls), opens=OPEN, closes=CLOSE)
        )

    def end_marker_in_argument(self, dialect_id: str, note: str, model: str) -> RegressionCase:
        """The case both versions' parsers get wrong: ``<｜tool▁call▁end｜>`` in a string."""
        echo = Call("echo", {"text": f"say {END} then stop"})
        return RegressionCase(
            file=f"{dialect_id}_end_marker_in_argument.msgpack",
            bug=f"{dialect_id.replace('_', '-')}-end-marker-in-argument",
            note=note,
            model=model,
            ask="Echo the marker back.",
            text=self.section("", echo),
            tools=("echo",),
            offered=(),
            calls=(echo,),
        )

    def dialect(self, **fields: Any) -> Dialect:
        """The version's dialect record: the section's markers and lexer, this call spelling,
        an example of two calls; ``fields`` are the version's own (id, cases, grammars…)."""
        record: Dialect

        def render(draws: Draws, tools: Tools) -> Rendered:
            return self.render(record, draws, tools)

        example = self.section("", _PARIS, _BERLIN)
        record = Dialect(
            opens=(OPEN,),
            closes=(CLOSE,),
            closing=Closing.MARKER,
            parse=self.parse,
            render=render,
            example=Example("I'll check both. ", example, "", (_PARIS, _BERLIN)),
            special_tokens=frozenset({OPEN, CLOSE, BEGIN, SEP, END}),
            lexer_by_first=(("<", BodyLexer.JSON),),
            tokens=(BEGIN, SEP, END),
            markup=(CLOSE, END, BEGIN, SEP),
            **fields,
        )
        return record
