"""Body parsers: the text inside a tool-call block → calls (ARCHITECTURE.md §5.3, "body" column).

Each dialect's parser lives in its module of ``tcr.dialects``; this module
dispatches on the dialect id and strips markers for a rejection. The streaming
state machine in ``tcr.detector.core`` finds where a block starts and ends and
whose it is; the parsers only judge what is between the markers. Every failure
is a ``BodyError`` whose ``reason`` the detector copies into ``Rejected``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tcr.dialects import BY_ID
from tcr.dialects._calls import BodyError, ParsedCall, call_from_json, canonical_arguments
from tcr.tool_specs import typed_value

__all__ = [
    "BodyError",
    "ParsedCall",
    "call_from_json",
    "canonical_arguments",
    "parse_body",
    "strip_markers",
    "typed_call",
]


def parse_body(dialect_id: str, body: str) -> list[ParsedCall]:
    """The calls in a block body (the text between its markers); raises only ``BodyError``."""
    dialect = BY_ID.get(dialect_id)
    if dialect is None or dialect.parse is None:
        raise BodyError("malformed", f"{dialect_id!r} is not a call dialect")
    if not body.strip():
        raise BodyError("malformed", "the block is empty")
    return dialect.parse(body)


def strip_markers(dialect_id: str, raw: str, *, closed: bool = True) -> str:
    """What the user is shown for a rejected block: ``raw`` without its markers (policy 12).

    Read from the dialect record: the opening marker less the characters it keeps
    for the body (the ``{`` of a fence), and a trailing closing marker if present.
    Pass ``closed=False`` for an unterminated block, whose raw may end in a closing
    marker that sat inside a JSON string (policy 4) and so is content.
    """
    dialect = BY_ID.get(dialect_id)
    if dialect is None:
        return raw
    text = raw
    for opener in dialect.opens:
        marker = opener[: len(opener) - dialect.keep]
        if marker and text.startswith(marker):
            text = text[len(marker) :]
            break
    if closed:
        for closer in dialect.closes:
            if text.endswith(closer):
                return text[: -len(closer)]
    return text


def typed_call(call: ParsedCall, schemas: Mapping[str, Any] | None) -> ParsedCall:
    """``call`` with the values of an untyped body typed by its tool's parameter
    ``schemas`` (``tcr.tool_specs.typed_value``); an argument the schemas do not name,
    and every value of a JSON body, stays as read."""
    if call.texts is None or not schemas:
        return call
    arguments = json.loads(call.arguments)
    for key, text in call.texts:
        if key in schemas:
            arguments[key] = typed_value(text, schemas[key])
    return ParsedCall(call.name, canonical_arguments(arguments), call.texts)
