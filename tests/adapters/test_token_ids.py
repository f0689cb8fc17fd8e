"""Token ids for parsers that key on them (issue 13, "Chunking as engines really chunk"):
the adapter hands each step the special tokens its chunk holds whole, and a parser that
finds its calls by ``tool_call_start_token_id in delta_token_ids`` (``parsers.token_ids``,
vLLM's Hermes shape), claiming that special tokens reach it whole, passes every check
under every strategy, while the same parser behind a proxy's chunking does not."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from parsers.token_ids import END_ID, START_ID, VOCAB, TokenIdHermesParser, factory

from tcr.adapters import IncrementalCallDetector
from tcr.claims import Claim
from tcr.corpora import ROOT
from tcr.detector.events import Event, Text, ToolCall, merge_text
from tcr.detector.loader import resolve_detector
from tcr.errors import EXIT_OK, EXIT_VIOLATION
from tcr.rechunk import DEFAULT_STRATEGIES, parse_strategy, whole_special_tokens
from tcr.replay import run

HERMES = [
    ROOT / "regressions" / "format_tool_call_tag_json.msgpack",
    ROOT / "recorded" / "tool_call_tag_json.msgpack",
    ROOT / "regressions" / "false_start_tool_result.msgpack",
]
CALL = '<tool_call>{"name": "f", "arguments": {"n": 1}}</tool_call>'


def stepped(chunks: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    seen: list[tuple[str, tuple[str, ...]]] = []
    detector = IncrementalCallDetector(lambda c, t: seen.append((c, t)), special_tokens=VOCAB)
    for chunk in chunks:
        detector.feed(chunk)
    return seen


def test_each_step_gets_the_special_tokens_its_chunk_holds_whole_in_order() -> None:
    assert stepped(["a <tool_call>{", '"x": 1}</tool_call><tool_call>', "b"]) == [
        ("a <tool_call>{", ("<tool_call>",)),
        ('"x": 1}</tool_call><tool_call>', ("</tool_call>", "<tool_call>")),
        ("b", ()),
    ]


def test_a_cut_special_token_is_no_whole_unit_in_either_chunk() -> None:
    assert stepped(["<tool_", "call>"]) == [("<tool_", ()), ("call>", ())]


def test_without_special_tokens_a_step_gets_the_chunk_alone() -> None:
    seen: list[str] = []
    IncrementalCallDetector(seen.append).feed("<tool_call>")
    assert seen == ["<tool_call>"]


def test_whole_special_tokens_reads_one_chunk() -> None:
    assert whole_special_tokens(CALL + " <tool_c", list(VOCAB)) == ("<tool_call>", "</tool_call>")
    assert whole_special_tokens("plain", list(VOCAB)) == ()


def test_the_parser_keys_on_ids_not_text() -> None:
    parser = TokenIdHermesParser()
    shown = parser.extract_tool_calls_streaming(CALL, [])  # no ids: it is text
    assert shown is not None and shown.content == CALL
    parser = TokenIdHermesParser()
    found = parser.extract_tool_calls_streaming(CALL, [START_ID, 1, 2, END_ID])
    assert found is not None and found.content is None
    assert [c.function.name for c in found.tool_calls if c.function] == ["f"]


def test_the_parser_claims_tokens_whole() -> None:
    claim = resolve_detector(factory).claim
    assert claim == Claim(frozenset({"hermes"}), "text", "whole")


def test_replay_under_every_default_strategy_finds_nothing() -> None:
    assert "tokens" in DEFAULT_STRATEGIES
    report = run(HERMES, detector="parsers.token_ids:factory", runs=5)
    assert [str(g.signature) for g in report.findings] == []
    assert report.exit_code == EXIT_OK


def test_replay_with_exhaustive_and_boundary_finds_nothing() -> None:
    report = run(HERMES[:1], detector="parsers.token_ids:factory",
                 strategies=["exhaustive", "boundary", "char"])  # fmt: skip
    assert report.exit_code == EXIT_OK, [str(g.signature) for g in report.findings]


def test_behind_a_proxy_the_same_parser_fails_and_every_finding_needs_the_proxy() -> None:
    report = run(HERMES[:1], detector="parsers.token_ids:split_factory", strategies=["char"])
    assert report.exit_code == EXIT_VIOLATION
    assert report.findings
    assert all(g.signature.proxy for g in report.findings), [
        g.signature.label for g in report.findings
    ]


def events(chunks: Sequence[str]) -> list[Event]:
    detector = factory()
    out: list[Event] = []
    for chunk in chunks:
        out += detector.feed(chunk)
    return merge_text(out + detector.finish())


PIECES = ["Sure. ", "x", " ", "{", "<", "tool", "_call", CALL, "<tool_call>", "</tool_call>",
          '{"name": "g", "arguments": {}}', "é"]  # fmt: skip
WHOLE = Claim(frozenset({"hermes"}), "text", "whole")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join), st.integers(0, 3))
def test_the_adapted_parser_is_chunking_invariant_when_tokens_arrive_whole(
    text: str, seed: int
) -> None:
    whole = events([text])
    for spec in ("tokens", "char", "random:3"):
        for chunking in parse_strategy(spec).chunkings(text, runs=3, seed=seed, claim=WHOLE):
            assert events(chunking.chunks) == whole, chunking.chunks


def test_a_call_comes_out_whole() -> None:
    assert events(["Hi ", CALL]) == [Text("Hi "), ToolCall("f", '{"n": 1}', None, "hermes")]
    assert END_ID != START_ID
