"""Detectors that declare a claim (``tcr_claim``), loaded by spec in the claim tests.

Each speaks Hermes only (``<tool_call>{json}</tool_call>``), by restricting the
reference, and differs in what it does with markup it does not claim: the correct
one shows it as text; the broken ones eat it, turn it into a call, or drop the
calls of a dialect it reads but does not claim (``swallows_mistral``, which fuzzing
against the claim must find). ``hermes_text_without_tools`` makes the other choice
for ``tools=[]``: with no tools offered it parses nothing. ``wrong_claim_type`` and
``wrong_claim`` declare their claims with the wrong shape.
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
    "hermes_text_without_tools",
    "no_claim",
    "swallows_mistral",
    "wrong_claim",
    "wrong_claim_type",
]

# Mistral's markup, which none of these claims: ``[TOOL_CALLS]`` and a JSON array.
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*\[.*?\]\]?|\[TOOL_CALLS\]", re.DOTALL)
_MISTRALS = ("mistral", "mistral_v13")  # what the alias bracket_tool_calls claims


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
            out.append(ToolCall("mistral_call", "{}", found.group(), "mistral"))
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


class _DropsMistral:
    """Reads Hermes and ``[TOOL_CALLS]`` blocks, then drops the latter: markup it never claimed is lost."""

    tcr_claim = ("hermes",)

    def __init__(self, tools: Sequence[str] | None = None) -> None:
        self._inner = StreamDetector(tools, dialects=["hermes", "bracket_tool_calls"])  # an alias

    def _keep(self, events: list[Event]) -> list[Event]:
        return [e for e in events if getattr(e, "format", None) not in _MISTRALS]

    def feed(self, chunk: str) -> list[Event]:
        return self._keep(self._inner.feed(chunk))

    def finish(self) -> list[Event]:
        return self._keep(self._inner.finish())


def swallows_mistral(tools: Sequence[str] | None = None) -> _DropsMistral:
    """Broken: its parser reads Mistral's calls it does not claim, and drops them."""
    return _DropsMistral(tools)


class _ShowsAll:
    """Parses nothing: what a server does with a request that offers no tools."""

    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk)] if chunk else []

    def finish(self) -> list[Event]:
        return []


def hermes_text_without_tools(tools: Sequence[str] | None = None) -> StreamDetector | _ShowsAll:
    """Hermes only, and with ``tools=[]`` no parsing at all (``empty_tools="text"``).

    Its claim is its factory's (a mapping), not the restricted reference's own.
    """
    if tools is not None and not tools:
        return _ShowsAll()
    detector = StreamDetector(tools, dialects=["hermes"])
    del detector.tcr_claim
    return detector


hermes_text_without_tools.tcr_claim = {"dialects": ["hermes"], "empty_tools": "text"}  # type: ignore[attr-defined]


def wrong_claim(tools: Sequence[str] | None = None) -> StreamDetector:
    return no_claim(tools)


wrong_claim.tcr_claim = "hermes"  # type: ignore[attr-defined]  # a string, not a list of ids
