"""What ``tools=[]`` means: the reference's choice (reject every call) or parsing nothing.

ARCHITECTURE.md §5.7 (claims): when a request offers no tools, the reference rejects every
call (policy 7), while a serving engine does not run its tool parser at all.
``StreamDetector(empty_tools="text")`` makes the second choice, and says so in
its ``tcr_claim``.
"""

from __future__ import annotations

import pytest

from tcr.claims import Claim
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Rejected, Text, ToolCall, merge_text
from tcr.detector.formats import NOTHING
from tcr.dialects import DIALECTS

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
MESSAGE = f'<think>hmm</think>{{"a": 1}} then {CALL} and [TOOL_CALLS]'


def events(detector: StreamDetector, chunks: list[str]) -> list[Event]:
    out: list[Event] = []
    for chunk in chunks:
        out += detector.feed(chunk)
    return merge_text(out + detector.finish())


def test_with_text_no_tools_means_every_byte_is_text_at_once() -> None:
    detector = StreamDetector([], empty_tools="text")
    for chunk in ["<tool", "_call>", MESSAGE]:
        assert detector.feed(chunk) == [Text(chunk)]  # nothing held back, not even a prefix
    assert detector.finish() == []


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.id)
def test_with_text_no_tools_shows_every_dialects_example_verbatim(dialect: object) -> None:
    text = dialect.example.text  # type: ignore[attr-defined]
    assert events(StreamDetector([], empty_tools="text"), list(text)) == [Text(text)]


def test_with_text_declared_tools_still_parse() -> None:
    out = events(StreamDetector(["get_weather"], empty_tools="text"), list(CALL))
    assert [type(e) for e in out] == [ToolCall]
    assert events(StreamDetector(None, empty_tools="text"), [CALL]) == out


def test_reject_is_the_default_and_keeps_policy_7() -> None:
    out = events(StreamDetector([]), [CALL])
    assert isinstance(out[0], Rejected) and out[0].reason == "undeclared"
    assert events(StreamDetector([], empty_tools="reject"), [CALL]) == out


def test_the_claim_carries_the_choice() -> None:
    assert StreamDetector(empty_tools="text").tcr_claim == Claim(None, "text")
    restricted = StreamDetector(dialects=["hermes"], empty_tools="text")
    assert restricted.tcr_claim == Claim(frozenset({"hermes"}), "text")
    assert StreamDetector().tcr_claim == Claim()


def test_parsing_nothing_holds_nothing_back() -> None:
    assert StreamDetector([], empty_tools="text").holdback_bound == 0
    assert NOTHING.holdback_bound == 0 and NOTHING.opener_re is None and not NOTHING.sharing


def test_an_unknown_choice_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="empty_tools must be one of reject, text, not 'maybe'"):
        StreamDetector(empty_tools="maybe")
