"""The ``tokens`` strategy, and every strategy under a claim whose special tokens reach the
detector whole (ARCHITECTURE.md §6)."""

from __future__ import annotations

import pytest
from helpers import run
from hypothesis import given, settings
from hypothesis import strategies as st

from tcr.claims import EVERYTHING, Claim
from tcr.detector.core import StreamDetector
from tcr.dialects import DIALECTS
from tcr.rechunk import (
    DEFAULT_STRATEGIES,
    Chunking,
    parse_strategy,
    special_spans,
    splits_inside,
)

SPECIALS = sorted({m for d in DIALECTS for m in d.special_tokens})
PROSE = "Hello, world! I'll call it 12345 now:\n\n  snake_case (x) → ü"
CALL = 'Sure. <tool_call>{"name": "f", "arguments": {"n": 1}}</tool_call> [TOOL_CALLS]done'
CONTENT_SPECS = ["original", "whole", "char", "fixed:3", "random:4", "tokens", "exhaustive",
                 "boundary", "splits:3,9,15"]  # fmt: skip

texts = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(SPECIALS)), max_size=8).map(
    "".join
)
claims = st.builds(
    Claim,
    st.sets(st.sampled_from([d.id for d in DIALECTS]), min_size=1).map(frozenset) | st.none(),
    st.just("reject"),
    st.sampled_from(["split", "whole"]),
)


def tokens(
    text: str, *, runs: int = 5, seed: int = 0, claim: Claim = EVERYTHING
) -> list[Chunking[str]]:
    return list(parse_strategy("tokens").chunkings(text, runs=runs, seed=seed, claim=claim))


def cut_inside(chunking: Chunking[str], markers: tuple[str, ...]) -> list[int]:
    text = "".join(chunking.chunks)
    return splits_inside(chunking.splits, special_spans(text, markers))


def test_tokens_is_a_default_strategy() -> None:
    assert "tokens" in DEFAULT_STRATEGIES
    assert parse_strategy("tokens").spec == "tokens"
    assert parse_strategy("tokens").repeated


def test_tokens_takes_no_argument() -> None:
    with pytest.raises(Exception, match="tokens takes no argument"):
        parse_strategy("tokens:3")


@settings(max_examples=200, deadline=None)
@given(texts, claims, st.integers(0, 3))
def test_tokens_chunks_add_up_to_the_text_and_none_is_empty(
    text: str, claim: Claim, seed: int
) -> None:
    for chunking in tokens(text, runs=3, seed=seed, claim=claim):
        assert "".join(chunking.chunks) == text
        assert all(chunking.chunks)


@settings(max_examples=200, deadline=None)
@given(texts, claims, st.integers(0, 3))
def test_tokens_never_cuts_inside_a_claimed_special_token(
    text: str, claim: Claim, seed: int
) -> None:
    for chunking in tokens(text, runs=3, seed=seed, claim=claim):
        assert cut_inside(chunking, claim.special_markers) == [], chunking.chunks


def test_a_claimed_special_token_is_a_chunk_of_its_own() -> None:
    for chunking in tokens(CALL, runs=20):
        for marker in ("<tool_call>", "</tool_call>", "[TOOL_CALLS]"):
            assert marker in chunking.chunks


def test_tokens_may_cut_an_unclaimed_special_token() -> None:
    hermes = Claim(frozenset({"hermes"}))
    assert any(cut_inside(c, ("[TOOL_CALLS]",)) for c in tokens(CALL, runs=50, claim=hermes))


def test_tokens_is_reproducible_from_its_seed_and_run() -> None:
    assert tokens(CALL, seed=3) == tokens(CALL, seed=3)
    assert tokens(CALL, seed=3) != tokens(CALL, seed=4)
    (alone,) = parse_strategy("tokens").chunkings(CALL, runs=5, seed=3, start=4)
    assert alone == tokens(CALL, seed=3)[4]
    assert alone.label == "tokens#4"


def test_tokens_nth_is_the_nth_run() -> None:
    strategy = parse_strategy("tokens")
    label, chunks = strategy.nth(CALL, 2, seed=1)
    assert (label, tuple(chunks)) == ("tokens#2", tokens(CALL, seed=1)[2].chunks)


def test_every_split_point_of_a_marker_free_text_is_reachable() -> None:
    reached = {split for chunking in tokens(PROSE, runs=300) for split in chunking.splits}
    assert reached == set(range(1, len(PROSE)))


def test_tokens_cut_like_a_tokenizer() -> None:
    # One token in eight is merged with the one before (a detokenizer holding bytes), so
    # the shapes hold for most chunks, not all.
    chunks = [c for chunking in tokens(PROSE * 3, runs=50) for c in chunking.chunks]
    assert sum(len(c) <= 8 for c in chunks) >= 0.85 * len(chunks)  # word pieces of 1..8
    digits = [c.strip() for c in chunks if c.strip().isdigit()]
    assert sum(len(d) <= 3 for d in digits) >= 0.85 * len(digits)  # digits in small groups
    # a word's leading space is its first character: a chunk rarely ends on one before a word
    words = [c for c in chunks if c.strip().isalpha()]
    assert sum(c.startswith(" ") for c in words) >= 0.3 * len(words)
    # punctuation alone: a comma starts its chunk (or follows a merged word)
    commas = [c for c in chunks if "," in c]
    assert sum(c.startswith(",") for c in commas) >= 0.85 * len(commas)


def test_tokens_refuses_bytes() -> None:
    with pytest.raises(Exception, match="decoded text"):
        tokens(b"abc")  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", CONTENT_SPECS)
@settings(max_examples=60, deadline=None)
@given(text=texts, claim=claims.filter(lambda c: c.tokens_whole))
def test_no_strategy_cuts_a_special_token_that_reaches_the_detector_whole(
    spec: str, text: str, claim: Claim
) -> None:
    strategy = parse_strategy(spec)
    offsets = tuple(o for o in strategy.offsets if o < len(text))
    if spec.startswith("splits"):
        strategy = parse_strategy("splits:" + ",".join(map(str, offsets)))
    made = list(strategy.chunkings(text, original=[text[:5], text[5:]], runs=3, claim=claim))
    assert made
    for chunking in made:
        assert "".join(chunking.chunks) == text
        assert all(chunking.chunks)
        assert cut_inside(chunking, claim.special_markers) == []
    if not strategy.repeated:
        assert len({c.splits for c in made}) == len(made), "no chunking made twice"


def test_a_claim_that_lets_special_tokens_split_keeps_char_per_character() -> None:
    (chunking,) = parse_strategy("char").chunkings(CALL)
    assert len(chunking.chunks) == len(CALL)
    whole = Claim(special_tokens="whole")
    (kept,) = parse_strategy("char").chunkings(CALL, claim=whole)
    assert "<tool_call>" in kept.chunks and "[TOOL_CALLS]" in kept.chunks


def test_nth_keeps_special_tokens_whole_too() -> None:
    whole = Claim(special_tokens="whole")
    for spec in ("char", "random", "fixed:2", "exhaustive"):
        _, chunks = parse_strategy(spec).nth(CALL, 1, claim=whole)
        chunking = Chunking(spec, spec, tuple(chunks))
        assert "".join(chunking.chunks) == CALL
        assert cut_inside(chunking, whole.special_markers) == []


PIECES = [
    "Sure. ", "x", " ", "{", "12", "<tool_call>", '{"name": "f", "arguments": {}}',
    "</tool_call>", "[TOOL_CALLS]", '[{"name": "g", "arguments": {"a": 1}}]',
    "<think>", "hm", "</think>", "<|python_tag|>", "<", "_c",
]  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10).map("".join), st.integers(0, 5))
def test_the_reference_emits_the_same_events_under_tokens(text: str, seed: int) -> None:
    whole = run([text])
    for chunking in tokens(text, runs=4, seed=seed):
        assert run(chunking.chunks) == whole, chunking.chunks


def test_the_reference_claim_reads_special_tokens_split() -> None:
    assert not StreamDetector().tcr_claim.tokens_whole


def test_boundary_runs_a_one_character_marker_whole() -> None:
    # "[" is a marker of some dialects: nowhere to cut it, but it is still replayed (it got
    # no run at all, so a one-character recording was never checked under boundary).
    made = list(parse_strategy("boundary").chunkings("[", original=["["], runs=3))
    assert [c.chunks for c in made] == [("[",)]
