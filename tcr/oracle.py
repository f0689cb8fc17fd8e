"""Oracles: what a correct streaming detector must do, judged from its traces (ARCHITECTURE.md §7).

Every check is linear in the input: positions are tracked as running lengths and
compared in place (``str.startswith`` with bounds), never by re-joining what was
emitted so far at each step. Conservation, invariance and holdback report the first
place they break: once something has gone wrong there, later findings are mostly
echoes. No leak reports each leaked marker once, and expected each distinct kind of
difference (text, a missing call, wrong arguments, reasoning): those are separate bugs.
Every violation says its ``kind`` and ``dialect`` (``tcr.signature``).

A check that cannot judge a run says so instead of guessing: a ``Verdict`` lists
the checks that ran and, for the others, why not (a foreign detector whose events
carry no raw spans cannot be checked for conservation).

Warm equals cold judges a detector factory, not a trace: it lives in
``tcr.warm_cold`` and is re-exported here, so every oracle imports from this module.
``tcr.judge.Judge`` puts them together for one message: whole run, chunked run,
every check.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from tcr._verdict import (
    CARET,
    CHECKS,
    RECORDING_CHECKS,
    TRACE_CHECKS,
    Check,
    Verdict,
    Violation,
    brief,
    clip,
    common_prefix_length,
    event_dialect,
    excerpt,
    first_difference,
    violation,
)
from tcr.detector.events import Reasoning, Rejected, Text, ToolCall, merge_text
from tcr.detector.formats import BY_ID, HOLDBACK_BOUND, OPENER_RE
from tcr.errors import TcrError
from tcr.expectation import Expectation, ExpectedCall
from tcr.signature import TIMEOUT, dialect_at, marker_dialect, opening_dialect
from tcr.tool_specs import NOT_WELL_FORMED, same_json, schema_type, value_agrees, well_formed
from tcr.trace import Crash, Placed, Trace
from tcr.warm_cold import check_warm_cold, warm_cold_verdict

__all__ = [
    "CARET",
    "CHECKS",
    "NO_MARKER",
    "RECORDING_CHECKS",
    "TRACE_CHECKS",
    "Check",
    "Expectation",
    "HeldBack",
    "Schemas",
    "Verdict",
    "Violation",
    "arguments_differ",
    "check_trace",
    "check_warm_cold",
    "chunk_invariance",
    "conservation",
    "conservation_with",
    "excerpt",
    "expected",
    "holdback",
    "merge_text",
    "no_leak",
    "unforgiven",
    "warm_cold_verdict",
    "why_skipped",
]

_T = TypeVar("_T")

# A complete distinctive opening marker; a detector's claim narrows it (tcr.judge.Judge).
_LEAK = OPENER_RE
# Why no_leak is skipped for a claim that parses nothing opening on a distinctive marker.
NO_MARKER = "nothing the claim parses here opens on a distinctive marker"
# Why holdback is skipped where a chosen lossy policy drops input (tcr.readings).
DROPPED = "a chosen lossy policy drops input here, so what is held cannot be told from it"


# --- conservation ---------------------------------------------------------------


def conservation(trace: Trace) -> list[Violation]:
    """Raw emitted so far is a prefix of the input received so far; at the end, all of it.

    Returns nothing for a run whose events carry no raw spans (``check_trace``
    reports the check as skipped).
    """
    return _conservation(trace) if trace.has_raw else []


def conservation_with(trace: Trace, dropped: Sequence[tuple[int, int]]) -> list[Violation]:
    """Conservation of a run whose chosen lossy policies leave ``dropped`` (input spans)
    unshown: the raw emitted is compared with the input without them."""
    return _conservation(trace, dropped) if trace.has_raw else []


def _conservation(trace: Trace, dropped: Sequence[tuple[int, int]] = ()) -> list[Violation]:
    """``dropped``: input spans a chosen lossy policy leaves unshown (``tcr.readings``):
    the raw emitted is compared with the input without them, nothing more."""
    text = trace.input
    kept = _Kept(text, dropped) if dropped else None
    if kept is not None:
        text = kept.text
    emitted = received = at = 0
    for step in trace.steps:
        at = at + len(step.chunk) if step.chunk is not None else len(trace.input)
        received = at if kept is None else kept.before(at)
        for position, event in enumerate(step.events):
            raw = event.raw or ""
            if not text.startswith(raw, emitted, received):
                return [_conservation_break(trace, text, step.index, position, emitted, received)]
            emitted += len(raw)
    if trace.finished and emitted < len(text):
        lost = text[emitted:]
        message = f"lost {_characters(lost)} at end: finish() never emitted {clip(lost)!r}"
        dialect = dialect_at(text, emitted)
        return [
            violation(
                Check.CONSERVATION,
                message,
                text,
                len(trace.chunks),
                emitted,
                kind="lost at end",
                dialect=dialect,
            )
        ]
    return []


class _Kept:
    """The input without the dropped spans, and where an input offset falls in it."""

    def __init__(self, text: str, dropped: Sequence[tuple[int, int]]) -> None:
        self.spans = sorted(dropped)
        pieces, at = [], 0
        for start, end in self.spans:
            pieces.append(text[at:start])
            at = max(at, end)
        pieces.append(text[at:])
        self.text = "".join(pieces)

    def before(self, offset: int) -> int:
        gone = sum(max(0, min(end, offset) - start) for start, end in self.spans if start < offset)
        return offset - gone


def _conservation_break(
    trace: Trace, text: str, step_index: int, position: int, emitted: int, received: int
) -> Violation:
    # Built once, at the break only: everything emitted from the offending event on.
    after = [
        event.raw or ""
        for step in trace.steps[step_index:]  # steps[i].index == i
        for event in (step.events[position:] if step.index == step_index else step.events)
    ]
    rest = "".join(after)
    same = 0
    limit = min(len(rest), received - emitted)
    while same < limit and rest[same] == text[emitted + same]:
        same += 1
    at, rest = emitted + same, rest[same:]
    kind, message, source = _what_broke(text, at, received, rest)
    offending = trace.steps[step_index].events[position]
    # text emitted twice is where it came from: not the block that follows it
    dialect = event_dialect(offending) or dialect_at(text, source)
    return violation(Check.CONSERVATION, message, text, step_index, at, kind=kind, dialect=dialect)


def _what_broke(text: str, at: int, received: int, rest: str) -> tuple[str, str, int]:
    """Best guess at lost / duplicated / reordered, from where ``rest`` reappears in the input:
    the kind, the message, and the input offset the broken text is at (a duplicate's
    first copy, else ``at``). Where ``rest`` both came before and comes later, fewer
    characters emitted than received, all told, make it a loss (a deleted ``]``), more a
    duplicate."""
    short = at + len(rest) < len(text)
    for size in (16, 4, 2):
        probe = rest[:size]
        earlier = text.rfind(probe, 0, at + len(probe) - 1)
        later = text.find(probe, at + 1)
        lost = short and later > at and text[at:later] not in rest
        if 0 <= earlier < at and not lost:
            return (
                "duplicated",
                f"duplicated: re-emits input from offset {earlier} ({clip(probe)!r})",
                earlier,
            )
        if at >= received:
            return (
                "emitted early",
                f"emits {clip(rest)!r} before receiving it (received so far ends at {received})",
                at,
            )
        if later > at:
            skipped = text[at:later]
            if skipped in rest:
                what = f"reordered: {clip(skipped)!r} is emitted after what follows it"
                return "reordered", what, at
            return "lost", f"lost {_characters(skipped)}: {clip(skipped)!r} never emitted", at
    return (
        "altered",
        f"altered: emits {clip(rest)!r} where the input has {clip(text[at:received])!r}",
        at,
    )


def _characters(text: str) -> str:
    return "1 character" if len(text) == 1 else f"{len(text)} characters"


# --- chunk invariance (the comparison itself is shared with warm_cold) ----------


def chunk_invariance(trace: Trace, whole: Trace) -> list[Violation]:
    """Events (adjacent Text merged) equal those of the ``whole`` chunking."""
    mine, reference = trace.merged(), whole.merged()
    return _invariance(trace, mine, reference)


def _invariance(
    trace: Trace, mine: Sequence[Placed], reference: Sequence[Placed]
) -> list[Violation]:
    found = first_difference(trace, mine, reference, Check.INVARIANCE, "the whole run")
    if found is None:
        return []
    if not found.dialect:  # two Texts differ, and no marker where they part says whose
        found = replace(found, dialect=_parted_in(trace, found.offset))
    return [found]


def _parted_in(trace: Trace, offset: int | None) -> str:
    """The dialect of the block two shown texts part inside. Where the detector's events
    carry raw spans, the offset is exact, and a block that starts there is not it: the
    texts part in the text before it (a prefix emitted twice). Without, the offset only
    approximates the input's, and a block starting there counts."""
    return dialect_at(trace.input, offset, starts=not trace.has_raw)


# --- no leak --------------------------------------------------------------------


def no_leak(
    trace: Trace,
    leak: re.Pattern[str] = _LEAK,
    shown_anyway: Callable[[], Mapping[str, int]] | None = None,
) -> list[Violation]:
    """No run of adjacent Text contains a complete distinctive opening marker.

    ``leak``: the markers looked for (a claim's ``lexicon(ids).opener_re``);
    ``shown_anyway``: the markers a correct detector shows too (``_no_leak``).
    """
    return _no_leak(trace, trace.merged(), leak, shown_anyway)


def _no_leak(
    trace: Trace,
    merged: Sequence[Placed],
    leak: re.Pattern[str],
    shown_anyway: Callable[[], Mapping[str, int]] | None = None,
) -> list[Violation]:
    """Each marker a Text shows, once (``unforgiven``)."""
    found: list[Violation] = []
    seen: set[str] = set()  # each marker once: a second leak of it is the same bug
    texts = ((item, item.event.text) for item in merged if isinstance(item.event, Text))
    for item, match in unforgiven(texts, leak, shown_anyway):
        marker = match.group()
        if marker not in seen:
            seen.add(marker)
            found.append(_leak(trace, item, match.start(), marker))
    return found


def unforgiven(
    texts: Iterable[tuple[_T, str]],
    leak: re.Pattern[str],
    shown_anyway: Callable[[], Mapping[str, int]] | None = None,
) -> Iterator[tuple[_T, re.Match[str]]]:
    """Every marker each merged Text shows that a correct detector does not show too.

    ``texts``: each Text run's text, with what the caller needs to place it.
    ``shown_anyway`` (asked only when a Text shows a marker) counts the markers a
    correct detector shows as well, per marker (the body of a block it rejects, say):
    that many showings of each are no leak."""
    allowed: dict[str, int] | None = None
    for item, text in texts:
        for match in leak.finditer(text):
            marker = match.group()
            if shown_anyway is not None:
                allowed = dict(shown_anyway()) if allowed is None else allowed
                if allowed.get(marker, 0) > 0:
                    allowed[marker] -= 1
                    continue
            yield item, match


def _leak(trace: Trace, item: Placed, at: int, marker: str) -> Violation:
    chunk, dialect = item.step_at(at + len(marker) - 1), marker_dialect(marker)
    if item.start is not None:
        message = f"Text shows the opening marker {marker!r}"
        return violation(
            Check.NO_LEAK,
            message,
            trace.input,
            chunk,
            item.start + at,
            kind=marker,
            dialect=dialect,
        )
    shown_at = item.shown + at
    message = (
        f"Text shows the opening marker {marker!r} at offset {shown_at} of the shown "
        "text (input offset unknown: events carry no raw spans)"
    )
    return Violation(
        Check.NO_LEAK, message, chunk, None, excerpt(trace.shown, shown_at), marker, dialect
    )


# --- holdback -------------------------------------------------------------------


def _block_spans(whole: Trace) -> list[tuple[int, int]]:
    """Input spans of the whole run's non-Text events, adjacent ones joined."""
    spans: list[tuple[int, int]] = []
    position = 0
    for event in whole.events:
        end = position + len(event.raw or "")
        if not isinstance(event, Text) and end > position:
            if spans and spans[-1][1] == position:
                position = spans.pop()[0]
            spans.append((position, end))
        position = end
    return spans


class _Free:
    """Input before x that lies outside every block, for non-decreasing x: O(1) amortised."""

    __slots__ = ("covered", "index", "spans")

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = spans
        self.index = 0
        self.covered = 0  # block length before spans[index]

    def before(self, x: int) -> int:
        spans, index = self.spans, self.index
        while index < len(spans) and spans[index][1] <= x:
            self.covered += spans[index][1] - spans[index][0]
            index += 1
        self.index = index
        if index < len(spans) and spans[index][0] < x:  # x is inside a block
            return spans[index][0] - self.covered
        return x - self.covered

    def block_end(self, x: int) -> int:
        """End of the block ``x`` (the last ``before`` argument) is inside, else ``x``:
        ``before`` gives the same for every input position up to it."""
        spans, index = self.spans, self.index
        return spans[index][1] if index < len(spans) and spans[index][0] < x else x


def holdback(trace: Trace, whole: Trace, bound: int = HOLDBACK_BOUND) -> list[Violation]:
    """After each feed, input neither emitted nor inside a block of ``whole`` is <= bound."""
    return _holdback(trace, whole, bound) if trace.has_raw and whole.has_raw else []


class HeldBack:
    """How much input a run holds back after each feed, against the blocks of ``whole``.

    held = free(received) - free(emitted); both only grow, so two cursors suffice. The
    caller skips the common case (``received - emitted <= bound``) itself, with no call.
    """

    __slots__ = ("bound", "free_emitted", "free_received", "steady_emitted", "steady_until")

    def __init__(self, whole: Trace, bound: int, blocks: Sequence[tuple[int, int]] = ()) -> None:
        spans = _joined([*_block_spans(whole), *blocks]) if blocks else _block_spans(whole)
        self.bound = bound
        self.free_received, self.free_emitted = _Free(spans), _Free(spans)
        # While input up to steady_until arrives inside one block and nothing more is
        # emitted, what is held cannot change: a long block costs no lookup per chunk.
        self.steady_emitted, self.steady_until = -1, -1

    def over(self, received: int, emitted: int) -> int | None:
        """What is held after a feed that leaves input ``received``, raw ``emitted``, when
        it is more than the bound; else ``None``."""
        if emitted == self.steady_emitted and received <= self.steady_until:
            return None
        free = self.free_received
        held = free.before(received) - self.free_emitted.before(min(emitted, received))
        self.steady_emitted, self.steady_until = emitted, free.block_end(received)
        return held if held > self.bound else None


def _spaces_before_end(text: str, bound: int) -> int:
    """The white space run at the end of ``text``, or right before its last ``bound`` or
    fewer other characters (a marker's possible beginning)."""
    end = len(text)
    while end > 0 and len(text) - end < bound and not text[end - 1].isspace():
        end -= 1
    head = text[:end]
    return len(head) - len(head.rstrip())


def _joined(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans sorted, overlapping or adjacent ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _holdback(
    trace: Trace,
    whole: Trace,
    bound: int,
    blocks: Sequence[tuple[int, int]] = (),
    spaces: bool = False,
) -> list[Violation]:
    """``blocks``: more input spans that are blocks though the whole run shows them as text
    (a block a chosen policy shows as written: ``tcr.readings``). ``spaces``: white space
    that may come right before a call is not shown by the detector's choice (``whitespace``
    trimmed): it may be held, besides the bound, until what follows says."""
    meter = HeldBack(whole, bound, blocks)
    emitted = received = 0
    for step in trace.steps:
        if step.chunk is None:
            break
        received += len(step.chunk)
        for event in step.events:
            emitted += len(event.raw or "")
        if received - emitted <= bound:  # the common case needs no block lookup
            continue
        held = meter.over(received, emitted)
        if held is not None and spaces:
            held -= _spaces_before_end(trace.input[emitted:received], bound)
            held = held if held > bound else None
        if held is not None:
            message = (
                f"holds back {held} characters after chunk {step.index} (bound {bound}): "
                f"input from {emitted} to {received} is neither emitted nor inside a block"
            )
            dialect = dialect_at(trace.input, emitted)
            return [
                violation(
                    Check.HOLDBACK,
                    message,
                    trace.input,
                    step.index,
                    emitted,
                    kind="held back",
                    dialect=dialect,
                )
            ]
    return []


# --- expected -------------------------------------------------------------------


Schemas = Mapping[str, Mapping[str, Any]]  # tool name -> its parameters' schemas


def expected(
    trace: Trace,
    expectation: Expectation | Mapping[str, Any],
    *,
    whole: Trace | None = None,
    schemas: Schemas | None = None,
) -> list[Violation]:
    """Shown text, calls and reasoning match a recorded expectation (parts optional).

    Each distinct kind of difference is reported once: lost text and a missing
    call are two findings, a second missing call is not. A missing call the
    detector rejected instead (``Rejected`` events at least as many as the calls
    missing) is ``Rejected instead of ToolCall``: it saw the call and could not
    use it; fewer (calls merged into one, or not seen at all) is ``missing
    ToolCall``. ``whole``, the unsplit run, names the dialect of a call this run
    is missing when it has it.

    Arguments are compared as JSON values (a boolean is no number). A call whose
    expected dialect writes untyped values (``schema_typed``: Qwen3-Coder XML, GLM
    pairs) is compared argument by argument, typed by ``schemas`` (the tool specs
    the detector was given, ``tcr.tool_specs.parameter_schemas``; ``None``: it was
    given none), as ``tcr.tool_specs.value_agrees`` says; the finding names the
    argument.
    """
    expect = Expectation.of(expectation)
    assert expect is not None
    placed = trace.placed()
    found: list[Violation] = []
    if expect.text is not None:
        found += _expected_text(trace, placed, expect.text)
    if expect.calls is not None:
        whole_calls = [e for e in whole.events if isinstance(e, ToolCall)] if whole else []
        found += _expected_calls(trace, placed, expect.calls, whole_calls, schemas)
    if expect.reasoning is not None:
        found += _expected_reasoning(trace, placed, expect.reasoning)
    return found


def _expected_reasoning(trace: Trace, placed: Sequence[Placed], want: str) -> list[Violation]:
    thoughts = [p for p in placed if isinstance(p.event, Reasoning)]
    got = "".join(p.event.text for p in thoughts)  # type: ignore[union-attr]
    if got == want:
        return []
    chunk = thoughts[0].step if thoughts else len(trace.chunks)
    message = f"reasoning is {clip(got, 40)!r}, expected {clip(want, 40)!r}"
    at = thoughts[0].start if thoughts else None
    kind = (
        "missing Reasoning" if not got else "extra Reasoning" if not want else "Reasoning differs"
    )
    dialect = event_dialect(*(p.event for p in thoughts)) or dialect_at(trace.input, at)
    return [violation(Check.EXPECTED, message, trace.input, chunk, at, kind=kind, dialect=dialect)]


def _text_kind(got: str, want: str, at: int) -> str:
    """``missing Text`` when ``got`` is ``want`` with characters left out at ``at``,
    ``extra Text`` the other way round, else ``Text differs``."""
    if len(got) < len(want) and want.endswith(got[at:]):
        return "missing Text"
    if len(got) > len(want) and got.endswith(want[at:]):
        return "extra Text"
    return "Text differs"


def _expected_text(trace: Trace, placed: Sequence[Placed], want: str) -> list[Violation]:
    got = trace.shown
    if got == want:
        return []
    at = common_prefix_length(got, want)
    chunk, offset, dialect, ended = len(trace.chunks), None, "", False
    for item in placed:  # the event that shows the character at ``at``
        event = item.event
        size = len(event.text if isinstance(event, Text) else getattr(event, "content", ""))
        if isinstance(event, Text | Rejected) and item.shown <= at < item.shown + size:
            chunk, dialect = item.step, event_dialect(event)
            if item.start is not None:
                offset = item.start + (at - item.shown if isinstance(event, Text) else 0)
            break
    else:  # shown text ends early: point at the end of what was emitted, when known
        # (the dialect is the block that offset is in, not the last event's: text lost
        # after a block is the same finding as text lost with none before it)
        last = placed[-1] if placed else None
        if last is not None and last.start is not None and last.event.raw is not None:
            offset, ended = last.start + len(last.event.raw), True
    message = (
        f"shown text differs at character {at}: "
        f"got {clip(got[at:])!r}, expected {clip(want[at:])!r}"
    )
    kind = _text_kind(got, want, at)
    # the block the texts part inside (``_parted_in``), or the one lost from where shown
    # text ends; else the marker a leaked or a swallowed text starts with
    inside = dialect_at(trace.input, offset) if ended else _parted_in(trace, offset)
    dialect = dialect or inside or opening_dialect(got[at:], want[at:])
    return [
        violation(Check.EXPECTED, message, trace.input, chunk, offset, kind=kind, dialect=dialect)
    ]


def _expected_calls(
    trace: Trace,
    placed: Sequence[Placed],
    want: tuple[ExpectedCall, ...],
    whole_calls: list[ToolCall],
    schemas: Schemas | None = None,
) -> list[Violation]:
    calls = [p for p in placed if isinstance(p.event, ToolCall)]
    rejected = [p for p in placed if isinstance(p.event, Rejected)]
    # Calls the detector rejected stand in for the missing ones only when there are as many
    # rejections as missing calls; fewer (calls merged, or gone) is a missing call.
    stand_in = rejected if len(calls) + len(rejected) >= len(want) else []
    # With exactly one call or rejection per expected call, each takes its call's place in
    # order: a rejected first call is that call rejected, not the second one misnamed.
    slots = [p for p in placed if isinstance(p.event, ToolCall | Rejected)]
    paired = slots if rejected and len(slots) == len(want) else calls
    found: dict[str, Violation] = {}  # the first of each kind
    for index in range(max(len(paired), len(want))):
        item = paired[index] if index < len(paired) else None
        call = item.event if item else None
        if index >= len(want):
            kind, problem = "extra ToolCall", f"unexpected call {index}: {brief(call)}"
        else:
            name = want[index].name
            if isinstance(call, Rejected) or (not isinstance(call, ToolCall) and stand_in):
                if not isinstance(call, Rejected):
                    item = stand_in[0]
                    call = item.event
                kind = "Rejected instead of ToolCall"
                problem = (
                    f"call {index} ({name}) came out as {brief(call)}: "
                    f"{len(calls)} calls and {len(rejected)} rejected, expected {len(want)}"
                )
            elif not isinstance(call, ToolCall):
                kind = "missing ToolCall"
                problem = (
                    f"call {index} ({name}) is missing: {len(calls)} calls, expected {len(want)}"
                )
            elif call.name != name:
                kind, problem = (
                    "ToolCall name differs",
                    (f"call {index} is to {call.name!r}, expected {name!r}"),
                )
            else:
                differs = arguments_differ(index, call, want[index], schemas)
                if differs is None:
                    continue
                kind, problem = "ToolCall arguments differ", differs
        if kind in found:
            continue
        chunk = item.step if item else len(trace.chunks)
        at = item.start if item else None
        # A call not made is in the dialect the expectation says; else the events tell (the
        # call, the rejection in its place, the whole run's, the last call emitted), else
        # the input's first block.
        in_whole = whole_calls[index] if index < len(whole_calls) else None
        stood = item.event if item else None
        told = want[index].dialect if index < len(want) and not isinstance(call, ToolCall) else ""
        previous = (c.event for c in reversed(calls[:index]))
        dialect = told or event_dialect(stood, in_whole, *previous)
        dialect = dialect or dialect_at(trace.input, _first_block(trace.input))
        found[kind] = violation(
            Check.EXPECTED, problem, trace.input, chunk, at, kind=kind, dialect=dialect
        )
    return list(found.values())


def arguments_differ(
    index: int, call: ToolCall, want: ExpectedCall, schemas: Schemas | None
) -> str | None:
    """How ``call``'s arguments differ from ``want``'s, or ``None`` (``expected``'s docstring)."""
    got, arguments = _parsed(call.arguments), want.arguments
    record = BY_ID.get(want.dialect or "")
    untyped = record is not None and record.schema_typed
    whole = (
        f"call {index} ({want.name}) has arguments {clip(call.arguments, 40)}, "
        f"expected {clip(json.dumps(arguments, ensure_ascii=False), 40)}"
    )
    if not untyped:
        return None if same_json(got, arguments) else whole
    if not (isinstance(got, dict) and isinstance(arguments, dict)):
        return whole
    if got.keys() != arguments.keys():
        return whole
    properties = None if schemas is None else schemas.get(want.name, {})
    for key, value in arguments.items():
        schema = None if properties is None else properties.get(key)
        if value_agrees(got[key], value, schema):
            continue
        meant = value
        typed = ""
        if schema is not None:
            typed = f" (the schema types it {schema_type(schema)[0]})"
            read = well_formed(value, schema) if isinstance(value, str) else NOT_WELL_FORMED
            if read is not NOT_WELL_FORMED:
                meant = read
        return (
            f"call {index} ({want.name}) argument {key!r} is "
            f"{clip(json.dumps(got[key], ensure_ascii=False), 40)}, "
            f"expected {clip(json.dumps(meant, ensure_ascii=False, default=str), 40)}{typed}"
        )
    return None


def _first_block(text: str) -> int | None:
    match = _LEAK.search(text)
    return match.start() if match else len(text) - len(text.lstrip())


def _parsed(arguments: str) -> object:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments  # not JSON: compared as text, so it can only match verbatim


# --- crash and the verdict of one trace -----------------------------------------


def _crash(trace: Trace) -> list[Violation]:
    crash = trace.crash
    if crash is None:
        return []
    call = "finish()" if crash.index == len(trace.chunks) else f"feed() of chunk {crash.index}"
    what = crash.error if crash.timed_out else f"raised {crash.error}"
    message = f"the detector {what} in {call}"
    dialect = dialect_at(trace.input, crash.offset)
    return [
        violation(
            Check.CRASH,
            message,
            trace.input,
            crash.index,
            crash.offset,
            kind=crash_kind(crash.error, timed_out=crash.timed_out),
            dialect=dialect,
        )
    ]


def crash_kind(error: str, *, timed_out: bool = False) -> str:
    """``timeout``, ``bad event`` (feed or finish returned something that is no list of
    events) or the exception's type, from a ``Crash``'s one-line error."""
    if timed_out:
        return TIMEOUT
    name, _, detail = error.partition(":")
    if name == "TypeError" and detail.lstrip().startswith(("feed() returned", "finish() returned")):
        # what tcr.trace.checked_events says of a result that is no list of events
        return "bad event"
    return name.strip() or "error"


def check_trace(
    trace: Trace,
    *,
    whole: Trace | None,
    checks: Collection[str] = TRACE_CHECKS,
    expectation: Expectation | Mapping[str, Any] | None = None,
    bound: int = HOLDBACK_BOUND,
    leak: re.Pattern[str] | None = _LEAK,
    shown_anyway: Callable[[], Mapping[str, int]] | None = None,
    schemas: Schemas | None = None,
    dialects: frozenset[str] | None = None,
    dropped: Sequence[tuple[int, int]] = (),
    blocks: Sequence[tuple[int, int]] = (),
    spaces: bool = False,
) -> Verdict:
    """Run the requested checks on one trace; ``whole`` is the run of the unsplit input.

    ``bound``, ``leak`` (the opening markers ``no_leak`` looks for; ``None``: none,
    so it is skipped) and ``dialects`` (``None``: every one) are the claim's;
    ``shown_anyway`` counts the markers a correct detector shows too (``_no_leak``);
    ``schemas`` the tool specs the detector was given, which type the expected values of
    untyped bodies (``expected``); ``dropped`` the input spans a chosen lossy policy leaves
    unshown (conservation accounts for them; holdback cannot then tell held from dropped,
    and is skipped), ``blocks`` the blocks one shows as written (holdback counts them as
    blocks), ``spaces`` whether white space before a call may be held (``_holdback``).
    The layer below ``tcr.judge.Judge``, which makes the runs and adds warm equals cold.
    """
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise TcrError(f"unknown checks {unknown}; known: {', '.join(CHECKS)}")
    expect = Expectation.of(expectation)
    merged = trace.merged()  # shared by invariance and no_leak
    raw_known = trace.has_raw, whole is not None and whole.has_raw  # one pass each
    ran: list[Check] = []
    skipped: dict[str, str] = {}
    found: list[Violation] = []
    for check in (c for c in CHECKS if c in checks):
        why = skipped.get(check) or why_skipped(check, trace.crash, whole, expect, raw_known, leak)
        if why:
            skipped[check] = why
            continue
        if check is Check.HOLDBACK and dropped:
            skipped[check] = DROPPED
            continue
        ran.append(check)
        if check is Check.CONSERVATION:
            lost_track = _conservation(trace, dropped)
            found += lost_track
            if lost_track and Check.HOLDBACK in checks:
                # Held = received - emitted assumes the raw emitted is a prefix of the input.
                skipped[Check.HOLDBACK] = (
                    "conservation failed, so emitted length is no input position"
                )
        elif check is Check.INVARIANCE and whole is not None:
            found += _invariance(trace, merged, whole.merged())
        elif check is Check.NO_LEAK and leak is not None:
            found += _no_leak(trace, merged, leak, shown_anyway)
        elif check is Check.HOLDBACK and whole is not None:
            found += _holdback(trace, whole, bound, blocks, spaces)
        elif check is Check.EXPECTED and expect is not None:
            found += expected(trace, expect, whole=whole, schemas=schemas)
        elif check is Check.CRASH:
            found += _crash(trace)
    if found and dialects is not None:
        found = [_claimed(v, trace.input, dialects) for v in found]
    if found and whole is not None and whole.crash is None:
        found = _named_by(whole, found)
    return Verdict(tuple(found), tuple(ran), skipped)


def _claimed(found: Violation, text: str, dialects: frozenset[str]) -> Violation:
    """``found`` named by a dialect of the claim: one it names outside it (markup the claim
    reads as text, a marker inside another dialect's block) is told again by the blocks the
    claim reads, which may be none."""
    if not found.dialect or found.dialect in dialects:
        return found
    return replace(found, dialect=dialect_at(text, found.offset, dialects))


def _named_by(whole: Trace, found: list[Violation]) -> list[Violation]:
    """Each violation named by a dialect inside a block of the whole run takes that block's
    exact dialect.

    Markup alone cannot tell dialects that share a marker apart (``<tool_call>``
    opens hermes, qwen3_coder and glm45 bodies); the whole run's events can. One named by
    none stays so: it is in text (a duplicate of text before a block is at the block).
    """
    blocks = [
        (p.start, p.start + len(p.event.raw or ""), fmt)
        for p in whole.placed()
        if p.start is not None and (fmt := event_dialect(p.event))
    ]
    if not blocks:
        return found
    starts = [start for start, _, _ in blocks]
    named: list[Violation] = []
    for v in found:
        index = bisect_right(starts, v.offset) - 1 if v.offset is not None else -1
        if v.dialect and index >= 0 and v.offset is not None and v.offset < blocks[index][1]:
            v = replace(v, dialect=blocks[index][2])
        named.append(v)
    return named


def why_skipped(
    check: Check,
    crash: Crash | None,
    whole: Trace | None,
    expectation: Expectation | None,
    raw_known: tuple[bool, bool],
    leak: re.Pattern[str] | None,
) -> str | None:
    """Why ``check`` cannot judge a run that ended in ``crash``, or ``None``: it can.
    ``raw_known``: whether the run's events, and the whole run's, all carry raw spans."""
    crashed = f"this run crashed at chunk {crash.index}" if crash else None
    if check in (Check.CONSERVATION, Check.HOLDBACK) and not raw_known[0]:
        return "events carry no raw spans"
    if check in (Check.INVARIANCE, Check.HOLDBACK):
        if whole is None:
            return "no whole run to compare with"
        if whole.crash is not None:
            return "the whole run crashed"
        if check is Check.HOLDBACK:
            return None if raw_known[1] else "the whole run's events carry no raw spans"
        return crashed
    if check is Check.WARM_COLD:
        return "needs a detector factory: see check_warm_cold()"
    if check is Check.COST:
        return "times a detector factory on a probe message: see tcr.cost.measure_cost()"
    if check is Check.POLICY:
        return "reads a detector factory's choices on probe messages: see tcr.probes"
    if check is Check.EXPECTED:
        return "no expectation" if expectation is None else crashed
    if check is Check.NO_LEAK and leak is None:
        return NO_MARKER
    return None
