"""Gemma's call literals, ``call:NAME{key:QvQ,n:3,…}``, for any string-quote token ``Q``.

Gemma 4 quotes strings with ``<|"|>``, FunctionGemma with ``<escape>``; neither
has escapes inside a string. Keys are bare words (or quoted), values are quoted
strings, JSON scalars, ``{…}`` objects and ``[…]`` lists. Reading and writing are
one record per quote token, so the two families share them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    canonical_arguments,
    check_name,
    decode_at,
    decode_whole,
    skip_space,
)

__all__ = ["CallLiterals"]

_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_KEY = re.compile(r'[^\s:,{}\[\]<>"]+')
_MAX_DEPTH = 200  # recursion stays far below Python's limit on adversarial input


@dataclass(frozen=True, slots=True)
class CallLiterals:
    """Reading and writing call literals whose strings open and close with ``quote``."""

    quote: str
    safe_quote: str  # what ``safe`` writes instead of the quote token inside a string

    # --- reading ---------------------------------------------------------------------

    def calls(self, text: str) -> list[ParsedCall]:
        """``call:NAME{…}``, several in a row (white space or commas between)."""
        calls: list[ParsedCall] = []
        pos = 0
        while pos < len(text):
            if not text.startswith("call:", pos):
                raise BodyError("malformed", f"expected 'call:' at offset {pos}")
            brace = text.find("{", pos)
            if brace < 0:
                raise BodyError("malformed", f"no '{{' after 'call:' at offset {pos}")
            name = check_name(text[pos + 5 : brace], "after 'call:'")
            arguments, pos = self._value(text, brace, 0)
            calls.append(ParsedCall(name, canonical_arguments(arguments)))
            while pos < len(text) and (text[pos].isspace() or text[pos] == ","):
                pos += 1
        return calls

    def _value(self, text: str, pos: int, depth: int) -> tuple[object, int]:
        pos = skip_space(text, pos)
        if depth > _MAX_DEPTH:
            raise BodyError("malformed", f"nested deeper than {_MAX_DEPTH} at offset {pos}")
        quote = self.quote
        if text.startswith(quote, pos):
            end = text.find(quote, pos + len(quote))
            if end < 0:
                raise BodyError("malformed", f"unterminated {quote} string at offset {pos}")
            return text[pos + len(quote) : end], end + len(quote)
        if text.startswith('"', pos):  # some renderers quote strings as JSON instead
            return decode_at(text, pos)
        if text.startswith("{", pos):
            return self._container(text, pos, depth, "}")
        if text.startswith("[", pos):
            return self._container(text, pos, depth, "]")
        match = _SCALAR.match(text, pos)
        if match is None:
            raise BodyError(
                "malformed", f"expected a value at offset {pos}: {text[pos : pos + 20]!r}"
            )
        return decode_whole(match.group()), match.end()

    def _container(self, text: str, pos: int, depth: int, close: str) -> tuple[object, int]:
        """``{key:value,…}`` (bare or quoted keys) or ``[value,…]``, from its opening bracket."""
        items: list[object] = []
        fields: dict[str, object] = {}
        pos = skip_space(text, pos + 1)
        while not text.startswith(close, pos):
            if close == "}":
                key, pos = self._key(text, pos)
                pos = skip_space(text, pos)
                if not text.startswith(":", pos):
                    raise BodyError("malformed", f"expected ':' after key {key!r} at offset {pos}")
                fields[key], pos = self._value(text, pos + 1, depth + 1)
            else:
                value, pos = self._value(text, pos, depth + 1)
                items.append(value)
            pos = skip_space(text, pos)
            if text.startswith(",", pos):
                pos = skip_space(text, pos + 1)
            elif not text.startswith(close, pos):
                raise BodyError("malformed", f"expected ',' or {close!r} at offset {pos}")
        return (fields if close == "}" else items), pos + 1

    def _key(self, text: str, pos: int) -> tuple[str, int]:
        if text.startswith(self.quote, pos):
            key, end = self._value(text, pos, 0)
            return str(key), end
        match = _KEY.match(text, pos)
        if match is None:
            raise BodyError(
                "malformed", f"expected a key at offset {pos}: {text[pos : pos + 20]!r}"
            )
        return match.group(), match.end()

    # --- writing ---------------------------------------------------------------------

    def text(self, value: object) -> str:
        """``value`` written as arguments: ``{key:QtextQ,n:3}``.

        Strings must not contain the quote token (there are no escapes): pass
        values through ``safe`` first.
        """
        if isinstance(value, str):
            return self.quote + value + self.quote
        if value is None or isinstance(value, bool | int | float):
            return json.dumps(value)
        if isinstance(value, list):
            return "[" + ",".join(self.text(item) for item in value) + "]"
        if isinstance(value, dict):
            fields = (f"{self._written_key(key)}:{self.text(item)}" for key, item in value.items())
            return "{" + ",".join(fields) + "}"
        raise TypeError(f"not a JSON value: {value!r}")

    def _written_key(self, key: str) -> str:
        return key if _KEY.fullmatch(key) else self.quote + key + self.quote

    def safe(self, value: Any) -> Any:
        """``value`` with the quote token taken out of every string and key."""
        if isinstance(value, str):
            return value.replace(self.quote, self.safe_quote)
        if isinstance(value, list):
            return [self.safe(item) for item in value]
        if isinstance(value, dict):
            return {self.safe(key): self.safe(item) for key, item in value.items()}
        return value
