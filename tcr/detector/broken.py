"""Deliberately broken detectors: each reintroduces a bug of the seeds (ARCHITECTURE.md §15).

They exist so that tcr can prove it catches what it claims to catch, and so a
newcomer can watch a failure before hunting their own::

    tcr replay --detector tcr.detector.broken:per_chunk_markers

Each factory takes the same arguments as ``StreamDetector``. ``BROKEN`` lists those
whose events are wrong; ``COSTLY`` those whose events are right and whose time per
character grows with the message, which only the ``cost`` check sees (``tcr.cost``)::

    tcr replay --check cost --detector tcr.detector.broken:rejoins_buffer
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text, ToolCall
from tcr.detector.machine import FSM

__all__ = [
    "BROKEN",
    "COSTLY",
    "drops_pending_at_finish",
    "duplicates_flushed_prefix",
    "holds_all_text",
    "holds_non_call_json",
    "merges_calls_in_one_chunk",
    "per_chunk_closing",
    "per_chunk_markers",
    "preamble_settles",
    "rejoins_buffer",
    "undeclared_clears_buffer",
]


class _Broken(StreamDetector):
    bug = ""


class DropsPendingAtFinish(_Broken):
    bug = "a held marker prefix is swallowed at end of stream (PR #2262)"

    def finish(self) -> list[Event]:
        if self._block is None:
            self._pending = ""
            self._fsm = FSM.PRINTING
        return super().finish()


class PerChunkMarkers(_Broken):
    bug = "opening markers are matched one chunk at a time, so a split marker leaks (PR #879)"

    def feed(self, chunk: str) -> list[Event]:
        events = super().feed(chunk)
        if self._pending:  # forget that the tail could still become a marker
            events.append(Text(self._pending))
            self._pending = ""
            self._fsm = FSM.PRINTING
        return events


class PerChunkClosing(_Broken):
    bug = "a closing marker is seen only when it arrives inside one chunk"

    def feed(self, chunk: str) -> list[Event]:
        events = super().feed(chunk)
        block = self._block
        if block is not None and block.carry:
            block.parts.append(block.carry)
            block.length += len(block.carry)
            block.carry = ""
        return events


class DuplicatesFlushedPrefix(_Broken):
    bug = "a released false-start prefix is emitted twice"

    def feed(self, chunk: str) -> list[Event]:
        held = self._pending
        events = super().feed(chunk)
        if held and not self._pending and events and isinstance(events[0], Text):
            events.insert(0, Text(held))
        return events


class HoldsAllText(_Broken):
    bug = "all text is held until the end of the message"

    def reset(self) -> None:
        super().reset()
        self._held: list[Event] = []

    def feed(self, chunk: str) -> list[Event]:
        self._held += super().feed(chunk)
        return []

    def finish(self) -> list[Event]:
        events = self._held + super().finish()
        self._held = []
        return events


class HoldsNonCallJson(_Broken):
    bug = "JSON at message start that is not a call is buffered to the end (PR #2262)"

    def reset(self) -> None:
        super().reset()
        self._held: list[Event] = []

    def _captured(self, kind: str, text: str) -> str | None:
        return None  # never settle early

    def feed(self, chunk: str) -> list[Event]:
        events = super().feed(chunk)
        if self._held or (events and getattr(events[0], "reason", "") == "not_a_call"):
            self._held += events
            return []
        return events

    def finish(self) -> list[Event]:
        events = self._held + super().finish()
        self._held = []
        return events


class UndeclaredClearsBuffer(_Broken):
    bug = "a call to an undeclared tool is dropped instead of shown (PR #2262)"

    def _drop(self, events: list[Event]) -> list[Event]:
        return [e for e in events if getattr(e, "reason", "") != "undeclared"]

    def feed(self, chunk: str) -> list[Event]:
        return self._drop(super().feed(chunk))

    def finish(self) -> list[Event]:
        return self._drop(super().finish())


class PreambleSettles(_Broken):
    bug = "a preamble sentence settles the decision: later markers are never examined (PR #879)"

    def reset(self) -> None:
        super().reset()
        self._settled = False

    def feed(self, chunk: str) -> list[Event]:
        if self._settled:
            return [Text(chunk)] if chunk else []
        events = super().feed(chunk)
        if any(isinstance(e, Text) and e.text.strip() for e in events):
            self._settled = True
            if self._pending:
                events.append(Text(self._pending))
                self._pending = ""
                self._fsm = FSM.PRINTING
        return events


class MergesCallsInOneChunk(_Broken):
    bug = "two calls completed by one chunk come out as one"

    def feed(self, chunk: str) -> list[Event]:
        events = super().feed(chunk)
        calls = [e for e in events if isinstance(e, ToolCall)]
        if len(calls) < 2:
            return events
        first = calls[0]
        merged = ToolCall(
            first.name, first.arguments, "".join(c.raw or "" for c in calls), first.format
        )
        out: list[Event] = []
        for e in events:
            if e is first:
                out.append(merged)
            elif not isinstance(e, ToolCall):
                out.append(e)
        return out


class RejoinsBuffer(_Broken):
    bug = (
        "a closing marker is looked for by re-joining the whole block buffer on every chunk "
        "(PR #879): right events, quadratic time"
    )

    def reset(self) -> None:
        super().reset()
        self.closed_seen = False

    def feed(self, chunk: str) -> list[Event]:
        block = self._block
        if block is not None:  # the seeds' re-join and re-scan; the lexer below decides
            body = block.joined() + block.carry + chunk
            self.closed_seen = any(close in body for close in block.dialect.closes)
        return super().feed(chunk)


def _factory(cls: type[_Broken], name: str) -> Callable[..., StreamDetector]:
    def make(
        tools: Iterable[str] | None = None, format: str | None = None, max_block: int = 1 << 20
    ) -> StreamDetector:
        return cls(tools=tools, format=format, max_block=max_block)

    make.__doc__ = cls.bug
    # Named as the module attribute it is bound to, so pickle (tcr replay --jobs)
    # finds it by reference.
    make.__name__ = make.__qualname__ = name
    return make


drops_pending_at_finish = _factory(DropsPendingAtFinish, "drops_pending_at_finish")
per_chunk_markers = _factory(PerChunkMarkers, "per_chunk_markers")
per_chunk_closing = _factory(PerChunkClosing, "per_chunk_closing")
duplicates_flushed_prefix = _factory(DuplicatesFlushedPrefix, "duplicates_flushed_prefix")
holds_all_text = _factory(HoldsAllText, "holds_all_text")
holds_non_call_json = _factory(HoldsNonCallJson, "holds_non_call_json")
undeclared_clears_buffer = _factory(UndeclaredClearsBuffer, "undeclared_clears_buffer")
preamble_settles = _factory(PreambleSettles, "preamble_settles")
merges_calls_in_one_chunk = _factory(MergesCallsInOneChunk, "merges_calls_in_one_chunk")
rejoins_buffer = _factory(RejoinsBuffer, "rejoins_buffer")

# name -> factory, for the CLI and for tests that loop over every known bug
BROKEN: dict[str, Callable[..., StreamDetector]] = {
    "drops_pending_at_finish": drops_pending_at_finish,
    "per_chunk_markers": per_chunk_markers,
    "per_chunk_closing": per_chunk_closing,
    "duplicates_flushed_prefix": duplicates_flushed_prefix,
    "holds_all_text": holds_all_text,
    "holds_non_call_json": holds_non_call_json,
    "undeclared_clears_buffer": undeclared_clears_buffer,
    "preamble_settles": preamble_settles,
    "merges_calls_in_one_chunk": merges_calls_in_one_chunk,
}

# name -> factory: right events, superlinear time (the cost check's; no event oracle sees
# them, so they are not in BROKEN, whose every member a bundled recording must catch)
COSTLY: dict[str, Callable[..., StreamDetector]] = {"rejoins_buffer": rejoins_buffer}
