"""The FSM's dialect table, built from the registry in ``tcr.dialects`` (ARCHITECTURE.md §5.3).

The state machine in ``tcr.detector.core`` reads this table and nothing else
about dialects; adding one is adding its module to ``tcr.dialects``. The TUI and
the docs read the same records. ``FORMATS``/``Format`` are the names ARCHITECTURE.md §5.3
and older callers use for the same records.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tcr.dialects import ALIASES, BY_ID, DIALECTS, Closing, Dialect
from tcr.errors import TcrError, did_you_mean

__all__ = [
    "AT_START_OPENERS",
    "BY_ID",
    "DISTINCTIVE_OPENERS",
    "FORMATS",
    "HOLDBACK_BOUND",
    "MARKERS",
    "MODEL_SEEDS",
    "NOTHING",
    "OPENER_RE",
    "SHARING",
    "Closing",
    "Format",
    "Lexicon",
    "alternation",
    "claimed",
    "format_for_model",
    "holdback_bound",
    "lexicon",
    "prefix_regex",
]

Format = Dialect
FORMATS: tuple[Dialect, ...] = DIALECTS


def _sharing() -> dict[str, tuple[Dialect, ...]]:
    """Opening marker -> the dialects that open on it, in registry order."""
    groups: dict[str, tuple[Dialect, ...]] = {}
    for d in DIALECTS:
        for marker in d.opens:
            groups[marker] = (*groups.get(marker, ()), d)
    for marker, group in groups.items():
        # One block is read before its body says whose it is: the lexer must not care.
        shapes = {
            (d.closes, d.closing, d.anywhere, d.keep, d.kind, d.first_lexer, d.quote) for d in group
        }
        if len(shapes) > 1:
            raise ValueError(f"dialects opening on {marker!r} disagree on how a block closes")
    return groups


SHARING: dict[str, tuple[Dialect, ...]] = _sharing()
MARKERS: tuple[str, ...] = tuple(sorted({m for d in DIALECTS for m in (*d.opens, *d.closes)}))


def alternation(tokens: Iterable[str]) -> re.Pattern[str]:
    """A regex matching any of ``tokens``; the longest wins at one position.

    Written as a trie (``<tool_call>`` and ``<tools>`` share ``<tool``): the regex
    engine tries the branches of one character at a time, not every token at
    every position, which is what the detector's hot path pays for
    (bench_detector.py, markup rows).
    """
    words = set(tokens)
    if "" in words:  # the empty token matches everywhere: no trie to build
        return re.compile("|".join(re.escape(t) for t in sorted(words, key=len, reverse=True)))
    return re.compile(_trie_pattern(words, partial=False))


def opener_or_partial_regex(openers: Iterable[str]) -> re.Pattern[str] | None:
    """Where the printing side must leave its fast path: one of ``openers`` begins here,
    or a proper prefix of one runs to the end of the text. ``None`` if there are none.

    The longest opener wins at one position, as in ``alternation``; a match that ends
    at the end of the text may be a whole opener or a prefix of one.
    """
    words = {w for w in openers if w}
    return re.compile(_trie_pattern(words, partial=True)) if words else None


def _trie_pattern(words: set[str], *, partial: bool) -> str:
    """The regex of a trie of ``words``: greedy, so the longest word wins at a position.

    With ``partial``, a proper prefix of a word that reaches the end of the text (``\\Z``)
    matches too.
    """
    END = object()
    trie: dict[Any, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[END] = True

    def pattern(node: dict[Any, Any]) -> str:
        alts = []
        for ch, sub in sorted((k, v) for k, v in node.items() if k is not END):
            more = pattern(sub) if len(sub) > (END in sub) else ""
            if END in sub:  # a whole word: done here, or a longer one
                rest = f"(?:{more})?" if more else ""
            else:  # a proper prefix: it goes on, or (partial) the text ends here
                rest = f"(?:{more}|\\Z)" if partial else more
            alts.append(re.escape(ch) + rest)
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return pattern(trie)


def prefix_regex(words: Iterable[str]) -> re.Pattern[str] | None:
    """A regex matching any non-empty prefix of ``words`` that runs to the end of the text.

    Built as a trie so one C-level search replaces a Python loop over the tail.
    ``None`` when there are no non-empty words (nothing can be a prefix).
    """
    trie: dict[str, dict[str, Any]] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
    if not trie:
        return None

    def alternatives(node: dict[str, Any]) -> str:
        alts = [
            re.escape(ch) + (f"(?:{alternatives(sub)})?" if sub else "")
            for ch, sub in sorted(node.items())
        ]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return re.compile(alternatives(trie) + r"\Z")


def claimed(ids: Iterable[str] | None) -> tuple[Dialect, ...]:
    """The registered dialects with these ids, in registry order; ``None`` claims them all.

    An alias (``tcr.dialects.ALIASES``: ``llama3_json``, ``bracket_tool_calls``, …)
    claims every id it stands for. An unknown id, a bare string (its characters are
    no ids) or an empty claim is a ``TcrError`` that lists the known ids.
    """
    if ids is None:
        return DIALECTS
    if isinstance(ids, str):
        raise TcrError(f"dialects: a collection of ids, not the string {ids!r}; known: {_KNOWN}")
    return _claimed(ids if isinstance(ids, frozenset) else frozenset(ids))


_KNOWN = ", ".join(BY_ID)


@functools.cache
def _claimed(wanted: frozenset[str]) -> tuple[Dialect, ...]:  # made once per claim (per detector)
    for dialect_id in sorted(wanted):
        if dialect_id not in BY_ID and dialect_id not in ALIASES:
            hint = did_you_mean(dialect_id, [*BY_ID, *ALIASES])
            raise TcrError(f"unknown dialect {dialect_id!r}{hint}; known: {_KNOWN}")
    if not wanted:
        raise TcrError(f"dialects: the claim names no dialect; known: {_KNOWN}")
    ids = {i for w in wanted for i in ALIASES.get(w, (w,))}
    return tuple(d for d in DIALECTS if d.id in ids)


@dataclass(frozen=True, slots=True)
class Lexicon:
    """The markers one claim opens blocks on, and the regexes the printing side needs.

    A detector restricted to a claim reads every other dialect's markup as plain
    text: its markers are in none of these tables.
    """

    ids: frozenset[str]
    sharing: Mapping[str, tuple[Dialect, ...]]  # opening marker -> the claimed dialects on it
    distinctive: tuple[str, ...]  # openers that open anywhere (policy 3)
    at_start: tuple[str, ...]  # openers that open only while all content is white space
    holdback_bound: int  # policy 2: longest claimed opening marker - 1
    opener_re: re.Pattern[str] | None  # any distinctive opener; None if the claim has none
    partial_opener_re: re.Pattern[str] | None  # a proper prefix of one at the end of the text
    # A distinctive opener, or a proper prefix of one at the end of the text: where the
    # printing side must leave its fast path. One trie-shaped search per chunk
    # (opener_or_partial_regex; bench_detector.py, markup rows).
    stop_re: re.Pattern[str] | None
    # At message start, a proper prefix (to the end of the text) of an at-start opener
    # ("<|python_" of "<|python_start|>") or of a distinctive one that begins with an
    # at-start one ("[T" of "[TOOL_CALLS]" beside "["): held, the start kept, until the
    # text says which marker it is (policy 1 before policy 3).
    start_hold_re: re.Pattern[str] | None
    # The characters a distinctive opener begins with: a chunk holding none of them has
    # no opener and no opener's beginning, whatever ``stop_re`` is (issue 37: with one
    # such character, one ``str`` test instead of a regex search per chunk).
    stop_first: str = ""


def _lexicon(dialects: tuple[Dialect, ...]) -> Lexicon:
    sharing = {
        marker: kept
        for marker, group in SHARING.items()
        if (kept := tuple(d for d in group if d in dialects))
    }
    distinctive = tuple(m for m, g in sharing.items() if g[0].anywhere)
    opener_re = alternation(distinctive) if distinctive else None
    partial_opener_re = prefix_regex(m[:-1] for m in distinctive)
    at_start = tuple(m for m, g in sharing.items() if not g[0].anywhere)
    shadowing = [d for d in distinctive if any(d.startswith(a) for a in at_start)]
    return Lexicon(
        ids=frozenset(d.id for d in dialects),
        sharing=sharing,
        distinctive=distinctive,
        at_start=at_start,
        holdback_bound=max((len(m) for m in sharing), default=1) - 1,
        opener_re=opener_re,
        partial_opener_re=partial_opener_re,
        stop_re=opener_or_partial_regex(distinctive),
        start_hold_re=prefix_regex(m[:-1] for m in (*at_start, *shadowing)),
        stop_first="".join(sorted({m[0] for m in distinctive if m})),
    )


FULL: Lexicon = _lexicon(DIALECTS)  # the reference's claim: every dialect
# Parsing nothing (``empty_tools="text"`` with no tools offered): no opener, nothing held.
NOTHING: Lexicon = _lexicon(())
DISTINCTIVE_OPENERS: tuple[str, ...] = FULL.distinctive
# Policy 3: markers that open a block only while all content so far is white space.
AT_START_OPENERS: tuple[str, ...] = FULL.at_start
# Policy 2: outside a block at most (longest opening marker - 1) characters are held.
HOLDBACK_BOUND: int = FULL.holdback_bound


@functools.cache
def _cached_lexicon(ids: frozenset[str]) -> Lexicon:
    dialects = claimed(ids)  # an unknown id raises, and is not cached
    return FULL if len(dialects) == len(DIALECTS) else _lexicon(dialects)


def lexicon(ids: Iterable[str] | None = None) -> Lexicon:
    """The tables of the claim ``ids`` (``None``: every dialect, the reference's own)."""
    if ids is None:
        return FULL
    if isinstance(ids, str):
        claimed(ids)  # raises: a string's characters are no ids
    return _cached_lexicon(ids if isinstance(ids, frozenset) else frozenset(ids))


def holdback_bound(ids: Iterable[str] | None = None) -> int:
    """Policy 2's bound for a detector claiming ``ids``: its longest opening marker - 1."""
    return lexicon(ids).holdback_bound


# Policy 3: where a block may open anywhere.
OPENER_RE: re.Pattern[str] = alternation(DISTINCTIVE_OPENERS)

# ADR 0018's model-name seed table (ARCHITECTURE.md §15.1): the first matching pattern
# wins. A seed is a hint only; a seeded detector emits exactly what a cold one emits
# (policy 11).
MODEL_SEEDS: tuple[tuple[str, str], ...] = tuple(
    (pattern, d.id) for d in DIALECTS for pattern in d.model_seeds
)


def format_for_model(name: str, dialects: Iterable[str] | None = None) -> str | None:
    """The dialect a model of this name usually writes, or ``None`` if unknown.

    ``dialects`` restricts the seeds to a claim: a model whose usual dialect is not
    claimed gets no seed (the first claimed match wins).
    """
    ids = lexicon(dialects).ids
    base = name.strip().lower().rsplit("/", 1)[-1]
    for pattern, dialect_id in MODEL_SEEDS:
        if dialect_id in ids and fnmatch.fnmatchcase(base, pattern):
            return dialect_id
    return None
