"""A streaming Hermes parser in the shape of the serving engines' own, with bugs on demand.

It reads ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks (Hermes,
Qwen2.5; the arguments may come before the name, as Hermes 3 writes them) and
returns SGLang-style results: normal text, plus per tool index the name first,
then the arguments' JSON text in fragments as it arrives. Outside a block it
holds back only a possible prefix of ``<tool_call>``; ``flush()`` at the end of
the message releases it. It parses nothing else: other dialects' markup is text.

Correct unless told otherwise: each ``Bug`` switches on one kind of mistake that
real streaming parsers have made, so a test can enable one at a time.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from toy_detectors import CLOSE, OPEN
from toy_detectors import _held_prefix as _prefix_of_open  # one copy of the holdback rule

__all__ = ["CLOSE", "OPEN", "Bug", "HermesParser", "StreamingParseResult", "ToolCallItem"]

_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')
_ARGUMENTS = re.compile(r'"arguments"\s*:\s*(?=\S)')  # ends at the value's first character


class Bug(enum.Enum):
    # The argument fragment that arrives in the same chunk as the name is lost.
    ARGUMENTS_WITH_NAME_DROPPED = "arguments_with_name_dropped"
    # flush() forgets the text held back as a possible marker prefix.
    FLUSH_SWALLOWED = "flush_swallowed"
    # Every call gets tool index 0, so a second call lands on the first.
    INDEX_REUSED = "index_reused"
    # The opening marker is looked for in each chunk alone: split across chunks, it leaks.
    PER_CHUNK_MARKER = "per_chunk_marker"


@dataclass(frozen=True, slots=True)
class ToolCallItem:
    """SGLang's ``ToolCallItem``: a name or a parameters fragment for one tool index."""

    tool_index: int
    name: str | None = None
    parameters: str = ""


@dataclass(frozen=True, slots=True)
class StreamingParseResult:
    """SGLang's ``StreamingParseResult``."""

    normal_text: str = ""
    calls: list[ToolCallItem] = field(default_factory=list)


@dataclass(slots=True)
class _Block:
    """The call being read: its body so far and what of it has been streamed."""

    index: int
    body: str = ""
    name_sent: bool = False
    arguments_start: int | None = None  # body offset of the arguments value
    arguments_end: int | None = None  # just past its closing brace, once seen
    sent: int = 0  # body offset up to which the arguments have been streamed
    scanned: int = 0  # body offset up to which the value's braces are counted
    depth: int = 0
    in_string: bool = False
    escaped: bool = False


class HermesParser:
    """``parse_streaming_increment(text)`` per chunk, ``flush()`` at the end."""

    def __init__(self, bugs: Collection[Bug] = ()) -> None:
        self.bugs = frozenset(bugs)
        self._held = ""  # outside a block: a possible prefix of OPEN
        self._block: _Block | None = None
        self._close_from = 0  # where the next search for CLOSE starts in the body
        self._next_index = 0

    def parse_streaming_increment(self, new_text: str) -> StreamingParseResult:
        text: list[str] = []
        calls: list[ToolCallItem] = []
        rest = self._held + new_text
        self._held = ""
        while rest:
            step = self._in_block if self._block else self._outside
            rest = step(rest, text, calls)
        return StreamingParseResult("".join(text), calls)

    def flush(self) -> StreamingParseResult:
        """End of message: held text is text; an unclosed block is a call if its body is one."""
        held, self._held = self._held, ""
        text = "" if Bug.FLUSH_SWALLOWED in self.bugs else held
        calls: list[ToolCallItem] = []
        if self._block is not None:
            text += self._close(calls)
        return StreamingParseResult(text, calls)

    def _outside(self, rest: str, text: list[str], calls: list[ToolCallItem]) -> str:
        at = rest.find(OPEN)
        if at < 0:
            keep = 0 if Bug.PER_CHUNK_MARKER in self.bugs else _prefix_of_open(rest)
            text.append(rest[: len(rest) - keep])
            self._held = rest[len(rest) - keep :]
            return ""
        text.append(rest[:at])
        index = 0 if Bug.INDEX_REUSED in self.bugs else self._next_index
        self._block, self._close_from = _Block(index), 0
        self._next_index += 1
        return rest[at + len(OPEN) :]

    def _in_block(self, rest: str, text: list[str], calls: list[ToolCallItem]) -> str:
        block = self._block
        assert block is not None
        block.body += rest
        at = block.body.find(CLOSE, self._close_from)
        if at < 0:
            self._close_from = max(0, len(block.body) - len(CLOSE) + 1)
            self._stream(block, calls)
            return ""
        after = block.body[at + len(CLOSE) :]
        block.body = block.body[:at]
        text.append(self._close(calls))
        return after

    def _close(self, calls: list[ToolCallItem]) -> str:
        """Finish the block: the rest of the call, or its body as text if it is no call
        (the reference shows a malformed block's body too)."""
        block, self._block = self._block, None
        assert block is not None
        try:
            parsed = json.loads(block.body)
        except ValueError:
            parsed = None
        if not (isinstance(parsed, dict) and isinstance(parsed.get("name"), str)):
            return block.body if not block.name_sent else ""
        self._stream(block, calls)
        if not block.name_sent:
            calls.append(ToolCallItem(block.index, parsed["name"]))
        if block.arguments_end is None:  # no arguments, or not an object: sent whole
            calls.append(ToolCallItem(block.index, None, json.dumps(parsed.get("arguments", {}))))
        return ""

    def _stream(self, block: _Block, calls: list[ToolCallItem]) -> None:
        """Send the name once it is whole, then the arguments' text as far as it has come."""
        if block.arguments_start is None:
            found = _ARGUMENTS.search(block.body)
            if found is not None:
                block.arguments_start = block.scanned = found.end()
        if block.arguments_start is not None and block.arguments_end is None:
            _scan_value(block)
        name_now = False
        if not block.name_sent:
            found = _NAME.search(block.body)
            if found is None:
                return  # the arguments wait for the name
            calls.append(ToolCallItem(block.index, json.loads(f'"{found[1]}"')))
            block.name_sent = name_now = True
        if block.arguments_start is None:
            return
        end = block.arguments_end if block.arguments_end is not None else block.scanned
        start = max(block.sent, block.arguments_start)
        if end > start and not (name_now and Bug.ARGUMENTS_WITH_NAME_DROPPED in self.bugs):
            calls.append(ToolCallItem(block.index, None, block.body[start:end]))
        block.sent = max(end, start)


def _scan_value(block: _Block) -> None:
    """Count braces of the arguments value up to the body's end (strings skipped)."""
    body = block.body
    if block.scanned == block.arguments_start and body[block.scanned] != "{":
        block.scanned = block.arguments_start  # not an object: sent whole when the block closes
        return
    for position in range(block.scanned, len(body)):
        char = body[position]
        if block.in_string:
            if block.escaped:
                block.escaped = False
            elif char == "\\":
                block.escaped = True
            elif char == '"':
                block.in_string = False
        elif char == '"':
            block.in_string = True
        elif char == "{":
            block.depth += 1
        elif char == "}":
            block.depth -= 1
            if block.depth == 0:
                block.arguments_end = block.scanned = position + 1
                return
    block.scanned = len(body)
