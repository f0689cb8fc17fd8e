"""The test parser's results in the other shapes ``tcr.adapters`` reads, and detector factories.

``HermesParser`` answers as SGLang does; ``as_vllm`` recasts a result as vLLM's
``DeltaMessage`` (objects) and ``as_openai`` as an OpenAI chat-completion delta
(a dict), so one parser exercises every shape.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from parsers.hermes import Bug, HermesParser, StreamingParseResult
from tcr.adapters import IncrementalCallDetector

__all__ = ["SHAPES", "DeltaFunctionCall", "DeltaMessage", "DeltaToolCall", "hermes_factory"]


@dataclass(frozen=True, slots=True)
class DeltaFunctionCall:
    name: str | None = None
    arguments: str | None = None


@dataclass(frozen=True, slots=True)
class DeltaToolCall:
    index: int
    id: str | None = None
    type: str | None = None
    function: DeltaFunctionCall | None = None


@dataclass(frozen=True, slots=True)
class DeltaMessage:
    role: str | None = None
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[DeltaToolCall] = field(default_factory=list)


def as_vllm(result: StreamingParseResult) -> DeltaMessage:
    calls = [
        DeltaToolCall(item.tool_index, function=DeltaFunctionCall(item.name, item.parameters))
        for item in result.calls
    ]
    return DeltaMessage(content=result.normal_text or None, tool_calls=calls)


def as_openai(result: StreamingParseResult) -> dict[str, object]:
    calls = [
        {"index": item.tool_index, "function": {"name": item.name, "arguments": item.parameters}}
        for item in result.calls
    ]
    return {"content": result.normal_text or None, "tool_calls": calls}


def _as_sglang(result: StreamingParseResult) -> StreamingParseResult:
    return result


SHAPES: dict[str, Callable[[StreamingParseResult], object]] = {
    "sglang": _as_sglang,
    "vllm": as_vllm,
    "openai": as_openai,
}


def hermes_factory(
    shape: str = "sglang", bugs: Collection[Bug] = ()
) -> Callable[..., IncrementalCallDetector]:
    """A factory of adapted ``HermesParser``s answering in ``shape``, with ``bugs`` on."""
    recast = SHAPES[shape]

    def factory(tools: Collection[str] | None = None) -> IncrementalCallDetector:
        parser = HermesParser(bugs, tools)
        return IncrementalCallDetector(
            lambda chunk: recast(parser.parse_streaming_increment(chunk)),
            lambda: recast(parser.flush()),
            format="hermes",
        )

    return factory


# What the parser speaks: Hermes JSON only, and nothing at all when no tools are offered.
CLAIM = {"dialects": ["hermes"], "empty_tools": "text"}


def correct_hermes(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The correct parser, as ``tcr replay --detector parsers.shapes:correct_hermes`` loads it
    (``tests`` on ``PYTHONPATH``); it claims what it parses."""
    return hermes_factory()(tools)


correct_hermes.tcr_claim = CLAIM  # type: ignore[attr-defined]


def buggy_hermes(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The parser with every ``Bug`` switched on at once: each must be its own finding."""
    return hermes_factory(bugs=tuple(Bug))(tools)


buggy_hermes.tcr_claim = CLAIM  # type: ignore[attr-defined]


def arguments_dropped_hermes(tools: Collection[str] | None = None) -> IncrementalCallDetector:
    """The parser with one bug on: the argument text that comes with a call's name is lost."""
    return hermes_factory(bugs=[Bug.ARGUMENTS_WITH_NAME_DROPPED])(tools)


arguments_dropped_hermes.tcr_claim = CLAIM  # type: ignore[attr-defined]
