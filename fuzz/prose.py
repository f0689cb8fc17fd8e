"""Prose around the blocks: unicode, emoji, CJK, code-ish punctuation and near-miss markers.

Near misses are the text that begins like a marker and is not one
(``<tool_result>``, ``<tools`` then `` do not``, ``[TOOL``, a ```` ```js ````
fence, ``<|python``): a detector must hold them back only while they could
still become a marker, and then show them, nothing lost or doubled (ADR 0018,
ARCHITECTURE.md §15.1). Every registered dialect contributes its own
(``near_misses``), read off its record, so a new family gets them for free.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from tcr.detector.formats import MARKERS, alternation
from tcr.dialects import DIALECTS, Dialect

from .source import Source
from .values import text

__all__ = ["NEAR_MISSES", "near_misses", "prose"]

_WORDS = (
    "Hi",
    "the",
    "weather",
    "in",
    "Paris",
    "I'll",
    "check",
    "café",
    "naïve",
    "Straße",
    "東京",
    "天気予報",
    "漢字",
    "😀",
    "👍🏽",
    "👩‍💻",
    "🇫🇷",
    "مرحبا",
    "Привет",
    "42",
    "x²",
)
_GLUE = (
    " ",
    "\n",
    ", ",
    ". ",
    "!",
    "?",
    ":",
    "\t",
    "\r\n",
    "'",
    '"',
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    "|",
    "`",
    "\\",
    "{{ user.name }}",
    "a < b",
    "[1]",
)
# Look-alikes of no dialect in particular: markup a model writes in ordinary answers.
_GENERIC = (
    "<tool_result>",
    " do not",
    "```js",
    "<tools-list>",
    "```xml\n[",
)
# Text holding one of these would open a block. A one-character opener ("[", "{") opens
# only at message start, where the writer keeps prose from beginning with one.
_OPENER_RE = alternation(m for d in DIALECTS for m in d.opens if len(m) > 1)
# Characters a careless writer or tokenizer swaps for their ASCII twins (DeepSeek's
# full-width bars, its "▁"), and back: NFKC folds the full-width ones.
_ASCII_TWIN = {"▁": "_"}
_WIDE_TWIN = {"|": "｜", "_": "▁"}


def _ascii(marker: str) -> str:
    return "".join(_ASCII_TWIN.get(c, unicodedata.normalize("NFKC", c)) for c in marker)


def _widened(marker: str) -> str:
    return "".join(_WIDE_TWIN.get(c, c) for c in marker)


def _case_flipped(marker: str) -> str:
    """The marker with its first letter in the other case (``<Tool_call>``, ``[tOOL_CALLS]``)."""
    for i, c in enumerate(marker):
        if c.swapcase() != c:
            return marker[:i] + c.swapcase() + marker[i + 1 :]
    return marker


def _variants(marker: str) -> Iterator[str]:
    """Text one step away from ``marker``: cut short, or one character altered."""
    yield marker[:-1]  # "[TOOL_CALLS", "functools", "<tool_call"
    yield marker[: (len(marker) + 1) // 2]  # stopped halfway
    middle = len(marker) // 2
    yield marker[:middle] + marker[middle + 1 :]  # one character dropped
    yield marker[:1] + " " + marker[1:]  # "< tool_call>": a space after the first character
    yield _case_flipped(marker)
    yield _ascii(marker)  # "<|tool▁calls▁begin|>" → "<|tool_calls_begin|>"
    yield _widened(marker)  # "<|python_tag|>" → "<｜python▁tag｜>"


def near_misses(dialect: Dialect) -> tuple[str, ...]:
    """Text that looks like ``dialect``'s markup and is none: it must stay text.

    Read off the record: each marker of two characters or more cut short or altered
    by one character, each closing marker whole (no block is open in prose), and the
    first half of its example block where that opens none (a call of an at-start
    dialect quoted mid-answer). None of them holds an opening marker.
    """
    found: list[str] = []
    for marker in dialect.opens + dialect.closes:
        if len(marker) > 1:
            found += (v for v in _variants(marker) if v != marker)
    found += dialect.closes
    block = dialect.example.block
    found.append(block[: len(block) // 2])
    kept = (v for v in found if len(v.strip()) > 1 and not _OPENER_RE.search(v))
    return tuple(dict.fromkeys(kept))


NEAR_MISSES: tuple[str, ...] = tuple(
    dict.fromkeys((*_GENERIC, *(v for d in DIALECTS for v in near_misses(d))))
)


def prose(src: Source, *, markers: bool = False) -> str:
    """Text between blocks; with ``markers`` it may hold whole markers (inside reasoning)."""
    pieces = []
    for _ in range(1 + src.count(7)):
        kind = src.below(4 + markers)
        if kind == 0:
            pieces.append(src.choice(_WORDS))
        elif kind == 1:
            pieces.append(src.choice(_GLUE))
        elif kind == 2:
            pieces.append(src.choice(NEAR_MISSES))
        elif kind == 3:
            pieces.append(text(src, 3))
        else:
            pieces.append(src.choice(MARKERS))
    return "".join(pieces)
