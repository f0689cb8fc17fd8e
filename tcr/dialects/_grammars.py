"""Helpers for the recording grammars: GBNF snippets and reading expectations off outputs.

Each dialect's ``Grammar`` says what a correct detector must make of the text,
computed from the grammar's structure with a regular expression, independently
of tcr's detector, so a recording's expectation is real ground truth.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from tcr.dialects._record import Grammar

__all__ = [
    "CITY",
    "CITY_ARGUMENTS",
    "TIME",
    "TZ_ARGUMENTS",
    "WEATHER",
    "around",
    "call_map",
    "calls_between",
    "city_block",
    "city_call",
    "expectation",
    "gbnf_literal",
]

# A call as GBNF writes it: JSON with a quoted city the model chooses.
WEATHER = '"{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": " city "}}"'
TIME = '"{\\"name\\": \\"get_time\\", \\"arguments\\": {\\"tz\\": \\"CET\\"}}"'
# The arguments alone, for formats that write the name apart from them.
CITY_ARGUMENTS = '"{\\"city\\": " city "}"'
TZ_ARGUMENTS = '"{\\"tz\\": \\"CET\\"}"'
# Where the model's own city goes in a block written for ``city_block``.
CITY = "\ue000"  # private use: no model writes it (JSON keeps it with ensure_ascii=False)


def call_map(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def expectation(
    text: str = "", calls: list[dict[str, Any]] | None = None, reasoning: str = ""
) -> dict[str, Any]:
    return {"text": text, "calls": calls or [], "reasoning": reasoning}


def around(pattern: str, content: str) -> re.Match[str]:
    """``content`` matched whole by ``pattern``; a ``ValueError`` when the model strayed."""
    match = re.fullmatch(pattern, content, re.S)
    if match is None:
        raise ValueError(f"the model's output does not have the expected shape: {content!r}")
    return match


def city_call(pattern: str) -> Callable[[str], dict[str, Any]]:
    """The expectation of one get_weather call: ``pattern`` groups text, city, text."""

    def expect(content: str) -> dict[str, Any]:
        m = around(pattern, content)
        return expectation(m[1] + m[3], [call_map("get_weather", {"city": m[2]})])

    return expect


def _name_and_json(groups: Sequence[str]) -> dict[str, Any]:
    return call_map(groups[0], json.loads(groups[-1]))


def calls_between(
    call_re: str,
    calls: int,
    *,
    opens: str = "",
    closes: str = "",
    read: Callable[[Sequence[str]], dict[str, Any]] = _name_and_json,
) -> Callable[[str], dict[str, Any]]:
    """The expectation of text, ``opens``, ``calls`` calls each matching ``call_re``, ``closes``,
    text. ``read`` makes a call of one match's groups (by default the first is the name and
    the last the JSON arguments)."""
    width = re.compile(call_re).groups

    def expect(content: str) -> dict[str, Any]:
        m = around(rf"(.*?){re.escape(opens)}{call_re * calls}{re.escape(closes)}(.*)", content)
        found = [read(m.groups()[1 + width * k : 1 + width * (k + 1)]) for k in range(calls)]
        return expectation(m[1] + m[2 + width * calls], found)

    return expect


def gbnf_literal(text: str) -> str:
    """``text`` as one GBNF string literal (quotes, backslashes and newlines escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def city_block(name: str, note: str, prompt: str, block: str, *, before: str = "") -> Grammar:
    """A sentence and ``before``, then ``block`` exactly as the dialect's renderer writes
    it, the model's word where ``CITY`` stands: one get_weather call, the grammar and its
    expectation made from the same text (``before`` is shown text)."""
    head, tail = block.split(CITY)
    root = f"sentence {gbnf_literal(before + head)} word {gbnf_literal(tail)}"
    return Grammar(
        name, note, prompt, root, city_call(rf"(.*?){re.escape(head)}(\w+){re.escape(tail)}(.*)")
    )
