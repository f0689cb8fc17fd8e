"""Helpers for the recording grammars: GBNF snippets and reading expectations off outputs.

Each dialect's ``Grammar`` says what a correct detector must make of the text,
computed from the grammar's structure with a regular expression, independently
of tcr's detector, so a recording's expectation is real ground truth.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "CITY_ARGUMENTS",
    "TIME",
    "TZ_ARGUMENTS",
    "WEATHER",
    "around",
    "call_map",
    "city_call",
    "expectation",
]

# A call as GBNF writes it: JSON with a quoted city the model chooses.
WEATHER = '"{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": " city "}}"'
TIME = '"{\\"name\\": \\"get_time\\", \\"arguments\\": {\\"tz\\": \\"CET\\"}}"'
# The arguments alone, for formats that write the name apart from them.
CITY_ARGUMENTS = '"{\\"city\\": " city "}"'
TZ_ARGUMENTS = '"{\\"tz\\": \\"CET\\"}"'


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
