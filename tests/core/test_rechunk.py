"""Rechunking strategies: every chunking adds up to the text, and each strategy does its job."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import AnyStr, SupportsIndex

import pytest

from tcr.errors import TcrError
from tcr.rechunk import (
    DEFAULT_STRATEGIES,
    Chunking,
    parse_strategy,
    split_at,
    splits_spec,
)

CALL = 'a <tool_call>{"name": "f", "arguments": {}}</tool_call> b'
TEXTS = ["", "x", "hi", "plain prose without markers", CALL, "é€😀 <think>ü</think>"]
CONTENT_SPECS = [
    "original",
    "whole",
    "char",
    "fixed:1",
    "fixed:3",
    "fixed:1000",
    "random",
    "random:1",
    "random:3",
    "exhaustive",
    "boundary",
    "splits:",
]


def all_chunkings(spec: str, text: str) -> list[Chunking[str]]:
    return list(parse_strategy(spec).chunkings(text, runs=5, seed=7))


@pytest.mark.parametrize("spec", CONTENT_SPECS)
@pytest.mark.parametrize("text", TEXTS)
def test_every_chunking_concatenates_to_the_text(spec: str, text: str) -> None:
    chunkings = all_chunkings(spec, text)
    assert chunkings, "a strategy always yields at least one chunking"
    for chunking in chunkings:
        assert "".join(chunking.chunks) == text


@pytest.mark.parametrize("spec", CONTENT_SPECS)
@pytest.mark.parametrize("text", TEXTS)
def test_no_chunking_contains_an_empty_chunk(spec: str, text: str) -> None:
    for chunking in all_chunkings(spec, text):
        assert all(chunking.chunks), chunking.label


@pytest.mark.parametrize("spec", CONTENT_SPECS)
def test_labels_are_unique_within_a_run(spec: str) -> None:
    labels = [c.label for c in all_chunkings(spec, CALL)]
    assert len(labels) == len(set(labels))


def test_spec_is_canonical_and_names_the_strategy() -> None:
    assert parse_strategy("random").spec == "random:8"
    assert parse_strategy(" fixed:4 ").spec == "fixed:4"
    chunking = next(parse_strategy("random:3").chunkings(CALL, runs=4))
    assert chunking.strategy == "random:3"
    assert chunking.label == "random:3#0"


def test_defaults_parse() -> None:
    for spec in DEFAULT_STRATEGIES:
        assert not parse_strategy(spec).transport


def test_original_yields_the_recorded_chunks_without_empty_ones() -> None:
    (chunking,) = parse_strategy("original").chunkings("abcd", original=["ab", "", "cd"])
    assert chunking.chunks == ("ab", "cd")


def test_original_without_a_recording_is_the_whole_text() -> None:
    (chunking,) = parse_strategy("original").chunkings("abcd")
    assert chunking.chunks == ("abcd",)


def test_original_that_does_not_add_up_is_refused() -> None:
    with pytest.raises(TcrError, match="do not add up"):
        parse_strategy("original").chunkings("abcd", original=["ab"])


def test_whole_and_char() -> None:
    assert [c.chunks for c in all_chunkings("whole", "abc")] == [("abc",)]
    assert [c.chunks for c in all_chunkings("char", "abc")] == [("a", "b", "c")]


def test_fixed_cuts_equal_pieces_with_a_shorter_last_one() -> None:
    assert all_chunkings("fixed:2", "abcde")[0].chunks == ("ab", "cd", "e")


def test_random_sizes_stay_within_max() -> None:
    for chunking in parse_strategy("random:3").chunkings(CALL * 20, runs=10):
        assert max(len(c) for c in chunking.chunks) <= 3
    sizes = {len(c) for ch in parse_strategy("random:3").chunkings(CALL * 20) for c in ch.chunks}
    assert sizes == {1, 2, 3}


def test_random_yields_runs_chunkings() -> None:
    assert len(list(parse_strategy("random").chunkings(CALL, runs=13))) == 13


@pytest.mark.parametrize("most", [1, 2, 3, 8, 13, 64])
def test_random_sizes_are_the_draws_of_randrange(most: int) -> None:
    # Reproducers name random runs by seed and index: the inlined draws must not move.
    for chunking in parse_strategy(f"random:{most}").chunkings(CALL * 5, runs=3, seed=4):
        rng = random.Random(f"4/{chunking.label.split('#')[1]}")
        assert [len(c) for c in chunking.chunks[:-1]] == [
            rng.randrange(most) + 1 for _ in chunking.chunks[:-1]
        ]


def test_random_from_a_start_run_makes_the_same_later_runs() -> None:
    every = list(parse_strategy("random").chunkings(CALL, runs=9, seed=2))
    later = list(parse_strategy("random").chunkings(CALL, runs=9, seed=2, start=5))
    assert later == every[5:]
    assert list(parse_strategy("char").chunkings(CALL, start=1)) == []


def test_random_is_deterministic_for_a_seed() -> None:
    first = [c.chunks for c in parse_strategy("random").chunkings(CALL, seed=3)]
    again = [c.chunks for c in parse_strategy("random").chunkings(CALL, seed=3)]
    assert first == again


def test_random_differs_across_seeds_and_runs() -> None:
    one = [c.chunks for c in parse_strategy("random").chunkings(CALL, seed=1)]
    two = [c.chunks for c in parse_strategy("random").chunkings(CALL, seed=2)]
    assert one != two
    assert len(set(one)) > 1


@pytest.mark.process
@pytest.mark.slow
def test_random_does_not_depend_on_the_hash_seed() -> None:
    script = (
        "from tcr.rechunk import parse_strategy;"
        "print([c.splits for c in parse_strategy('random:5').chunkings('x' * 200, runs=3)])"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={"PYTHONHASHSEED": hash_seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in ("1", "2", "random")
    }
    assert len(outputs) == 1


def test_a_random_run_is_reproducible_on_its_own() -> None:
    # Run #4 does not depend on having drawn runs #0..#3 first.
    five = list(parse_strategy("random").chunkings(CALL, runs=5, seed=9))
    many = list(parse_strategy("random").chunkings(CALL, runs=50, seed=9))
    assert five == many[:5]


def test_exhaustive_is_every_two_way_split() -> None:
    chunkings = all_chunkings("exhaustive", "abcd")
    assert [c.chunks for c in chunkings] == [("a", "bcd"), ("ab", "cd"), ("abc", "d")]
    assert [c.label for c in chunkings] == ["exhaustive@1", "exhaustive@2", "exhaustive@3"]


def test_exhaustive_count_is_one_per_inner_split_point() -> None:
    assert len(all_chunkings("exhaustive", CALL)) == len(CALL) - 1
    assert len(all_chunkings("exhaustive", "x")) == 1
    assert all_chunkings("exhaustive", "")[0].chunks == ()


def test_exhaustive_is_lazy() -> None:
    chunkings = parse_strategy("exhaustive").chunkings("x" * 10_000_000)
    assert next(chunkings).chunks[0] == "x"  # a list of 10M chunkings would not come back


def test_boundary_covers_every_split_point_in_and_around_a_marker() -> None:
    text = "a <tool_call>{}</tool_call> b"
    two_way = {c.splits[0] for c in all_chunkings("boundary", text) if len(c.chunks) == 2}
    start = text.index("<tool_call>")
    end = start + len("<tool_call>")
    assert set(range(start - 1, end + 2)) <= two_way
    close = text.index("</tool_call>")
    assert set(range(close - 1, close + len("</tool_call>") + 2)) <= two_way


def test_boundary_shatters_each_marker_into_characters() -> None:
    text = "a <tool_call>{}</tool_call> b"
    shattered = [c.chunks for c in all_chunkings("boundary", text) if len(c.chunks) > 2]
    assert ("a ", *"<tool_call>", "{}</tool_call> b") in shattered
    assert ("a <tool_call>{}", *"</tool_call>", " b") in shattered


def test_boundary_yields_no_duplicates() -> None:
    splits = [c.splits for c in all_chunkings("boundary", "<tool_call></tool_call>")]
    assert len(splits) == len(set(splits))


def test_boundary_aims_at_bare_json_only_at_message_start() -> None:
    assert {c.splits for c in all_chunkings("boundary", '  {"a": 1}')} >= {(1,), (2,), (3,), (4,)}
    labels = {c.label for c in all_chunkings("boundary", "text with {braces} inside")}
    assert labels == {"boundary@1", "boundary@12", "boundary@24"}  # the fallback


def test_boundary_without_markers_falls_back_to_a_few_splits() -> None:
    chunkings = all_chunkings("boundary", "plain words")
    assert 1 <= len(chunkings) <= 3
    assert all(len(c.chunks) == 2 for c in chunkings)


def test_splits_cuts_at_exactly_those_offsets() -> None:
    assert all_chunkings("splits:1,3", "abcde")[0].chunks == ("a", "bc", "de")


@pytest.mark.parametrize("spec", ["random:4", "exhaustive", "boundary", "char"])
def test_splits_spec_reproduces_any_chunking(spec: str) -> None:
    for chunking in all_chunkings(spec, CALL):
        (again,) = parse_strategy(splits_spec(chunking.splits)).chunkings(CALL)
        assert again.chunks == chunking.chunks


def test_chunking_splits_are_the_boundary_offsets() -> None:
    assert Chunking("x", "x", ("ab", "c", "de")).splits == (2, 3)
    assert Chunking("x", "x", ("abc",)).splits == ()
    assert Chunking("x", "x", ()).splits == ()


def test_split_at() -> None:
    assert split_at("abcdef", [2, 4]) == ["ab", "cd", "ef"]
    assert split_at("abc", []) == ["abc"]
    with pytest.raises(TcrError, match="not inside"):
        split_at("abc", [3])


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("fixed:0", "N must be a positive integer, not '0'"),
        ("fixed:-2", "N must be a positive integer"),
        ("fixed", "fixed needs a size"),
        ("random:x", "MAX must be a positive integer, not 'x'"),
        ("random:", "MAX must be a positive integer"),
        ("nope", "unknown strategy 'nope'"),
        ("whole:3", "whole takes no argument"),
        ("splits:5,2", "strictly increasing"),
        ("splits:3,3", "strictly increasing"),
        ("splits:0,2", "an offset must be a positive integer"),
        ("splits", "splits needs offsets"),
        ("bytes:abc", "N must be a positive integer"),
    ],
)
def test_bad_specs_say_what_and_list_the_valid_forms(spec: str, why: str) -> None:
    with pytest.raises(TcrError) as caught:
        parse_strategy(spec)
    message = str(caught.value)
    assert repr(spec) in message
    assert why in message
    assert "valid forms: original, whole, char, fixed:N" in message
    assert "\n" not in message


def test_split_offsets_past_the_end_are_refused_at_once() -> None:
    with pytest.raises(TcrError, match=r"'splits:2,9'.*offset 9 is not inside the 5-character"):
        parse_strategy("splits:2,9").chunkings("abcde")


def test_negative_runs_are_refused() -> None:
    with pytest.raises(TcrError, match="runs"):
        parse_strategy("random").chunkings("abc", runs=-1)


# --- transport strategies ----------------------------------------------------

BODY = 'data: {"content": "é€😀"}\r\n\r\n'.encode()


@pytest.mark.parametrize(
    "spec", ["bytes:1", "bytes:3", "bytes-random", "bytes-random:2", "bytes-exhaustive"]
)
def test_transport_strategies_split_bytes(spec: str) -> None:
    strategy = parse_strategy(spec)
    assert strategy.transport
    chunkings = list(strategy.chunkings(BODY, runs=5))
    assert chunkings
    for chunking in chunkings:
        assert b"".join(chunking.chunks) == BODY
        assert all(isinstance(c, bytes) and c for c in chunking.chunks)


def test_bytes_strategies_cut_inside_a_multibyte_character() -> None:
    body = "é".encode()
    assert all_bytes("bytes:1", body) == [(b"\xc3", b"\xa9")]
    assert all_bytes("bytes-exhaustive", body) == [(b"\xc3", b"\xa9")]


def test_bytes_exhaustive_cuts_a_crlf() -> None:
    assert (b"a\r", b"\nb") in all_bytes("bytes-exhaustive", b"a\r\nb")


def test_bytes_random_is_deterministic_for_a_seed() -> None:
    assert all_bytes("bytes-random:3", BODY) == all_bytes("bytes-random:3", BODY)


def test_transport_strategy_refuses_text() -> None:
    with pytest.raises(TcrError, match="raw body"):
        parse_strategy("bytes:2").chunkings("text")


def test_content_strategy_works_on_bytes_too() -> None:
    body = b"x <tool_call>y"
    assert all(b"".join(c.chunks) == body for c in parse_strategy("boundary").chunkings(body))


def all_bytes(spec: str, body: bytes) -> list[tuple[bytes, ...]]:
    return [c.chunks for c in parse_strategy(spec).chunkings(body, runs=3)]


# --- the n-th chunking, cut as it is taken (tcr serve, issue 14) ----------------------


def nth_chunking(spec: str, text: AnyStr, n: int) -> Chunking[AnyStr]:
    """The n-th request's chunking as the strategy's chunkings give it, going round."""
    strategy = parse_strategy(spec)
    if strategy.repeated:
        return next(strategy.chunkings(text, runs=n + 1, seed=7, start=n))
    made = list(strategy.chunkings(text, seed=7))
    return made[n % len(made)]


@pytest.mark.parametrize("spec", CONTENT_SPECS)
@pytest.mark.parametrize("text", TEXTS)
def test_the_nth_chunking_is_the_one_chunkings_makes_for_it(spec: str, text: str) -> None:
    for n in range(4):
        label, chunks = parse_strategy(spec).nth(text, n, seed=7)
        expected = nth_chunking(spec, text, n)
        assert (label, tuple(chunks)) == (expected.label, expected.chunks)


@pytest.mark.parametrize(
    "spec", ["bytes:1", "bytes:3", "bytes-random", "bytes-random:2", "bytes-exhaustive"]
)
def test_the_nth_transport_chunking_is_the_one_chunkings_makes_for_it(spec: str) -> None:
    for n in range(4):
        label, chunks = parse_strategy(spec).nth(BODY, n, seed=7)
        expected = nth_chunking(spec, BODY, n)
        assert (label, tuple(chunks)) == (expected.label, expected.chunks)


class CountedSlices(str):
    """A text that counts the pieces cut from it."""

    cut = 0

    def __getitem__(self, index: SupportsIndex | slice) -> str:
        CountedSlices.cut += 1
        return str.__getitem__(self, index)


@pytest.mark.parametrize("spec", ["char", "fixed:2", "random:3", "whole"])
def test_the_nth_chunking_is_cut_as_it_is_taken(spec: str) -> None:
    text = CountedSlices("abcdefgh" * 1000)
    CountedSlices.cut = 0
    _, chunks = parse_strategy(spec).nth(text, 1)
    first = next(chunks)
    assert CountedSlices.cut <= 1 and text.startswith(first)


def test_the_nth_chunking_refuses_what_chunkings_refuses() -> None:
    with pytest.raises(TcrError, match="raw body"):
        parse_strategy("bytes:2").nth("text", 0)
    with pytest.raises(TcrError, match="0 or more"):
        parse_strategy("char").nth("text", -1)
