"""Argument values: JSON objects with their awkward corners, and how each dialect writes them.

The value drawn is the ground truth; the dialects' renderers write it the way
a model would (JSON in any of its spacings, with or without ``\\uXXXX``
escapes, or Gemma 4's ``<|"|>`` strings). Strings may hold braces, quotes, backslashes,
unicode and marker text, because a closing marker inside a string must not
close a block (policy 4). Contexts that cannot hold marker text (a JSON answer
that is released as text, an XML-ish value) ask for ``markup=False``.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Sequence
from typing import Any

from tcr.detector.formats import OPENER_RE
from tcr.dialects import DIALECTS
from tcr.dialects._record import JsonStyle
from tcr.dialects._writing import json_text

from .source import Source

__all__ = [
    "JsonStyle",
    "arguments",
    "defuse",
    "json_style",
    "json_text",
    "string",
    "text",
]

# Characters, one byte each: ASCII, controls, accents, scripts, combining marks,
# invisible characters and emoji parts. The top of the byte range reads any
# code point (surrogates excepted, which no UTF-8 stream can carry).
_ALPHABET = (
    "ab xyzAZ09_-.,:;!?'\"`~@#$%^&*()[]{}<>|/\\+=\n\t\r\x00\x1b\x7f"
    "éüßñøçÅΩπλжЖя漢字東京天気日本語한국어مرحباשלום"
    "\u0301\u0308\u200b\u200c\u200d\u2028\u2029\ufeff\u00a0\u3000\ufffd"
    "😀👍🏽🇫🇷👩💻🎉"
)
_ANY_CODE_POINT = 240
# Marker text that may sit inside a string value (policy 4: it must not close a block).
_MARKUP = tuple(dict.fromkeys(m for d in DIALECTS for m in d.markup))
_STRINGS = (
    "Paris",
    "",
    "{",
    "}",
    "{}",
    '{"a": 1}',
    "[1, 2]",
    '"',
    'say "hi"',
    "\\",
    "C:\\temp\\new",
    "\\u00e9",
    "line\nbreak",
    "tab\there",
    "café",
    "東京の天気",
    "😀👩‍💻",
    "}}} {{{",
)
_KEYS = ("city", "query", "days", "unit", "path", "content", "q", "a b", "", "ключ", "{", '"')
_FLOATS = (0.5, -1.25, 3.14, 1e-7, 1e300, -0.0, 5e-324, 1.7976931348623157e308, 2.5e16)
_INTEGERS = (0, 1, -1, 42, 255, 65536, 2**31, -(2**53), 10**15)


def defuse(text: str, markers: re.Pattern[str] | None = OPENER_RE) -> str:
    """``text`` with every distinctive opening marker broken by a space after its first character.

    A space cannot complete a marker (none contains one), so the result holds none.
    ``markers``: the openers to break (a claim's; ``None``: none).
    """
    if markers is None:
        return text
    match = markers.search(text)
    while match is not None:
        at = match.start() + 1
        text = text[:at] + " " + text[at:]
        match = markers.search(text, at)
    return text


def _char(src: Source) -> str:
    index = src.byte()
    if index < _ANY_CODE_POINT:
        return _ALPHABET[index % len(_ALPHABET)]
    code = src.below(0x110000 - 0x800)
    return chr(code + 0x800 if code >= 0xD800 else code)  # skip the surrogates


def text(src: Source, most: int) -> str:
    """Up to ``most`` characters of any kind."""
    return "".join(_char(src) for _ in range(src.count(most)))


def string(src: Source, *, markup: bool = True, own: Sequence[str] = ()) -> str:
    """A string value; with ``markup=False`` it holds no opening marker.

    ``own``: the markers of the block the value is written in, drawn as often as all
    the others together: a closing marker inside its own block's string is what policy 4
    is about, and among every dialect's markers (55 of them) it would be one draw in 55.
    """
    pieces = []
    for _ in range(src.count(3)):
        kind = src.below(3 + markup)
        if kind == 0:
            pieces.append(src.choice(_STRINGS))
        elif kind == 1:
            pieces.append(text(src, 6))
        elif kind == 2:
            pieces.append(src.choice(_KEYS))
        else:
            pieces.append(src.choice(own if own and src.flag() else _MARKUP))
    joined = "".join(pieces)
    return joined if markup else defuse(joined)


def _float(src: Source) -> float:
    if src.flag():
        return src.choice(_FLOATS)
    value: float = struct.unpack("<d", bytes(src.byte() for _ in range(8)))[0]
    return value if math.isfinite(value) else 0.0


def _value(src: Source, markup: bool, depth: int, own: Sequence[str] = ()) -> Any:
    kind = src.below(8 if depth < 2 else 5)
    if kind == 0:
        return src.choice((0, 1, True, False, None))
    if kind == 1:
        return string(src, markup=markup, own=own)
    if kind == 2:
        return src.choice(_INTEGERS) if src.flag() else src.below(1 << 32) - (1 << 31)
    if kind == 3:
        return _float(src)
    if kind == 4:
        return src.choice(_KEYS)
    if kind == 5:
        return [_value(src, markup, depth + 1, own) for _ in range(src.count(3))]
    return _object(src, markup, depth + 1, 3, own)


def _key(src: Source) -> str:
    return text(src, 4) if src.flag() else src.choice(_KEYS)


def _object(
    src: Source, markup: bool, depth: int, most: int, own: Sequence[str] = ()
) -> dict[str, Any]:
    return {_key(src): _value(src, markup, depth, own) for _ in range(src.count(most))}


def arguments(src: Source, *, markup: bool = True, own: Sequence[str] = ()) -> dict[str, Any]:
    """A call's arguments: a JSON object, possibly empty, possibly nested; ``own`` as for
    ``string``."""
    return _object(src, markup, 0, 4, own)


# --- writing JSON ------------------------------------------------------------------


def json_style(src: Source) -> JsonStyle:
    return src.flag(), src.below(3)
