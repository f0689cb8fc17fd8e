"""Prose around the blocks: unicode, emoji, CJK, code-ish punctuation and near-miss markers.

Near misses are the text that begins like a marker and is not one
(``<tool_result>``, ``<tools`` then `` do not``, ``[TOOL``, a ```` ```js ````
fence, ``<|python``): a detector must hold them back only while they could
still become a marker, and then show them, nothing lost or doubled (ADR 0018,
ARCHITECTURE.md §15.1).
"""

from __future__ import annotations

from tcr.detector.formats import MARKERS

from .source import Source
from .values import text

__all__ = ["NEAR_MISSES", "prose"]

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
NEAR_MISSES: tuple[str, ...] = (
    "<tool_result>",
    "<tools",
    " do not",
    "[TOOL",
    "```js",
    "<|python",
    "<tool_call",
    "<|tool_call",
    "<think",
    "```json",
    "```json\n",
    "[TOOL_CALLS",
    "<tools-list>",
    "```xml\n[",
    "</tool_call>",
    "<tool_call|>",
    "<|eom_id|>",
    "</think>",
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
