"""Strict JSON calls: the ``{"name", "arguments"}`` objects the array dialects' parsers read.

Jamba, Granite, Granite-20B-FC and Phi-4-mini's engine parsers index
``call["name"]`` and ``call["arguments"]`` (Phi-4-mini also ``"parameters"``)
and nothing else: no OpenAI ``{"function": …}`` wrapper, no arguments given as a
JSON string. The reference reads exactly that, so a parser is not blamed for
refusing a shape its engine never accepted; the renderers write only it.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcr.dialects._calls import BodyError, ParsedCall, call, decode_whole
from tcr.dialects._record import Call, Draws, Tools
from tcr.dialects._writing import FLAVORS, MAX_CALLS, Calls

__all__ = ["ARGUMENTS", "strict_array", "strict_call", "strict_calls", "strict_objects"]

ARGUMENTS = ("arguments",)


def strict_call(value: object, keys: Sequence[str] = ARGUMENTS, name: str = "name") -> ParsedCall:
    """One call object: a non-empty string under ``name`` and an object under one of ``keys``."""
    if not isinstance(value, dict):
        raise BodyError("not_a_call", "an item of the call list is not a JSON object")
    key = next((k for k in keys if k in value), None)
    if key is None:
        raise BodyError("not_a_call", f"a call object without {' or '.join(map(repr, keys))}")
    if not isinstance(value[key], dict):
        raise BodyError("not_a_call", f"{key!r} is not a JSON object")
    return call({"name": value.get(name), "arguments": value[key]}, False)


def strict_array(
    body: str, keys: Sequence[str] = ARGUMENTS, name: str = "name"
) -> list[ParsedCall]:
    """A non-empty JSON array of strict call objects, white space around allowed."""
    value = decode_whole(body)
    if not isinstance(value, list):
        raise BodyError("not_a_call", "the calls are not a JSON array")
    if not value:
        raise BodyError("not_a_call", "an empty array holds no call")
    return [strict_call(item, keys, name) for item in value]


def strict_objects(
    draws: Draws, calls: Calls, keys: Sequence[str] = ARGUMENTS, name_key: str = "name"
) -> tuple[list[object], tuple[Call, ...]]:
    """The objects of ``calls`` written strictly, near misses included, and the calls they are.

    A bare ``{"name"}`` is a near miss here (the engines index ``"arguments"``):
    accept the block with ``calls.accepted(optional=False)``.
    """
    objects: list[object] = []
    found: list[Call] = []
    for name, flavor in zip(calls.names, calls.flavors(), strict=True):
        key = draws.tail.choice(keys)
        args = draws.arguments()
        if flavor == "missing_name":
            objects.append({key: args})
        elif flavor == "name_only":
            objects.append({name_key: name})
        elif flavor == "not_a_call":
            objects.append({"answer": args})
        else:
            objects.append({name_key: name, key: args})
            found.append(Call(name, args))
    return objects, tuple(found)


def strict_calls(
    draws: Draws,
    tools: Tools,
    *,
    most: int = MAX_CALLS,
    keys: Sequence[str] = ARGUMENTS,
    name_key: str = "name",
) -> tuple[list[object], tuple[Call, ...], bool]:
    """Drawn call objects of one block (the first may be a near miss), the calls they are,
    and whether a correct detector accepts the block."""
    calls = Calls(draws, tools, most=most, flavors=FLAVORS)
    objects, found = strict_objects(draws, calls, keys, name_key)
    return objects, found, calls.accepted(optional=False)
