"""Detectors that make one legitimate choice each where the reference makes another
(``tcr.policies``), and a few that make none, or change their mind.

Each wraps the reference (``StreamDetector``) and changes what it emits, as a
streaming parser in an engine would: events pass through as they come, so chunk
invariance and the holdback bound still hold. Each factory takes ``tools``,
``dialects`` and ``empty_tools`` as the reference does, so ``--dialect hermes``
restricts it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Rejected, Text, ToolCall
from tcr.detector.machine import FSM
from tcr.dialects import BY_ID

__all__ = ["CHOOSING", "INCONSISTENT", "UNEXPLAINED"]


class _Wrapped:
    """The reference, its events passed through ``change`` (a streaming filter)."""

    def __init__(self, inner: StreamDetector) -> None:
        self.inner = inner
        self.tcr_claim = inner.tcr_claim

    @property
    def state(self) -> Any:
        return self.inner.state

    @property
    def format(self) -> str | None:
        return self.inner.format

    def reset(self) -> None:
        self.inner.reset()

    def feed(self, chunk: str) -> list[Event]:
        return self.change(self.inner.feed(chunk), at_end=False)

    def finish(self) -> list[Event]:
        open_at_end = self.inner.state.fsm is FSM.IN_BLOCK
        return self.change(self.inner.finish(), at_end=open_at_end)

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        return events


def _factory(
    make: Callable[[StreamDetector, Sequence[str] | None], _Wrapped],
    *,
    run_tools: Callable[[Sequence[str] | None], Sequence[str] | None] = lambda t: t,
) -> Callable[..., _Wrapped]:
    def factory(
        tools: Sequence[str] | None = None,
        dialects: Iterable[str] | None = None,
        empty_tools: str = "reject",
    ) -> _Wrapped:
        inner = StreamDetector(run_tools(tools), dialects=dialects, empty_tools=empty_tools)
        return make(inner, tools)

    return factory


# --- legitimate choices --------------------------------------------------------


def _holds_no_call(event: Event) -> bool:
    """A closed block that holds no call: malformed, or JSON that is no call (no name)
    inside a marker that opens anywhere (Hermes'), as ``tcr.readings`` reads ``malformed``."""
    return isinstance(event, Rejected) and event.reason in ("malformed", "not_a_call")


def _any_name(tools: Sequence[str] | None) -> Sequence[str] | None:
    return None if tools else tools  # tools=[] keeps the reference's reject


accepts_undeclared = _factory(lambda inner, tools: _Wrapped(inner), run_tools=_any_name)


def _parses_empty(tools: Sequence[str] | None) -> Sequence[str] | None:
    return None if tools is not None and not tools else tools


parses_empty_tools = _factory(lambda inner, tools: _Wrapped(inner), run_tools=_parses_empty)


class _DropsMalformed(_Wrapped):
    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        return [e for e in events if not _holds_no_call(e)]


drops_malformed = _factory(lambda inner, tools: _DropsMalformed(inner))


class _DropsUndeclared(_Wrapped):
    def __init__(self, inner: StreamDetector, tools: Sequence[str] | None) -> None:
        super().__init__(inner)
        self.declared = None if tools is None else frozenset(tools)

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        if not self.declared:  # None: nothing undeclared; []: empty_tools decides
            return events
        return [e for e in events if not (isinstance(e, ToolCall) and e.name not in self.declared)]


drops_undeclared = _factory(
    lambda inner, tools: _DropsUndeclared(inner, tools), run_tools=_any_name
)


class _DropsUnterminated(_Wrapped):
    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        if not at_end:
            return events
        kept = [e for e in events if not isinstance(e, ToolCall | Rejected)]
        return kept if len(kept) < len(events) else events


def _drops_unterminated(inner: StreamDetector, tools: Sequence[str] | None) -> _Wrapped:
    return _DropsUnterminated(inner)


drops_unterminated = _factory(_drops_unterminated)


class _TrimsWhitespace(_Wrapped):
    """White space right before or after a call is not shown: trailing white space of text
    is held until what follows says whether a call comes next."""

    def __init__(self, inner: StreamDetector) -> None:
        super().__init__(inner)
        self.held = ""  # trailing white space of the text so far
        self.after_call = False

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        out: list[Event] = []
        for event in events:
            if isinstance(event, Text):
                text = event.text
                if self.after_call:
                    text = text.lstrip()
                    if not text:
                        continue
                    self.after_call = False
                text = self.held + text
                kept = text.rstrip()
                self.held = text[len(kept) :]
                if kept:
                    out.append(Text(kept))
            elif isinstance(event, ToolCall):
                self.held = ""
                self.after_call = True
                out.append(event)
            else:
                if self.held:
                    out.append(Text(self.held))
                    self.held = ""
                self.after_call = False
                out.append(event)
        if at_end or self._finishing:
            if self.held:
                out.append(Text(self.held))
            self.held = ""
        return out

    _finishing = False

    def finish(self) -> list[Event]:
        self._finishing = True
        try:
            return super().finish()
        finally:
            self._finishing = False
            self.held, self.after_call = "", False

    def reset(self) -> None:
        super().reset()
        self.held, self.after_call = "", False


trims_whitespace = _factory(lambda inner, tools: _TrimsWhitespace(inner))


class _ShowsMalformedVerbatim(_Wrapped):
    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        return [Text(e.raw) if _holds_no_call(e) and e.raw else e for e in events]


shows_malformed_verbatim = _factory(lambda inner, tools: _ShowsMalformedVerbatim(inner))


class _DropsTrailingText(_Wrapped):
    """Shows only the text before the first call (and the calls)."""

    def __init__(self, inner: StreamDetector) -> None:
        super().__init__(inner)
        self.called = False

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        out: list[Event] = []
        for event in events:
            if isinstance(event, ToolCall):
                self.called = True
                out.append(event)
            elif not self.called:
                out.append(event)
        return out

    def reset(self) -> None:
        super().reset()
        self.called = False


drops_trailing_text = _factory(lambda inner, tools: _DropsTrailingText(inner))


class _TypesByLook(_Wrapped):
    """Name/value values typed by what they look like (JSON, else text), schema unread."""

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        return [self._typed(e) if isinstance(e, ToolCall) else e for e in events]

    @staticmethod
    def _typed(call: ToolCall) -> ToolCall:
        arguments = json.loads(call.arguments)
        for key, value in arguments.items():
            if isinstance(value, str):
                with contextlib.suppress(ValueError):
                    arguments[key] = json.loads(value)
        return ToolCall(call.name, json.dumps(arguments), call.raw, call.format)


types_by_look = _factory(lambda inner, tools: _TypesByLook(inner))


class _BlockInOneChunkLost(_Wrapped):
    """Accepts undeclared names, and has a bug: a block that opens and closes within one
    chunk is lost. Whole, it misreads every call; fed by character, it shows its choice."""

    def feed(self, chunk: str) -> list[Event]:
        events = self.inner.feed(chunk)
        whole = [e for e in events if isinstance(e, ToolCall) and e.raw and e.raw in chunk]
        return [e for e in events if e not in whole]


accepts_undeclared_loses_whole_blocks = _factory(
    lambda inner, tools: _BlockInOneChunkLost(inner), run_tools=lambda t: None if t else t
)


class _SkipsVariants(_Wrapped):
    """Reads none of the dialects' variants (``Dialect.variants``): a block in one is shown
    as written, as a parser that does not know that form shows it."""

    def __init__(self, inner: StreamDetector) -> None:
        super().__init__(inner)
        self.seen = ""  # the input so far: what came before a block decides some variants
        self.skipping = False  # the block's later calls go with its first

    def feed(self, chunk: str) -> list[Event]:
        self.seen += chunk
        return self.change(self.inner.feed(chunk), at_end=False)

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        out: list[Event] = []
        for event in events:
            if isinstance(event, ToolCall | Rejected) and event.raw:
                dialect = BY_ID.get(event.format)
                before = self.seen[: self.seen.rfind(event.raw)]
                variants = dialect.variants if dialect is not None else ()
                self.skipping = any(v.matches(event.raw, before) for v in variants)
                if self.skipping:
                    out.append(Text(event.raw))
                    continue
            elif isinstance(event, ToolCall) and self.skipping:
                continue
            out.append(event)
        return out

    def reset(self) -> None:
        super().reset()
        self.seen, self.skipping = "", False


skips_variants = _factory(lambda inner, tools: _SkipsVariants(inner))


def holds_long_blocks(
    tools: Sequence[str] | None = None,
    dialects: Iterable[str] | None = None,
    empty_tools: str = "reject",
) -> StreamDetector:
    """The reference without its bound on a block's length, as most engines read."""
    return StreamDetector(tools, dialects=dialects, empty_tools=empty_tools, max_block=1 << 40)


CHOOSING: dict[str, tuple[Callable[..., Any], dict[str, str]]] = {
    "holds_long_blocks": (holds_long_blocks, {"long_block": "held"}),
    "drops_trailing_text": (drops_trailing_text, {"trailing_text": "dropped"}),
    "accepts_undeclared": (accepts_undeclared, {"undeclared": "accepted"}),
    "parses_empty_tools": (parses_empty_tools, {"empty_tools": "parse"}),
    "drops_malformed": (drops_malformed, {"malformed": "dropped"}),
    "drops_undeclared": (drops_undeclared, {"undeclared": "dropped"}),
    "drops_unterminated": (drops_unterminated, {"unterminated": "dropped"}),
    "trims_whitespace": (trims_whitespace, {"whitespace": "trimmed"}),
    "shows_malformed_verbatim": (shows_malformed_verbatim, {"malformed": "verbatim"}),
}


# --- no legitimate choice ----------------------------------------------------------


class _RenamesUndeclared(_Wrapped):
    """An undeclared call comes out as a call to another name: no choice explains that."""

    def __init__(self, inner: StreamDetector, tools: Sequence[str] | None) -> None:
        super().__init__(inner)
        self.declared = None if tools is None else frozenset(tools)

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        if not self.declared:
            return events
        return [
            ToolCall("renamed", e.arguments, e.raw, e.format)
            if isinstance(e, ToolCall) and e.name not in self.declared
            else e
            for e in events
        ]


renames_undeclared = _factory(
    lambda inner, tools: _RenamesUndeclared(inner, tools), run_tools=_any_name
)

UNEXPLAINED: dict[str, tuple[Callable[..., Any], str]] = {
    "renames_undeclared": (renames_undeclared, "undeclared"),
}


# --- one choice on the probes, another elsewhere ---------------------------------


class _DropsLongMalformed(_Wrapped):
    """Shows a short malformed block, drops a long one: the probe's is short."""

    def change(self, events: list[Event], *, at_end: bool) -> list[Event]:
        return [
            e
            for e in events
            if not (isinstance(e, Rejected) and e.reason == "malformed" and len(e.raw or "") > 120)
        ]


drops_long_malformed = _factory(lambda inner, tools: _DropsLongMalformed(inner))

INCONSISTENT: dict[str, Callable[..., Any]] = {"drops_long_malformed": drops_long_malformed}
