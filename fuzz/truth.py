"""Ground truth: what a correct detector must make of a message (ARCHITECTURE.md §5).

The strategies build it at the same time as the text, from the contract, never
by running a detector: the reference detector is one of the things under test.
``Truth.expectation()`` is the ``{"text", "calls", "reasoning"}`` map that
``tcr.oracle.check_trace`` and a recording's expectation read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tcr.dialects import Call
from tcr.expectation import Expectation, ExpectedCall

__all__ = ["Call", "Message", "Truth"]


@dataclass(frozen=True, slots=True)
class Truth:
    """What the user is shown (``Text`` and ``Rejected.content``), the calls and the reasoning."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    reasoning: str = ""

    def expectation(self) -> dict[str, Any]:
        """The map ``check_trace(expectation=...)`` and a recording's ``expect`` hold."""
        return {
            "text": self.text,
            "calls": [call.as_map() for call in self.calls],
            "reasoning": self.reasoning,
        }

    def expected(self) -> Expectation:
        """The truth as the ``Expectation`` the judge compares with: each call with its
        dialect, so that untyped values are compared typed (``tcr.tool_specs``)."""
        calls = tuple(
            ExpectedCall(call.name, dict(call.arguments), call.dialect or None)
            for call in self.calls
        )
        return Expectation(self.text, calls, self.reasoning)

    @classmethod
    def from_expectation(cls, expect: Mapping[str, Any]) -> Truth | None:
        """The truth a recording's expectation states, or ``None`` when it states only part."""
        if not {"text", "calls", "reasoning"} <= set(expect):
            return None
        calls: list[Call] = []
        for spec in expect["calls"]:
            arguments = spec.get("arguments") or {}
            if isinstance(arguments, str):  # the oracle accepts arguments as JSON text too
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    return None
            if not isinstance(arguments, dict) or not isinstance(spec.get("name"), str):
                return None
            calls.append(Call(spec["name"], arguments))
        return cls(str(expect["text"]), tuple(calls), str(expect["reasoning"]))


@dataclass(frozen=True, slots=True)
class Message:
    """A generated message: its text, the tools declared to the detector, and its truth.

    ``parts`` names the pieces it was built from, in order (``"prose"``,
    ``"hermes/json"``, ``"python_tag/truncated"``…), for reports. ``tool_specs``: the
    OpenAI ``tools`` list of the request, whose schemas agree with the truth's argument
    types (``None`` when ``tools`` is: the request offered none).
    """

    text: str
    truth: Truth
    tools: tuple[str, ...] | None = None
    parts: tuple[str, ...] = ()
    tool_specs: tuple[dict[str, Any], ...] | None = None
    dialects: tuple[str, ...] = ()  # the dialects of its blocks (not those quoted as text)
