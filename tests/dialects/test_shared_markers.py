"""Dialects that share ``<tool_call>`` (hermes, qwen3_coder, glm47, glm45) are told apart by the body."""

from __future__ import annotations

import pytest

from tcr.detector import Rejected, ToolCall
from tcr.detector.core import StreamDetector
from tcr.detector.formats import SHARING


def events(text: str) -> list[object]:
    detector = StreamDetector()
    return [*detector.feed(text), *detector.finish()]


def test_the_engine_dialects_share_the_tool_call_tag_in_registry_order() -> None:
    assert [d.id for d in SHARING["<tool_call>"]] == ["hermes", "qwen3_coder", "glm47", "glm45"]


@pytest.mark.parametrize(
    ("body", "dialect"),
    [
        ('{"name": "f", "arguments": {}}', "hermes"),
        ("<function=f>\n</function>", "qwen3_coder"),
        ("f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>", "glm45"),
        ("f<arg_key>a</arg_key><arg_value>1</arg_value>", "glm47"),
        ("f", "glm47"),  # GLM-4.7's call without arguments
        ("f\n", "glm45"),
    ],
)
def test_a_call_carries_the_dialect_its_body_is_written_in(body: str, dialect: str) -> None:
    (call,) = events(f"<tool_call>{body}</tool_call>")
    assert isinstance(call, ToolCall) and call.format == dialect


@pytest.mark.parametrize(
    ("body", "dialect"),
    [
        ("{not json}", "hermes"),
        ("<function=f>", "qwen3_coder"),
        ("f\n<arg_key>a</arg_key>", "glm45"),
        ("", "hermes"),  # no body owns it: the first dialect of the marker
        ("<unknown>", "hermes"),
    ],
)
def test_a_rejection_carries_the_dialect_its_body_is_written_in(body: str, dialect: str) -> None:
    (rejected,) = events(f"<tool_call>{body}</tool_call>")
    assert isinstance(rejected, Rejected) and rejected.format == dialect


def test_the_learned_dialect_is_the_body_s() -> None:
    detector = StreamDetector()
    detector.feed("<tool_call><function=f>\n</function></tool_call>")
    detector.finish()
    assert detector.format == "qwen3_coder"


GLM45_BODY = "f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n"
GLM47_BODIES = ["f<arg_key>a</arg_key><arg_value>1</arg_value>", "f"]


def restricted(dialects: list[str], text: str) -> list[object]:
    detector = StreamDetector(dialects=dialects)
    return [*detector.feed(text), *detector.finish()]


def test_qwen3_coder_xml_is_a_malformed_body_to_a_hermes_claim() -> None:
    body = "<function=f>\n</function>"
    block = f"<tool_call>{body}</tool_call>"
    assert restricted(["hermes"], block) == [Rejected(block, body, "hermes", "malformed")]


@pytest.mark.parametrize("body", GLM47_BODIES)
def test_a_glm47_body_is_a_malformed_body_to_a_glm45_claim(body: str) -> None:
    """As Qwen3-Coder XML to a hermes claim: SGLang's glm45 (Glm4MoeDetector) needs the
    newline after the name and reads no GLM-4.7 block."""
    block = f"<tool_call>{body}</tool_call>"
    assert restricted(["glm45"], block) == [Rejected(block, body, "glm45", "malformed")]


@pytest.mark.parametrize("body", GLM47_BODIES)
def test_a_glm47_body_is_glm47_s_call_when_both_are_claimed(body: str) -> None:
    (call,) = restricted(["glm45", "glm47"], f"<tool_call>{body}</tool_call>")
    assert isinstance(call, ToolCall) and call.format == "glm47"


def test_a_glm45_body_is_a_call_to_a_glm47_claim_as_the_engines_glm47_parsers_read_it() -> None:
    """SGLang's Glm47MoeDetector strips the name, vLLM's Glm47MoeModelToolParser takes it
    "with or without white space": both read GLM-4.5's newline form. Rejecting it under a
    glm47 claim would blame every real glm47 parser."""
    (call,) = restricted(["glm47"], f"<tool_call>{GLM45_BODY}</tool_call>")
    assert isinstance(call, ToolCall) and (call.name, call.format) == ("f", "glm47")
