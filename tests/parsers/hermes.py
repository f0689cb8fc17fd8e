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

__all__ = [
    "CLOSE",
    "OPEN",
    "Bug",
    "HermesParser",
    "StreamingParseResult",
    "ToolCallItem",
    "call_of",
]

_ARGUMENTS = re.compile(r'"arguments"\s*:\s*(?=\S)')  # ends at the value's first character
# The shape models write, streamed as it comes: {"name": "…", "arguments": {…}}. Any other
# (arguments first, "parameters") is parsed when it closes; the OpenAI "function" wrapper is
# no call, as no engine reads one (docs/dialect-sources.md).
_STREAMED = re.compile(
    r'\s*\{\s*"name"\s*:\s*"((?:[^"\\\x00-\x1f]|\\.)*)"\s*,\s*"arguments"\s*:\s*(?=\{)'
)


class Bug(enum.Enum):
    # The argument fragment that arrives in the same chunk as the name is lost.
    ARGUMENTS_WITH_NAME_DROPPED = "arguments_with_name_dropped"
    # flush() forgets the text held back as a possible marker prefix.
    FLUSH_SWALLOWED = "flush_swallowed"
    # Every call gets tool index 0, so a second call lands on the first.
    INDEX_REUSED = "index_reused"
    # The opening marker is looked for in each chunk alone (a possible prefix at a chunk's
    # end is still held back, and released with the next chunk): split across chunks, it
    # leaks (the seeds' PR #879, "the parser tested each chunk on its own").
    PER_CHUNK_MARKER = "per_chunk_marker"
    # CLOSE inside a JSON string closes the block (as a regex over the body would).
    CLOSE_IN_STRING = "close_in_string"


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


HEAD = 4096  # a call's name and "arguments" key are looked for this far into its body


class _Body:
    """A block's body as it grows. Appending, and reading its recent end, cost what they
    read: never a copy of the whole body per chunk (the seeds' quadratic re-join)."""

    __slots__ = ("_head", "_length", "_parts")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._head = ""  # its first HEAD characters

    def __len__(self) -> int:
        return self._length

    def append(self, text: str) -> None:
        if text:
            self._parts.append(text)
            self._length += len(text)
            if len(self._head) < HEAD:
                self._head = (self._head + text)[:HEAD]

    @property
    def head(self) -> str:
        return self._head

    def since(self, position: int) -> str:
        """``body[position:]``, joined from the parts it spans."""
        want, size, index = self._length - position, 0, len(self._parts)
        while index and size < want:
            index -= 1
            size += len(self._parts[index])
        tail = "".join(self._parts[index:])
        return tail[len(tail) - want :] if want > 0 else ""

    def cut(self, length: int) -> str:
        """Keep the first ``length`` characters; return the rest."""
        whole = self.since(0)
        self._parts, self._length = ([whole[:length]] if length else []), length
        self._head = self._head[:length]
        return whole[length:]


@dataclass(slots=True)
class _Strings:
    """Whether a JSON text is inside a string, as it is read one character at a time."""

    inside: bool = False
    escaped: bool = False

    def outside(self, char: str) -> bool:
        """Read ``char``: does it stand outside every string (a quote does not)?"""
        if self.inside:
            if self.escaped:
                self.escaped = False
            elif char == "\\":
                self.escaped = True
            elif char == '"':
                self.inside = False
            return False
        self.inside = char == '"'
        return not self.inside


@dataclass(slots=True)
class _Block:
    """The call being read: its body so far and what of it has been streamed."""

    index: int
    body: _Body = field(default_factory=_Body)
    json: bool | None = None  # does the body start with "{"? None until its first character
    close_scanned: int = 0  # body offset up to which CLOSE has been looked for
    close_strings: _Strings = field(default_factory=_Strings)  # where that scan stands
    streams: bool | None = None  # False: not the streamed shape, parsed when it closes
    name_sent: bool = False
    arguments_start: int | None = None  # body offset of the arguments value
    arguments_end: int | None = None  # just past its closing brace, once seen
    sent: int = 0  # body offset up to which the arguments have been streamed
    scanned: int = 0  # body offset up to which the value's braces are counted
    depth: int = 0
    value_strings: _Strings = field(default_factory=_Strings)


class HermesParser:
    """``parse_streaming_increment(text)`` per chunk, ``flush()`` at the end."""

    def __init__(self, bugs: Collection[Bug] = (), tools: Collection[str] | None = None) -> None:
        self.bugs = frozenset(bugs)
        self.tools = None if tools is None else frozenset(tools)  # [] : no parsing at all
        self._held = ""  # outside a block: a possible prefix of OPEN
        self._block: _Block | None = None
        self._close_from = 0  # where the next search for CLOSE starts in the body
        self._next_index = 0

    def parse_streaming_increment(self, new_text: str) -> StreamingParseResult:
        text: list[str] = []
        calls: list[ToolCallItem] = []
        if self.tools is not None and not self.tools:  # no tools offered: nothing is a call
            return StreamingParseResult(new_text)
        rest = self._held + new_text
        self._held = ""
        if Bug.PER_CHUNK_MARKER in self.bugs and not self._block and OPEN not in new_text:
            keep = _prefix_of_open(new_text)  # a prefix held, but never joined to the next chunk
            self._held = new_text[len(new_text) - keep :]
            return StreamingParseResult(rest[: len(rest) - keep])
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
            keep = _prefix_of_open(rest)
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
        block.body.append(rest)
        at = self._find_close(block)
        if at < 0:
            self._stream(block, calls)
            return ""
        after = block.body.cut(at)[len(CLOSE) :]
        self._stream(block, calls)  # what a shorter chunk would have streamed already
        text.append(self._close(calls))
        return after

    def _find_close(self, block: _Block) -> int:
        """Where CLOSE starts in the body, or -1; in a JSON body (one that starts with "{"),
        not inside a string (policy 4). Each character is looked at once."""
        if block.json is None and block.body.head.strip():
            block.json = block.body.head.lstrip().startswith("{")
        if block.json is None:
            return -1
        if not block.json or Bug.CLOSE_IN_STRING in self.bugs:
            start = self._close_from
            at = block.body.since(start).find(CLOSE)
            self._close_from = max(0, len(block.body) - len(CLOSE) + 1)
            return at if at < 0 else start + at
        start = block.close_scanned
        body = block.body.since(start)
        position = 0
        while position < len(body):
            if block.close_strings.outside(body[position]) and body[position] == "<":
                if body.startswith(CLOSE, position):
                    return start + position
                if CLOSE.startswith(body[position:]):
                    break  # a possible CLOSE cut off by the chunk: look again when more comes
            position += 1
        block.close_scanned = start + position
        return -1

    def _close(self, calls: list[ToolCallItem]) -> str:
        """Finish the block: the rest of the call, or its body as text if it is no call
        (the reference shows a malformed block's body too)."""
        block, self._block = self._block, None
        assert block is not None
        body = block.body.since(0)
        call = _call_of(body)
        if call is None or (self.tools is not None and call[0] not in self.tools):
            # Not a call (or one to a tool not offered): its body is shown, as the reference
            # shows a rejected block's, also when a name already went out (the adapter then
            # rejects that call: its arguments never got their closing brace).
            return body
        name, arguments = call
        if block.name_sent:
            self._stream(block, calls, final=True)
        else:
            calls.append(ToolCallItem(block.index, name))
            calls.append(ToolCallItem(block.index, None, json.dumps(arguments)))
        return ""

    def _stream(self, block: _Block, calls: list[ToolCallItem], *, final: bool = False) -> None:
        """Send the name once it is whole, then the arguments' text as far as it has come;
        only from a JSON body (one that starts with "{"). The arguments' closing brace
        waits for the block to parse (``final``): a malformed block never completes a call."""
        if not block.json or block.streams is False:
            return
        if block.arguments_start is None:
            if not _ARGUMENTS.search(block.body.head):
                return  # not yet known whether it has the streamed shape
            found = _STREAMED.match(block.body.head)
            name = None if found is None else json.loads(f'"{found[1]}"')
            if not (name and name.strip()) or (self.tools is not None and name not in self.tools):
                block.streams = False  # parsed when it closes
                return
            block.arguments_start = block.scanned = found.end()  # type: ignore[union-attr]
            calls.append(ToolCallItem(block.index, name))
            block.name_sent = name_now = True
        else:
            name_now = False
        if block.arguments_end is None:
            _scan_value(block)
        end = block.arguments_end if block.arguments_end is not None else block.scanned
        if block.arguments_end is not None and not final:
            end -= 1
        start = max(block.sent, block.arguments_start)
        if end > start and not (name_now and Bug.ARGUMENTS_WITH_NAME_DROPPED in self.bugs):
            calls.append(ToolCallItem(block.index, None, block.body.since(start)[: end - start]))
        block.sent = max(end, start)


def _call_of(body: str) -> tuple[str, dict[str, object]] | None:
    """The name and arguments of a JSON call body in any shape the reference reads, or None."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    name = parsed.get("name") if isinstance(parsed, dict) else None
    if not isinstance(name, str) or not name.strip():  # no name, or a blank one: no call
        return None
    if not {"arguments", "parameters"} & parsed.keys() and parsed.keys() - {"name", "type", "id"}:
        return None  # no arguments means none only in a bare {"name": …} (the reference's rule)
    arguments = parsed.get("arguments", parsed.get("parameters", {}))
    if isinstance(arguments, str):  # arguments as JSON text
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    return (name, arguments) if isinstance(arguments, dict) else None


def _scan_value(block: _Block) -> None:
    """Count braces of the arguments value up to the body's end (strings skipped)."""
    start = block.scanned
    body = block.body.since(start)
    if start == block.arguments_start and body[:1] != "{":
        return  # not an object: sent whole when the block closes
    for offset, char in enumerate(body):
        if not block.value_strings.outside(char):
            continue
        if char == "{":
            block.depth += 1
        elif char == "}":
            block.depth -= 1
            if block.depth == 0:
                block.arguments_end = block.scanned = start + offset + 1
                return
    block.scanned = len(block.body)


call_of = _call_of  # the JSON call reader, shared with parsers.token_ids
