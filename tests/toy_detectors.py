"""Small detectors for testing the oracles: one correct, and each classic bug on purpose.

The correct one knows a single dialect (``<tool_call>{json}</tool_call>``) and
follows the policies that matter to the oracles: markers matched against the
accumulated text, a partial marker held back and nothing more, every character
accounted for in some event's ``raw``. Each broken variant changes one thing,
so a test can assert that the right oracle names the right chunk and offset.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tcr.detector.events import Event, Rejected, Text, ToolCall

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
FORMAT = "tool_call_tag"


@dataclass(frozen=True, slots=True)
class ToyState:
    mode: str  # "printing" or "in_block"
    pending: str
    block: str


def _held_prefix(text: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of OPEN."""
    for size in range(min(len(OPEN) - 1, len(text)), 0, -1):
        if OPEN.startswith(text[-size:]):
            return size
    return 0


class ToyDetector:
    """Correct: accumulated matching, bounded holdback, JSON body to ``ToolCall``."""

    def __init__(self, tools: Sequence[str] | None = None, format: str | None = None) -> None:
        self.tools = None if tools is None else list(tools)
        self.format = format
        self._pending = ""
        self._block: str | None = None  # None while printing

    @property
    def state(self) -> ToyState:
        mode = "printing" if self._block is None else "in_block"
        return ToyState(mode, self._pending, self._block or "")

    def feed(self, chunk: str) -> list[Event]:
        events: list[Event] = []
        text = chunk
        while True:
            if self._block is None:
                text = self._pending + text
                self._pending = ""
                at = text.find(OPEN)
                if at < 0:
                    keep = _held_prefix(text)
                    if len(text) > keep:
                        events.append(Text(text[: len(text) - keep]))
                    self._pending = text[len(text) - keep :]
                    return events
                if at:
                    events.append(Text(text[:at]))
                self._block = ""
                self.format = FORMAT
                text = text[at + len(OPEN) :]
            else:
                # Only the last len(CLOSE) - 1 characters of the block can start a close.
                start = max(0, len(self._block) - len(CLOSE) + 1)
                joined = self._block + text
                at = joined.find(CLOSE, start)
                if at < 0:
                    self._block = joined
                    return events
                events.append(self._block_event(joined[:at], closed=True))
                self._block = None
                text = joined[at + len(CLOSE) :]

    def finish(self) -> list[Event]:
        events: list[Event] = []
        if self._block is not None:
            events.append(self._block_event(self._block, closed=False))
        elif self._pending:
            events.append(Text(self._pending))
        self._pending, self._block = "", None
        return events

    def reset(self) -> None:
        self._pending, self._block = "", None

    def _block_event(self, body: str, *, closed: bool) -> Event:
        raw = OPEN + body + (CLOSE if closed else "")
        try:
            call = json.loads(body)
        except ValueError:
            call = None
        if not (isinstance(call, dict) and isinstance(call.get("name"), str)):
            return Rejected(raw, body, FORMAT, "malformed" if closed else "unterminated")
        if self.tools is not None and call["name"] not in self.tools:
            return Rejected(raw, body, FORMAT, "undeclared")
        arguments = json.dumps(call.get("arguments", {}))
        return ToolCall(call["name"], arguments, raw, FORMAT)


class DropsPendingAtFinish(ToyDetector):
    """Bug 1: finish() forgets the held partial marker.

    The seeds' swallowed buffer (ARCHITECTURE.md §15.3).
    """

    def finish(self) -> list[Event]:
        self._pending = ""
        return super().finish()


class MatchesPerChunk(ToyDetector):
    """Bug 2: a held prefix is released at the next chunk, so a split marker leaks."""

    def feed(self, chunk: str) -> list[Event]:
        released: list[Event] = []
        if self._block is None and self._pending:
            released.append(Text(self._pending))
            self._pending = ""
        return released + super().feed(chunk)


class DuplicatesReleasedPrefix(ToyDetector):
    """Bug 3: a false-start prefix, once released, is emitted twice."""

    def feed(self, chunk: str) -> list[Event]:
        held = self._pending if self._block is None else ""
        events = super().feed(chunk)
        first = events[0] if events else None
        if held and isinstance(first, Text) and first.text.startswith(held):
            return [Text(held), *events]
        return events


class HoldsEverything(ToyDetector):
    """Bug 4: nothing is shown until the message ends."""

    def __init__(self, tools: Sequence[str] | None = None, format: str | None = None) -> None:
        super().__init__(tools, format)
        self._all: list[str] = []

    def feed(self, chunk: str) -> list[Event]:
        self._all.append(chunk)
        return []

    def finish(self) -> list[Event]:
        events = super().feed("".join(self._all)) + super().finish()
        self._all.clear()
        return events

    def reset(self) -> None:
        super().reset()
        self._all.clear()


class RaisesOnThirdChunk(ToyDetector):
    """Bug 5: an exception in feed()."""

    def __init__(self, tools: Sequence[str] | None = None, format: str | None = None) -> None:
        super().__init__(tools, format)
        self._fed = 0

    def feed(self, chunk: str) -> list[Event]:
        self._fed += 1
        if self._fed == 3:
            raise ValueError("boom")
        return super().feed(chunk)


class ForeignAdapter:
    """Case 6: another project's parser behind an adapter; it cannot name raw spans.

    No ``reset``, no ``format``, no ``state``: all a foreign detector may lack.
    """

    def __init__(self, tools: Sequence[str] | None = None) -> None:
        self._inner = ToyDetector(tools)

    def feed(self, chunk: str) -> list[Event]:
        return [self._strip(e) for e in self._inner.feed(chunk)]

    def finish(self) -> list[Event]:
        return [self._strip(e) for e in self._inner.finish()]

    @staticmethod
    def _strip(event: Event) -> Event:
        return event if isinstance(event, Text) else replace(event, raw=None)


class ForgetfulReset(ToyDetector):
    """Bug 7: reset() keeps the buffers of a message that was cut short."""

    def reset(self) -> None:
        pass
