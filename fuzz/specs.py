"""Tool specs that agree with a message's ground truth (ARCHITECTURE.md §5.2, "Tool specs").

A request that declares tools sends their schemas; a parser of untyped bodies
(Qwen3-Coder XML, GLM pairs) types the values by them. So a generated message that
declares tools gets, for each, an OpenAI tool object whose ``properties`` give every
argument its calls hold the JSON Schema type of the value the truth holds: ``3`` for
``days`` makes ``days`` an integer. The same key with two types in one tool's calls
(two calls disagree) is left out of the schema, and so is a key the drawn bytes drop:
then no schema says, and the comparison accepts the text or its reading
(``tcr.tool_specs.value_agrees``). Types are written the ways clients write them:
``{"type": T}``, nullable as ``{"type": [T, "null"]}`` or ``anyOf`` (never for a
string, where null would change what ``"null"`` means).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tcr.tool_specs import ToolSpecs

from .source import Source
from .truth import Truth

__all__ = ["json_type", "tool_specs_for"]

_OMITTED = object()  # a key whose calls disagree on its type


def json_type(value: object) -> str:
    """The JSON Schema type of a JSON value."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return "null"


def tool_specs_for(truth: Truth, tools: tuple[str, ...] | None, src: Source) -> ToolSpecs | None:
    """The tool specs of a request declaring ``tools`` whose calls are ``truth``'s
    (``None`` declares none; ``src`` draws how each schema is written). Written in
    ``read_tool_specs``'s normal form, so no judge reads them again."""
    if tools is None:
        return None
    types: dict[str, dict[str, object]] = {name: {} for name in tools}
    for call in truth.calls:
        seen = types.get(call.name)
        if seen is None:
            continue
        for key, value in call.arguments.items():
            if seen.setdefault(key, json_type(value)) != json_type(value):
                seen[key] = _OMITTED
    specs = []
    for name in tools:
        properties: dict[str, Any] = {}
        for key, found in types[name].items():
            if found is _OMITTED or src.below(8) == 7:  # an argument the schema leaves out
                continue
            properties[key] = _schema(str(found), src.below(4))
        function: dict[str, Any] = {
            "name": name,
            "parameters": {"type": "object", "properties": properties},
        }
        if src.flag():
            function["description"] = f"The {name} tool."
        specs.append({"type": "function", "function": function})
    return ToolSpecs(specs)


def _schema(kind: str, form: int) -> dict[str, Any]:
    if kind in ("string", "null") or form < 2:
        return {"type": kind}
    if form == 2:
        return {"type": [kind, "null"]}
    return {"anyOf": [{"type": kind}, {"type": "null"}]}
