"""Every registered dialect has every part, and the parts agree with each other.

The record's example parses with its own parser and streams through the
reference detector to the same calls, whole and one character at a time; its
renderer's output does too, and reads the same at every split point; its
regression cases and recording grammars exist.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tcr.detector import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.bodies import strip_markers
from tcr.detector.core import StreamDetector
from tcr.detector.events import merge_text
from tcr.dialects import BY_ID, DIALECTS, Call, Dialect, Engines, Kind, dialect
from tcr.fuzz.dialects import block
from tcr.fuzz.source import Source
from tcr.fuzz.specs import tool_specs_for

IDS = [d.id for d in DIALECTS]
CALL_DIALECTS = [d for d in DIALECTS if d.kind == Kind.CALL]


def run(
    chunks: list[str], tools: tuple[str, ...] | None = None, tool_specs: Any = None
) -> list[Event]:
    detector = StreamDetector(tools=tools, tool_specs=tool_specs)
    events: list[Event] = []
    for chunk in chunks:
        events += detector.feed(chunk)
    return events + detector.finish()


def meaning(events: list[Event]) -> tuple[str, list[tuple[str, Any]], str]:
    """What the user is shown, the calls (parsed arguments) and the reasoning."""
    shown = "".join(
        e.text if isinstance(e, Text) else e.content
        for e in events
        if isinstance(e, Text | Rejected)
    )
    calls = [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)]
    reasoning = "".join(e.text for e in events if isinstance(e, Reasoning))
    return shown, calls, reasoning


def as_pairs(calls: tuple[Call, ...]) -> list[tuple[str, Any]]:
    return [(c.name, dict(c.arguments)) for c in calls]


def test_ids_are_unique_and_the_registry_finds_each() -> None:
    assert len(set(IDS)) == len(IDS)
    assert all(dialect(d.id) is d is BY_ID[d.id] for d in DIALECTS)
    with pytest.raises(KeyError, match="unknown dialect 'nope'"):
        dialect("nope")


@pytest.mark.parametrize("d", DIALECTS, ids=IDS)
def test_every_dialect_has_every_part(d: Dialect) -> None:
    assert d.summary and d.opens and d.example.block and d.grammars and d.cases
    assert (d.parse is None) == (d.kind == Kind.REASONING)
    assert (not d.example.calls) == (d.kind == Kind.REASONING)
    assert d.closes or d.closing.name != "MARKER"
    assert all(g.name and g.prompt and g.root and callable(g.expect) for g in d.grammars)


@pytest.mark.parametrize(
    ("dialect_id", "engine", "name"),
    [
        ("llama4_pythonic", "sglang", "pythonic"),  # FunctionCallParser.ToolCallParserEnum
        ("hermes", "sglang", "qwen25"),
        ("hermes", "vllm", "qwen3_json"),  # vllm/tool_parsers/__init__.py: Hermes2ProToolParser
        ("glm47", "vllm", "glm45"),  # both names map to Glm47MoeModelToolParser
        ("qwen3_coder", "llamacpp", "QWEN3_CODER_XML"),
        ("gemma4", "llamacpp", "PEG_GEMMA4"),  # common/chat.h
        ("think", "sglang", "deepseek-r1"),  # ReasoningParser.DetectorMap
        ("qwen3_coder", "sglang", "mimo"),  # MiMoDetector(Qwen3CoderDetector)
        ("hermes", "sglang", "trinity"),  # TrinityDetector(Qwen25Detector)
        ("hermes", "vllm", "ernie45"),  # Ernie45ToolParser: <tool_call>{name, arguments}
        ("glm47", "sglang", "ling3"),  # Ling3Detector: GLM, the newline after NAME optional
        ("glm47", "sglang", "spark25"),  # Spark25Detector: NAME up to the first <arg_key>
    ],
)
def test_every_engine_s_name_for_its_parser_is_listed(
    dialect_id: str, engine: str, name: str
) -> None:
    record = dialect(dialect_id)
    assert name in getattr(record.engines, engine)
    assert name in record.parser_names


def test_every_call_dialect_names_an_engine_parser() -> None:
    assert [d.id for d in CALL_DIALECTS if not d.parser_names] == []


@pytest.mark.parametrize("d", CALL_DIALECTS, ids=[d.id for d in CALL_DIALECTS])
def test_parser_parses_its_own_example(d: Dialect) -> None:
    assert d.parse is not None
    parsed = []
    for event in run([d.example.text]):
        if isinstance(event, ToolCall) and event.raw:
            parsed += d.parse(strip_markers(d.id, event.raw))
    assert [(p.name, json.loads(p.arguments)) for p in parsed] == as_pairs(d.example.calls)


@pytest.mark.parametrize("d", DIALECTS, ids=IDS)
def test_example_streams_to_its_calls_whole_and_per_character(d: Dialect) -> None:
    text = d.example.text
    whole = run([text])
    assert meaning(run(list(text))) == meaning(whole)
    shown, calls, reasoning = meaning(whole)
    assert shown == d.example.before + d.example.after
    assert calls == as_pairs(d.example.calls)
    assert bool(reasoning) == (d.kind == Kind.REASONING)
    assert {e.format for e in whole if isinstance(e, ToolCall | Reasoning)} == {d.id}


@pytest.mark.parametrize("d", DIALECTS, ids=IDS)
def test_renderer_output_reads_back_to_its_calls_whole_and_per_character(d: Dialect) -> None:
    rng = random.Random(d.id)
    for _ in range(40):
        data = rng.randbytes(rng.randrange(1, 120))
        for tools in (None, ("search", "get_time")):
            written = block(data, d.id, tools)
            truth = written.truth()
            # Untyped values mean what the schema says: the schema the truth's types give.
            named = tuple(dict.fromkeys(call.name for call in truth.calls))
            specs = tool_specs_for(truth, named, Source(b""))
            whole = run([written.raw], tools, specs)
            assert meaning(run(list(written.raw), tools, specs)) == meaning(whole), written.raw
            shown, calls, reasoning = meaning(whole)
            assert (shown, calls, reasoning) == (
                truth.text,
                as_pairs(truth.calls),
                truth.reasoning,
            ), written.raw
            formats = {e.format for e in whole if isinstance(e, ToolCall | Reasoning)}
            assert formats <= {d.id}


@pytest.mark.parametrize("d", DIALECTS, ids=IDS)
def test_renderer_output_reads_the_same_at_every_split_point(d: Dialect) -> None:
    rng = random.Random(d.id)
    for _ in range(8):
        raw = block(rng.randbytes(rng.randrange(10, 60)), d.id, None).raw
        whole = merge_text(run([raw]))
        for k in range(1, len(raw)):
            assert merge_text(run([raw[:k], raw[k:]])) == whole, (k, raw)


@pytest.mark.parametrize("d", DIALECTS, ids=IDS)
def test_regression_cases_read_as_they_say(d: Dialect) -> None:
    for case in d.cases:
        shown, calls, reasoning = meaning(run([case.text], case.tools))
        assert (shown, calls, reasoning) == (case.shown, as_pairs(case.calls), case.reasoning)


def test_engine_names_on_one_line_are_the_first_three_and_a_count() -> None:
    assert Engines(vllm=("a", "b"), sglang=("b", "c", "d")).shown() == "a, b, c +1"
    assert Engines(llamacpp=("X",)).shown() == "X"
    assert Engines().shown() == "no engine parser"
