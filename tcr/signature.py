"""A finding's signature: what makes two violations the same bug (ARCHITECTURE.md §7.4).

A ``Signature`` is the check, the ``kind`` of event or loss (``Violation.kind``),
the dialect involved (``Violation.dialect``) and the *shape* of the shrunk
input: where its decisive split falls relative to the markers (inside an
opening or a closing marker, at a marker's edge, inside a block's body, in
plain text), or ``whole`` when the failure needs no split at all
(``marker-in-string`` when it needs a claimed marker inside a string of a call's
value instead, ``at-end`` when it needs the message to end there, ``several-blocks``
when it needs more than one block together).

A violation knows its check, kind and dialect as soon as it is found: that is
its ``key``. An input not shrunk yet has no meaningful shape (a random chunking
splits every marker), but whether the unsplit input shows the same key is one
more run: the *coarse* key (``coarse_key``: shape ``whole`` or ``split``) is
what a run de-duplicates on while it searches, so that a parsing bug and a
chunking bug of the same kind (a call merged into another, a marker split
across chunks: both a missing call) stay two findings. The shape is taken of
the input a finding is shrunk to, and shrinking keeps the coarse key and, once
the splits are minimal, the shape too.

Whether a finding needs a split inside a special token (``<|call|>``,
``[TOOL_CALLS]``: one token to the model, so an engine emits it whole) is told
from the shrunk input too: ``Signature.proxy`` is set when a split of the
minimal chunking falls inside a special token of the finding's dialect (of the
claim's dialects when it names none). Such a failure happens only when a proxy
or a re-chunking layer cuts the stream, never behind an engine that streams
tokens. It is an addition: ``str(signature)`` is unchanged, ``label`` adds
``PROXY_ONLY``.

Pure: markers come from the dialect table; where blocks are is the reference's reading
(``StreamDetector``, itself pure) of the whole text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tcr.claims import EVERYTHING, Claim
from tcr.detector.core import StreamDetector
from tcr.detector.events import Text
from tcr.detector.formats import DISTINCTIVE_OPENERS, SHARING, alternation, lexicon
from tcr.dialects import BY_ID, BodyLexer, Dialect
from tcr.readings import newline_openers
from tcr.rechunk import special_spans, splits_inside

if TYPE_CHECKING:  # tcr._verdict names dialects with this module's help
    from tcr._verdict import Violation

__all__ = [
    "AT_END",
    "IN_STRING",
    "PROXY_NOTE",
    "PROXY_ONLY",
    "SEVERAL_BLOCKS",
    "SHAPES",
    "SPLIT",
    "TIMEOUT",
    "UNSPLIT",
    "WHOLE",
    "Signature",
    "coarse_key",
    "cuts_whole_token",
    "dialect_at",
    "key",
    "marker_dialect",
    "opening_dialect",
    "requoted",
    "shape",
    "shaped",
    "signature",
    "special_markers",
    "special_split",
    "split_rank",
    "unquoted",
]

PROXY_ONLY = "only when a proxy re-chunks"  # what a finding that cuts a special token says
PROXY_NOTE = (  # the same, said in full (SARIF messages)
    "Only when a proxy re-chunks: the minimal chunking splits a special token, which an "
    "engine streaming tokens emits whole."
)

TIMEOUT = "timeout"  # the kind of a crash finding over the per-message time limit
WHOLE = "whole"  # the failure needs no split: the unsplit input fails the same way
# Failures the unsplit input shows that need something a change keeping its meaning takes
# away (``tcr.judge.Judge.unsplit_shapes``): a claimed marker inside a string of a call's
# JSON (the same text with those markers escaped, ``unquoted``, passes) ...
IN_STRING = "marker-in-string"
# ... or the message ending right there (with one more space after it, it passes: text
# held back at the end and lost, or cut short, at the end of the stream).
AT_END = "at-end"
# ... or more than one block: each block alone is read right, together they are not (a
# second call that lands on the first's index, two calls merged).
SEVERAL_BLOCKS = "several-blocks"
# The shapes of failures the unsplit input shows.
UNSPLIT = (WHOLE, IN_STRING, AT_END, SEVERAL_BLOCKS)
SPLIT = "split"  # a coarse shape: the unsplit input does not fail that way (not shrunk yet)
# Where a split can fall, most telling first: a shape names the first that one of the
# input's split points falls into.
SHAPES = (
    "split-in-opener",
    "split-in-closer",
    "split-at-marker-edge",
    "split-in-body",
    "split-in-text",
    WHOLE,
)

# Distinctive openers: a text that starts with one names its dialect (``opening_dialect``);
# single characters (the braces that balance a bare JSON block) would make every JSON
# body look like markup.
_OPENER_RE = alternation(DISTINCTIVE_OPENERS)


@dataclass(frozen=True, slots=True)
class Signature:
    """check + kind + dialect + shape; printed short, e.g.
    ``expected/missing ToolCall/hermes@split-in-closer``."""

    check: str
    kind: str
    dialect: str = ""  # "" when no dialect is involved or none could be told
    shape: str = ""  # "" until the input is shrunk
    proxy: bool = False  # the shrunk input cuts a special token: only a proxy does that

    def __str__(self) -> str:
        text = f"{self.check}/{_one_line(self.kind)}"
        if self.dialect:
            text += f"/{self.dialect}"
        return f"{text}@{self.shape}" if self.shape else text

    @property
    def label(self) -> str:
        """How a report names it to a person: ``str(self)``, and ``PROXY_ONLY`` when set."""
        return f"{self} ({PROXY_ONLY})" if self.proxy else str(self)

    @property
    def key(self) -> Signature:
        """The signature without its shape: what a violation says by itself."""
        return Signature(self.check, self.kind, self.dialect)

    @property
    def coarse(self) -> Signature:
        """The signature with its shape told only as ``whole`` or ``split`` (``coarse_key``)."""
        coarse = self.shape if self.shape in UNSPLIT else SPLIT
        return Signature(self.check, self.kind, self.dialect, coarse)


def _one_line(text: str) -> str:
    """A kind as one line: a marker such as ``"```json\\n{"`` keeps its escape."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def key(violation: Violation) -> Signature:
    """What a violation says of its signature by itself (no shape)."""
    return Signature(str(violation.check), violation.kind, violation.dialect)


def coarse_key(
    violation: Violation,
    whole: Collection[Signature],
    shapes: Mapping[Signature, str] | None = None,
) -> Signature:
    """``violation``'s key with a coarse shape: ``whole`` if ``whole`` (the keys the unsplit
    input shows) has its key, or what ``shapes`` says of it (``Judge.unsplit_shapes``:
    ``marker-in-string``, ``at-end``), else ``split``."""
    found = key(violation)
    coarse = (shapes or {}).get(found, WHOLE) if found in whole else SPLIT
    return Signature(found.check, found.kind, found.dialect, coarse)


def signature(
    violation: Violation, chunks: Sequence[str], *, claim: Claim = EVERYTHING
) -> Signature:
    """The signature of ``violation`` found on ``chunks`` (the shrunk input); ``claim`` is
    the detector's, whose special tokens count when the violation names no dialect."""
    return shaped(key(violation), chunks, claim=claim)


def shaped(found: Signature, chunks: Sequence[str], *, claim: Claim = EVERYTHING) -> Signature:
    """``found``'s key with the shape of ``chunks`` and whether they cut a special token.

    A crash is the detector's, not its dialect's: the dialect at its offset is only where
    it surfaced (a crash in ``finish()`` sits in the last block), so any claimed special
    token the chunks cut counts."""
    dialect = "" if found.check == "crash" else found.dialect
    proxy = bool(special_split(chunks, special_markers(dialect, claim)))
    return Signature(found.check, found.kind, found.dialect, shape(chunks, claim), proxy)


def special_markers(dialect: str, claim: Claim = EVERYTHING) -> tuple[str, ...]:
    """The special tokens a finding in ``dialect`` is judged by: that dialect's, or the
    claim's dialects' when it names none (``""``, or no registered dialect)."""
    record = BY_ID.get(dialect)
    if record is None:
        return claim.special_markers
    return tuple(sorted(record.special_tokens, key=lambda m: (-len(m), m)))


def cuts_whole_token(chunks: Sequence[str], claim: Claim) -> bool:
    """Whether ``chunks`` cut a special token that reaches ``claim``'s detector whole: a
    chunking it can never be given (a shrinker deleting characters can make one)."""
    return claim.tokens_whole and bool(special_split(chunks, claim.special_markers))


def special_split(chunks: Sequence[str], markers: Sequence[str]) -> str:
    """The first of ``markers`` that a split of ``chunks`` falls inside, or ``""``."""
    text = "".join(chunks)
    spans = special_spans(text, markers)
    if not spans:
        return ""
    splits: list[int] = []
    position = 0
    for chunk in chunks[:-1]:
        position += len(chunk)
        splits.append(position)
    inside = splits_inside(splits, spans)
    if not inside:
        return ""
    return next(text[a:b] for a, b in spans if a < inside[0] < b)


def marker_dialect(marker: str) -> str:
    """The dialect an opening marker belongs to; of dialects sharing it, the first registered
    (the one that owns a body none of them claims, ARCHITECTURE.md §5.4)."""
    group = SHARING.get(marker)
    return group[0].id if group else ""


def opening_dialect(*texts: str) -> str:
    """The dialect of the opening marker the first of ``texts`` to start with one starts with.

    For a text difference no event or offset places: where the texts part, a leaked or
    a swallowed marker names its dialect whatever came before it.
    """
    for text in texts:
        match = _OPENER_RE.match(text)
        if match is not None:
            return marker_dialect(match.group())
    return ""


def dialect_at(
    text: str, offset: int | None, dialects: frozenset[str] | None = None, *, starts: bool = True
) -> str:
    """The dialect of the block ``offset`` is in, or whose opening marker starts there (not
    with ``starts=False``), as the reference restricted to ``dialects`` (``None``: every
    one) reads ``text``.

    For violations that name no event with a format. ``""`` when ``offset`` is in plain
    text (another dialect's markup inside reasoning, or markup the claim does not parse,
    included), or unknown. An offset at the very end belongs to a block that runs to it.
    """
    if offset is None:
        return ""
    for block in _blocks_read(text, dialects):
        first = block.start if starts else block.start + 1
        if first <= offset < block.end or offset == block.end == len(text):
            return block.dialect
    return ""


@dataclass(frozen=True, slots=True)
class _Block:
    """A block as the reference reads it: its opener ``[start, body)``, its body
    ``[body, closer)`` and its closer ``[closer, end)`` (either marker may be empty)."""

    start: int
    body: int
    closer: int
    end: int
    dialect: str


@functools.lru_cache(maxsize=8)
def _blocks_read(text: str, dialects: frozenset[str] | None) -> tuple[_Block, ...]:
    """The blocks of ``text`` as the reference restricted to ``dialects`` reads it whole.

    A marker is one only where it opens or closes a block: inside a body (a
    ``<tool_call>`` in reasoning, a ``</tool_call>`` in a string) it is body, and outside
    any block (a fence or a ``</think>`` in prose, another dialect's markup) it is text.
    A block cut off by the end of ``text`` ends in the part of a closing marker it has.
    A block that opens with one character (a bare ``[``) has its head as its opener
    (``_head_at``); other markers of one character are body: nothing falls inside them.
    """
    detector = StreamDetector(dialects=dialects)
    blocks: list[_Block] = []
    at = 0
    for event in (*detector.feed(text), *detector.finish()):
        raw = event.text if isinstance(event, Text) else event.raw or ""
        dialect = None if isinstance(event, Text) else BY_ID.get(event.format)
        if dialect is not None and raw:
            opener = _marker_at(raw, dialect.opens, start=True) or _head_at(raw, dialect)
            closer = _marker_at(raw[len(opener) :], dialect.closes, start=False)
            end = at + len(raw)
            blocks.append(_Block(at, at + len(opener), end - len(closer), end, dialect.id))
        at += len(raw)
    return tuple(blocks)


def shape(chunks: Sequence[str], claim: Claim = EVERYTHING) -> str:
    """Where the split points of ``chunks`` fall relative to the blocks of their text, as
    the reference restricted to ``claim`` reads them.

    ``whole`` for one chunk (or none); else the most telling of ``SHAPES`` that a
    split point falls into. Linear in the text.
    """
    text = "".join(chunks)
    splits: list[int] = []
    position = 0
    for chunk in chunks[:-1]:
        position += len(chunk)
        if 0 < position < len(text) and (not splits or splits[-1] != position):
            splits.append(position)
    if not splits:
        return WHOLE
    places = _places(text, claim)
    return min((_where(split, places) for split in splits), key=SHAPES.index)


def split_rank(text: str, claim: Claim = EVERYTHING) -> Callable[[int], int]:
    """How little a split of ``text`` at an offset says: its place's index in ``SHAPES``
    (``tcr.minimize`` moves a split to the least telling place that still fails)."""
    places = _places(text, claim)
    return lambda at: SHAPES.index(_where(at, places))


_Spans = tuple[tuple[int, int], ...]
_Places = tuple[_Spans, _Spans, _Spans]


def _places(text: str, claim: Claim = EVERYTHING) -> _Places:
    """The opening markers, closing markers and bodies of the blocks of ``text`` as the
    reference restricted to ``claim`` reads them (``_blocks_read``), as spans; text that
    ends in part of an opening marker ends in an opener."""
    blocks = _blocks_read(text, claim.dialects)
    # under opener_newline: required, the newline after such an opener is part of it
    newline = (
        newline_openers(claim.dialects) if claim.choice("opener_newline") == "required" else ()
    )
    openers = [(b.start, _opener_end(text, b, newline)) for b in blocks if b.body > b.start]
    closers = tuple((b.closer, b.end) for b in blocks if b.end > b.closer)
    bodies = tuple((b.body, b.closer) for b in blocks)
    partial_re = lexicon(claim.dialects).partial_opener_re
    partial = partial_re.search(text) if partial_re else None  # let go as text at the end
    if partial is not None and not any(a <= partial.start() < b for a, b in (*bodies, *closers)):
        openers.append(partial.span())
    return tuple(openers), closers, bodies


def _opener_end(text: str, block: _Block, newline: Collection[str]) -> int:
    """Where a block's opener ends: past the newline after it when it is one of
    ``newline``, the openers the claim requires a newline after."""
    end = block.body
    if text[block.start : end] in newline and text[end : end + 1] == "\n":
        end += 1
    return end


def _marker_at(raw: str, markers: Sequence[str], *, start: bool) -> str:
    """The longest of ``markers`` (of two characters or more) that ``raw`` starts with, or
    ends with (or ends in a part of: a block cut off by the end); ``""`` if none."""
    for marker in sorted((m for m in markers if len(m) > 1), key=len, reverse=True):
        if raw.startswith(marker) if start else raw.endswith(marker):
            return marker
    if start:
        return ""
    return max(
        (raw[-n:] for m in markers for n in range(2, len(m)) if raw.endswith(m[:n])),
        key=len,
        default="",
    )


def _head_at(raw: str, dialect: Dialect) -> str:
    """The opener of a block that opens with one character (a bare ``[`` at message
    start): that character is a marker only once the characters after it say a call
    begins, so its opener is its head (``Head.done``'s match, else as far as ``viable``
    goes) and at least the character after it, which settles a body that is no call's."""
    head = dialect.head
    if head is None or not any(len(m) == 1 and raw.startswith(m) for m in dialect.opens):
        return ""
    match = head.done.match(raw) or head.viable.match(raw)
    return raw[: max(2, 0 if match is None else match.end())]


def _where(split: int, places: _Places) -> str:
    openers, closers, bodies = places
    if any(a < split < b for a, b in openers):
        return "split-in-opener"
    if any(a < split < b for a, b in closers):
        return "split-in-closer"
    if any(split in (a, b) for a, b in (*openers, *closers)):
        return "split-at-marker-edge"
    if any(a < split < b for a, b in bodies):
        return "split-in-body"
    return "split-in-text"


# Body lexers that read JSON (or Python literal) values, where a backslash escape writes
# the same string without the marker's text.
_VALUE_LEXERS = frozenset(
    {BodyLexer.JSON, BodyLexer.BALANCED, BodyLexer.BEFORE_BRACE, BodyLexer.PYTHON}
)
_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.DOTALL)
_BODY_TOKEN_RE = re.compile(r"[\"'\[\]{}]")


def unquoted(text: str, claim: Claim = EVERYTHING) -> str:
    """``text`` with each claimed marker that stands inside a string of a call's JSON (or
    Python-literal) value written with its first character as a ``\\u`` escape: the same
    values, and no marker for a parser to trip on. ``text`` itself when there is none.

    A failure that ``text`` shows and this one does not needs the marker in the string:
    its shape is ``IN_STRING`` (``tcr.findings``: one cause whatever checks show it).
    Blocks are found by the claimed dialects' opening markers (a bare ``{``/``[`` only at
    the message's start); a block's value is its first balanced bracket, read with
    strings, up to a closing marker of its dialects outside them. Prose and XML-style
    bodies are left alone: there an escape would change the text.
    """
    dialects = _parsed(claim)
    markers = _string_markers(dialects)
    if not markers:
        return text
    marker_re = alternation(markers)
    out: list[str] = []
    done = read = 0  # copied to ``out`` up to ``done``; strings read up to ``read``
    for start, group in _blocks(text, dialects):
        if start < read:  # an opening marker inside a string read already
            continue
        for a, b in _value_strings(text, start, group):
            inside = text[a:b]
            escaped = marker_re.sub(lambda m: _escaped(m.group()), inside)
            if escaped != inside:
                out += [text[done:a], escaped]
                done = b
            read = b
    return "".join(out) + text[done:] if out else text


def requoted(text: str, claim: Claim = EVERYTHING) -> str:
    """``text`` with every claimed marker that ``unquoted`` escapes written plainly again:
    what a rejected block shows of a body ``unquoted`` changed, compared with the original."""
    escapes = {_escaped(m): m for m in _string_markers(_parsed(claim))}
    return alternation(escapes).sub(lambda m: escapes[m.group()], text) if escapes else text


def _parsed(claim: Claim) -> list[Dialect]:
    return [d for d in BY_ID.values() if claim.speaks(d.id) and d.parse is not None]


def _string_markers(dialects: Sequence[Dialect]) -> list[str]:
    """The markers ``unquoted`` escapes, longest first."""
    found = {m for d in dialects for m in (*d.opens, *d.closes) if len(m) > 1}
    return sorted(found, key=len, reverse=True)


def _escaped(marker: str) -> str:
    return f"\\u{ord(marker[0]):04x}{marker[1:]}"


def _blocks(text: str, dialects: Sequence[Dialect]) -> list[tuple[int, list[Dialect]]]:
    """Where each block's body starts, with the claimed dialects its opener opens."""
    by_opener: dict[str, list[Dialect]] = {}
    for d in dialects:
        for opener in d.opens:
            by_opener.setdefault(opener, []).append(d)
    found: list[tuple[int, list[Dialect]]] = []
    lead = len(text) - len(text.lstrip())
    at_start = [d for o, ds in by_opener.items() if len(o) == 1 for d in ds]
    if at_start and text.startswith(tuple(o for o in by_opener if len(o) == 1), lead):
        found.append((lead, at_start))
    longer = [o for o in by_opener if len(o) > 1]
    if longer:
        for match in alternation(longer).finditer(text):
            found.append((match.end(), by_opener[match.group()]))
    return sorted(found, key=lambda f: f[0])


def _value_strings(text: str, start: int, group: Sequence[Dialect]) -> list[tuple[int, int]]:
    """The spans of the strings inside the first balanced value of the body at ``start``,
    when a dialect of ``group`` reads that body as JSON or Python literals."""
    rest = text[start:].lstrip()
    first = rest[:1]
    if not first or not any((d.lexer_for(first) or d.first_lexer) in _VALUE_LEXERS for d in group):
        return []
    closers = tuple(c for d in group for c in d.closes if c)
    spans: list[tuple[int, int]] = []
    depth, at = 0, start
    while True:
        token = _BODY_TOKEN_RE.search(text, at)
        closer = min((i for c in closers if (i := text.find(c, at)) >= 0), default=-1)
        if token is None or 0 <= closer < token.start():
            return spans
        at = token.end()
        char = token.group()
        if char in "\"'":
            string = _STRING_RE.match(text, token.start())
            if string is None:  # unterminated: the string, and the value, run to the end
                return [*spans, (token.start(), len(text))] if depth else spans
            if depth:
                spans.append(string.span())
            at = string.end()
        elif char in "[{":
            depth += 1
        elif depth:
            depth -= 1
            if not depth:
                return spans
