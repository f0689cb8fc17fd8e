"""Public Hypothesis strategies: messages with their ground truth, and chunkings of a text.

``messages()`` draws prose, blocks in every dialect, reasoning, near misses and
truncated endings, and builds the truth with the text (never by running a
detector). ``chunkings(text)`` draws split points. Each is one ``st.binary()``
draw decoded by ``tcr.fuzz.source.Source`` (see there why), so shrinking the
bytes yields a short message with few split points.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from tcr.claims import Claim
from tcr.detector.block import LEXER_TOKENS
from tcr.detector.formats import MARKERS, alternation
from tcr.dialects import BY_ID, DIALECTS, Closing
from tcr.dialects._record import FENCE_DONE_RE
from tcr.rechunk import Chunking, split_at, splits_spec

from .blocks import Block
from .dialects import DIALECT_IDS, TOOL_NAMES, Tools, block, json_call_text
from .prose import prose
from .repertoire import Repertoire
from .source import Source
from .specs import tool_specs_for
from .truth import Call, Message, Truth
from .values import defuse

__all__ = ["chunkings", "messages", "tool_lists"]

DEFAULT_MAX_PARTS = 5
DEFAULT_MAX_SPLITS = 16

# The drawn bytes have a fixed size, so Hypothesis draws them at once (with a
# variable size it draws a "one more byte?" choice per byte). They are cut into
# slots that shrink on their own: the tools, the number of parts and the cut;
# then one slot per part, whose first byte can make it absent; then (for cases)
# the chunking.
META_BYTES = 8
SLOT_BYTES = 40
CHUNK_BYTES = 33


def message_bytes(max_parts: int) -> int:
    """How many bytes a message of at most ``max_parts`` parts is decoded from."""
    return META_BYTES + SLOT_BYTES * max_parts


# Where chunk boundaries matter most: in and around every marker and lexer token.
_TOKENS = tuple(sorted({*MARKERS, *LEXER_TOKENS, *(t for d in DIALECTS for t in d.tokens)}))
# Every occurrence, overlapping ones too: a lookahead matches at every position.
_TOKEN_RE = re.compile(f"(?=({alternation(_TOKENS).pattern}))")

PickDialect = Callable[[Source], str]
PickTools = Callable[[Source], Tools]
EVERY_DIALECT = Repertoire.of()  # the reference's claim: blocks in every dialect, no text markup


def tools_from(src: Source) -> Tools:
    """Declared tools read from ``src``: any name, none, or up to four names."""
    kind = src.below(3)
    if kind == 0:
        return None  # any name is accepted
    if kind == 1:
        return ()  # every call is rejected (policy 7)
    return tuple(dict.fromkeys(src.choice(TOOL_NAMES) for _ in range(1 + src.count(3))))


def tool_lists() -> st.SearchStrategy[tuple[str, ...] | None]:
    """Declared tools: ``None`` (any name is accepted), ``()`` (none), or some names."""
    return st.binary(min_size=8, max_size=8).map(lambda data: tools_from(Source(data)))


def dialect_ids(
    formats: Collection[str] | None, known: tuple[str, ...] = DIALECT_IDS
) -> tuple[str, ...]:
    """The dialect ids to write blocks in (default: all ``known``); others are refused."""
    chosen = known if formats is None else tuple(formats)
    unknown = [f for f in chosen if f not in known]
    if unknown or not chosen:
        raise InvalidArgument(f"formats={list(chosen)!r}: expected some of {', '.join(known)}")
    return chosen


def messages(
    *,
    formats: Collection[str] | st.SearchStrategy[str] | None = None,
    tools: st.SearchStrategy[Sequence[str] | None] | None = None,
    max_parts: int = DEFAULT_MAX_PARTS,
    claim: Claim | None = None,
) -> st.SearchStrategy[Message]:
    """Messages a streaming tool-call detector must handle, each with its ground truth.

    ``claim``: what the detector speaks (``tcr.claims.Claim``, default every
    dialect): blocks are written in claimed dialects, unclaimed markup is mixed
    in as text (``tcr.fuzz.repertoire``). ``formats``: the claimed dialects
    blocks are written in, ids of ``tcr.dialects`` or a strategy of them
    (default: all). ``tools``: a strategy of declared tool lists (default:
    :func:`tool_lists`); a drawn ``None`` means any name is accepted.
    ``max_parts``: at most this many pieces of prose and blocks. A message that
    declares tools carries their ``tool_specs``, schemas that agree with its truth's
    argument types (``tcr.fuzz.specs``).
    """
    if max_parts < 1:
        raise InvalidArgument(f"max_parts={max_parts!r}: must be at least 1")
    repertoire = Repertoire.of(claim)
    if isinstance(formats, st.SearchStrategy) or tools is not None:
        return _drawn_messages(formats, tools, max_parts, repertoire)
    repertoire = repertoire.writing(dialect_ids(formats, repertoire.blocks))
    pick = partial(pick_from, repertoire.blocks)
    size = message_bytes(max_parts)
    return st.binary(min_size=size, max_size=size).map(
        lambda data: decode_message(data, pick, tools_from, max_parts, repertoire)
    )


@st.composite
def _drawn_messages(
    draw: Callable[[st.SearchStrategy[Any]], Any],
    formats: Collection[str] | st.SearchStrategy[str] | None,
    tools: st.SearchStrategy[Sequence[str] | None] | None,
    max_parts: int,
    repertoire: Repertoire,
) -> Message:
    """``messages()`` with options given as strategies: those are drawn, the rest decoded."""
    if isinstance(formats, st.SearchStrategy):
        strategy = formats

        def pick(src: Source) -> str:
            name: str = draw(strategy)
            if name not in repertoire.blocks:
                raise InvalidArgument(
                    f"formats drew {name!r}; expected one of {', '.join(repertoire.blocks)}"
                )
            return name
    else:
        pick = partial(pick_from, dialect_ids(formats, repertoire.blocks))
    pick_tools: PickTools = tools_from
    if tools is not None:
        drawn = draw(tools)
        declared: Tools = None if drawn is None else tuple(drawn)

        def pick_tools(src: Source) -> Tools:
            return declared

    size = message_bytes(max_parts)
    data = draw(st.binary(min_size=size, max_size=size))
    return decode_message(data, pick, pick_tools, max_parts, repertoire)


def pick_from(names: tuple[str, ...], src: Source) -> str:
    """One of ``names``, read from ``src``."""
    return src.choice(names)


@dataclass(frozen=True, slots=True)
class _Quoted:
    """Markup of a dialect the claim does not speak: text for it (``tcr.fuzz.repertoire``)."""

    text: str
    name: str  # "tools_tag/array as text"


def _quoted(data: bytes, dialect_id: str, tools: Tools) -> _Quoted:
    written = block(data, dialect_id, tools)
    return _Quoted(written.raw, f"{written.name} as text")


def decode_message(
    data: bytes,
    pick_dialect: PickDialect,
    pick_tools: PickTools,
    max_parts: int,
    repertoire: Repertoire = EVERY_DIALECT,
) -> Message:
    """The message ``data`` spells: prose and blocks, the last maybe cut short.

    ``repertoire``: what the claim speaks; one block slot in four is then unclaimed
    markup written as text (``kind`` 7), when the claim leaves some unclaimed.
    """
    meta = Source(data[:META_BYTES])
    tools = pick_tools(meta)
    count = 1 + meta.count(max_parts - 1)
    cut_wanted = meta.below(3) == 2
    cut_pick = meta.below(1 << 16)
    pieces: list[str | Block | _Quoted] = []
    blank = True  # all text so far is white space: bare JSON may open (policy 3)
    for index in range(count):
        start = META_BYTES + index * SLOT_BYTES
        slot = data[start : start + SLOT_BYTES]
        kind = slot[0] % 8 if slot else 0
        if kind == 0:
            continue  # an absent part: what shrinking makes of a part it can do without
        piece: str | Block | _Quoted
        if kind < 4:
            piece = prose(Source(slot[1:]))
        elif kind == 7 and repertoire.as_text:
            piece = _quoted(slot[2:], pick_from(repertoire.as_text, Source(slot[1:2])), tools)
        else:
            dialect_id = pick_dialect(Source(slot[1:2]))
            if not BY_ID[dialect_id].anywhere and not blank:  # JSON mid-answer is text (policy 3)
                piece = " " + defuse(json_call_text(slot[2:]))
            else:
                piece = block(slot[2:], dialect_id, tools)
        pieces.append(piece)
        blank = blank and isinstance(piece, str) and not piece.strip()
    for index, piece in enumerate(pieces[:-1]):
        if isinstance(piece, Block) and BY_ID[piece.dialect].closed_by_end and not piece.closer:
            # only the end of the message closes a block without a marker
            closer = BY_ID[piece.dialect].closes[0]
            pieces[index] = Block(dataclasses.replace(piece.written, closer=closer))
    cut = None
    final = pieces[-1] if pieces else None
    if isinstance(final, Block) and cut_wanted:
        cuts = final.cuts()
        cut = cuts[cut_pick % len(cuts)] if cuts else None
    message = _assemble(pieces, cut, tools, repertoire)
    if repertoire.all_text(tools):  # the claim parses nothing when no tool is offered
        message = dataclasses.replace(message, truth=Truth(text=message.text))
    # The request's schemas, agreeing with the truth; how they are written is read
    # from the meta bytes' far end.
    specs = tool_specs_for(message.truth, tools, Source(data[:META_BYTES], reverse=True))
    return dataclasses.replace(message, tool_specs=specs)


class _Writer:
    """Joins prose and blocks so that the text means what the pieces say.

    Prose is written only once the next block is known, so junctions can be
    checked with the detector's own marker table: no opening marker inside prose
    or across its end, no prose that would open bare JSON at message start, no
    fence right after a fenced call that ended without one.
    """

    def __init__(self, repertoire: Repertoire) -> None:
        self.markers = repertoire.markers  # the claim's openers: never in text
        self.at_start = repertoire.at_start
        self.text: list[str] = []
        self.shown: list[str] = []
        self.calls: list[Call] = []
        self.reasoning: list[str] = []
        self.run = ""
        self.blank = True
        self.fenceless = False  # the last block was a fenced call with no fence

    def prose(self, text: str) -> None:
        self.run += text

    def block(self, raw: str, truth: Truth, *, fenceless: bool) -> None:
        self._flush(raw)
        self._write(raw, truth)
        self.fenceless = fenceless

    def finish(self) -> tuple[str, Truth]:
        self._flush("")
        truth = Truth("".join(self.shown), tuple(self.calls), "".join(self.reasoning))
        return "".join(self.text), truth

    def _flush(self, following: str) -> None:
        markers = self.markers
        run = defuse(self.run, markers)
        self.run = ""
        if self.blank and run.lstrip().startswith(self.at_start):
            run = "." + run  # would open bare JSON, a call list, … (policy 3)
        if self.fenceless and FENCE_DONE_RE.match(run + following):
            run = "." + run  # would be read as the missing fence
        found = None if markers is None else markers.search(run + following)
        if found is not None and found.start() < len(run):
            run += "."  # a marker across the junction
        if run:
            self._write(run, Truth(text=run))
            self.fenceless = False

    def _write(self, raw: str, truth: Truth) -> None:
        self.text.append(raw)
        self.blank = self.blank and not raw.strip()
        self.shown.append(truth.text)
        self.calls += truth.calls
        self.reasoning.append(truth.reasoning)


def _assemble(
    pieces: list[str | Block | _Quoted], cut: int | None, tools: Tools, repertoire: Repertoire
) -> Message:
    writer = _Writer(repertoire)
    parts: list[str] = []
    dialects: dict[str, None] = {}
    for index, piece in enumerate(pieces):
        if isinstance(piece, _Quoted):
            writer.prose(piece.text)
            parts.append(piece.name)
            continue
        if isinstance(piece, str):
            writer.prose(piece)
            if not parts or parts[-1] != "prose":
                parts.append("prose")
            continue
        if cut is not None and index == len(pieces) - 1:
            raw, truth = piece.cut(cut)
            parts.append(f"{piece.name} (cut at {cut} of {len(piece.raw)})")
        else:
            raw, truth = piece.raw, piece.truth()
            parts.append(piece.name)
        dialects[piece.dialect] = None
        fenced = BY_ID[piece.dialect].closing is Closing.FENCED
        fenceless = fenced and not piece.closer and raw == piece.raw
        writer.block(raw, truth, fenceless=fenceless)
    text, truth = writer.finish()
    return Message(text, truth, tools, tuple(parts), dialects=tuple(dialects))


# --- chunkings ------------------------------------------------------------------------


def _token_spans(text: str) -> list[tuple[int, int]]:
    """``(start, length)`` of every marker and lexer token in ``text``, overlapping ones too."""
    return [(m.start(), len(m.group(1))) for m in _TOKEN_RE.finditer(text)]


def _chunking(text: str, points: Collection[int]) -> Chunking[str]:
    splits = sorted(points)
    spec = splits_spec(splits) if splits else "whole"
    return Chunking(spec, spec, tuple(split_at(text, splits)))


def decode_chunking(
    src: Source, text: str, max_splits: int, *, start: Sequence[str] = ()
) -> Chunking[str]:
    """The chunking of ``text`` that ``src`` spells: a count, then split points.

    With ``start`` (a chunking of ``text``), its boundaries are kept and up to
    ``max_splits`` of them are moved, most often into and around a marker.
    """
    if len(text) < 2:
        return _chunking(text, ())
    spans = _token_spans(text)
    points: set[int] = set(Chunking("splits", "start", tuple(start)).splits) if start else set()
    last = len(text) - 1
    for _ in range(src.count(max_splits)):
        if start and points:
            points.discard(sorted(points)[src.below(len(points))])
        if spans and not src.flag():  # in or just around a token
            at, length = src.choice(spans)
            points.add(min(max(at - 1 + src.below(length + 3), 1), last))
        else:
            points.add(1 + src.below(last))
    return _chunking(text, points)


def chunkings(
    text: str, *, max_splits: int = DEFAULT_MAX_SPLITS
) -> st.SearchStrategy[Chunking[str]]:
    """Chunkings of ``text``: split points drawn anywhere, often in and around markers.

    Shrinking removes splits; a chunking's ``splits`` give the ``--rechunk
    splits:…`` spec that reproduces it.
    """
    if max_splits < 0:
        raise InvalidArgument(f"max_splits={max_splits!r}: must be 0 or more")
    if len(text) < 2 or max_splits == 0:
        return st.just(_chunking(text, ()))
    size = 3 * max_splits + 1
    return st.binary(min_size=size, max_size=size).map(
        lambda data: decode_chunking(Source(data), text, max_splits)
    )
