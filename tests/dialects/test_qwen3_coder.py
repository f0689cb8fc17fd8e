"""Qwen3-Coder: ``<function=N><parameter=K>V</parameter></function>`` in ``<tool_call>`` tags."""

from __future__ import annotations

from helpers import calls, same_under_every_chunking

from tcr.detector import Rejected

CALL = "<tool_call>\n<function=run>\n<parameter=cmd>\nls\n</parameter>\n</function>\n"


def test_a_message_that_ends_inside_the_closing_tag_still_holds_the_call() -> None:
    """vLLM's qwen3_coder (``tool_call_regex`` ``<tool_call>(.*?)$``) and SGLang's
    ``Qwen3CoderDetector`` have the call once ``</function>`` arrives; the cut-off
    ``</tool_`` is no part of it."""
    events = same_under_every_chunking(CALL + "</tool_")
    assert calls(events) == [("run", {"cmd": "ls"})]
    assert not [e for e in events if isinstance(e, Rejected)]


def test_a_message_cut_inside_the_function_element_is_still_unterminated() -> None:
    events = same_under_every_chunking(CALL.removesuffix("</function>\n"))
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["unterminated"]


def test_a_lone_angle_bracket_at_the_end_may_begin_the_next_call_so_stays_unterminated() -> None:
    events = same_under_every_chunking(CALL + "<")
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["unterminated"]


def test_a_block_that_is_only_a_cut_closing_tag_is_no_call() -> None:
    events = same_under_every_chunking("<tool_call></tool_")
    assert [e.reason for e in events if isinstance(e, Rejected)] == ["unterminated"]
