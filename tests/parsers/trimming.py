"""A Hermes parser that trims white space around calls and holds a closer's prefix.

It keeps one buffer and rescans it from where it last stood on every chunk (the
shape of the parsers that answer in OpenAI chat-completion deltas): outside a
block the buffer holds a possible prefix of ``<tool_call>`` and the white space
before it; inside a block, the body up to a possible prefix of ``</tool_call>``.
Two choices differ from the reference (issue 32), both legitimate:

- ``whitespace: trimmed``: white space between text and a call, and between
  calls, is not shown (as parsers that ``strip()`` the content around a call do).
  So white space at the end of a chunk waits until what follows it is known.
- ``holdback: closer``: a prefix of ``</tool_call>`` at the end of the input is
  held as markup; when the message ends inside a block, a body that reads as a
  call without it is that call (the model was cut off inside its closer).

Otherwise it reads as the reference does: any call shape ``parsers.hermes``
reads, a block that is no call or names an undeclared tool shown as its body,
an unterminated block a call when its body is one, else shown.
Correct unless a ``Bug`` is switched on (``parsers.hermes.Bug``; all five apply).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection

from parsers._scanning import Body, CloseFinder, held_prefix
from parsers.hermes import CLOSE, OPEN, Bug, call_of
from tcr.adapters import IncrementalCallDetector

__all__ = ["Bug", "TrimmingHermesParser", "factory", "factory_with"]

Delta = dict[str, object]


class TrimmingHermesParser:
    """``step(chunk)`` per chunk and ``end()`` at the end; each returns an OpenAI delta."""

    def __init__(self, bugs: Collection[Bug] = (), tools: Collection[str] | None = None) -> None:
        self.bugs = frozenset(bugs)
        self.tools = None if tools is None else frozenset(tools)
        self._buffer = ""  # outside a block: white space, then a possible prefix of OPEN
        self._space = ""  # the white space before the open block
        self._after_call = False  # white space that follows a call is not shown
        self._body: Body | None = None
        self._finder = CloseFinder(CLOSE)
        self._next_index = 0

    def step(self, chunk: str) -> Delta:
        text: list[str] = []
        calls: list[Delta] = []
        if self._body is None and Bug.PER_CHUNK_MARKER in self.bugs and OPEN not in chunk:
            rest, self._buffer = self._buffer + chunk, ""  # the held part is let go unread
            keep = held_prefix(chunk, OPEN)
            self._buffer = chunk[len(chunk) - keep :]
            self._printing(rest[: len(rest) - keep], text, hold=True)
            return _delta(text, calls)
        rest, self._buffer = self._buffer + chunk, ""
        while rest:
            rest = (
                self._in_block(rest, text, calls)
                if self._body is not None
                else self._outside(rest, text)
            )
        return _delta(text, calls)

    def end(self) -> Delta:
        text: list[str] = []
        calls: list[Delta] = []
        if self._body is not None:
            body, held = self._body.since(0), self._finder.held
            self._body = None
            if not (held and self._close(body[: len(body) - held], text, calls, shown=False)):
                self._close(body, text, calls)
        buffer, self._buffer = self._buffer, ""
        if Bug.FLUSH_SWALLOWED not in self.bugs:
            self._printing(buffer, text, hold=False)
        return _delta(text, calls)

    def _printing(self, piece: str, text: list[str], *, hold: bool) -> None:
        """Show ``piece``: not its start after a call, nor (``hold``) its white space end."""
        if self._after_call:
            stripped = piece.lstrip()
            if not stripped:
                return
            self._after_call, piece = False, stripped
        shown = piece.rstrip() if hold else piece
        text.append(shown)
        self._buffer = piece[len(shown) :] + self._buffer

    def _outside(self, rest: str, text: list[str]) -> str:
        at = rest.find(OPEN)
        if at < 0:
            keep = held_prefix(rest, OPEN)
            self._buffer = rest[len(rest) - keep :]
            self._printing(rest[: len(rest) - keep], text, hold=True)
            return ""
        before = rest[:at]
        shown = before.rstrip()
        self._printing(shown, text, hold=False)
        self._space = "" if self._after_call else before[len(shown) :]
        self._after_call = False
        self._body = Body()
        self._finder = CloseFinder(CLOSE, strings=Bug.CLOSE_IN_STRING not in self.bugs)
        return rest[at + len(OPEN) :]

    def _in_block(self, rest: str, text: list[str], calls: list[Delta]) -> str:
        body = self._body
        assert body is not None
        body.append(rest)
        at = self._finder.find(body)
        if at < 0:
            return ""
        after = body.cut(at)[len(CLOSE) :]
        self._body = None
        self._close(body.since(0), text, calls)
        return after

    def _close(self, body: str, text: list[str], calls: list[Delta], *, shown: bool = True) -> bool:
        """Finish a block: a call (the white space before it dropped), or else its body as
        text when ``shown``. Whether it was a call."""
        found = call_of(body)
        if found is None or (self.tools is not None and found[0] not in self.tools):
            if shown:
                text.append(self._space + body)
                self._space = ""
            return False
        name, arguments = found
        self._space, self._after_call = "", True
        index = 0 if Bug.INDEX_REUSED in self.bugs else self._next_index
        self._next_index += 1
        calls.append({"index": index, "type": "function", "function": {"name": name}})
        if Bug.ARGUMENTS_WITH_NAME_DROPPED not in self.bugs:
            fragment = json.dumps(arguments, ensure_ascii=False)
            calls.append({"index": index, "function": {"arguments": fragment}})
        return True


def _delta(text: list[str], calls: list[Delta]) -> Delta:
    return {"content": "".join(text) or None, "tool_calls": calls}


def factory_with(bugs: Collection[Bug] = ()) -> Callable[..., IncrementalCallDetector]:
    """A factory of adapted ``TrimmingHermesParser``s with ``bugs`` on."""

    def make(tools: Collection[str] | None = None) -> IncrementalCallDetector:
        parser = TrimmingHermesParser(bugs, tools)
        return IncrementalCallDetector(parser.step, parser.end, format="hermes")

    return make


def factory(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The correct parser; it declares no claim: ``--dialect hermes`` says what it speaks."""
    return factory_with()(tools)


def __getattr__(name: str) -> Callable[..., IncrementalCallDetector]:
    """``parsers.trimming:per_chunk_marker`` and the like: the parser with that one ``Bug`` on,
    for ``tcr replay``/``tcr fuzz --detector`` (each Bug's value names it)."""
    bug = next((b for b in Bug if b.value == name), None)
    if bug is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return factory_with([bug])
