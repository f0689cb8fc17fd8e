"""The dialect catalogue: one module per family, one ``Dialect`` record each (ARCHITECTURE.md §5.4).

The order is the registry's: the first matching model-name seed wins, and of
dialects sharing an opening marker, the first owns a body none of them claims.
Adding a dialect is adding its module and one line to ``_FAMILIES``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from tcr.dialects._calls import BodyError, ParsedCall
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    Head,
    Kind,
    Model,
    RegressionCase,
    Rendered,
    Tools,
    Variant,
)

__all__ = [
    "ALIASES",
    "BY_ID",
    "DIALECTS",
    "BodyError",
    "BodyLexer",
    "Call",
    "Closing",
    "Dialect",
    "DialectRow",
    "Draws",
    "Engines",
    "Example",
    "Grammar",
    "Head",
    "Kind",
    "Model",
    "ParsedCall",
    "RegressionCase",
    "Rendered",
    "Tools",
    "Variant",
    "dialect",
    "rows",
]

# One line per family: its module in this package, which exports ``DIALECT``.
_FAMILIES = (
    "gemma4",
    "hermes",
    "qwen3_coder",
    "glm47",
    "glm45",
    "tools_tag",
    "fenced_json",
    "mistral_v11",
    "mistral_v13",
    "mistral",
    "pythonic",
    "xlam",
    "xlam_fenced",
    "llama4_pythonic",
    "python_tag",
    "bare_json",
    "kimi_k2",
    "deepseek_v3",
    "deepseek_v31",
    "deepseek_v32",
    "step3",
    "longcat",
    "gigachat3",
    "internlm",
    "think",
    "minimax_m2",
    "seed_oss",
    "seed_think",
    "jamba",
    "granite",
    "granite_20b_fc",
    "phi4_mini_json",
    "functiongemma",
    "command_r7b",
    "command_r7b_think",
    "harmony",
    "harmony_analysis",
)


def _load(family: str) -> Dialect:
    record = importlib.import_module(f"{__name__}.{family}").DIALECT
    if not isinstance(record, Dialect):
        raise TypeError(f"{__name__}.{family}.DIALECT is not a Dialect record")
    return record


DIALECTS: tuple[Dialect, ...] = tuple(_load(family) for family in _FAMILIES)

BY_ID: dict[str, Dialect] = {d.id: d for d in DIALECTS}


# Claimable names that stand for several ids: an engine's parser that reads more than
# one of them (``llama3_json``), and the names tcr's first, single format table used before
# the catalogue split them by family. A claim naming one claims them all.
ALIASES: dict[str, tuple[str, ...]] = {
    "llama3_json": ("python_tag", "bare_json"),
    "tool_call_tag": ("hermes", "qwen3_coder", "glm45", "glm47"),
    "bracket_tool_calls": ("mistral", "mistral_v13"),
    "gemma_special": ("gemma4",),
}


def dialect(dialect_id: str) -> Dialect:
    """The registered dialect with this id; ``KeyError`` naming the known ones if none."""
    try:
        return BY_ID[dialect_id]
    except KeyError:
        raise KeyError(f"unknown dialect {dialect_id!r}; known: {', '.join(BY_ID)}") from None


@dataclass(frozen=True, slots=True)
class DialectRow:
    """What ``tcr dialects`` shows of one dialect: its markers, where it opens, an example."""

    id: str
    kind: str
    summary: str
    opens: tuple[str, ...]
    closes: tuple[str, ...]
    special_tokens: tuple[str, ...]  # of its opening and closing markers, those one token
    opens_where: str  # "anywhere", or "message start" (only while all before is white space)
    example: str
    parser_names: tuple[str, ...]  # every engine's parser name for it (Engines.names)
    engines: Engines  # the same names, by engine
    aliases: tuple[str, ...] = ()  # the aliases (ALIASES) that claim it
    # its variants: id -> what the form is (each a policy, ``<dialect>.<id>``: read | text)
    variants: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "summary": self.summary,
            "opens": list(self.opens),
            "closes": list(self.closes),
            "special_tokens": list(self.special_tokens),
            "opens_where": self.opens_where,
            "example": self.example,
            "parser_names": list(self.parser_names),
            "aliases": list(self.aliases),
            "engines": self.engines.as_dict(),
            "variants": [{"id": i, "what": what} for i, what in self.variants],
        }


def rows() -> list[DialectRow]:
    """One row per registered dialect, in registry order (``tcr dialects``)."""
    return [
        DialectRow(
            id=d.id,
            kind=d.kind.value,
            summary=d.summary,
            opens=d.opens,
            closes=d.closes,
            special_tokens=tuple(m for m in (*d.opens, *d.closes) if m in d.special_tokens),
            opens_where="anywhere" if d.anywhere else "message start",
            example=d.example.text,
            parser_names=d.parser_names,
            engines=d.engines,
            aliases=tuple(alias for alias, ids in ALIASES.items() if d.id in ids),
            variants=tuple((v.id, v.what) for v in d.variants),
        )
        for d in DIALECTS
    ]
