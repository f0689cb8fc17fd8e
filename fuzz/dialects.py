"""Drawing one block in each registered dialect, with its verdict (ARCHITECTURE.md §5.4).

The dialects' renderers (``tcr.dialects``) write drawn calls the ways models do
and state the verdict the contract asks for; this module only answers their
choices from drawn bytes (``Layout``), so Hypothesis shrinks them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from tcr.dialects import BY_ID, DIALECTS, Kind, Tools
from tcr.dialects._record import JsonStyle
from tcr.dialects._writing import MAX_CALLS

from .blocks import Block
from .prose import prose
from .source import Source
from .values import arguments, json_style, json_text, string

__all__ = [
    "CALL_DIALECTS",
    "DIALECT_IDS",
    "TOOL_NAMES",
    "Layout",
    "Tools",
    "block",
    "json_call_text",
]

T = TypeVar("T")

DIALECT_IDS: tuple[str, ...] = tuple(d.id for d in DIALECTS)
CALL_DIALECTS: tuple[str, ...] = tuple(d.id for d in DIALECTS if d.kind == Kind.CALL)

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


class Layout:
    """One block's choices, each at the same offset in every dialect (``tcr.dialects.Draws``).

    Shrinking lowers one byte at a time: with the flavor, the number of calls and
    their names at fixed offsets, lowering the dialect byte keeps them, so a
    failure that needs two calls can move to the shortest dialect that has two.
    Variant 0 of every dialect is its multi-call form for the same reason.
    """

    __slots__ = ("head", "own", "tail")
    HEAD = 3 + MAX_CALLS + 4

    def __init__(self, data: bytes, own: Sequence[str] = ()) -> None:
        self.head = data[: self.HEAD].ljust(self.HEAD, b"\0")
        self.tail = Source(data[self.HEAD :])  # arguments, read call after call
        self.own = own  # the block's own markers, drawn more often inside its strings

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

    def arguments(self, *, markup: bool = True) -> dict[str, Any]:
        return arguments(self.tail, markup=markup, own=self.own)

    def string(self, *, markup: bool = True) -> str:
        return string(self.tail, markup=markup, own=self.own)

    def json_style(self) -> JsonStyle:
        return json_style(self.tail)

    def prose(self) -> str:
        return prose(self.tail, markers=True)


def block(data: bytes, dialect_id: str, tools: Tools) -> Block:
    """The block of dialect ``dialect_id`` that ``data`` spells."""
    dialect = BY_ID.get(dialect_id)
    if dialect is None:
        raise ValueError(f"fuzz: unknown dialect {dialect_id!r}; known: {', '.join(DIALECT_IDS)}")
    return Block(dialect.render(Layout(data, dialect.markup), tools))


def json_call_text(data: bytes) -> str:
    """A call-shaped JSON object as text, holding no marker: JSON quoted mid-answer."""
    lay = Layout(data)
    value = {"name": lay.name(0), "arguments": arguments(lay.tail, markup=False)}
    return json_text(value, lay.style())
