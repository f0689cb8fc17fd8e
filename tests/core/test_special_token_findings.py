"""Whether a finding needs a split inside a special token: decided on the shrunk input
(``tcr.signature``), and the shrinker cuts one only when the failure needs it
(``tcr.minimize``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from tcr.claims import EVERYTHING, Claim
from tcr.minimize import minimize, minimize_splits
from tcr.oracle import Check
from tcr.rechunk import special_spans, split_at, splits_inside
from tcr.signature import (
    PROXY_ONLY,
    Signature,
    shaped,
    special_markers,
    special_split,
)

MISTRAL = 'ok [TOOL_CALLS][{"name": "f", "arguments": {}}] done'
AT = MISTRAL.index("[TOOL_CALLS]")
END = AT + len("[TOOL_CALLS]")
LOST = Signature(str(Check.EXPECTED), "missing ToolCall", "mistral")


def cut(text: str, *offsets: int) -> list[str]:
    return split_at(text, offsets)


def test_a_split_inside_a_special_token_of_the_findings_dialect_needs_a_proxy() -> None:
    found = shaped(LOST, cut(MISTRAL, AT + 3))
    assert found.proxy
    assert found.shape == "split-in-opener"


def test_a_split_at_a_special_tokens_edge_needs_no_proxy() -> None:
    assert not shaped(LOST, cut(MISTRAL, AT, END)).proxy
    assert not shaped(LOST, [MISTRAL]).proxy


def test_only_the_findings_dialects_special_tokens_count() -> None:
    hermes = Signature(str(Check.EXPECTED), "missing ToolCall", "hermes")
    assert not shaped(hermes, cut(MISTRAL, AT + 3)).proxy


def test_a_finding_without_a_dialect_counts_the_claims_special_tokens() -> None:
    lost = Signature(str(Check.CONSERVATION), "lost")
    assert shaped(lost, cut(MISTRAL, AT + 3)).proxy
    hermes_only = Claim(frozenset({"hermes"}))
    assert not shaped(lost, cut(MISTRAL, AT + 3), claim=hermes_only).proxy
    assert special_markers("", hermes_only) == ("</tool_call>", "<tool_call>")


def test_special_split_names_the_token_cut() -> None:
    assert special_split(cut(MISTRAL, 1, AT + 2), ["[TOOL_CALLS]"]) == "[TOOL_CALLS]"
    assert special_split(cut(MISTRAL, 1, AT), ["[TOOL_CALLS]"]) == ""


def test_the_signatures_string_is_unchanged_and_its_label_says_proxy_only() -> None:
    found = shaped(LOST, cut(MISTRAL, AT + 3))
    assert str(found) == "expected/missing ToolCall/mistral@split-in-opener"
    assert found.label == f"expected/missing ToolCall/mistral@split-in-opener ({PROXY_ONLY})"
    assert shaped(LOST, cut(MISTRAL, AT)).label == str(shaped(LOST, cut(MISTRAL, AT)))


def test_proxy_is_part_of_what_makes_two_findings_distinct() -> None:
    found = shaped(LOST, cut(MISTRAL, AT + 3))
    assert found != replace(found, proxy=False)
    assert found.key == LOST.key  # the key has no shape, so no proxy need either
    assert not found.coarse.proxy


def near_the_marker(chunks: Sequence[str]) -> bool:
    """Fails when a split falls in or at the edges of the marker: an engine's cut does too."""
    text, at = "".join(chunks), 0
    splits = []
    for chunk in chunks[:-1]:
        at += len(chunk)
        splits.append(at)
    return any(AT <= s <= END for s in splits) and text == MISTRAL


def inside_the_marker(chunks: Sequence[str]) -> bool:
    """Fails only when the marker itself is cut: only a proxy does that."""
    return bool(special_split(chunks, ["[TOOL_CALLS]"]))


def test_the_shrinker_moves_a_cut_out_of_a_special_token_when_the_failure_allows() -> None:
    shrunk = minimize_splits(
        cut(MISTRAL, 1, AT + 4, END + 3), near_the_marker, keep_whole=["[TOOL_CALLS]"]
    )
    assert near_the_marker(shrunk)
    assert not special_split(shrunk, ["[TOOL_CALLS]"])
    assert not shaped(LOST, shrunk).proxy


def test_without_keep_whole_the_shrinker_may_keep_the_cut_inside() -> None:
    shrunk = minimize_splits(cut(MISTRAL, 1, AT + 4, END + 3), near_the_marker)
    assert special_split(shrunk, ["[TOOL_CALLS]"]) == "[TOOL_CALLS]"


def test_a_failure_that_needs_the_cut_inside_keeps_it_and_needs_a_proxy() -> None:
    shrunk = minimize_splits(
        cut(MISTRAL, 1, AT + 4, END + 3), inside_the_marker, keep_whole=["[TOOL_CALLS]"]
    )
    assert len(shrunk) == 2
    assert shaped(LOST, shrunk).proxy


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, len(MISTRAL) - 1), min_size=1, max_size=8, unique=True))
def test_the_shrunk_chunking_cuts_a_special_token_only_when_every_edge_cut_passes(
    offsets: list[int],
) -> None:
    chunks = cut(MISTRAL, *sorted(offsets))
    if not near_the_marker(chunks):
        return
    shrunk = minimize(chunks, near_the_marker, text_too=False, keep_whole=["[TOOL_CALLS]"])
    spans = special_spans(MISTRAL, ["[TOOL_CALLS]"])
    assert splits_inside(shrunk.splits, spans) == []
    assert near_the_marker(shrunk.chunks)


def test_special_markers_of_a_dialect_are_its_records() -> None:
    assert set(special_markers("kimi_k2")) >= {
        "<|tool_calls_section_begin|>",
        "<|tool_call_begin|>",
    }
    assert special_markers("bare_json") == ()
    assert set(special_markers("", EVERYTHING)) == set(EVERYTHING.special_markers)
