"""Detectors that differ only in what they do with tool schemas (ARCHITECTURE.md §5.2,
"Tool specs"), loaded by spec in the typed-comparison tests (replay, fuzz, stdio).

``types_by_schema`` is the reference given the specs: it types Qwen3-Coder and GLM values
by the schema, as vLLM does, and must get no finding. ``ignores_schema`` takes the specs
and keeps every value as text, so ``"days": "3"`` stays a string where the schema says
integer: an ``expected`` finding naming the argument. ``guesses_types`` reads every
value as JSON whatever the schema says (``"3"`` for a string schema becomes ``3``).
``never_told`` takes no ``tool_specs``: it cannot type, and must not be blamed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcr.detector.core import StreamDetector
from tcr.tool_specs import read_tool_specs

__all__ = ["guesses_types", "ignores_schema", "never_told", "types_by_schema"]

Specs = Sequence[dict[str, Any]] | None


Dialects = Sequence[str] | None  # the claim: --dialect restricts each of them as the reference


def types_by_schema(
    tools: Sequence[str] | None = None, tool_specs: Specs = None, dialects: Dialects = None
) -> StreamDetector:
    return StreamDetector(tools, tool_specs=tool_specs, dialects=dialects)


def ignores_schema(
    tools: Sequence[str] | None = None, tool_specs: Specs = None, dialects: Dialects = None
) -> StreamDetector:
    if tool_specs is not None:
        read_tool_specs(tool_specs)  # it gets them, and drops them
    return StreamDetector(tools, dialects=dialects)


def guesses_types(tools: Sequence[str] | None = None, tool_specs: Specs = None) -> StreamDetector:
    """Every property typed as JSON would read it: a string schema is ignored."""
    if tool_specs is None:
        return StreamDetector(tools)
    guessed = []
    for spec in read_tool_specs(tool_specs):
        function = dict(spec["function"])
        properties = function["parameters"].get("properties", {})
        untyped = {key: {"type": "number_or_json"} for key in properties}
        function["parameters"] = {"type": "object", "properties": untyped}
        guessed.append({"type": "function", "function": function})
    return StreamDetector(tools, tool_specs=guessed)


def never_told(tools: Sequence[str] | None = None, dialects: Dialects = None) -> StreamDetector:
    return StreamDetector(tools, dialects=dialects)
