"""Detectors that declare a claim (``tcr_claim``), loaded by spec in the claim tests.

Each speaks Hermes only (``<tool_call>{json}</tool_call>``), by restricting the
reference, and differs in what it does with markup it does not claim: the correct
one shows it as text; the broken ones eat it or turn it into a call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text, ToolCall, merge_text

__all__ = [
    "calls_unclaimed",
    "eats_unclaimed",
    "hermes_only",
    "no_claim",
    "wrong_claim_type",
]

# Mistral's markup, which none of these claims: ``[TOOL_CALLS]`` and a JSON array.
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*\[.*?\]\]?|\[TOOL_CALLS\]", re.DOTALL)


def hermes_only(tools: Sequence[str] | None = None) -> StreamDetector:
    """Correct: the reference restricted to Hermes; other dialects' markup is text."""
    return StreamDetector(tools, dialects=["hermes"])


hermes_only.tcr_claim = ["hermes"]  # type: ignore[attr-defined]


class _Filter:
    """Hermes-only, with a post-processing step over the whole message's text."""

    tcr_claim = ("hermes",)

    def __init__(self, tools: Sequence[str] | None = None) -> None:
        self._inner = StreamDetector(tools, dialects=["hermes"])
        self._events: list[Event] = []

    def feed(self, chunk: str) -> list[Event]:
        self._events += self._inner.feed(chunk)
        return []  # everything at the end: the holdback check is not what these test

    def finish(self) -> list[Event]:
        out: list[Event] = []
        for event in merge_text([*self._events, *self._inner.finish()]):
            out += self._rewrite(event) if isinstance(event, Text) else [event]
        self._events = []
        return out

    def _rewrite(self, event: Text) -> list[Event]:
        return [event]


class _EatsUnclaimed(_Filter):
    def _rewrite(self, event: Text) -> list[Event]:
        return [Text(_MISTRAL.sub("", event.text))]  # the markup vanishes, raw and all


class _CallsUnclaimed(_Filter):
    def _rewrite(self, event: Text) -> list[Event]:
        out: list[Event] = []
        at = 0
        for found in _MISTRAL.finditer(event.text):  # every byte accounted for in raw
            out += [Text(event.text[at : found.start()])] if found.start() > at else []
            out.append(ToolCall("mistral_call", "{}", found.group(), "bracket_tool_calls"))
            at = found.end()
        return out + ([Text(event.text[at:])] if at < len(event.text) else [])


def eats_unclaimed(tools: Sequence[str] | None = None) -> _Filter:
    """Broken: drops ``[TOOL_CALLS]`` markup it does not claim (fails conservation)."""
    return _EatsUnclaimed(tools)


def calls_unclaimed(tools: Sequence[str] | None = None) -> _Filter:
    """Broken: turns unclaimed ``[TOOL_CALLS]`` markup into a call (fails expected)."""
    return _CallsUnclaimed(tools)


def no_claim(tools: Sequence[str] | None = None) -> StreamDetector:
    """Declares nothing itself (``functools.partial`` would hide the reference's attribute)."""
    detector = StreamDetector(tools)
    del detector.tcr_claim
    return detector


def wrong_claim_type(tools: Sequence[str] | None = None) -> StreamDetector:
    return no_claim(tools)


wrong_claim_type.tcr_claim = 42  # type: ignore[attr-defined]
