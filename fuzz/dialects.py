"""Drawing one block in each dialect of the format table, with its verdict (DESIGN §5).

Each dialect's writer takes drawn calls (names from a tools list, arguments a
drawn JSON object) and writes them the ways models do; the verdict follows
from the contract: a call when the body is call-shaped and every name is
declared (policy 7), else a rejection that shows the body without the markers
(policy 12), verbatim for JSON at message start (policy 8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tcr.detector.formats import BY_ID, FORMATS

from .blocks import Block
from .prose import prose
from .source import Source
from .truth import Call
from .values import (
    JsonStyle,
    arguments,
    gemma_safe,
    gemma_text,
    json_style,
    json_text,
    string,
)

__all__ = [
    "CALL_FORMATS",
    "FORMAT_NAMES",
    "TOOL_NAMES",
    "Layout",
    "Tools",
    "block",
    "json_call_text",
]

T = TypeVar("T")

FORMAT_NAMES: tuple[str, ...] = tuple(f.id for f in FORMATS)
CALL_FORMATS: tuple[str, ...] = tuple(f.id for f in FORMATS if f.kind == "call")

# Valid outside JSON too (a letter or "_", then word characters, "." or "-"), shortest first
# so that shrinking ends on a short name.
TOOL_NAMES: tuple[str, ...] = (
    "search",
    "get_time",
    "get_weather",
    "run_sql",
    "write_file",
    "server.tool",
    "shell-exec",
    "météo",
)

Tools = tuple[str, ...] | None

# How a block goes wrong, most often not at all; shrinking ends on "call".
_FLAVORS = ("call", "call", "call", "missing_name", "name_only", "not_a_call")
_XML_FLAVORS = ("call", "call", "call", "missing_name")
_SHAPES = ("arguments", "parameters", "arguments_first", "openai")
_XML_KEYS = ("city", "query", "days", "limit", "path", "content", "unit")
MAX_CALLS = 3


class Layout:
    """One block's choices, each at the same offset in every dialect.

    Shrinking lowers one byte at a time: with the flavor, the number of calls and
    their names at fixed offsets, lowering the format byte keeps them, so a
    failure that needs two calls can move to the shortest dialect that has two.
    Variant 0 of every dialect is its multi-call form for the same reason.
    """

    __slots__ = ("head", "tail")
    HEAD = 3 + MAX_CALLS + 4

    def __init__(self, data: bytes) -> None:
        self.head = data[: self.HEAD].ljust(self.HEAD, b"\0")
        self.tail = Source(data[self.HEAD :])  # arguments, read call after call

    def variant(self, options: Sequence[str]) -> str:
        return options[self.head[0] % len(options)]

    def flavor(self, options: Sequence[str]) -> str:
        return options[self.head[1] % len(options)]

    def count(self, most: int) -> int:
        return 1 + self.head[2] % most

    def name(self, k: int) -> str:
        return TOOL_NAMES[self.head[3 + k] % len(TOOL_NAMES)]

    def style(self) -> JsonStyle:
        byte = self.head[3 + MAX_CALLS]
        return byte & 1 == 1, (byte >> 1) % 3

    def option(self, k: int, options: Sequence[T]) -> T:
        return options[self.head[4 + MAX_CALLS + k] % len(options)]


def _declared(name: str, tools: Tools) -> bool:
    return tools is None or name in tools  # policy 7: [] declares nothing


# --- JSON call objects ------------------------------------------------------------


def _call_object(
    src: Source, name: str, flavor: str, *, optional: bool, markup: bool
) -> tuple[object, Call | None]:
    """A JSON call object (or a near miss) and the call it is, if any.

    ``optional``: a bare ``{"name"}`` is a call with no arguments (a distinctive
    marker already said "call"); fenced and bare JSON need the arguments.
    """
    shape = src.choice(_SHAPES)
    as_string = src.flag()  # OpenAI style: the arguments object serialised as a string
    args = arguments(src, markup=markup)
    value: object = args
    if as_string:
        value = json_text(args, json_style(src)) if args or src.flag() else ""
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
    if shape == "openai":
        return {"type": "function", "function": {"name": name, "arguments": value}}, call
    return {"name": name, "arguments": value}, call


class _Calls:
    """The calls of one block: the first may be a near miss, the others are calls."""

    def __init__(self, lay: Layout, tools: Tools, *, most: int, flavors: Sequence[str]) -> None:
        self.flavor = lay.flavor(flavors)
        self.names = [lay.name(k) for k in range(lay.count(most))]
        self.declared = all(_declared(n, tools) for n in self.names)

    def accepted(self, *, optional: bool = True) -> bool:
        ok = self.flavor == "call" or (self.flavor == "name_only" and optional)
        return ok and self.declared

    def flavors(self) -> list[str]:
        return [self.flavor] + ["call"] * (len(self.names) - 1)


def _json_calls(
    lay: Layout, calls: _Calls, *, optional: bool, markup: bool = True
) -> tuple[list[object], tuple[Call, ...]]:
    objects: list[object] = []
    found: list[Call] = []
    for name, flavor in zip(calls.names, calls.flavors(), strict=True):
        obj, call = _call_object(lay.tail, name, flavor, optional=optional, markup=markup)
        objects.append(obj)
        if call is not None:
            found.append(call)
    return objects, tuple(found)


class _Body:
    """A body assembled piece by piece, remembering the spans that cannot parse while cut."""

    def __init__(self) -> None:
        self.text = ""
        self.fragile: list[tuple[int, int]] = []

    def add(self, piece: str, *, fragile: bool = False) -> None:
        if fragile:
            self.fragile.append((len(self.text), len(self.text) + len(piece)))
        self.text += piece


# --- the dialects -------------------------------------------------------------------


def _tool_call_tag(lay: Layout, tools: Tools) -> Block:
    variant = lay.variant(("qwen3_coder", "json", "glm"))
    if variant == "qwen3_coder":
        return _qwen3_coder(lay, tools)
    if variant == "glm":
        return _glm(lay, tools)
    calls = _Calls(lay, tools, most=1, flavors=_FLAVORS)
    (obj,), found = _json_calls(lay, calls, optional=True)
    body = _Body()
    space = lay.option(0, ("\n", ""))
    body.add(space)
    body.add(json_text(obj, lay.style()), fragile=True)
    body.add(space)
    return _block("tool_call_tag", "json", body, calls.accepted(), found)


def _xml_value(src: Source, *, wrapped: bool) -> tuple[str, object]:
    """An XML-ish argument value as written, and what it means: text, or JSON when it is."""
    if src.below(4) == 3:
        value = _no_tags([string(src, markup=False) for _ in range(src.count(2))])
        if src.flag():
            value = {"items": value}
        return json_text(value, json_style(src)), value
    text = _no_tags(string(src, markup=False))
    if not wrapped:  # one newline at each end is the template's, not the value's
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


def _xml_arguments(src: Source, *, wrapped: bool | None = None) -> list[tuple[str, str, object]]:
    keys = list(dict.fromkeys(src.choice(_XML_KEYS) for _ in range(src.count(3))))
    out = []
    for key in keys:
        wrap = src.flag() if wrapped is None else wrapped
        written, meant = _xml_value(src, wrapped=wrap)
        out.append((key, "\n" + written + "\n" if wrap else written, meant))
    return out


def _qwen3_coder(lay: Layout, tools: Tools) -> Block:
    calls = _Calls(lay, tools, most=MAX_CALLS, flavors=_XML_FLAVORS)
    body = _Body()
    body.add("\n")
    found: list[Call] = []
    for name, flavor in zip(calls.names, calls.flavors(), strict=True):
        written = "" if flavor == "missing_name" else name
        params = _xml_arguments(lay.tail, wrapped=True)
        function = f"<function={written}>\n" + "".join(
            f"<parameter={key}>{value}</parameter>\n" for key, value, _ in params
        )
        body.add(function + "</function>", fragile=True)
        body.add("\n")
        if flavor == "call":
            found.append(Call(name, {key: meant for key, _, meant in params}))
    return _block("tool_call_tag", "qwen3_coder", body, calls.accepted(), tuple(found))


def _glm(lay: Layout, tools: Tools) -> Block:
    calls = _Calls(lay, tools, most=1, flavors=_XML_FLAVORS)
    name = "" if calls.flavor == "missing_name" else calls.names[0]
    body = _Body()
    body.add(name + "\n")
    params = _xml_arguments(lay.tail)
    for key, value, _ in params:
        body.add(f"<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>", fragile=True)
        body.add("\n")
    found = (Call(name, {key: meant for key, _, meant in params}),) if name else ()
    return _block("tool_call_tag", "glm", body, calls.accepted(), found)


def _gemma_special(lay: Layout, tools: Tools) -> Block:
    if lay.variant(("native", "json")) == "json":  # Gemma's JSON fallback in its own tokens
        calls = _Calls(lay, tools, most=1, flavors=_FLAVORS)
        (obj,), found = _json_calls(lay, calls, optional=True)
        body = _Body()
        body.add(json_text(obj, lay.style()), fragile=True)
        return _block("gemma_special", "json", body, calls.accepted(), found)
    calls = _Calls(lay, tools, most=MAX_CALLS, flavors=_XML_FLAVORS)
    body = _Body()
    written_calls: list[Call] = []
    separator = lay.option(0, ("", ",", "\n"))
    for k, (name, flavor) in enumerate(zip(calls.names, calls.flavors(), strict=True)):
        args = gemma_safe(arguments(lay.tail))
        written = "" if flavor == "missing_name" else name
        if k:
            body.add(separator)
        body.add(f"call:{written}{gemma_text(args)}", fragile=True)
        if flavor == "call":
            written_calls.append(Call(name, args))
    return _block("gemma_special", "native", body, calls.accepted(), tuple(written_calls))


def _tools_tag(lay: Layout, tools: Tools) -> Block:
    array = lay.variant(("array", "object")) == "array"
    calls = _Calls(lay, tools, most=MAX_CALLS if array else 1, flavors=_FLAVORS)
    objects, found = _json_calls(lay, calls, optional=True)
    body = _Body()
    space = lay.option(0, ("", "\n"))
    body.add(space)
    body.add(json_text(objects if array else objects[0], lay.style()), fragile=True)
    body.add(space)
    return _block("tools_tag", "array" if array else "object", body, calls.accepted(), found)


def _fenced_json(lay: Layout, tools: Tools) -> Block:
    calls = _Calls(lay, tools, most=1, flavors=_FLAVORS)
    (obj,), found = _json_calls(lay, calls, optional=False)
    opener = lay.option(0, ("```json\n", "```xml\n"))
    space = lay.option(1, ("\n", "", " \n"))
    fence = lay.option(2, (space + "```", ""))  # the fence is optional
    body = _Body()
    body.add(json_text(obj, lay.style()), fragile=True)
    return Block(
        "fenced_json",
        opener[3:-1],
        opener,
        body.text,
        fence,
        space if fence else "",
        found,
        calls.accepted(optional=False),
        tuple(body.fragile),
    )


def _bracket_tool_calls(lay: Layout, tools: Tools) -> Block:
    form = lay.variant(("array", "args", "object"))
    if form == "args":  # Mistral v11: NAME[ARGS]{…}, one call per block
        # Without its name the body would start with "[" and close as an array (a
        # different block): this form is always named.
        calls = _Calls(lay, tools, most=1, flavors=("call",))
        name = calls.names[0]
        args = arguments(lay.tail)
        call_id = lay.option(1, ("", "[CALL_ID]a1B2c3D4e"))
        body = _Body()
        body.add(f"{name}{call_id}[ARGS]{json_text(args, lay.style())}", fragile=True)
        return _block("bracket_tool_calls", "args", body, calls.accepted(), (Call(name, args),))
    calls = _Calls(lay, tools, most=MAX_CALLS if form == "array" else 1, flavors=_FLAVORS)
    objects, found = _json_calls(lay, calls, optional=True)
    body = _Body()
    body.add(lay.option(0, ("", " ")))
    value = objects if form == "array" else objects[0]
    body.add(json_text(value, lay.style()), fragile=True)
    return _block("bracket_tool_calls", form, body, calls.accepted(), found)


def _python_tag(lay: Layout, tools: Tools) -> Block:
    calls = _Calls(lay, tools, most=MAX_CALLS, flavors=_FLAVORS)
    objects, found = _json_calls(lay, calls, optional=True)
    separator = lay.option(0, (";", "; ", " ; ", ";\n"))
    body = _Body()
    for k, obj in enumerate(objects):
        if k:
            body.add(separator)
        body.add(json_text(obj, lay.style()), fragile=True)
    body.add(lay.option(1, ("", ";")))
    # Closed by the end of the message too: the message keeps such a block last.
    closer = lay.option(2, ("<|eom_id|>", "<|eot_id|>", ""))
    return Block(
        "python_tag",
        "json",
        "<|python_tag|>",
        body.text,
        closer,
        "",
        found,
        calls.accepted(),
        tuple(body.fragile),
    )


def _bare_json(lay: Layout, tools: Tools) -> Block:
    calls = _Calls(lay, tools, most=1, flavors=_FLAVORS)
    accepted = calls.accepted(optional=False)
    # A rejected answer is released as text as soon as it is certain (policy 8): text after
    # that point must hold no marker, or it would open a block of its own.
    (obj,), found = _json_calls(lay, calls, optional=False, markup=accepted)
    body = _Body()
    body.add(json_text(obj, lay.style()), fragile=True)
    return Block("bare_json", "object", "", body.text, "", "", found, accepted, tuple(body.fragile))


def _think(lay: Layout) -> Block:
    """``<think>…</think>``: markers inside reasoning never open a call (policy 10)."""
    text = prose(lay.tail, markers=True)
    while "</think>" in text:  # the first one would end the reasoning
        text = text.replace("</think>", "</ think>")
    fragile = ((-1, len(text)),)  # the message may end anywhere in reasoning
    return Block("think", "text", "<think>", text, "</think>", "", (), False, fragile)


def _block(fmt: str, variant: str, body: _Body, accepted: bool, found: tuple[Call, ...]) -> Block:
    """A block whose markers are the format table's first opening and closing marker."""
    row = BY_ID[fmt]
    closer = row.closes[0] if row.closes else ""
    return Block(
        fmt, variant, row.opens[0], body.text, closer, "", found, accepted, tuple(body.fragile)
    )


_WRITERS: dict[str, Callable[[Layout, Tools], Block]] = {
    "gemma_special": _gemma_special,
    "tool_call_tag": _tool_call_tag,
    "tools_tag": _tools_tag,
    "fenced_json": _fenced_json,
    "bracket_tool_calls": _bracket_tool_calls,
    "python_tag": _python_tag,
    "bare_json": _bare_json,
    "think": lambda lay, tools: _think(lay),
}


def block(data: bytes, fmt: str, tools: Tools) -> Block:
    """The block of format ``fmt`` that ``data`` spells."""
    writer = _WRITERS.get(fmt)
    if writer is None:
        raise ValueError(f"fuzz: unknown format {fmt!r}; known: {', '.join(FORMAT_NAMES)}")
    return writer(Layout(data), tools)


def json_call_text(data: bytes) -> str:
    """A call-shaped JSON object as text, holding no marker: JSON quoted mid-answer."""
    lay = Layout(data)
    value = {"name": lay.name(0), "arguments": arguments(lay.tail, markup=False)}
    return json_text(value, lay.style())
