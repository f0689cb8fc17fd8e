"""The dialect catalogue: one module per family, one ``Dialect`` record each (DESIGN §5).

The order is the registry's: the first matching model-name seed wins, and of
dialects sharing an opening marker, the first owns a body none of them claims.
Adding a dialect is adding its module and one line here.
"""

from __future__ import annotations

from tcr.dialects import (
    bare_json,
    fenced_json,
    gemma4,
    glm45,
    hermes,
    mistral,
    python_tag,
    qwen3_coder,
    think,
    tools_tag,
)
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

DIALECTS: tuple[Dialect, ...] = (
    gemma4.DIALECT,
    hermes.DIALECT,
    qwen3_coder.DIALECT,
    glm45.DIALECT,
    tools_tag.DIALECT,
    fenced_json.DIALECT,
    mistral.DIALECT,
    python_tag.DIALECT,
    bare_json.DIALECT,
    think.DIALECT,
)

BY_ID: dict[str, Dialect] = {d.id: d for d in DIALECTS}


def dialect(dialect_id: str) -> Dialect:
    """The registered dialect with this id; ``KeyError`` naming the known ones if none."""
    try:
        return BY_ID[dialect_id]
    except KeyError:
        raise KeyError(f"unknown dialect {dialect_id!r}; known: {', '.join(BY_ID)}") from None
