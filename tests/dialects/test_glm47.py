"""GLM-4.7: GLM-4.5's pairs with no newlines, told apart from GLM-4.5 by the body."""

from __future__ import annotations

import pytest
from helpers import calls, chunkings, run

from tcr.detector import ToolCall
from tcr.detector.core import StreamDetector


def block(name: str, **arguments: str) -> str:
    pairs = "".join(
        f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in arguments.items()
    )
    return f"<tool_call>{name}{pairs}</tool_call>"


def test_two_calls_without_newlines_under_every_chunking() -> None:
    text = "Checking." + block("get_weather", city="Paris") + block("get_time", tz="CET")
    for label, chunks in chunkings(text, randoms=30):
        events = run(chunks)
        assert calls(events) == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
        assert {e.format for e in events if isinstance(e, ToolCall)} == {"glm47"}, label


def test_a_name_alone_is_a_call_without_arguments() -> None:
    events = run(list(block("get_time")))
    assert calls(events) == [("get_time", {})]
    assert [e.format for e in events if isinstance(e, ToolCall)] == ["glm47"]


@pytest.mark.parametrize(
    "body",
    ["get_time\n", "get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"],
)
def test_a_newline_after_the_name_is_glm45(body: str) -> None:
    (event,) = run([f"<tool_call>{body}</tool_call>"])
    assert isinstance(event, ToolCall) and event.format == "glm45"


def test_a_claim_of_glm47_alone_reads_its_calls() -> None:
    detector = StreamDetector(dialects=["glm47"])
    events = [*detector.feed(block("get_weather", city="Paris")), *detector.finish()]
    assert calls(events) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("dialect", ["glm45", "glm47"])
@pytest.mark.parametrize("value", ["\n\n", "\nParis\n", " Paris "])
def test_a_value_keeps_its_white_space_under_every_chunking(dialect: str, value: str) -> None:
    """GLM writes a value inline, so white space at its ends is the value's: vLLM's
    ``_glm47_arg_converter`` (vllm/parser/glm47_moe.py) and SGLang's glm4/glm47
    ``_parse_argument_pairs`` (no strip since SGLang PR 20543) keep ``<arg_value>\\n\\n``
    as ``"\\n\\n"``; Qwen3-Coder's one-newline trim is not GLM's."""
    name = "get_weather\n" if dialect == "glm45" else "get_weather"
    text = f"<tool_call>{name}<arg_key>city</arg_key><arg_value>{value}</arg_value></tool_call>"
    for label, chunks in chunkings(text, randoms=10):
        events = run(chunks)
        assert calls(events) == [("get_weather", {"city": value})], label
        assert [e.format for e in events if isinstance(e, ToolCall)] == [dialect], label
