"""Events a detector emits, and the ``Detector`` protocol (ARCHITECTURE.md §5.1).

Every event names the exact input span it consumed (``raw``), so loss,
duplication and reordering are one string comparison away. Foreign detectors
that cannot say which span a call consumed may leave ``raw`` as ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable

__all__ = ["Detector", "Event", "Reasoning", "Rejected", "Text", "ToolCall", "merge_text"]


@dataclass(frozen=True, slots=True)
class Text:
    """Printable content; its raw span is ``text`` itself."""

    text: str

    @property
    def raw(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete call. ``arguments`` is a JSON object as text.

    When one block holds several calls, the first carries the block's whole
    ``raw`` and the others carry ``""``, so concatenated raws still equal the input.
    """

    name: str
    arguments: str
    raw: str | None = None
    format: str = ""


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Thinking text (``<think>…</think>``); ``raw`` includes the markers."""

    text: str
    raw: str | None = None
    format: str = ""


@dataclass(frozen=True, slots=True)
class Rejected:
    """Opened like a call but is not one. ``content`` is what the user is shown.

    ``reason`` is one of ``malformed``, ``undeclared``, ``not_a_call``,
    ``unterminated``, ``too_long``.
    """

    raw: str | None
    content: str
    format: str = ""
    reason: str = "malformed"


Event: TypeAlias = Text | ToolCall | Reasoning | Rejected


def merge_text(events: Iterable[Event]) -> list[Event]:
    """The events with adjacent ``Text`` merged and empty ``Text`` dropped.

    How a detector cut its text is not part of its result (chunk invariance
    compares events so), so the pieces are joined once, not pairwise.
    """
    merged: list[Event] = []
    pieces: list[str] = []
    for event in events:
        if isinstance(event, Text):
            pieces.append(event.text)
            continue
        if pieces:
            joined = "".join(pieces)
            merged += [Text(joined)] if joined else []
            pieces.clear()
        merged.append(event)
    joined = "".join(pieces)
    return [*merged, Text(joined)] if joined else merged


@runtime_checkable
class Detector(Protocol):
    """What tcr drives: feed content chunks, then finish the message.

    Optional: ``feed_many(chunks)``, an iterator of what ``feed`` returns for each
    chunk, which ``tcr.trace.run_trace`` uses when it needs no state between chunks
    (a detector in another process pipelines them: ``tcr.stdio``).
    """

    def feed(self, chunk: str) -> list[Event]: ...

    def finish(self) -> list[Event]: ...
