"""Tool specs: the OpenAI ``tools`` a request offers, and argument values typed by their schemas.

ARCHITECTURE.md §5.2, "Tool specs" (and docs/how-to/test-your-parser.md, "Tools with
schemas"): real parsers convert argument types by schema,
because some bodies carry no JSON types (Qwen3-Coder's ``<parameter=K>V</parameter>``,
GLM's ``<arg_value>V</arg_value>``: every value is text). A factory that takes
``tool_specs`` gets the request's tools; a detector that types ``"3"`` as ``3``
because the schema says ``integer`` is then judged by the same rule.

Three parts, all pure:

- ``read_tool_specs`` validates a ``tools`` list (from a recording's request, a
  file, the stdio protocol, a library caller) into normalised OpenAI tool objects
  ``{"type": "function", "function": {"name", "description"?, "parameters"}}``;
  anything else is one ``TcrError`` naming where.
- ``typed_value`` types one value written as text by its parameter's schema, as the
  engines do (vLLM's Qwen3-Coder parser, ``_convert_param_value`` in
  ``vllm/tool_parsers/qwen3coder_tool_parser.py``; its GLM-4.5 parser agrees on
  every value that is well-formed for its type). The reference detector uses it.
- ``value_agrees`` is typed comparison: whether a detector's value for one argument
  of a call in an untyped body is the expected one, given the schema it was given.
  With a schema type, the value must be what the schema makes of the text. Without
  one (no specs given, the tool or the argument not in them) the engines disagree:
  vLLM's Qwen3-Coder parser keeps the text, its GLM parser and SGLang's read it as
  JSON when they can, so either is accepted: no parser is blamed for keeping
  ``"3"`` a string, or for reading it as ``3``, when no schema says which.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from tcr.errors import TcrError

__all__ = [
    "MAX_SCHEMA_NESTING",
    "NOT_WELL_FORMED",
    "ToolSpecs",
    "parameter_schemas",
    "read_tool_specs",
    "same_json",
    "schema_type",
    "spec_names",
    "typed_value",
    "value_agrees",
    "well_formed",
]


class ToolSpecs(tuple[dict[str, Any], ...]):
    """Normalised OpenAI tool objects, as ``read_tool_specs`` returns them: read once and
    trusted after (a detector is made per message, and checking the specs again each
    time cost replay 6%)."""

    __slots__ = ()


#: How deep a tool object may nest (the tool itself is level 1). Real schemas are a
#: few levels deep; a hostile one must not exhaust the stack of whoever walks it.
MAX_SCHEMA_NESTING: Final = 64

_STRING_TYPES: Final = frozenset({"string", "str", "text", "varchar", "char", "enum"})
_INT_PREFIXES: Final = ("int", "uint", "long", "short", "unsigned")
_BOOL_TYPES: Final = frozenset({"boolean", "bool", "binary"})


class _Missing:
    """The value a text does not spell under its schema (``well_formed``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_WELL_FORMED"


NOT_WELL_FORMED: Final = _Missing()


# --- reading a tools list ------------------------------------------------------------


def read_tool_specs(value: object, where: str = "tool specs") -> ToolSpecs:
    """``value`` as normalised OpenAI tool objects, or one ``TcrError`` naming where.

    Accepted: a list of ``{"type": "function", "function": {...}}`` objects or of bare
    function objects ``{"name", "description"?, "parameters"?}`` (wrapped). A name is
    a non-empty string, declared once; ``parameters`` (default an empty object schema)
    and each of its ``properties`` are JSON objects. Only JSON values, nested at most
    ``MAX_SCHEMA_NESTING`` deep.
    """
    if isinstance(value, ToolSpecs):
        return value
    if not isinstance(value, list | tuple):
        raise TcrError(f"{where}: expected a list of OpenAI tool objects, not {_kind(value)}")
    specs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, tool in enumerate(value):
        at = f"{where}[{index}]"
        _check_json(tool, at)
        spec = _tool(tool, at)
        name = spec["function"]["name"]
        if name in seen:
            raise TcrError(f"{at}: the tool {name!r} is declared twice; declare each tool once")
        seen.add(name)
        specs.append(spec)
    return ToolSpecs(specs)


def _tool(tool: object, at: str) -> dict[str, Any]:
    if not isinstance(tool, Mapping):
        raise TcrError(f"{at}: expected a tool object, not {_kind(tool)}")
    function: object = tool
    if "function" in tool:
        if tool.get("type", "function") != "function":
            raise TcrError(f"{at}: 'type' is {tool.get('type')!r}, expected 'function'")
        function = tool["function"]
        at = f"{at}.function"
        if not isinstance(function, Mapping):
            raise TcrError(f"{at}: expected an object with a 'name', not {_kind(function)}")
    assert isinstance(function, Mapping)
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TcrError(f"{at}: a function needs a non-empty string 'name'")
    out: dict[str, Any] = {"name": name}
    description = function.get("description")
    if description is not None:
        if not isinstance(description, str):
            raise TcrError(f"{at}.description: expected a string, not {_kind(description)}")
        out["description"] = description
    parameters = function.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, Mapping):
        raise TcrError(f"{at}.parameters: expected a JSON schema object, not {_kind(parameters)}")
    properties = parameters.get("properties", {})
    if not isinstance(properties, Mapping):
        raise TcrError(f"{at}.parameters.properties: expected an object, not {_kind(properties)}")
    for key, schema in properties.items():
        if not isinstance(schema, Mapping):
            raise TcrError(
                f"{at}.parameters.properties.{key}: expected a JSON schema object, "
                f"not {_kind(schema)}"
            )
    out["parameters"] = json.loads(json.dumps(parameters))  # a private copy
    return {"type": "function", "function": out}


def _check_json(value: object, at: str) -> None:
    """JSON values only (string keys), at most ``MAX_SCHEMA_NESTING`` deep; no recursion."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, Mapping | list | tuple):
            if depth > MAX_SCHEMA_NESTING:
                raise TcrError(f"{at}: nests deeper than {MAX_SCHEMA_NESTING} levels")
            if isinstance(item, Mapping):
                for key in item:
                    if not isinstance(key, str):
                        raise TcrError(f"{at}: an object key is {_kind(key)}, not a string")
                children: Sequence[object] = list(item.values())
            else:
                children = item
            pending.extend((child, depth + 1) for child in children)
        elif isinstance(item, float) and not math.isfinite(item):
            raise TcrError(f"{at}: {item} is not a JSON number")
        elif not (item is None or isinstance(item, str | int | float | bool)):
            raise TcrError(f"{at}: {_kind(item)} is not a JSON value")


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "a number"
    kinds: dict[type, str] = {dict: "an object", list: "a list", tuple: "a list"}
    kinds |= {str: "a string", bytes: "bytes"}
    return kinds.get(type(value), type(value).__name__)


def spec_names(specs: ToolSpecs) -> list[str]:
    """The declared tool names, in order (what ``tools=`` gets beside the specs)."""
    return [spec["function"]["name"] for spec in specs]


def parameter_schemas(specs: ToolSpecs | None) -> dict[str, Mapping[str, Any]]:
    """Tool name -> its parameters' schemas (``properties``); empty without specs."""
    if specs is None:
        return {}
    out: dict[str, Mapping[str, Any]] = {}
    for spec in specs:
        function = spec["function"]
        properties = function.get("parameters", {}).get("properties", {})
        out[function["name"]] = properties if isinstance(properties, Mapping) else {}
    return out


# --- typing a value written as text --------------------------------------------------


def schema_type(schema: object) -> tuple[str, bool]:
    """A parameter schema's type, lowercased, and whether it admits null.

    As vLLM reads it: ``type``, else the first non-null type of ``anyOf``, else
    ``string``. A list of types (``["integer", "null"]``, which vLLM reads as the text
    of the list, so as no known type) is read here as its first non-null type.
    """
    if not isinstance(schema, Mapping):
        return "string", False
    if "type" in schema:
        given = schema["type"]
        if isinstance(given, list):
            names = [str(t).strip().lower() for t in given]
            rest = [n for n in names if n != "null"]
            return (rest[0] if rest else "null"), "null" in names
        name = str(given).strip().lower()
        return name, name == "null"
    options = schema.get("anyOf")
    if isinstance(options, list):
        found, nullable = "string", False
        picked = False
        for option in options:
            if isinstance(option, Mapping) and "type" in option:
                name = str(option["type"]).strip().lower()
                if name == "null":
                    nullable = True
                elif not picked:
                    found, picked = name, True
        return found, nullable
    return "string", False


def _is_container(kind: str) -> bool:
    return kind in ("object", "array", "arr") or kind.startswith(("dict", "list"))


def _json_reading(text: str) -> object:
    """The JSON value ``text`` is (strict: no NaN), else ``NOT_WELL_FORMED``."""
    try:
        return json.loads(text, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return NOT_WELL_FORMED


def _refuse(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _literal(text: str) -> object:
    """A Python literal that is a JSON value (``{'k': 'v'}``, ``True``), else NOT_WELL_FORMED."""
    if len(text) > 100_000:  # ast.literal_eval parses whole: bounded, as every reader here
        return NOT_WELL_FORMED
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_WELL_FORMED
    return value if _is_json(value) else NOT_WELL_FORMED


def _is_json(value: object) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                return False
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif not (item is None or isinstance(item, str | int | bool)):
            return False
    return True


def well_formed(text: str, schema: object) -> object:
    """What ``text`` means under its parameter ``schema``, or ``NOT_WELL_FORMED`` when it
    is not a value of that type (``"abc"`` for an integer); the engines agree on every
    well-formed value (module docstring)."""
    kind, nullable = schema_type(schema)
    lowered = text.lower()
    if nullable and lowered in ("null", "none"):
        return None
    if kind in _STRING_TYPES:
        return text
    if lowered in ("null", "none"):
        return None
    if kind.startswith(_INT_PREFIXES):
        try:
            return int(text)
        except ValueError:
            return NOT_WELL_FORMED
    if kind.startswith(("num", "float")):
        try:
            number = float(text)
        except ValueError:
            return NOT_WELL_FORMED
        if not math.isfinite(number):
            return NOT_WELL_FORMED
        return int(number) if number.is_integer() else number
    if kind in _BOOL_TYPES:
        return {"true": True, "false": False}.get(lowered, NOT_WELL_FORMED)
    if _is_container(kind):
        value = _json_reading(text)
        if value is NOT_WELL_FORMED:
            value = _literal(text)
        if isinstance(value, str):  # a JSON-encoded Python repr: vLLM parses it once more
            again = _literal(value)
            value = value if again is NOT_WELL_FORMED else again
        return value
    return _literal(text)  # an unknown type name: vLLM tries a literal


def typed_value(text: str, schema: object) -> object:
    """``text`` (one value of an untyped body) typed by its parameter's ``schema``, as
    vLLM's Qwen3-Coder parser does: an ill-formed integer, number, object or array stays
    text, an ill-formed boolean is ``False``."""
    value = well_formed(text, schema)
    if value is not NOT_WELL_FORMED:
        return value
    return False if schema_type(schema)[0] in _BOOL_TYPES else text


# --- typed comparison ------------------------------------------------------------------


def same_json(a: object, b: object) -> bool:
    """Equal as JSON values: a boolean is never a number (Python's ``True == 1`` is not
    JSON's), numbers compare by value (``3`` and ``3.0`` are one JSON number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _read(value: object) -> object:
    """A text value as a parser without a schema may read it: its JSON reading, else it."""
    if not isinstance(value, str):
        return value
    read = _json_reading(value.strip())
    return value if read is NOT_WELL_FORMED else read


def _loosely(got: object, want: object) -> bool:
    return same_json(got, want) or same_json(_read(got), _read(want))


def value_agrees(got: object, want: object, schema: object | None) -> bool:
    """Whether ``got`` is the expected value ``want`` of one argument of an untyped body.

    ``schema``: the parameter's schema as the detector was given it, ``None`` when it
    was given none. ``want`` is the expected value, as written (text) or already read
    (an expectation made by a typing parser, a fuzz ground truth). With a schema, a
    text ``want`` must come out as the schema types it; one already read must come
    out as it is (a string schema also accepts it as text, which the reading of the
    expectation lost). Without a schema, or for a text the schema's type cannot read,
    the text and its JSON reading are both right (module docstring).
    """
    if schema is None:
        return _loosely(got, want)
    if isinstance(want, str):
        meant = well_formed(want, schema)
        if meant is NOT_WELL_FORMED:  # the engines disagree on ill-formed values
            return _loosely(got, want)
        return same_json(got, meant)
    if schema_type(schema)[0] in _STRING_TYPES:
        return same_json(got, want) or (isinstance(got, str) and same_json(_read(got), want))
    return same_json(got, want)
