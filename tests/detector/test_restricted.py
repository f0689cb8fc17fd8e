"""The reference restricted to a claim (ARCHITECTURE.md §5.7): unclaimed markup is plain text.

Here the restricted detector is held to what it must do as a detector: pass
unclaimed markup through, match the reference on its own dialect, and keep
conservation, invariance, its own holdback bound and warm = cold. Judging it
against its claim with every check (``no_leak`` of claimed markers, expectations
restated for the claim) is in tests/replay/test_replay_claims.py.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from tcr.claims import Claim
from tcr.corpora import bundled
from tcr.corpus import read_recording
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Rejected, Text, ToolCall, merge_text
from tcr.detector.formats import HOLDBACK_BOUND, format_for_model, holdback_bound
from tcr.dialects import BY_ID, DIALECTS
from tcr.errors import TcrError
from tcr.judge import Judge
from tcr.rechunk import parse_strategy
from tcr.stream import decode

IDS = tuple(BY_ID)
LARGE_TEXT = 100_000


def events(detector: StreamDetector, chunks: Sequence[str]) -> list[Event]:
    out: list[Event] = []
    for chunk in chunks:
        out += detector.feed(chunk)
    return merge_text(out + detector.finish())


def chunkings(text: str) -> Iterator[list[str]]:
    """Whole, one character at a time, every 2-way split."""
    yield [text]
    yield list(text)
    for k in range(1, len(text)):
        yield [text[:k], text[k:]]


def opened(claimed: str, text: str) -> int:
    """How many blocks the claimed dialect's opening markers open in another's text."""
    d = BY_ID[claimed]
    if not d.anywhere:
        return int(any(text.lstrip().startswith(marker) for marker in d.opens))
    return sum(text.count(marker) for marker in d.opens)


# A claimed dialect whose parsers read another's bodies too: every glm47 parser reads
# GLM-4.5's newline form (SGLang's Glm47MoeDetector strips the name; vLLM's
# Glm47MoeModelToolParser takes it with or without white space).
READS_THE_OTHER = {("glm47", "glm45")}
PAIRS = [(d, e) for d in IDS for e in IDS if d != e and (d, e) not in READS_THE_OTHER]


def unclaimed_example_problem(claimed: str, other: str) -> str:
    """What is wrong with ``other``'s example read by a detector restricted to ``claimed``
    ("" when nothing): it must be text, but where the claimed dialect's own marker stands
    in it a block opens there, which the claimed dialect rejects, at every chunking."""
    text = BY_ID[other].example.text
    blocks = opened(claimed, text)
    whole = events(StreamDetector(dialects=[claimed]), [text])
    opened_blocks = [e for e in whole if not isinstance(e, Text)]
    if len(opened_blocks) != blocks:
        return f"{len(opened_blocks)} blocks opened whole, {blocks} expected: {whole}"
    if not all(isinstance(e, Rejected) and e.format == claimed for e in opened_blocks):
        return f"a block opened whole that {claimed} does not reject: {whole}"
    expected = whole if blocks else [Text(text)]
    for chunks in chunkings(text):
        out = events(StreamDetector(dialects=[claimed]), chunks)
        if out != expected:
            return f"{out} at chunks {chunks}"
    return ""


def test_another_dialects_example_is_text_to_a_restricted_detector() -> None:
    assert opened("hermes", BY_ID["mistral"].example.text) == 0
    assert unclaimed_example_problem("hermes", "mistral") == ""


def test_a_shared_opening_marker_opens_a_block_the_claimed_dialect_rejects() -> None:
    """vLLM's hermes parser does the same with another's body after ``<tool_call>``
    (``json.loads`` fails, no call, the output is content)."""
    assert opened("hermes", BY_ID["qwen3_coder"].example.text) == 1
    assert unclaimed_example_problem("hermes", "qwen3_coder") == ""


def test_a_marker_mentioned_in_unclaimed_reasoning_opens_a_block_that_never_closes() -> None:
    """The think example mentions ``<tool_call>`` inside its reasoning: unclaimed, the
    reasoning marker is text, so that marker opens a block that never closes."""
    assert opened("hermes", BY_ID["think"].example.text) == 1
    assert unclaimed_example_problem("hermes", "think") == ""


def test_a_fenced_json_claim_shows_deepseek_v3_s_fenced_arguments_as_not_a_call() -> None:
    """DeepSeek V3 writes each call's arguments in a ```json fence: a fenced-JSON parser
    opens on each and, the object naming no tool, shows it verbatim as not a call."""
    assert opened("fenced_json", BY_ID["deepseek_v3"].example.text) == 2
    assert unclaimed_example_problem("fenced_json", "deepseek_v3") == ""


def test_every_other_dialects_example_is_text_or_rejected_blocks_to_every_restricted_detector() -> (
    None
):
    """The sweep over every pair of dialects, every pair's failure named."""
    failures = [
        f"{claimed} reading {other}'s example: {problem}"
        for claimed, other in PAIRS
        if (problem := unclaimed_example_problem(claimed, other))
    ]
    assert not failures, f"{len(failures)} of {len(PAIRS)} pairs:\n" + "\n".join(failures)


def test_glm45_s_example_is_glm47_s_calls_to_a_glm47_claim() -> None:
    text = BY_ID["glm45"].example.text
    out = events(StreamDetector(dialects=["glm47"]), [text])
    assert [(e.name, e.format) for e in out if isinstance(e, ToolCall)] == [
        ("get_weather", "glm47")
    ]


@pytest.mark.parametrize("claimed", IDS)
def test_own_example_gives_what_the_unrestricted_reference_gives(claimed: str) -> None:
    text = BY_ID[claimed].example.text
    for chunks in chunkings(text):
        assert events(StreamDetector(dialects=[claimed]), chunks) == events(
            StreamDetector(), chunks
        ), chunks


def test_holdback_bound_is_the_longest_claimed_opener_minus_one() -> None:
    assert holdback_bound() == HOLDBACK_BOUND == StreamDetector().holdback_bound
    assert holdback_bound(IDS) == HOLDBACK_BOUND
    for d in DIALECTS:
        assert holdback_bound([d.id]) == max(map(len, d.opens)) - 1
        assert StreamDetector(dialects=[d.id]).holdback_bound == holdback_bound([d.id])
    assert holdback_bound(["hermes", "python_tag"]) == len("<|python_tag|>") - 1


def test_unclaimed_think_is_text_and_claimed_think_is_reasoning() -> None:
    text = "<think>plan</think>Done."
    assert events(StreamDetector(dialects=["hermes"]), list(text)) == [Text(text)]
    out = events(StreamDetector(dialects=["think"]), list(text))
    assert [type(e).__name__ for e in out] == ["Reasoning", "Text"]


def test_nothing_is_held_for_an_unclaimed_opener() -> None:
    detector = StreamDetector(dialects=["hermes"])
    assert detector.feed("a <|python_tag") == [Text("a <|python_tag")]
    assert detector.feed(" b <tool_ca") == [Text(" b ")]
    assert detector.state.pending == "<tool_ca"


@pytest.mark.parametrize(
    "dialects",
    [["nope"], ["hermes", "nope"], [], "hermes"],
    ids=["unknown", "mixed", "empty", "str"],
)
def test_a_bad_claim_is_a_tcr_error_listing_the_known_ids(dialects: list[str] | str) -> None:
    with pytest.raises(TcrError) as caught:
        StreamDetector(dialects=dialects)
    assert "known: " + ", ".join(IDS) in str(caught.value)
    if "nope" in dialects:
        assert "'nope'" in str(caught.value)


def test_state_reset_and_claim_attribute() -> None:
    detector = StreamDetector(dialects=["hermes"])
    assert detector.dialects == frozenset({"hermes"}) and StreamDetector().dialects is None
    detector.feed("x <tool_call>{")
    assert detector.state.block_format == "hermes"
    detector.reset()
    assert detector.state.block_format is None and detector.state.pending == ""


def test_format_for_model_seeds_only_claimed_dialects() -> None:
    assert format_for_model("Qwen/Qwen3-8B") == "hermes"
    assert format_for_model("Qwen/Qwen3-8B", dialects=["hermes", "think"]) == "hermes"
    assert format_for_model("Qwen/Qwen3-8B", dialects=["qwen3_coder"]) is None
    assert format_for_model("glm-4.5-air", dialects=["hermes", "glm45"]) == "glm45"


Message = tuple[str, list[str], list[str] | None, dict[str, Any] | None]


def bundled_messages() -> list[Message]:
    found: list[Message] = []
    for path in bundled():
        recording = read_recording(path)
        content = decode(recording).content
        if content:
            found.append((path.stem, content, recording.tools, recording.expect))
    return found


@pytest.mark.parametrize("claimed", IDS)
@pytest.mark.slow
def test_restricted_detector_passes_every_check_against_its_claim_on_every_recording(
    claimed: str,
) -> None:
    factory = functools.partial(StreamDetector, dialects=[claimed])
    claim = Claim(frozenset({claimed}))  # no_leak, holdback and expected for this claim
    strategies = [parse_strategy(s) for s in ("char", "boundary")]
    for name, content, tools, expect in bundled_messages():
        text = "".join(content)
        judge = Judge(factory, text, tools=tools, expectation=expect, claim=claim)
        assert judge.bound == holdback_bound([claimed])
        assert "expected" not in judge.not_judged  # the reference's expectation, restated
        runs: list[Sequence[str]] = [content, [text]]
        if len(text) <= LARGE_TEXT:  # the 1 MB too_long recording: as recorded and whole
            runs += [c.chunks for s in strategies for c in s.chunkings(text)]
            runs += [c.chunks for c in parse_strategy("random:6").chunkings(text, runs=3, seed=1)]
        for chunks in runs:
            verdict = judge.verdict(list(chunks))
            assert verdict.ok, f"{claimed} on {name}: {verdict.violations[:3]}"
