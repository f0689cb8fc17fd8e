"""An incremental-call parser as a ``Detector``: normal text plus per-index call fragments.

Many serving engines' streaming parsers return, per chunk, "normal text" and a
list of call fragments, each a tool index with a name and an argument fragment:

- vLLM's ``DeltaMessage`` and the OpenAI chat-completion delta: ``content`` and
  ``tool_calls=[{index, id, type, function: {name, arguments}}]``;
- SGLang's ``StreamingParseResult``: ``normal_text`` and
  ``calls=[ToolCallItem(tool_index, name, parameters)]``.

``IncrementalCallDetector(step, end)`` drives such a parser: ``step(chunk)`` is
called per chunk and ``end()`` (optional) at the end of the message. Each may
return one result, ``None`` or a list of results; a result is an object or a
dict of either shape (told apart by its field names). The gathering rules:

1. Normal text becomes ``Text`` at the step that returns it, in order.
2. Fragments gather per tool index. Name fragments concatenate, and so do
   argument fragments, in the order they arrive, as the OpenAI client
   accumulates a delta stream; ``id`` and ``type`` are ignored, and a fragment
   with neither name nor arguments makes no call. A parser that gives a second
   call the index of the first therefore gets one merged call.
3. A gathered call is complete at ``finish()``: only then can no fragment for
   it still arrive. Every call is presented there, after all text, in index
   order. Presenting a call when the next index starts would make the events
   depend on the chunking: the unsplit run returns all text in one result, so
   the place of a call among the text cannot be known, and chunk invariance
   would charge a correct parser for text that follows a call.
4. Argument text that is empty becomes ``"{}"`` (a call without arguments,
   as OpenAI clients read it). The concatenated arguments must parse as a JSON
   object and the name must not be empty: such a call is
   ``ToolCall(name, arguments, raw=None, format=format)`` with the arguments as
   the parser wrote them; anything else is
   ``Rejected(raw=None, content="", format=format, reason="malformed")``: the
   client receives a call it cannot use, and nothing is shown as text.
5. A result of neither shape, or a field of the wrong type, raises
   ``TcrError``; an exception out of the parser propagates. Either is the
   detector raising, which tcr reports as a crash finding.
6. Reasoning fields (vLLM's ``reasoning_content``) are not read.

Parsers that key on token ids (vLLM's Hermes and Kimi K2 parsers check
``self.tool_call_start_token_id in delta_token_ids``): with
``special_tokens=MARKERS`` (the special tokens it keys on, e.g. its vocabulary's
keys), ``step`` is called as ``step(chunk, tokens)``, ``tokens`` being the markers
the chunk holds whole, in order (``tcr.rechunk.whole_special_tokens``). The
adapter maps them to ids: ``[vocab[t] for t in tokens]``. A detector that needs
them claims that special tokens reach it whole (``tcr_claim = {"dialects": …,
"special_tokens": "whole"}``), so tcr never cuts one and every token arrives in
one chunk, as an engine streams it.

What the checks see: calls carry ``raw=None`` because the parser does not say
which input span a call consumed, and a block the parser does not accept comes
back as normal text without its markers, where the reference rejects it. So the
detector declares ``tcr_spans = "text"`` (``tcr.judge``): conservation and
holdback judge only messages that the reference (restricted to the claim) reads
as text alone, whose text must then be the input, held back no longer than the
bound. Chunk invariance, no_leak and expected judge every message: the text
(``Text`` only: a ``Rejected`` here shows nothing) and the calls (name,
arguments, format); a marker the reference shows too (inside a block it
rejects) is no leak.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from tcr.detector.events import Event, Rejected, Text, ToolCall
from tcr.errors import TcrError
from tcr.rechunk import whole_special_tokens

__all__ = ["CallFragment", "Increment", "IncrementalCallDetector", "read_increment"]

ParserStep = Callable[..., object]  # step(chunk), or step(chunk, tokens) with special_tokens
ParserEnd = Callable[[], object]

_SGLANG_FIELDS = ("normal_text", "calls")
_OPENAI_FIELDS = ("content", "tool_calls")


@dataclass(frozen=True, slots=True)
class CallFragment:
    """One piece of a call: its tool index, and a name and argument fragment if given."""

    index: int
    name: str | None = None
    arguments: str | None = None


@dataclass(frozen=True, slots=True)
class Increment:
    """One parser result, whatever its shape: normal text and call fragments."""

    text: str = ""
    fragments: tuple[CallFragment, ...] = ()


def read_increment(result: object) -> Increment:
    """A vLLM/OpenAI delta or an SGLang result (object or dict) as an ``Increment``."""
    if result is None:
        return Increment()
    if _has_any(result, _SGLANG_FIELDS):
        text, calls = _field(result, "normal_text"), _field(result, "calls")
        fragments = tuple(_sglang_fragment(item) for item in _items(calls, "calls"))
    elif _has_any(result, _OPENAI_FIELDS) or isinstance(result, Mapping):
        text, calls = _field(result, "content"), _field(result, "tool_calls")
        fragments = tuple(_openai_fragment(item) for item in _items(calls, "tool_calls"))
    else:
        raise TcrError(
            f"parser returned a {type(result).__name__}: expected a delta with 'content' and "
            "'tool_calls' (vLLM, OpenAI) or a result with 'normal_text' and 'calls' (SGLang)"
        )
    return Increment(_optional_str(text, "text") or "", fragments)


@dataclass(slots=True)
class _Gathered:
    """The fragments of one tool index so far."""

    names: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)


class IncrementalCallDetector:
    """A ``Detector`` around an incremental-call parser (the rules: this module's docstring)."""

    tcr_spans = "text"  # only its Text carries input spans (tcr.judge.SPANS)

    def __init__(
        self,
        step: ParserStep,
        end: ParserEnd | None = None,
        *,
        format: str = "",
        special_tokens: Collection[str] | None = None,
    ) -> None:
        self._step = step
        self._end = end
        self._format = format
        self._markers = None if special_tokens is None else tuple(special_tokens)
        self._calls: dict[int, _Gathered] = {}

    def feed(self, chunk: str) -> list[Event]:
        if self._markers is None:
            return self._take(self._step(chunk))
        return self._take(self._step(chunk, whole_special_tokens(chunk, self._markers)))

    def finish(self) -> list[Event]:
        events = self._take(self._end()) if self._end is not None else []
        calls, self._calls = self._calls, {}
        return events + [self._call(calls[index]) for index in sorted(calls)]

    def _take(self, results: object) -> list[Event]:
        text: list[str] = []
        for result in results if isinstance(results, list | tuple) else [results]:
            increment = read_increment(result)
            text.append(increment.text)
            # A fragment with neither name nor arguments carries nothing: it makes no call.
            for fragment in (f for f in increment.fragments if f.name or f.arguments):
                gathered = self._calls.setdefault(fragment.index, _Gathered())
                gathered.names += [fragment.name] if fragment.name else []
                gathered.arguments += [fragment.arguments] if fragment.arguments else []
        joined = "".join(text)
        return [Text(joined)] if joined else []

    def _call(self, gathered: _Gathered) -> ToolCall | Rejected:
        name, arguments = "".join(gathered.names), "".join(gathered.arguments) or "{}"
        try:
            is_object = isinstance(json.loads(arguments), dict)
        except ValueError:
            is_object = False
        if name and is_object:
            return ToolCall(name, arguments, raw=None, format=self._format)
        return Rejected(raw=None, content="", format=self._format, reason="malformed")


def _has_any(result: object, names: tuple[str, ...]) -> bool:
    if isinstance(result, Mapping):
        return any(name in result for name in names)
    return any(hasattr(result, name) for name in names)


def _field(item: object, name: str) -> object:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _items(calls: object, name: str) -> list[object]:
    if calls is None:
        return []
    if not isinstance(calls, list | tuple):
        raise TcrError(f"parser result's {name!r} is a {type(calls).__name__}, not a list")
    return list(calls)


def _sglang_fragment(item: object) -> CallFragment:
    return _fragment(
        _field(item, "tool_index"), _field(item, "name"), _field(item, "parameters"), "tool_index"
    )


def _openai_fragment(item: object) -> CallFragment:
    function = _field(item, "function")
    name = _field(function, "name") if function is not None else None
    arguments = _field(function, "arguments") if function is not None else None
    return _fragment(_field(item, "index"), name, arguments, "index")


def _fragment(index: object, name: object, arguments: object, index_name: str) -> CallFragment:
    # bool is an int; an index of True is a parser bug, not tool 1
    if not isinstance(index, int) or isinstance(index, bool):
        raise TcrError(f"call fragment's {index_name!r} is {index!r}, not an integer")
    return CallFragment(index, _optional_str(name, "name"), _optional_str(arguments, "arguments"))


def _optional_str(value: object, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TcrError(f"parser result's {name!r} is a {type(value).__name__}, not a string")
