"""Mutating recordings: the content of a recorded stream, bent where detectors break.

A mutation moves chunk boundaries into and around markers, splits, duplicates
or truncates a marker, swaps the JSON inside a block for another shape, or
inserts white space. The recording's expectation stays the ground truth while
the mutation cannot change what must be shown: re-chunking, and white space
inserted before the first opening marker (text the contract prints as it is).
Any other mutation drops the truth; the oracles that need none still judge it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from tcr.claims import EVERYTHING, Claim
from tcr.corpus import Recording, read_recording
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text, ToolCall, merge_text
from tcr.detector.formats import AT_START_OPENERS, BY_ID, MARKERS, OPENER_RE, lexicon
from tcr.errors import TcrError
from tcr.expectation import expectation_of
from tcr.stream import decode

from .model import Case
from .source import Source
from .strategies import CHUNK_BYTES, decode_chunking
from .truth import Truth
from .values import arguments, json_style, json_text

__all__ = [
    "MAX_TEXT",
    "MUTATIONS",
    "OPS_BYTES",
    "Seed",
    "decode_mutant",
    "labelled",
    "load_seeds",
    "mutations",
]

MAX_TEXT = 20_000  # longer recordings are not mutated: a case should be quick to run
MUTATIONS = ("whitespace", "split_marker", "duplicate_marker", "truncate_marker", "swap_json")
OPS_BYTES = 24
_MARKERS = tuple(sorted(MARKERS, key=len, reverse=True))
_SPACES = (" ", "\n", "\t", "\r\n", "  ", "\n\n")
_INSERTS = (" ", "\n", "x", "|", "<", "\\")


@dataclass(frozen=True, slots=True)
class Seed:
    """A recording's content, ready to mutate."""

    name: str  # the path as given, for reports
    chunks: tuple[str, ...]
    tools: tuple[str, ...] | None
    truth: Truth | None
    dialect: str | None
    tool_specs: tuple[dict[str, Any], ...] | None = None  # the recording's request tools

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    @classmethod
    def from_recording(cls, recording: Recording, name: str) -> Seed:
        content = decode(recording).content
        expect = recording.expect
        truth = Truth.from_expectation(expect) if expect else None
        tools = None if recording.tools is None else tuple(recording.tools)
        dialect = recording.labels.get("dialect")
        named = dialect if isinstance(dialect, str) else None
        return cls(name, tuple(content), tools, truth, named, recording.tool_specs)


def load_seeds(
    paths: Sequence[Path], *, claim: Claim | None = None
) -> tuple[list[Seed], list[str]]:
    """The recordings to mutate, labelled for ``claim`` (``labelled``), and why others are not.

    One line per recording left out (unreadable, too long…), and one line counting
    those that cannot be labelled for the claim.
    """
    seeds: list[Seed] = []
    skipped: list[str] = []
    unlabelled = 0
    for path in paths:
        try:
            seed = Seed.from_recording(read_recording(path), _shown(path))
        except TcrError as error:
            skipped.append(str(error))
            continue
        if len(seed.text) > MAX_TEXT:
            skipped.append(f"{_short(path)}: {len(seed.text):,} characters, over {MAX_TEXT:,}")
        elif seed.text:
            kept = labelled(seed, claim or EVERYTHING)
            unlabelled += kept is None
            seeds += [_knowing_dialects(kept)] if kept is not None else []
    if unlabelled:
        skipped.append(
            f"{unlabelled:,} recording{'' if unlabelled == 1 else 's'} with markup the claim "
            "cannot read as text: a block in an unclaimed dialect that opens on, "
            "or holds, a claimed marker"
        )
    return seeds, skipped


def labelled(seed: Seed, claim: Claim) -> Seed | None:
    """``seed`` with the truth ``claim`` asks for, or ``None`` when that cannot be told.

    The reference, claiming everything, says which dialect each block is in (as it
    did when the recording was blessed). Blocks in claimed dialects keep their part
    of the truth. Other blocks are text for the claim, shown verbatim, unless they
    open on a claimed marker (a claimed parser reads those as its own malformed
    blocks) or hold a claimed opener (a block would open inside them): then the
    recording is not a seed. With ``tools=[]`` meaning text, all of it is text.
    """
    if seed.tools == () and claim.empty_tools == "text":
        return replace(seed, truth=Truth(text=seed.text))
    if claim.everything:
        return seed
    lex = lexicon(claim.dialects)
    reference = StreamDetector(tools=seed.tools)
    events = merge_text([*reference.feed(seed.text), *reference.finish()])
    as_read = _truth_of(events)  # what the reference shows, claiming everything
    unclaimed = False
    for at, event in enumerate(events):
        if isinstance(event, Text) or event.format in lex.ids:
            continue
        raw, dialect = event.raw or "", BY_ID.get(event.format)
        opens_claimed = dialect is None or any(m in lex.sharing for m in dialect.opens)
        if opens_claimed or (lex.opener_re is not None and lex.opener_re.search(raw)):
            return None
        events[at] = Text(raw)
        unclaimed = True
    if not unclaimed or seed.truth is None:
        return seed
    # Relabel only a recording whose blessed truth is what the reference reads.
    return replace(seed, truth=_truth_of(events)) if seed.truth == as_read else None


def _knowing_dialects(seed: Seed) -> Seed:
    """``seed`` with each call of its truth knowing its dialect, as the reference reads the
    recording: whether its values are typed is the judge's to know, and asking once per
    seed spares a reference run per mutated case (``tcr.judge``)."""
    truth = seed.truth
    if truth is None or not truth.calls:
        return seed
    reference = StreamDetector(tools=seed.tools, tool_specs=seed.tool_specs)
    read = [e for e in [*reference.feed(seed.text), *reference.finish()] if isinstance(e, ToolCall)]
    calls = tuple(
        replace(call, dialect=read[k].format)
        if k < len(read) and read[k].name == call.name and not call.dialect
        else call
        for k, call in enumerate(truth.calls)
    )
    return replace(seed, truth=replace(truth, calls=calls))


def _truth_of(events: Sequence[Event]) -> Truth | None:
    return Truth.from_expectation(expectation_of(events).to_map())


def _short(path: Path) -> str:
    """A recording as a line of the report names it: a bundled one relative to the bundled
    corpora (``regressions/…``), any other as the user would type it."""
    from tcr.corpora import ROOT

    try:
        return path.resolve().relative_to(ROOT.resolve()).as_posix()
    except ValueError:
        return _shown(path)


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _marker_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for marker in _MARKERS:
        at = text.find(marker)
        while at >= 0:
            spans.append((at, at + len(marker)))
            at = text.find(marker, at + 1)
    return sorted(spans)


def _first_opener(text: str) -> int:
    """Where the first block opens by the dialect table: a marker, or bare JSON at the start."""
    first = len(text) - len(text.lstrip())
    if any(text.startswith(marker, first) for marker in AT_START_OPENERS):
        return first
    found = OPENER_RE.search(text)
    return len(text) if found is None else found.start()


class _Mutant:
    """A text being mutated, with the truth while it still holds."""

    def __init__(self, seed: Seed) -> None:
        self.text = seed.text
        self.truth = seed.truth
        self.applied: list[str] = []

    def apply(self, src: Source, op: str) -> None:
        before = self.text
        getattr(self, "_" + op)(src)
        if self.text != before:
            self.applied.append(op)

    def _whitespace(self, src: Source) -> None:
        space = src.choice(_SPACES)
        if src.flag():  # anywhere: inside a block it changes what is shown
            at = src.below(len(self.text) + 1)
            self.text = self.text[:at] + space + self.text[at:]
            self.truth = None
            return
        first = _first_opener(self.text)
        at = src.below(first + 1)
        text = self.text[:at] + space + self.text[at:]
        truth = self.truth
        # Text before the first opening marker is shown as it is (policies 2 and 3), so
        # the shown text gets the same white space, unless it now makes a marker.
        if (
            truth is not None
            and truth.text.startswith(self.text[:at])
            and _first_opener(text) == first + len(space)
        ):
            self.truth = Truth(
                truth.text[:at] + space + truth.text[at:], truth.calls, truth.reasoning
            )
        else:
            self.truth = None
        self.text = text

    def _marker(self, src: Source) -> tuple[int, int] | None:
        spans = _marker_spans(self.text)
        return src.choice(spans) if spans else None

    def _split_marker(self, src: Source) -> None:
        span = self._marker(src)
        if span is not None:
            start, end = span
            at = start + 1 + src.below(end - start - 1)
            self.text = self.text[:at] + src.choice(_INSERTS) + self.text[at:]
            self.truth = None

    def _duplicate_marker(self, src: Source) -> None:
        span = self._marker(src)
        if span is not None:
            start, end = span
            self.text = self.text[:end] + self.text[start:end] + self.text[end:]
            self.truth = None

    def _truncate_marker(self, src: Source) -> None:
        span = self._marker(src)
        if span is not None:
            start, end = span
            keep = start + 1 + src.below(end - start - 1)
            self.text = self.text[:keep] + self.text[end:]
            self.truth = None

    def _swap_json(self, src: Source) -> None:
        objects = _json_objects(self.text)
        if objects:
            start, end = src.choice(objects)
            value: object = arguments(src)
            if src.flag():
                value = {"name": "get_weather", "arguments": value}
            self.text = self.text[:start] + json_text(value, json_style(src)) + self.text[end:]
            self.truth = None


_DECODER = json.JSONDecoder()


def _json_objects(text: str) -> list[tuple[int, int]]:
    """Spans of the outermost JSON objects in ``text``."""
    spans: list[tuple[int, int]] = []
    at = text.find("{")
    while at >= 0:
        try:
            _, end = _DECODER.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        spans.append((at, end))
        at = text.find("{", end)
    return spans


def decode_mutant(data: bytes, seed: Seed) -> Case:
    """The mutated case ``data`` spells for ``seed``: operations, then a chunking."""
    ops = Source(data[:OPS_BYTES])
    mutant = _Mutant(seed)
    for _ in range(ops.count(3)):
        mutant.apply(ops, ops.choice(MUTATIONS))
    chunks = Source(data[OPS_BYTES:])
    if mutant.text == seed.text and chunks.flag():
        # the recorded boundaries, some moved into and around markers
        chunking = decode_chunking(chunks, mutant.text, 4, start=seed.chunks)
        what = "recorded chunks moved"
    else:
        chunking = decode_chunking(chunks, mutant.text, 16)
        what = "rechunked"
    origin = f"mutated {seed.name}: {', '.join([*mutant.applied, what])}"
    return Case(tuple(chunking.chunks), seed.tools, mutant.truth, origin, seed.tool_specs)


def mutations(
    recording: Recording | Seed, *, claim: Claim | None = None
) -> st.SearchStrategy[Case]:
    """Mutants of one recording's content, each a chunked ``Case``.

    The truth is the recording's expectation while the mutations keep it
    (re-chunking, white space before the first opening marker), else ``None``.
    ``claim``: the truth is the one this claim asks for (``labelled``); a
    recording that cannot be labelled for it is refused.
    """
    seed = recording if isinstance(recording, Seed) else _seed_of(recording)
    if claim is not None:
        kept = labelled(seed, claim)
        if kept is None:
            raise InvalidArgument(
                f"{seed.name}: cannot be labelled for the claim ({claim}): a block in an "
                "unclaimed dialect opens on, or holds, a claimed marker"
            )
        seed = kept
    size = OPS_BYTES + CHUNK_BYTES
    return st.binary(min_size=size, max_size=size).map(lambda data: decode_mutant(data, seed))


def _seed_of(recording: Recording) -> Seed:
    name = str(recording.path) if recording.path is not None else recording.id
    return Seed.from_recording(recording, name)
