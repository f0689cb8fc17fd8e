"""The reference reading a message with a detector's policies (ARCHITECTURE.md §5.8).

``read`` runs the reference (``StreamDetector``, restricted to the claim) on the
whole message, then applies the chosen policies to its events as a pure
transformation, so the reference's hot path knows nothing of them:

- ``empty_tools``: ``text`` runs it parsing nothing, ``parse`` and ``drop`` with
  ``tools=None``; ``drop`` then removes every call;
- ``undeclared``: ``accepted`` and ``dropped`` run it with ``tools=None``; ``dropped``
  then removes each call to an undeclared name;
- ``arguments``: ``lenient`` reads a malformed JSON body's lenient shapes as calls
  (``parameters``, arguments as a JSON string or ``""`` or missing), named as the two
  policies above say;
- ``malformed``: ``verbatim`` shows a ``Rejected(malformed)`` block as written,
  ``dropped`` removes it;
- ``unterminated``: for the block still open at the end, ``rejected`` shows it
  without its markers, ``verbatim`` as written, ``dropped`` not at all;
- ``cut_closer``: ``unterminated`` reads a block cut inside its closer, whose calls the
  reference reads (Qwen3-Coder, MiniMax-M2), as any unterminated block whose body is no call;
- ``trailing_text``: ``dropped`` shows only the text before the first call;
- ``opener_newline``: ``required`` shows as text a block whose opener is not followed by
  the newline its dialect writes there;
- a dialect's variant (``internlm.spaced``): ``text`` shows a block in that form as written;
- ``typed_arguments``: ``look`` types a name/value body's values by what they look like
  (JSON, else text), ``strings`` keeps them all text (``schema``: the reference's, by the
  tool's schema);
- ``long_block``: ``held`` runs it without its bound on a block's length (policy 13);
- ``holdback``: ``closer`` completes a block left open at the end when it parses without
  the beginning of its closer that ends it (held, then dropped by the parser);
- ``whitespace``: ``trimmed`` removes the white space between text and a call,
  ``leading`` the white space alone before the first call.

A ``Reading`` holds the events and the input spans a lossy choice leaves unshown
(``dropped``): conservation accounts for exactly those (``tcr.oracle``). ``holdback``
changes no event: the judge applies it (its bound), and ``typed_arguments`` its schemas.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcr.detector.bodies import BodyError, ParsedCall, parse_body, strip_markers
from tcr.detector.core import DEFAULT_MAX_BLOCK, StreamDetector
from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.formats import BY_ID
from tcr.detector.machine import FSM
from tcr.policies import DEFAULTS, NONE, Policies

__all__ = ["EVENTLESS", "Reading", "lenient_calls", "newline_openers", "read", "reads_alike"]

# Policies the judge applies besides the reading (its bound, its schemas); the reading
# changes for them only where a message ends inside a closer, or in a value's type.
EVENTLESS = ("holdback", "typed_arguments")

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Reading:
    """What the reference shows with the chosen policies, and what they leave unshown."""

    events: tuple[Event, ...]
    dropped: tuple[Span, ...] = ()  # input spans (start, end) a lossy choice drops or trims
    shown_blocks: tuple[Span, ...] = ()  # blocks a choice shows as written, as text


def reads_alike(a: Policies, b: Policies, tools: Sequence[str] | None) -> bool:
    """Whether two sets of choices read a message offering ``tools`` the same way."""
    if a.chosen == b.chosen:
        return True
    skip = set(EVENTLESS)
    if tools is None or len(tools) > 0:
        skip.add("empty_tools")
    if tools is None or len(tools) == 0:
        skip.add("undeclared")
    one, other = a.as_dict(), b.as_dict()
    return all(one[k] == other[k] for k in one if k not in skip)


def read(
    text: str,
    tools: Sequence[str] | None,
    *,
    dialects: frozenset[str] | None = None,
    policies: Policies = NONE,
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
) -> Reading:
    """The reference's events on ``text`` with ``policies`` (module docstring)."""
    empty = tools is not None and len(tools) == 0
    empty_tools = policies.choice("empty_tools")
    undeclared = policies.choice("undeclared")
    run_tools: Sequence[str] | None = tools
    if (empty and empty_tools in ("parse", "drop")) or (
        not empty and tools is not None and undeclared in ("accepted", "dropped")
    ):
        run_tools = None
    required = policies.choice("opener_newline") == "required"
    openers = newline_openers(dialects) if required else ()
    masked = _masked(text, openers)
    if masked is not text:
        reading = read(masked, tools, dialects=dialects, policies=policies, tool_specs=tool_specs)
        return _unmasked(reading)
    detector = StreamDetector(
        run_tools,
        dialects=dialects,
        empty_tools="text" if empty and empty_tools == "text" else "reject",
        tool_specs=tool_specs,
        # held: no bound, so a block past the reference's ends where its closer is
        max_block=len(text) + 1 if policies.choice("long_block") == "held" else DEFAULT_MAX_BLOCK,
    )
    body = detector.feed(text) if text else []
    open_at_end = detector.state.fsm is FSM.IN_BLOCK
    tail = detector.finish()
    if not any(_transforms(k, v) for k, v in policies.chosen):
        return Reading((*body, *tail))
    return _Reader(text, tools, policies).apply(body, tail, open_at_end)


def _transforms(policy_id: str, choice: str) -> bool:
    """Whether a choice changes the reference's events (the run alone makes the others)."""
    if policy_id in ("typed_arguments", "holdback"):
        return choice != DEFAULTS[policy_id]
    if policy_id in EVENTLESS:
        return False
    if policy_id == "empty_tools":
        return choice == "drop"
    if policy_id == "undeclared":
        return choice == "dropped"
    if policy_id == "long_block":
        return False
    return choice != DEFAULTS[policy_id]


class _Reader:
    """One message's events transformed by the chosen policies."""

    def __init__(self, text: str, tools: Sequence[str] | None, policies: Policies) -> None:
        self.text = text
        self.tools = None if tools is None else frozenset(tools)
        self.policies = policies
        self.dropped: list[Span] = []
        self._skip_rest = False  # the block's first call was read as malformed
        self._cut_rest = False  # the block's first call was cut inside its closer
        self._variant_rest = False  # the block is in a variant this parser does not read
        self.verbatim: list[Span] = []

    def _verdict(self, name: str) -> str:
        """``call``, ``reject`` or ``drop``: a call to ``name`` under the chosen policies."""
        tools = self.tools
        if tools is None or name in tools:
            return "call"
        if not tools:
            return {"reject": "reject", "drop": "drop"}.get(
                self.policies.choice("empty_tools"), "call"
            )
        return {"rejected": "reject", "dropped": "drop"}.get(
            self.policies.choice("undeclared"), "call"
        )

    def apply(self, body: list[Event], tail: list[Event], open_at_end: bool) -> Reading:
        placed: list[tuple[Event, int, bool]] = []  # event, its start, from an open block
        at = 0
        for index, event in enumerate((*body, *tail)):
            unterminated = (
                open_at_end
                and index >= len(body)
                and isinstance(event, ToolCall | Rejected)
                and not _closed_by_end(event)
            )
            placed.append((event, at, unterminated))
            at += len(event.raw or "")
        out: list[tuple[Event, int]] = []
        for event, start, unterminated in placed:
            out += self._one(event, start, unterminated)
        if self.policies.choice("trailing_text") == "dropped":
            out = self._no_trailing_text(out)
        whitespace = self.policies.choice("whitespace")
        if whitespace == "trimmed":
            out = self._trimmed(out)
        elif whitespace == "leading":
            out = self._no_leading_space(out)
        return Reading(
            tuple(e for e, _ in out), tuple(sorted(self.dropped)), tuple(sorted(self.verbatim))
        )

    def _as_text(self, raw: str | None, start: int) -> list[tuple[Event, int]]:
        """A block shown as written."""
        if not raw:
            return []
        self.verbatim.append((start, start + len(raw)))
        return [(Text(raw), start)]

    def _drop(self, event: Event, start: int) -> list[tuple[Event, int]]:
        raw = event.raw or ""
        if raw:
            self.dropped.append((start, start + len(raw)))
        return []

    def _one(self, event: Event, start: int, unterminated: bool) -> list[tuple[Event, int]]:
        policies = self.policies
        if isinstance(event, ToolCall | Rejected):
            if event.raw:
                before = self.text[:start]
                self._variant_rest = _unread_variant(event.format, event.raw, before, policies)
                if self._variant_rest:  # a form this parser does not read: text to it
                    return self._as_text(event.raw, start)
            elif self._variant_rest:
                return []  # a later call of that block
        if unterminated and isinstance(event, Rejected) and policies.choice("holdback") == "closer":
            calls = _held_closer_calls(event)
            if calls is not None:  # its closer's beginning was held, and is dropped at the end
                return self._lenient(event, start, calls)
        if (
            unterminated
            and isinstance(event, ToolCall)
            and policies.choice("cut_closer") == "unterminated"
            and _cut_closer(event)
        ):
            self._cut_rest = True  # the block's later calls with it: its body is no call
            content = strip_markers(event.format, event.raw or "", closed=False)
            event = Rejected(event.raw, content, event.format, "unterminated")
        elif self._cut_rest and unterminated and isinstance(event, ToolCall) and not event.raw:
            return []
        if unterminated:
            chosen = policies.choice("unterminated")
            if chosen == "dropped":
                return self._drop(event, start)
            if chosen == "verbatim":
                return self._as_text(event.raw, start)
            if chosen == "rejected" and isinstance(event, ToolCall):
                if not event.raw:
                    return []  # the block's later calls: its first one shows it
                content = strip_markers(event.format, event.raw, closed=False)
                return [(Rejected(event.raw, content, event.format, "unterminated"), start)]
        if isinstance(event, Rejected) and _holds_no_call(event):
            calls = None
            if policies.choice("arguments") == "lenient" and _json_bodied(event.format):
                calls = lenient_calls(event.content)
            if calls is not None:
                return self._lenient(event, start, calls)
            return self._malformed(event, start)
        strict = policies.choice("arguments") == "strict"
        if (
            isinstance(event, Rejected)
            and event.reason == "undeclared"
            and strict
            and not _strict(event.format, event.raw)
        ):
            # no call under strict arguments: malformed comes before the name (parse, then
            # the tools), as the reference reads a body
            return self._malformed(
                Rejected(event.raw, event.content, event.format, "malformed"), start
            )
        if (
            isinstance(event, ToolCall)
            and strict
            and event.raw
            and not _strict(event.format, event.raw)
        ):
            content = strip_markers(event.format, event.raw)
            self._skip_rest = True
            return self._malformed(Rejected(event.raw, content, event.format, "malformed"), start)
        if isinstance(event, ToolCall) and not event.raw and self._skip_rest:
            return []  # a later call of a block read as malformed
        self._skip_rest = False
        if isinstance(event, ToolCall) and self._verdict(event.name) == "drop":
            return self._drop(event, start)
        typing = policies.choice("typed_arguments")
        if isinstance(event, ToolCall) and typing != "schema" and _schema_typed(event.format):
            return [(_retyped(event, typing), start)]
        return [(event, start)]

    def _malformed(self, event: Rejected, start: int) -> list[tuple[Event, int]]:
        """A block that holds no call, shown as the ``malformed`` choice says."""
        chosen = self.policies.choice("malformed")
        if chosen == "dropped":
            return self._drop(event, start)
        if chosen == "verbatim":
            return self._as_text(event.raw, start)
        return [(event, start)]

    def _lenient(
        self, event: Rejected, start: int, calls: list[tuple[str, dict[str, Any]]]
    ) -> list[tuple[Event, int]]:
        verdicts = [self._verdict(name) for name, _ in calls]
        if "reject" in verdicts:
            return [(Rejected(event.raw, event.content, event.format, "undeclared"), start)]
        kept = [(n, a) for (n, a), v in zip(calls, verdicts, strict=True) if v == "call"]
        if not kept:
            return self._drop(event, start)
        return [
            (
                ToolCall(
                    name,
                    json.dumps(args, ensure_ascii=False),
                    event.raw if i == 0 else "",
                    event.format,
                ),
                start,
            )
            for i, (name, args) in enumerate(kept)
        ]

    def _no_trailing_text(self, placed: list[tuple[Event, int]]) -> list[tuple[Event, int]]:
        """Only the text before the first call shown: what follows it that is no call is
        left out (a rejected block too)."""
        out: list[tuple[Event, int]] = []
        called = False
        for event, start in placed:
            if isinstance(event, ToolCall):
                called = True
                out.append((event, start))
            elif called and not isinstance(event, Reasoning):
                self._drop(event, start)
            else:
                out.append((event, start))
        return out

    def _no_leading_space(self, placed: list[tuple[Event, int]]) -> list[tuple[Event, int]]:
        """Text that is white space alone before the first call left out."""
        merged = _merged(placed)
        first = next((i for i, (e, _) in enumerate(merged) if isinstance(e, ToolCall)), None)
        if first is None:
            return merged
        before = [(e, s) for e, s in merged[:first]]
        if any(not isinstance(e, Text) or e.text.strip() for e, _ in before):
            return merged
        for event, start in before:
            self._drop(event, start)
        return merged[first:]

    def _trimmed(self, placed: list[tuple[Event, int]]) -> list[tuple[Event, int]]:
        """White space between text and a call, or between calls, left out."""
        merged = _merged(placed)
        out: list[tuple[Event, int]] = []
        for index, (event, start) in enumerate(merged):
            if not isinstance(event, Text):
                out.append((event, start))
                continue
            text, at = event.text, start
            if index + 1 < len(merged) and isinstance(merged[index + 1][0], ToolCall):
                kept = text.rstrip()
                if len(kept) < len(text):
                    self.dropped.append((at + len(kept), at + len(text)))
                text = kept
            if index > 0 and isinstance(merged[index - 1][0], ToolCall):
                kept = text.lstrip()
                if len(kept) < len(text):
                    self.dropped.append((at, at + len(text) - len(kept)))
                at += len(text) - len(kept)
                text = kept
            if text:
                out.append((Text(text), at))
        return out


def _merged(placed: list[tuple[Event, int]]) -> list[tuple[Event, int]]:
    """Adjacent text joined, empty text left out (each keeps its first start)."""
    merged: list[tuple[Event, int]] = []
    for event, start in placed:
        if isinstance(event, Text) and merged and isinstance(merged[-1][0], Text):
            before, at = merged[-1]
            assert isinstance(before, Text)
            merged[-1] = (Text(before.text + event.text), at)
        elif not (isinstance(event, Text) and not event.text):
            merged.append((event, start))
    return merged


@functools.cache
def _native_key(dialect_id: str) -> str | None:
    """The key a JSON-bodied dialect's own calls carry their arguments in (``arguments``
    or ``parameters``, from its example), or ``None`` when its body is no JSON call."""
    dialect = BY_ID.get(dialect_id)
    if dialect is None:
        return None
    body = strip_markers(dialect_id, dialect.example.block).strip()
    try:
        value = json.loads(body)
    except ValueError:
        return None
    first = value[0] if isinstance(value, list) and value else value
    if not isinstance(first, dict) or not isinstance(first.get("name"), str):
        return None
    return next((k for k in ("arguments", "parameters") if isinstance(first.get(k), dict)), None)


def _strict(dialect_id: str, raw: str | None) -> bool:
    """Whether a block carries its calls' arguments as its dialect's own calls do: under
    ``arguments: strict`` another shape is malformed. A dialect whose body is no JSON
    call is strict as it reads."""
    key = _native_key(dialect_id)
    if key is None or raw is None:
        return True
    try:
        value = json.loads(strip_markers(dialect_id, raw).strip())
    except ValueError:
        return True  # the reference read more than one JSON value: not this rule's to judge
    items = value if isinstance(value, list) else [value]
    return all(isinstance(i, dict) and isinstance(i.get(key), dict) for i in items)


@functools.cache
def _newline_openers(dialect_id: str) -> tuple[str, ...]:
    """The openers its example writes a newline after (``<tool_call>\\n``)."""
    dialect = BY_ID.get(dialect_id)
    if dialect is None:
        return ()
    block = dialect.example.block
    return tuple(o for o in dialect.opens if block.startswith(o + "\n"))


@functools.cache
def newline_openers(dialects: frozenset[str] | None) -> tuple[str, ...]:
    """The claimed openers their dialects write a newline after (``opener_newline``)."""
    ids = BY_ID if dialects is None else dialects
    return tuple(sorted({o for d in ids for o in _newline_openers(d)}))


# ``opener_newline: required``: an opener not followed by its newline is text to such a
# parser, wherever it is; the reference reads the message with its first character, a
# ``<`` in every such opener, masked (the same length, so every span stays put), then the
# events get it back.
_MASK = "\ue000"
_MASKED = "<"  # what the mask stands for (tests/core/test_policy_inference.py pins it)


def _masked(text: str, openers: Sequence[str]) -> str:
    """``text`` with each opener not followed by a newline masked, or ``text`` itself."""
    if not openers or _MASK in text:
        return text
    chars: list[str] | None = None
    for opener in openers:
        at = text.find(opener)
        while at >= 0:
            end = at + len(opener)
            if text[end : end + 1] != "\n":
                chars = chars if chars is not None else list(text)
                chars[at] = _MASK
            at = text.find(opener, at + 1)
    return text if chars is None else "".join(chars)


def _unmasked(reading: Reading) -> Reading:
    def back(value: str | None) -> str | None:
        return None if value is None else value.replace(_MASK, _MASKED)

    events: list[Event] = []
    for event in reading.events:
        if isinstance(event, Text):
            events.append(Text(event.text.replace(_MASK, _MASKED)))
        elif isinstance(event, ToolCall):
            arguments = event.arguments
            if _MASK in arguments or "\\ue000" in arguments:
                arguments = json.dumps(_unmask_value(json.loads(arguments)), ensure_ascii=False)
            events.append(ToolCall(event.name, arguments, back(event.raw), event.format))
        elif isinstance(event, Rejected):
            content = event.content.replace(_MASK, _MASKED)
            events.append(Rejected(back(event.raw), content, event.format, event.reason))
        else:
            events.append(
                Reasoning(event.text.replace(_MASK, _MASKED), back(event.raw), event.format)
            )
    return Reading(tuple(events), reading.dropped, reading.shown_blocks)


def _unmask_value(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(_MASK, _MASKED)
    if isinstance(value, list):
        return [_unmask_value(v) for v in value]
    if isinstance(value, dict):
        return {_unmask_value(k): _unmask_value(v) for k, v in value.items()}
    return value


def _holds_no_call(event: Rejected) -> bool:
    """A closed block that holds no call: ``malformed``, or JSON that is no call inside a
    distinctive marker (``not_a_call`` at message start is a JSON answer, policy 8)."""
    if event.reason == "malformed":
        return True
    dialect = BY_ID.get(event.format)
    return event.reason == "not_a_call" and dialect is not None and dialect.anywhere


def _unread_variant(dialect_id: str, raw: str, before: str, policies: Policies) -> bool:
    """Whether a block is in a variant of its dialect the chosen policies do not read."""
    dialect = BY_ID.get(dialect_id)
    return dialect is not None and any(
        policies.choice(f"{dialect_id}.{v.id}") == "text" and v.matches(raw, before)
        for v in dialect.variants
    )


def _cut_closer(event: ToolCall) -> bool:
    """Whether a call of a block left open ends in its closer's beginning (at least
    ``</``), which its dialect reads the calls before (``Dialect.reads_cut_closer``)."""
    dialect = BY_ID.get(event.format)
    if dialect is None or not dialect.reads_cut_closer or not event.raw:
        return False
    return any(event.raw.endswith(c[:k]) for c in dialect.closes for k in range(2, len(c)))


def _held_closer_calls(event: Rejected) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of an unterminated block whose raw ends in a proper beginning of its
    closer, read without it (a parser that held it as its closer's beginning drops it at
    the end), or ``None``."""
    dialect = BY_ID.get(event.format)
    if dialect is None or not event.raw:
        return None
    for closer in dialect.closes:
        held = next((k for k in range(len(closer) - 1, 0, -1) if event.raw.endswith(closer[:k])), 0)
        if not held:
            continue
        opener = next((o for o in dialect.opens if event.raw.startswith(o)), None)
        if opener is None:
            return None
        body = event.raw[len(opener) - dialect.keep : -held]
        try:
            parsed = parse_body(event.format, body)
        except BodyError:
            return None
        calls = [_as_pair(call) for call in parsed]
        return None if any(c is None for c in calls) else [c for c in calls if c is not None]
    return None


def _as_pair(call: ParsedCall) -> tuple[str, dict[str, Any]] | None:
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return None
    return (call.name, arguments) if isinstance(arguments, dict) else None


@functools.cache
def _json_bodied(dialect_id: str) -> bool:
    """Whether the dialect's bodies are JSON calls (its parser reads a plain one or a list
    of one): only there do the lenient shapes mean anything; JSON in a Qwen3-Coder block
    is no call."""
    plain = '{"name": "f", "arguments": {}}'
    for body in (plain, f"[{plain}]"):
        try:
            if parse_body(dialect_id, body):
                return True
        except BodyError:
            continue
    return False


def _schema_typed(dialect_id: str) -> bool:
    dialect = BY_ID.get(dialect_id)
    return dialect is not None and dialect.schema_typed


def _retyped(call: ToolCall, typing: str) -> ToolCall:
    """A name/value call's values typed by their look (JSON, else text) or all as text."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return call
    if not isinstance(arguments, dict):
        return call
    values: dict[str, object]
    if typing == "strings":
        values = {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
    else:
        values = {k: _by_look(v) for k, v in arguments.items()}
    return ToolCall(call.name, json.dumps(values, ensure_ascii=False), call.raw, call.format)


def _by_look(value: object) -> object:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _closed_by_end(event: ToolCall | Rejected) -> bool:
    dialect = BY_ID.get(event.format)
    return dialect is not None and dialect.closed_by_end


def lenient_calls(body: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls a lenient JSON reader finds in ``body`` (an object or an array of them),
    or ``None`` when it holds none: ``name`` with ``arguments`` or ``parameters`` as an
    object, a JSON string holding one, ``""`` or missing (``{}``). Not the nested OpenAI
    ``{"type": "function", "function": {...}}``: the reference reads no call there (no
    engine does), and the default choice must read as the reference does."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    items = value if isinstance(value, list) else [value]
    calls = [_lenient_call(item) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _lenient_call(item: object) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(item, dict):
        return None
    name = item.get("name")
    if not isinstance(name, str) or not name:
        return None
    if "arguments" in item:
        arguments = _object(item["arguments"])
    elif "parameters" in item:
        arguments = _object(item["parameters"])
    else:
        arguments = {}
    return None if arguments is None else (name, arguments)


def _object(value: object) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if value == "" or value is None:
        return {}
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None
