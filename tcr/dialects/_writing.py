"""Pieces the renderers are made of: call objects and their near misses, JSON and XML-ish text.

A renderer writes drawn calls the ways models do and states the verdict the
contract asks for: the calls when the body is call-shaped and every name is
declared (policy 7), else a rejection showing the body without its markers
(policy 12).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from tcr.dialects._calls import Trim
from tcr.dialects._record import Call, Dialect, Draws, JsonStyle, Rendered, Tools

__all__ = [
    "FLAVORS",
    "MAX_CALLS",
    "SHAPES",
    "XML_FLAVORS",
    "XML_KEY_TYPES",
    "BodyText",
    "Calls",
    "json_calls",
    "json_text",
    "one_json_call",
    "rendered",
    "xml_arguments",
]

# How a block goes wrong, most often not at all; shrinking ends on "call".
FLAVORS = ("call", "call", "call", "missing_name", "name_only", "not_a_call")
XML_FLAVORS = ("call", "call", "call", "missing_name")
# How a call object spells its arguments. Not OpenAI's {"type": "function", "function": {…}}:
# no engine reads it as a model's call (tcr.dialects._calls.call_from_json).
SHAPES = ("arguments", "parameters", "arguments_first")
# XML-ish argument keys and the JSON Schema type of the values written under them: the
# values are text, so a parser types them by the tool's schema (ARCHITECTURE.md §5.2,
# "Tool specs"); fuzz generates schemas that say these types.
XML_KEY_TYPES: tuple[tuple[str, str], ...] = (
    ("city", "string"),
    ("query", "string"),
    ("days", "integer"),
    ("limit", "integer"),
    ("path", "string"),
    ("verbose", "boolean"),
    ("content", "string"),
    ("ratio", "number"),
    ("filters", "object"),
    ("tags", "array"),
    ("unit", "string"),
)
_XML_INTEGERS = (3, 0, 1, 10, -5, 42, 65536, 10**15)
_XML_NUMBERS = (0.5, -1.25, 3.14, 2.5e-3, 100.75, 1e21)
MAX_CALLS = 3


def json_text(value: object, style: JsonStyle = (False, 0)) -> str:
    """``value`` as JSON text: compact, spaced or indented, with ``\\uXXXX`` escapes or not."""
    ascii_only, spacing = style
    if spacing == 0:
        return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
    if spacing == 1:
        return json.dumps(value, ensure_ascii=ascii_only)
    return json.dumps(value, ensure_ascii=ascii_only, indent=2)


def _declared(name: str, tools: Tools) -> bool:
    return tools is None or name in tools  # policy 7: [] declares nothing


def _call_object(
    draws: Draws, name: str, flavor: str, *, optional: bool, markup: bool, shapes: Sequence[str]
) -> tuple[object, Call | None]:
    """A JSON call object (or a near miss) and the call it is, if any.

    ``optional``: a bare ``{"name"}`` is a call with no arguments (a distinctive
    marker already said "call"); fenced and bare JSON need the arguments.
    """
    src = draws.tail
    shape = src.choice(shapes)
    as_string = src.flag()  # OpenAI style: the arguments object serialised as a string
    args = draws.arguments(markup=markup)
    value: object = args
    if as_string:
        value = json_text(args, draws.json_style()) if args or src.flag() else ""
    if flavor == "missing_name":
        return {"arguments": value}, None
    if flavor == "name_only":
        return {"name": name}, Call(name, {}) if optional else None
    if flavor == "not_a_call":
        return {"answer": args}, None
    call = Call(name, args)
    if shape == "parameters":
        return {"name": name, "parameters": value}, call
    if shape == "arguments_first":
        return {"arguments": value, "name": name}, call
    return {"name": name, "arguments": value}, call


class Calls:
    """The calls of one block: the first may be a near miss, the others are calls."""

    def __init__(self, draws: Draws, tools: Tools, *, most: int, flavors: Sequence[str]) -> None:
        self.flavor = draws.flavor(flavors)
        self.names = [draws.name(k) for k in range(draws.count(most))]
        self.declared = all(_declared(n, tools) for n in self.names)

    def accepted(self, *, optional: bool = True) -> bool:
        ok = self.flavor == "call" or (self.flavor == "name_only" and optional)
        return ok and self.declared

    def flavors(self) -> list[str]:
        return [self.flavor] + ["call"] * (len(self.names) - 1)


def json_calls(
    draws: Draws,
    calls: Calls,
    *,
    optional: bool,
    markup: bool = True,
    shapes: Sequence[str] = SHAPES,
) -> tuple[list[object], tuple[Call, ...]]:
    """The call objects of ``calls`` (near misses included) and the calls they are;
    ``shapes``: how their arguments may be spelled (``SHAPES``)."""
    objects: list[object] = []
    found: list[Call] = []
    for name, flavor in zip(calls.names, calls.flavors(), strict=True):
        obj, call = _call_object(
            draws, name, flavor, optional=optional, markup=markup, shapes=shapes
        )
        objects.append(obj)
        if call is not None:
            found.append(call)
    return objects, tuple(found)


class BodyText:
    """A body assembled piece by piece, remembering the spans that cannot parse while cut."""

    def __init__(self) -> None:
        self.text = ""
        self.fragile: list[tuple[int, int]] = []

    def add(self, piece: str, *, fragile: bool = False) -> None:
        if fragile:
            self.fragile.append((len(self.text), len(self.text) + len(piece)))
        self.text += piece


def rendered(
    dialect: Dialect, variant: str, body: BodyText, accepted: bool, found: tuple[Call, ...]
) -> Rendered:
    """A block written with the dialect's first opening and closing marker."""
    closer = dialect.closes[0] if dialect.closes else ""
    return Rendered(
        dialect.id,
        variant,
        dialect.opens[0],
        body.text,
        closer,
        "",
        tuple(dataclasses.replace(call, dialect=dialect.id) for call in found),
        accepted,
        tuple(body.fragile),
    )


def one_json_call(dialect: Dialect, draws: Draws, tools: Tools) -> Rendered:
    """One JSON call object (or a near miss) between the dialect's tags, on its own line
    or not: Hermes's ``<tool_call>`` and the tags that copy it (LongCat)."""
    calls = Calls(draws, tools, most=1, flavors=FLAVORS)
    (obj,), found = json_calls(draws, calls, optional=True)
    body = BodyText()
    space = draws.option(0, ("\n", ""))
    body.add(space)
    body.add(json_text(obj, draws.style()), fragile=True)
    body.add(space)
    return rendered(dialect, "json", body, calls.accepted(), found)


# --- XML-ish values (Qwen3-Coder, GLM) ------------------------------------------------


def _xml_value(draws: Draws, kind: str, *, wrapped: bool, trim: Trim) -> tuple[str, object]:
    """An XML-ish value of JSON Schema type ``kind`` as written (text), and what it means."""
    src = draws.tail
    if kind == "integer":
        number = src.choice(_XML_INTEGERS)
        return str(number), number
    if kind == "number":
        real = src.choice(_XML_NUMBERS)
        return json.dumps(real), real
    if kind == "boolean":
        truth = src.flag()
        return ("true" if truth else "false"), truth
    if kind in ("object", "array"):
        value: Any = _no_tags([draws.string(markup=False) for _ in range(src.count(2))])
        if kind == "object":
            value = {"items": value}
        return json_text(value, draws.json_style()), value
    text: str = _no_tags(draws.string(markup=False))
    if trim is Trim.WHITESPACE:  # the engines strip it: it cannot be the value's
        text = text.strip()
    elif trim is Trim.ONE_NEWLINE and not wrapped:  # one newline at each end is the template's
        text = text.strip("\n")
    if text[:1] in ("{", "["):  # would be read as JSON if it parsed: keep it text
        text = "x" + text
    return text, text


def _no_tags(value: Any) -> Any:
    """``value`` with nothing that could end an XML-ish value early (``</``, ``<arg_``…)."""
    if isinstance(value, str):
        for tag in ("</", "<arg_", "<parameter=", "<function="):
            value = value.replace(tag, tag[0] + " " + tag[1:])
        return value
    if isinstance(value, list):
        return [_no_tags(item) for item in value]
    if isinstance(value, dict):
        return {_no_tags(k): _no_tags(v) for k, v in value.items()}
    return value


def xml_arguments(
    draws: Draws, *, wrapped: bool | None = None, trim: Trim = Trim.ONE_NEWLINE
) -> list[tuple[str, str, object]]:
    """Drawn ``(key, value as written, value as meant)`` triples for an XML-ish call; each
    value has its key's type (``XML_KEY_TYPES``). ``wrapped``: values on their own lines
    (always, never, or drawn: ``None``), which a dialect whose engines keep a value as
    written (``Trim.NOTHING``) never is."""
    src = draws.tail
    keys = dict.fromkeys(src.choice(XML_KEY_TYPES) for _ in range(src.count(3)))
    out = []
    for key, kind in keys:
        wrap = trim is not Trim.NOTHING and (src.flag() if wrapped is None else wrapped)
        written, meant = _xml_value(draws, kind, wrapped=wrap, trim=trim)
        out.append((key, "\n" + written + "\n" if wrap else written, meant))
    return out
