"""A Hermes parser strict on arguments that drops what it cannot read, in vLLM's shape.

Each chunk goes in as vLLM's ``extract_tool_calls_streaming`` takes its
``delta_text`` and comes out as a ``DeltaMessage``. Outside a block text streams
at once but for a possible prefix of ``<tool_call>``; a block is held until its
``</tool_call>`` (found in one pass, never inside a JSON string) and then read:

- a call is ``{"name": "…", "arguments": {…}}`` and nothing looser: no
  ``"parameters"``, no arguments as a JSON string, none missing, no OpenAI
  ``{"type": "function", "function": {…}}`` wrapper (policy ``arguments: strict``);
- a block that holds no such call is dropped, markers and body (``malformed:
  dropped``, lossy), and so is a block still open when the message ends
  (``unterminated: dropped``, lossy), as vLLM's parsers lose a call they cannot
  finish;
- a call to a tool the request did not declare is shown as its body, as the
  reference shows it (``undeclared: reject``; ``tools=[]`` declares none).

A call goes out whole at its closer: its name, then its arguments, two deltas.
Correct unless a ``Bug`` is switched on (``parsers.hermes.Bug``; all five apply).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection

from parsers._scanning import Body, CloseFinder, decode_json, held_prefix, is_unicode
from parsers.hermes import CLOSE, OPEN, Bug
from parsers.shapes import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from tcr.adapters import IncrementalCallDetector

__all__ = ["Bug", "StrictHermesParser", "factory", "factory_with", "strict_call"]


def strict_call(body: str) -> tuple[str, dict[str, object]] | None:
    """The call a body spells in the one shape this parser reads, or None."""
    ok, value = decode_json(body)
    if not ok or not isinstance(value, dict):
        return None
    name, arguments = value.get("name"), value.get("arguments")
    if not isinstance(name, str) or not name.strip() or not isinstance(arguments, dict):
        return None
    return (name, arguments) if is_unicode(name) and is_unicode(arguments) else None


class StrictHermesParser:
    """``extract_tool_calls_streaming(delta_text)`` per chunk, ``finish()`` at the end."""

    def __init__(self, bugs: Collection[Bug] = (), tools: Collection[str] | None = None) -> None:
        self.bugs = frozenset(bugs)
        self.tools = None if tools is None else frozenset(tools)
        self._held = ""  # outside a block: a possible prefix of OPEN
        self._body: Body | None = None
        self._finder = CloseFinder(CLOSE)
        self._next_index = 0

    def extract_tool_calls_streaming(self, delta_text: str) -> DeltaMessage | None:
        text: list[str] = []
        calls: list[DeltaToolCall] = []
        rest, self._held = self._held + delta_text, ""
        if Bug.PER_CHUNK_MARKER in self.bugs and self._body is None and OPEN not in delta_text:
            keep = held_prefix(delta_text, OPEN)  # looked for in this chunk alone
            self._held = delta_text[len(delta_text) - keep :]
            return DeltaMessage(content=rest[: len(rest) - keep] or None)
        while rest:
            rest = (
                self._in_block(rest, text, calls)
                if self._body is not None
                else self._outside(rest, text)
            )
        return _delta(text, calls)

    def finish(self) -> DeltaMessage | None:
        """End of message: held text is text; a block still open is dropped."""
        held, self._held = self._held, ""
        self._body = None
        return _delta([] if Bug.FLUSH_SWALLOWED in self.bugs else [held], [])

    def _outside(self, rest: str, text: list[str]) -> str:
        at = rest.find(OPEN)
        if at < 0:
            keep = held_prefix(rest, OPEN)
            text.append(rest[: len(rest) - keep])
            self._held = rest[len(rest) - keep :]
            return ""
        text.append(rest[:at])
        self._body = Body()
        self._finder = CloseFinder(CLOSE, strings=Bug.CLOSE_IN_STRING not in self.bugs)
        return rest[at + len(OPEN) :]

    def _in_block(self, rest: str, text: list[str], calls: list[DeltaToolCall]) -> str:
        body = self._body
        assert body is not None
        body.append(rest)
        at = self._finder.find(body)
        if at < 0:
            return ""
        after = body.cut(at)[len(CLOSE) :]
        self._body = None
        found = strict_call(body.since(0))
        if found is None:
            return after  # not a call: dropped
        name, arguments = found
        if self.tools is not None and name not in self.tools:
            text.append(body.since(0))
            return after
        index = 0 if Bug.INDEX_REUSED in self.bugs else self._next_index
        self._next_index += 1
        calls.append(DeltaToolCall(index, f"call_{index}", "function", DeltaFunctionCall(name)))
        if Bug.ARGUMENTS_WITH_NAME_DROPPED not in self.bugs:
            fragment = json.dumps(arguments, ensure_ascii=False)
            calls.append(DeltaToolCall(index, function=DeltaFunctionCall(arguments=fragment)))
        return after


def _delta(text: list[str], calls: list[DeltaToolCall]) -> DeltaMessage | None:
    content = "".join(text)
    return DeltaMessage(content=content or None, tool_calls=calls) if content or calls else None


def factory_with(bugs: Collection[Bug] = ()) -> Callable[..., IncrementalCallDetector]:
    """A factory of adapted ``StrictHermesParser``s with ``bugs`` on."""

    def make(tools: Collection[str] | None = None) -> IncrementalCallDetector:
        parser = StrictHermesParser(bugs, tools)
        return IncrementalCallDetector(
            parser.extract_tool_calls_streaming, parser.finish, format="hermes"
        )

    return make


def factory(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The correct parser; it declares no claim: ``--dialect hermes`` says what it speaks."""
    return factory_with()(tools)


def __getattr__(name: str) -> Callable[..., IncrementalCallDetector]:
    """``parsers.strict:per_chunk_marker`` and the like: the parser with that one ``Bug`` on,
    for ``tcr replay``/``tcr fuzz --detector`` (each Bug's value names it)."""
    bug = next((b for b in Bug if b.value == name), None)
    if bug is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return factory_with([bug])
