"""What a recording says the user must be shown (ARCHITECTURE.md §3): its ``expect`` map, typed.

An ``Expectation`` is validated when it is built, so a malformed ``expect`` map is
reported where it is read (a ``TcrError`` naming the key), never halfway through a
replay. ``to_map`` gives the map back as a recording stores it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall
from tcr.errors import TcrError

__all__ = ["Expectation", "ExpectedCall", "expectation_of"]

_KEYS = ("text", "calls", "reasoning")


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """A call the user must be shown: its name and parsed JSON arguments.

    ``dialect``: the dialect its block is written in, when known (a fuzz ground truth,
    a run: the event's ``format``; a map may give it as the call's ``"dialect"`` key).
    It says whether its values carry JSON types or are text that a schema types
    (``tcr.tool_specs``). Two calls that differ only in it are equal, and ``as_map``
    leaves it out: a stored expectation says what is shown, and ``tcr.judge`` learns
    the dialect of a call it lacks from the reference.
    """

    name: str
    arguments: object
    dialect: str | None = field(default=None, compare=False)

    def as_map(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class Expectation:
    """Shown text, calls and reasoning; ``None`` for a part the recording does not fix."""

    text: str | None = None
    calls: tuple[ExpectedCall, ...] | None = None
    reasoning: str | None = None
    # The map as given, so a reproducer or a bless diff shows what the recording holds.
    source: Mapping[str, Any] | None = None

    @classmethod
    def from_map(cls, expect: Mapping[str, Any]) -> Expectation:
        """Validate a recording's ``expect`` map; a bad one raises ``TcrError`` naming the key."""
        if not isinstance(expect, Mapping):
            raise TcrError(f"expectation must be a map, not {type(expect).__name__}")
        unknown = set(expect) - set(_KEYS)
        if unknown:
            raise TcrError(
                f"expectation has unknown keys {sorted(unknown)}; known: {', '.join(_KEYS)}"
            )
        calls = None
        if "calls" in expect:
            given = expect["calls"]
            if not isinstance(given, list):
                raise TcrError("expectation 'calls' must be a list of {name, arguments} maps")
            calls = tuple(_call(index, spec) for index, spec in enumerate(given))
        return cls(_string(expect, "text"), calls, _string(expect, "reasoning"), expect)

    @classmethod
    def of(cls, expect: Expectation | Mapping[str, Any] | None) -> Expectation | None:
        """An expectation as given, or built from a map (``None`` stays ``None``)."""
        if expect is None or isinstance(expect, Expectation):
            return expect
        return cls.from_map(expect)

    def to_map(self) -> dict[str, Any]:
        """The ``expect`` map a recording stores."""
        if self.source is not None:
            return dict(self.source)
        out: dict[str, Any] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.calls is not None:
            out["calls"] = [c.as_map() for c in self.calls]
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        return out


def expectation_of(events: Iterable[Event]) -> Expectation:
    """What a run's events show: text (``Rejected`` content too), calls and reasoning."""
    text: list[str] = []
    calls: list[ExpectedCall] = []
    reasoning: list[str] = []
    for event in events:
        if isinstance(event, Text):
            text.append(event.text)
        elif isinstance(event, Rejected):
            text.append(event.content)
        elif isinstance(event, ToolCall):
            try:
                arguments: Any = json.loads(event.arguments)
            except ValueError:
                arguments = event.arguments
            calls.append(ExpectedCall(event.name, arguments, event.format or None))
        elif isinstance(event, Reasoning):
            reasoning.append(event.text)
    return Expectation("".join(text), tuple(calls), "".join(reasoning))


def _string(expect: Mapping[str, Any], key: str) -> str | None:
    if key not in expect:
        return None
    value = expect[key]
    if not isinstance(value, str):
        raise TcrError(f"expectation {key!r} must be a string, not {type(value).__name__}")
    return value


def _call(index: int, spec: object) -> ExpectedCall:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise TcrError(f"expectation call {index} must be a map with a string 'name'")
    arguments = spec.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise TcrError(f"expectation call {index}: 'arguments' is not JSON") from None
    dialect = spec.get("dialect")
    if dialect is not None and not isinstance(dialect, str):
        raise TcrError(f"expectation call {index}: 'dialect' must be a string")
    return ExpectedCall(spec["name"], arguments, dialect or None)
