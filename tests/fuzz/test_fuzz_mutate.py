"""Mutating recordings: the truth is kept exactly where a mutation cannot change it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import InvalidArgument

from tcr.claims import Claim
from tcr.corpora import ROOT, bundled
from tcr.corpus import read_recording
from tcr.detector.core import StreamDetector
from tcr.dialects import DIALECTS
from tcr.expectation import expectation_of
from tcr.fuzz import Case, Truth, mutations
from tcr.fuzz.check import CaseChecker
from tcr.fuzz.mutate import MUTATIONS, OPS_BYTES, Seed, decode_mutant, load_seeds

REGRESSIONS = ROOT / "regressions"
CHECKER = CaseChecker(StreamDetector)


def seed_of(name: str) -> Seed:
    path = REGRESSIONS / name
    return Seed.from_recording(read_recording(path), name)


def ops(*names: str, choices: bytes = b"") -> bytes:
    """Operation bytes: how many, then each operation and its choices."""
    data = bytes([len(names)])
    for k, name in enumerate(names):
        data += bytes([MUTATIONS.index(name)]) + choices[k : k + 1] + b"\0" * 3
    return data.ljust(OPS_BYTES, b"\0")


@pytest.mark.parametrize(
    "name",
    ["format_tool_call_tag_json.msgpack", "preamble_before_call.msgpack", "format_think.msgpack"],
)
def test_rechunking_keeps_the_recordings_expectation(name: str) -> None:
    seed = seed_of(name)
    case = decode_mutant(ops() + bytes(range(1, 40)), seed)
    assert case.text == seed.text
    assert case.truth == seed.truth and case.truth is not None
    assert CHECKER.check(case) == []


def test_white_space_before_the_first_marker_is_added_to_the_shown_text() -> None:
    seed = seed_of("preamble_before_call.msgpack")
    assert seed.truth is not None
    case = decode_mutant(ops("whitespace") + b"\0" * 40, seed)  # a space at offset 0
    assert case.text == " " + seed.text
    assert case.truth == Truth(" " + seed.truth.text, seed.truth.calls, seed.truth.reasoning)
    assert CHECKER.check(case) == []


@pytest.mark.parametrize("op", ["split_marker", "duplicate_marker", "truncate_marker", "swap_json"])
def test_mutations_that_break_a_block_drop_the_truth(op: str) -> None:
    seed = seed_of("format_tool_call_tag_json.msgpack")
    case = decode_mutant(ops(op) + b"\0" * 40, seed)
    assert case.text != seed.text
    assert case.truth is None
    assert CHECKER.check(case) == []  # the oracles that need no truth still pass


def test_white_space_inside_a_block_drops_the_truth() -> None:
    seed = seed_of("format_tool_call_tag_json.msgpack")
    # "anywhere" (flag 1) at a position inside the JSON body
    data = bytes([1, MUTATIONS.index("whitespace"), 0, 1, 0, 30]).ljust(OPS_BYTES, b"\0")
    case = decode_mutant(data + b"\0" * 40, seed)
    assert case.truth is None


@pytest.mark.parametrize(
    "name",
    [
        "split_marker_llama_server.msgpack",
        "policy_09_several_blocks.msgpack",
        "format_gemma4.msgpack",
        "policy_08_json_answer_released_early.msgpack",
    ],
)
@pytest.mark.slow
def test_reference_detector_passes_every_mutant(name: str) -> None:
    recording = read_recording(REGRESSIONS / name)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(mutations(recording))
    def mutant(case: Case) -> None:
        assert CHECKER.check(case) == [], case.origin

    mutant()


def test_recordings_too_long_to_mutate_are_skipped_with_a_reason() -> None:
    paths = sorted(REGRESSIONS.glob("policy_1*.msgpack"))
    seeds, skipped = load_seeds(paths)
    assert len(skipped) == 1
    # named as the report names a bundled recording, wherever tcr is installed
    assert skipped == [
        "regressions/policy_13_block_too_long.msgpack: 1,060,000 characters, over 20,000"
    ]
    assert all("policy_13" not in seed.name for seed in seeds)


HERMES = Claim(frozenset({"hermes"}))


def test_a_claim_keeps_recordings_whose_blocks_it_speaks_with_their_truth() -> None:
    seeds, skipped = load_seeds([REGRESSIONS / "format_tool_call_tag_json.msgpack"], claim=HERMES)
    assert [s.truth for s in seeds] == [seed_of("format_tool_call_tag_json.msgpack").truth]
    assert skipped == []


def test_unclaimed_markup_becomes_text_in_the_truth() -> None:
    recorded = seed_of("format_tools_tag.msgpack")
    assert recorded.truth is not None and recorded.truth.calls  # a call, claiming everything
    seeds, _ = load_seeds([REGRESSIONS / "format_tools_tag.msgpack"], claim=HERMES)
    assert [s.truth for s in seeds] == [Truth(text=recorded.text)]


def test_recordings_that_open_on_a_claimed_marker_are_counted_in_one_line() -> None:
    paths = sorted(REGRESSIONS.glob("format_*.msgpack"))
    seeds, skipped = load_seeds(paths, claim=HERMES)
    names = {Path(s.name).name for s in seeds}
    # Qwen3-Coder XML and GLM bodies in <tool_call>: a hermes parser reads malformed blocks
    unreadable = {
        "format_tool_call_tag_qwen3_coder.msgpack",
        "format_tool_call_tag_glm.msgpack",
        "format_glm47.msgpack",
    }
    assert not names & unreadable
    assert len(seeds) == len(paths) - len(unreadable)
    assert len(skipped) == 1 and skipped[0].startswith(
        f"{len(unreadable)} recordings with markup the claim"
    )


def test_claimed_openers_inside_unclaimed_markup_make_no_seed() -> None:
    # <think> is not claimed, and the reasoning quotes a <tool_call> a hermes parser opens
    seeds, skipped = load_seeds(
        [REGRESSIONS / "policy_10_markers_in_reasoning.msgpack"], claim=HERMES
    )
    assert "<tool_call>" in seed_of("policy_10_markers_in_reasoning.msgpack").text
    assert (seeds, len(skipped)) == ([], 1)


def test_no_tools_meaning_text_makes_every_recording_text() -> None:
    claim = Claim(None, "text")
    seeds, _ = load_seeds(
        [REGRESSIONS / "policy_07_no_tools_rejects_every_call.msgpack"], claim=claim
    )
    assert seeds[0].tools == ()
    assert seeds[0].truth == Truth(text=seeds[0].text)


@pytest.mark.parametrize("dialect", [d.id for d in DIALECTS])
def test_seeds_labelled_for_a_claim_are_what_the_restricted_reference_reads(dialect: str) -> None:
    seeds, _ = load_seeds(bundled(), claim=Claim(frozenset({dialect})))
    assert seeds
    for seed in seeds:
        restricted = StreamDetector(tools=seed.tools, dialects=[dialect])
        shown = expectation_of([*restricted.feed(seed.text), *restricted.finish()])
        assert seed.truth is not None and seed.truth.expectation() == shown.to_map(), seed.name


def test_mutations_for_a_claim_keep_its_truth_or_none() -> None:
    recording = read_recording(REGRESSIONS / "format_tools_tag.msgpack")

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    @given(mutations(recording, claim=HERMES))
    def as_text(case: Case) -> None:
        assert case.truth is None or not case.truth.calls  # <tools> is text for hermes

    as_text()
    with pytest.raises(InvalidArgument, match="cannot be labelled for the claim"):
        mutations(read_recording(REGRESSIONS / "format_tool_call_tag_glm.msgpack"), claim=HERMES)
