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

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from typing import ClassVar

from tcr.detector.block import Block
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text, ToolCall
from tcr.detector.formats import Lexicon, prefix_regex
from tcr.detector.machine import FSM

__all__ = [
    "BROKEN",
    "COSTLY",
    "bytewise_partial_marker",
    "drops_pending_at_finish",
    "duplicates_flushed_prefix",
    "holds_all_text",
    "holds_non_call_json",
    "holds_special_prefix",
    "merges_calls_in_one_chunk",
    "name_at_chunk_edge",
    "per_chunk_closing",
    "per_chunk_markers",
    "preamble_settles",
    "rejoins_buffer",
    "undeclared_clears_buffer",
]


class _Broken(StreamDetector):
    bug = ""
    # The reference's choices this bug breaks where another parser may choose so on purpose
    # (tcr.policies): pinned in the detector's claim, so the choice is enforced, not read.
    pins: ClassVar[Mapping[str, str]] = {}


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
    # Dropping is a choice engines make (undeclared=dropped, lossy); the project of PR
    # #2262 shows such a call, so its detector pins that choice.
    pins: ClassVar[Mapping[str, str]] = {"undeclared": "rejected"}

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


# --- the newer families' shapes (issue 13) ---------------------------------------------


class NameAtChunkEdge(_Broken):
    """Mistral v11+'s ``[TOOL_CALLS]NAME{…}``: the name is read where the first chunk ends.

    The shape of the streaming parsers that classify each delta on its own
    (Rapid-MLX #579, vllm-mlx #631: ``_parse_streaming_tool_delta`` took what a
    delta held before ``{`` as the name and had no memory of the boundary): once
    the body after ``[TOOL_CALLS]`` has begun, the name is what stands before the
    ``{`` at the end of that chunk, and it is never read again. A tokenizer that
    streams ``get`` then ``_weather{…`` gets a call to ``get``. The arguments, the
    verdict and everything else stay the reference's.
    """

    bug = (
        "a [TOOL_CALLS]NAME{ name is read where the first chunk ends, so a split name is cut short"
    )
    dialects_named = frozenset({"mistral_v11"})  # the name stands straight before its arguments

    def reset(self) -> None:
        super().reset()
        self._named: tuple[Block, str] | None = None  # the open block and the name read for it

    def feed(self, chunk: str) -> list[Event]:
        return self._name_calls(self._block, super().feed(chunk))

    def finish(self) -> list[Event]:
        return self._name_calls(self._block, super().finish())

    def _name_calls(self, was_open: Block | None, events: list[Event]) -> list[Event]:
        named = self._named
        if named is not None and named[0] is was_open and self._block is not was_open:
            # The block open before this chunk ended in it: its verdict is the first event
            # that is not text, since text before it would have had to follow its close.
            self._named = None
            k = next((i for i, e in enumerate(events) if not isinstance(e, Text)), None)
            if k is not None:
                call = events[k]
                if isinstance(call, ToolCall) and call.format in self.dialects_named:
                    events[k] = dataclasses.replace(call, name=named[1])
        block = self._block
        if (
            block is not None
            and self._named is None
            and any(d.id in self.dialects_named for d in block.group)
        ):
            body = (block.joined() + block.carry)[len(block.opener) :]
            if body.strip():  # read once: a block of another dialect is never joined
                self._named = (block, body.partition("{")[0].strip())
        return events


# The ADR's markers are at most 14 characters (<|python_tag|>); the newer families' special
# tokens are longer, and a model's tokenizer may still spell them out in pieces.
LONG_TOKEN = 16


def _could_start(text: str, tokens: tuple[str, ...]) -> bool:
    """``text`` is a prefix of one of ``tokens``."""
    return any(t.startswith(text) for t in tokens)


class HoldsSpecialPrefix(_Broken):
    """A held start of a long special token is never released: it is dropped, not shown.

    The shape of a parser that keeps a possible ``<|tool_calls_section_begin|>``
    (``<｜tool▁calls▁begin｜>``, ``<|START_ACTION|>``…) in its buffer and, when the
    next delta does not go on with the token, returns that delta alone as content:
    the buffer is forgotten, and at the end of the stream nothing flushes it
    (smg #2525: the DeepSeek-V4.1 parser's held-back ``partial_marker_suffix`` had
    no ``flush()``, so ``"partial <"`` streamed as ``"partial "``). The reference
    holds the same tail (policy 2) and releases it as text (policies 1, 5).
    """

    bug = "a held prefix of a long special token is dropped when the text goes on otherwise"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._long = tuple(
            marker
            for marker, group in self._lex.sharing.items()
            if len(marker) >= LONG_TOKEN and any(marker in d.special_tokens for d in group)
        )

    def reset(self) -> None:
        super().reset()
        self._held = ""  # what this _print found held, while it may still be released

    def _print(self, text: str, out: list[Event]) -> str:
        held = self._pending
        self._held = held if held and _could_start(held, self._long) else ""
        return super()._print(text, out)

    def _emit(self, text: str, out: list[Event]) -> None:
        # The reference releases a held tail as the start of the text it emits next.
        held, self._held = self._held, ""
        super()._emit(text[len(held) :] if held and text.startswith(held) else text, out)

    def finish(self) -> list[Event]:
        if self._block is None and self._pending and _could_start(self._pending, self._long):
            self._pending = ""
            self._fsm = FSM.PRINTING
        return super().finish()


def _cut_in_bytes(marker: str, size: int) -> str:
    """The characters of ``marker`` whose UTF-8 encoding fits in its first ``size`` bytes."""
    return marker.encode()[:size].decode(errors="ignore")


def _bytewise(lex: Lexicon) -> Lexicon:
    partial = prefix_regex(_cut_in_bytes(m, len(m) - 1) for m in lex.distinctive)
    stops = [p.pattern for p in (lex.opener_re, partial) if p is not None]
    stop_re = re.compile("|".join(stops)) if stops else None
    return dataclasses.replace(lex, partial_opener_re=partial, stop_re=stop_re)


class BytewisePartialMarker(_Broken):
    """The partial-opener check counts characters but cuts the marker by UTF-8 bytes.

    The shape of a hold-back check written for ASCII markers in a language whose
    strings index bytes (Rust, Go): ``for i in 1..marker.chars().count()`` with
    ``marker.get(..i)`` (``None`` off a character boundary, so skipped) as the
    prefix a tail must end with. For ASCII markers characters are bytes and the
    check is right. DeepSeek's ``<｜tool▁calls▁begin｜>`` is 20 characters and 30
    bytes (each ``｜`` and ``▁`` takes 3): the prefixes the check ever tries are
    those within 19 bytes, ``<｜tool▁calls▁`` at most, so a marker split after its
    ``b`` through its last ``｜`` is not held, its start is shown as text and the
    rest of the section leaks with it. Everything else is the reference's.
    """

    bug = "a partial opener is checked by byte-cut prefixes, so a split full-width marker leaks"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._use(_bytewise(self._lex))


def _factory(cls: type[_Broken], name: str) -> Callable[..., StreamDetector]:
    def make(
        tools: Iterable[str] | None = None,
        format: str | None = None,
        max_block: int = 1 << 20,
        dialects: Iterable[str] | None = None,
        empty_tools: str = "reject",
    ) -> StreamDetector:
        # ``dialects`` and ``empty_tools``: so ``--dialect ID`` restricts the bug's reference
        # too, and the broken detector is judged against what it parses (ARCHITECTURE.md §5.2).
        detector = cls(
            tools=tools,
            format=format,
            max_block=max_block,
            dialects=dialects,
            empty_tools=empty_tools,
        )
        if cls.pins:
            detector.tcr_claim = detector.tcr_claim.with_options(policies=cls.pins)
        return detector

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
name_at_chunk_edge = _factory(NameAtChunkEdge, "name_at_chunk_edge")
holds_special_prefix = _factory(HoldsSpecialPrefix, "holds_special_prefix")
bytewise_partial_marker = _factory(BytewisePartialMarker, "bytewise_partial_marker")

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
    "name_at_chunk_edge": name_at_chunk_edge,
    "holds_special_prefix": holds_special_prefix,
    "bytewise_partial_marker": bytewise_partial_marker,
}

# name -> factory: right events, superlinear time (the cost check's; no event oracle sees
# them, so they are not in BROKEN, whose every member a bundled recording must catch)
COSTLY: dict[str, Callable[..., StreamDetector]] = {"rejoins_buffer": rejoins_buffer}
