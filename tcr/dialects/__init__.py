"""The dialect catalogue: one module per family, one ``Dialect`` record each (ARCHITECTURE.md §5.4).

The order is the registry's: the first matching model-name seed wins, and of
dialects sharing an opening marker, the first owns a body none of them claims.
Adding a dialect is adding its module and one line to ``_FAMILIES``.
"""

from __future__ import annotations

import importlib

from tcr.dialects._calls import BodyError, ParsedCall
from tcr.dialects._record import (
    BodyLexer,
    Call,
    Closing,
    Dialect,
    Draws,
    Example,
    Grammar,
    Kind,
    RegressionCase,
    Rendered,
    Tools,
)

__all__ = [
    "BY_ID",
    "DIALECTS",
    "BodyError",
    "BodyLexer",
    "Call",
    "Closing",
    "Dialect",
    "Draws",
    "Example",
    "Grammar",
    "Kind",
    "ParsedCall",
    "RegressionCase",
    "Rendered",
    "Tools",
    "dialect",
]

# One line per family: its module in this package, which exports ``DIALECT``.
_FAMILIES = (
    "gemma4",
    "hermes",
    "qwen3_coder",
    "glm45",
    "tools_tag",
    "fenced_json",
    "mistral",
    "python_tag",
    "bare_json",
    "think",
)


def _load(family: str) -> Dialect:
    record = importlib.import_module(f"{__name__}.{family}").DIALECT
    if not isinstance(record, Dialect):
        raise TypeError(f"{__name__}.{family}.DIALECT is not a Dialect record")
    return record


DIALECTS: tuple[Dialect, ...] = tuple(_load(family) for family in _FAMILIES)

BY_ID: dict[str, Dialect] = {d.id: d for d in DIALECTS}


def dialect(dialect_id: str) -> Dialect:
    """The registered dialect with this id; ``KeyError`` naming the known ones if none."""
    try:
        return BY_ID[dialect_id]
    except KeyError:
        raise KeyError(f"unknown dialect {dialect_id!r}; known: {', '.join(BY_ID)}") from None
