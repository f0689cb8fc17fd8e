"""A streaming Qwen3-Coder parser that types nothing and reads only ``<tool_call>`` + newline.

It reads ``<tool_call>\\n<function=N>\\n<parameter=K>\\nV\\n</parameter>\\n</function>\\n
</tool_call>`` as vLLM's ``qwen3_coder`` parser streams it, answering in vLLM's
``DeltaMessage``: the name as soon as ``<function=N>`` is read, then each
parameter as ``"K": "V"`` once the next element shows where its value ends, the
rest and the closing brace at ``</tool_call>``. Two choices differ from the
reference (issue 32), both legitimate:

- ``typed_arguments: strings``: every value is a JSON string, as written less one
  newline at each end (the template's); no schema, no JSON look-alike typed;
- variant ``opener + newline``: ``<tool_call>`` opens a block only when a newline
  follows it, as some engines' parsers match it; ``<tool_call><function=…`` is text.

Otherwise it reads as the reference does: a block that is no call, or calls a
tool the request did not declare (``tools=[]`` declares none), is shown as its
body; a block still open at the end is a call when its body is one, else shown.
It holds back only a possible prefix of its opener (``holdback: opener``): a body
cut off inside ``</tool_call>`` at the end keeps that prefix, so it is no call.
Correct unless a ``Bug`` is switched on (``parsers.hermes.Bug``: all but
``close_in_string``, a JSON string's bug).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from parsers._scanning import Body, held_prefix
from parsers.hermes import Bug
from parsers.shapes import DeltaFunctionCall, DeltaMessage, DeltaToolCall
from tcr.adapters import IncrementalCallDetector

__all__ = ["BUGS", "OPEN", "Bug", "Qwen3CoderParser", "factory", "factory_with", "read_calls"]

OPEN = "<tool_call>\n"  # the newline is the body's first character, as the reference shows it
MARKER = "<tool_call>"
CLOSE = "</tool_call>"
FUNCTION, FUNCTION_END = "<function=", "</function>"
PARAMETER, PARAMETER_END = "<parameter=", "</parameter>"
BUGS = tuple(bug for bug in Bug if bug is not Bug.CLOSE_IN_STRING)

# A closing tag ends its element only where the structure may go on (as the reference reads it).
_FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)</function>\s*(?=<function=|\Z)", re.S)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>\s*(?=<parameter=|\Z)", re.S)
_NAME = re.compile(r"[^\W\d][\w.\-]*")

Pairs = list[tuple[str, str]]


def _value(raw: str) -> str:
    return raw.removeprefix("\n").removesuffix("\n")  # the template's own newlines


def read_calls(body: str) -> list[tuple[str, Pairs]] | None:
    """The calls of a whole body, each a name and its (key, value) pairs; None if malformed."""
    text, calls, position = body.strip(), [], 0
    while position < len(text):
        found = _FUNCTION.match(text, position)
        if found is None or not _NAME.fullmatch(found[1].strip()):
            return None
        inner, pairs, at = found[2].strip(), [], 0
        while at < len(inner):
            parameter = _PARAMETER.match(inner, at)
            if parameter is None or not parameter[1].strip():
                return None
            pairs.append((parameter[1].strip(), _value(parameter[2])))
            at = parameter.end()
        calls.append((found[1].strip(), pairs))
        position = found.end()
    return calls or None


def _pair(key: str, value: str, first: bool) -> str:
    written = f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
    return written if first else ", " + written


@dataclass(slots=True)
class _Sent:
    """A call streamed so far: its tool index, name and the pairs sent."""

    index: int
    name: str
    pairs: Pairs = field(default_factory=list)


@dataclass(slots=True)
class _Reader:
    """How far a block's body is read: what is settled has been streamed."""

    mode: str = "function"  # "function", "parameters", "value", or "off": left to the close
    at: int = 0  # body offset where the next element (after white space) is looked for
    key: str = ""
    value_from: int = 0
    scan: int = 0  # body offset from which the value's end is looked for
    sent: list[_Sent] = field(default_factory=list)


class Qwen3CoderParser:
    """``extract_tool_calls_streaming(delta_text)`` per chunk, ``finish()`` at the end."""

    def __init__(self, bugs: Collection[Bug] = (), tools: Collection[str] | None = None) -> None:
        self.bugs = frozenset(bugs)
        self.tools = None if tools is None else frozenset(tools)
        self._held = ""  # outside a block: a possible prefix of OPEN
        self._body: Body | None = None
        self._reader = _Reader()
        self._close_from = 0
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
        return self._delta(text, calls)

    def finish(self) -> DeltaMessage | None:
        """End of message: held text is text; an open block is a call if its body is one."""
        held, self._held = self._held, ""
        text = [] if Bug.FLUSH_SWALLOWED in self.bugs else [held]
        calls: list[DeltaToolCall] = []
        if self._body is not None:
            self._stream(calls)
            self._close(text, calls)
        return self._delta(text, calls)

    def _outside(self, rest: str, text: list[str]) -> str:
        at = rest.find(OPEN)
        if at < 0:
            keep = held_prefix(rest, OPEN)
            text.append(rest[: len(rest) - keep])
            self._held = rest[len(rest) - keep :]
            return ""
        text.append(rest[:at])
        self._body, self._reader, self._close_from = Body(), _Reader(), 0
        return rest[at + len(MARKER) :]

    def _in_block(self, rest: str, text: list[str], calls: list[DeltaToolCall]) -> str:
        body = self._body
        assert body is not None
        body.append(rest)
        at = body.since(self._close_from).find(CLOSE)
        if at < 0:
            self._close_from = max(0, len(body) - len(CLOSE) + 1)
            self._stream(calls)
            return ""
        after = body.cut(self._close_from + at)[len(CLOSE) :]
        self._stream(calls)  # what a shorter chunk would have streamed already
        self._close(text, calls)
        return after

    def _close(self, text: list[str], calls: list[DeltaToolCall]) -> None:
        """Finish the block: the rest of its calls, or its body as text."""
        body, self._body = self._body, None
        assert body is not None
        whole = body.since(0)
        found = read_calls(whole)
        sent = self._reader.sent
        if (
            found is None
            or (self.tools is not None and any(n not in self.tools for n, _ in found))
            or not _extends(found, sent)
        ):
            text.append(whole)  # streamed calls stay unfinished: no closing brace
            return
        for k, (name, pairs) in enumerate(found):
            call = sent[k] if k < len(sent) else self._start(name, calls)
            for key, value in pairs[len(call.pairs) :]:
                self._send(call, key, value, calls)
            calls.append(DeltaToolCall(call.index, function=DeltaFunctionCall(arguments="}")))

    def _start(self, name: str, calls: list[DeltaToolCall]) -> _Sent:
        """Send a call's name and its arguments' opening brace."""
        index = 0 if Bug.INDEX_REUSED in self.bugs else self._next_index
        self._next_index += 1
        calls.append(DeltaToolCall(index, f"call_{index}", "function", DeltaFunctionCall(name)))
        calls.append(DeltaToolCall(index, function=DeltaFunctionCall(arguments="{")))
        return _Sent(index, name)

    def _send(self, call: _Sent, key: str, value: str, calls: list[DeltaToolCall]) -> None:
        fragment = _pair(key, value, not call.pairs)
        call.pairs.append((key, value))
        calls.append(DeltaToolCall(call.index, function=DeltaFunctionCall(arguments=fragment)))

    def _stream(self, calls: list[DeltaToolCall]) -> None:
        """Stream what the body settles so far: names, and values whose end is certain."""
        while self._step(calls):
            pass

    def _step(self, calls: list[DeltaToolCall]) -> bool:
        body, reader = self._body, self._reader
        assert body is not None
        if reader.mode == "off":
            return False
        if reader.mode == "value":
            return self._value_end(calls)
        tail = body.since(reader.at)
        element = tail.lstrip()
        start = reader.at + len(tail) - len(element)
        if reader.mode == "function":
            if not element.startswith(FUNCTION):
                reader.mode = "function" if FUNCTION.startswith(element) else "off"
                return False
            name, complete = _up_to_bracket(element, len(FUNCTION))
            if not complete:
                reader.mode = "function" if name is not None else "off"
                return False
            assert name is not None
            name = name.strip()
            if not _NAME.fullmatch(name) or (self.tools is not None and name not in self.tools):
                reader.mode = "off"
                return False
            reader.sent.append(self._start(name, calls))
            reader.mode, reader.at = "parameters", start + element.index(">") + 1
            return True
        # "parameters": the next parameter, or the function's end and the next function
        if element.startswith(PARAMETER):
            key, complete = _up_to_bracket(element, len(PARAMETER))
            if not complete or key is None or not key.strip():
                reader.mode = "parameters" if key is not None and not complete else "off"
                return False
            reader.mode, reader.key = "value", key.strip()
            reader.value_from = reader.scan = start + element.index(">") + 1
            return True
        if element.startswith(FUNCTION_END):
            following = element[len(FUNCTION_END) :].lstrip()
            if following.startswith(FUNCTION):
                reader.mode = "function"
                reader.at = start + len(element) - len(following)
                return True
            if not FUNCTION.startswith(following):
                reader.mode = "off"
            return False
        if not (PARAMETER.startswith(element) or FUNCTION_END.startswith(element)):
            reader.mode = "off"
        return False

    def _value_end(self, calls: list[DeltaToolCall]) -> bool:
        """Whether the current value's end is certain now: then send the pair."""
        body, reader = self._body, self._reader
        assert body is not None
        tail = body.since(reader.scan)
        at = tail.find("</")
        while at >= 0:
            rest = tail[at:]
            if rest.startswith(FUNCTION_END):
                reader.mode = "off"  # the function may end inside this value: the close decides
                return False
            if rest.startswith(PARAMETER_END):
                ends = _settles(rest[len(PARAMETER_END) :])
                if ends is None:
                    break  # not known yet
                if ends:
                    value = body.since(reader.value_from)[: reader.scan + at - reader.value_from]
                    self._send(reader.sent[-1], reader.key, _value(value), calls)
                    reader.mode, reader.at = "parameters", reader.scan + at + len(PARAMETER_END)
                    return True
            elif PARAMETER_END.startswith(rest) or FUNCTION_END.startswith(rest):
                break  # a closing tag cut off by the chunk
            at = tail.find("</", at + 1)
        if at < 0:
            at = max(0, len(tail) - 1)  # a "<" at the end may begin a closing tag
        reader.scan += at
        return False

    def _delta(self, text: list[str], calls: list[DeltaToolCall]) -> DeltaMessage | None:
        if Bug.ARGUMENTS_WITH_NAME_DROPPED in self.bugs:
            calls = _without_arguments_after_names(calls)
        content = "".join(text)
        return DeltaMessage(content=content or None, tool_calls=calls) if content or calls else None


def _without_arguments_after_names(calls: list[DeltaToolCall]) -> list[DeltaToolCall]:
    """The bug: the argument fragment that comes right after a name, in the same result,
    is lost (here always the opening brace: no call's arguments parse)."""
    kept: list[DeltaToolCall] = []
    for call in calls:
        before = kept[-1] if kept else None
        after_name = (
            before is not None
            and before.index == call.index
            and bool(before.function and before.function.name)
        )
        lost = after_name and call.function is not None and not call.function.name
        kept.append(DeltaToolCall(call.index) if lost else call)
    return kept


def _up_to_bracket(element: str, start: int) -> tuple[str | None, bool]:
    """The name after ``start`` up to ``>``: (name, True) when read, (so far, False) while it
    may still come, (None, False) when a newline says it never will."""
    end = element.find(">", start)
    name = element[start:] if end < 0 else element[start:end]
    if "\n" in name:
        return None, False
    return name, end >= 0


def _settles(after: str) -> bool | None:
    """After a ``</parameter>``: does it end the value (True), not (False), or not yet known
    (None)? It does when the next parameter, or the function's end and the next function,
    follows; anything else the reference reads as part of the value."""
    following = after.lstrip()
    if following.startswith(PARAMETER):
        return True
    if following.startswith(FUNCTION_END):
        rest = following[len(FUNCTION_END) :].lstrip()
        if rest.startswith(FUNCTION):
            return True
        return None if FUNCTION.startswith(rest) else False
    if PARAMETER.startswith(following) or FUNCTION_END.startswith(following):
        return None
    return False


def _extends(found: list[tuple[str, Pairs]], sent: list[_Sent]) -> bool:
    """Whether what was streamed is the start of what the whole body reads as."""
    if len(sent) > len(found):
        return False
    return all(
        call.name == found[k][0] and call.pairs == found[k][1][: len(call.pairs)]
        for k, call in enumerate(sent)
    )


def factory_with(bugs: Collection[Bug] = ()) -> Callable[..., IncrementalCallDetector]:
    """A factory of adapted ``Qwen3CoderParser``s with ``bugs`` on."""

    def make(tools: Collection[str] | None = None) -> IncrementalCallDetector:
        parser = Qwen3CoderParser(bugs, tools)
        return IncrementalCallDetector(
            parser.extract_tool_calls_streaming, parser.finish, format="qwen3_coder"
        )

    return make


def factory(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The correct parser; it declares no claim: ``--dialect qwen3_coder`` says what it speaks."""
    return factory_with()(tools)


def __getattr__(name: str) -> Callable[..., IncrementalCallDetector]:
    """``parsers.qwen3_coder:per_chunk_marker`` and the like: the parser with that one ``Bug`` on,
    for ``tcr replay``/``tcr fuzz --detector`` (each Bug's value names it)."""
    bug = next((b for b in BUGS if b.value == name), None)
    if bug is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return factory_with([bug])
