"""Pieces the disagreeing test parsers share: marker prefixes, a closer search that looks at
each character once, and JSON read as strictly as ``tcr.dialects._calls`` reads it."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from parsers.hermes import _Body, _Strings

__all__ = ["Body", "CloseFinder", "decode_json", "held_prefix", "is_unicode"]

Body = _Body


def held_prefix(text: str, marker: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``marker``."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


@dataclass(slots=True)
class CloseFinder:
    """Where ``closer`` starts in a growing body, each character looked at once.

    In a JSON body (its first non-space character is ``{`` or ``[``, as the reference's
    Hermes lexer reads it) a closer inside a string does not count; ``strings=False``
    (a bug switch) counts it anyway. A possible closer cut off by the body's end is
    ``held``: its length, so a parser may treat it as markup when the message ends."""

    closer: str
    strings: bool = True
    json: bool | None = None  # None until the body's first non-space character
    scanned: int = 0
    held: int = 0
    _inside: _Strings = field(default_factory=_Strings)

    def find(self, body: Body) -> int:
        if self.json is None:
            head = body.head.lstrip()
            if not head:
                return -1
            self.json = head[0] in "{["
        start = self.scanned
        text = body.since(start)
        self.held = 0
        if not (self.json and self.strings):
            at = text.find(self.closer)
            if at >= 0:
                return start + at
            self.held = held_prefix(text, self.closer)
            self.scanned = start + len(text) - self.held
            return -1
        position = 0
        while position < len(text):
            char = text[position]
            if self._inside.outside(char) and char == "<":
                if text.startswith(self.closer, position):
                    return start + position
                if self.closer.startswith(text[position:]):
                    self.held = len(text) - position
                    break  # look again when more comes
            position += 1
        self.scanned = start + position
        return -1


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} overflows a float")
    return value


# As the reference reads a body: raw control characters in strings allowed, NaN refused.
_DECODER = json.JSONDecoder(
    strict=False, parse_constant=_reject_constant, parse_float=_finite_float
)


def decode_json(text: str) -> tuple[bool, object]:
    """``(True, value)`` if ``text`` is one JSON value with only white space around it."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return False, None
    return (not text[end:].strip()), value


def is_unicode(value: object) -> bool:
    """Whether ``value`` can be written out as UTF-8 JSON (no lone surrogate in it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError):
        return False
    return True
