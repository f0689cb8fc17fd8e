"""Judging a detector against its claim (ARCHITECTURE.md §5.7; docs/explanation/claims.md).

Unclaimed markup is plain text for the detector and must pass through unchanged;
``no_leak`` looks for claimed markers only; holdback's bound is the claim's; a
recording's expectation (made by the full reference) is restated by the reference
restricted to the claim; what cannot be judged for the claim is skipped, with why.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import pytest
from claimed_detectors import calls_unclaimed, eats_unclaimed, hermes_only

from tcr.claims import EVERYTHING, Claim
from tcr.corpora import bundled
from tcr.corpus import read_recording
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text
from tcr.detector.formats import HOLDBACK_BOUND
from tcr.expectation import Expectation, expectation_of
from tcr.judge import NO_MARKER, NOT_RESTATED, Judge
from tcr.oracle import Check
from tcr.stream import decode

HERMES = Claim(frozenset({"hermes"}))
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
MISTRAL = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Rome"}}]'
MESSAGE = f"Checking. {CALL} And {MISTRAL} done."
TOOLS = ["get_weather"]
# The broken detectors hold the whole message until finish(): holdback is not what they test.
BUT_HOLDBACK = ("conservation", "invariance", "no_leak", "expected", "crash")


def reference_expectation(text: str, tools: list[str] | None = TOOLS) -> Expectation:
    detector = StreamDetector(tools)
    return expectation_of(detector.feed(text) + detector.finish())


STORED = reference_expectation(MESSAGE)


class ShowsAll:
    """Every chunk is text at once: right for markup it does not claim, a leak otherwise."""

    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk)]

    def finish(self) -> list[Event]:
        return []


def checks(judge: Judge, chunks: list[str]) -> set[str]:
    return {v.check for v in judge.verdict(chunks).violations}


def test_the_stored_expectation_holds_the_mistral_call_the_claim_does_not_speak() -> None:
    assert STORED.calls is not None and len(STORED.calls) == 2


def test_a_detector_that_shows_unclaimed_markup_as_text_passes() -> None:
    judge = Judge(hermes_only, MESSAGE, tools=TOOLS, expectation=STORED, claim=HERMES)
    for chunks in ([MESSAGE], list(MESSAGE)):
        verdict = judge.verdict(chunks)
        assert verdict.ok, verdict.violations
        assert Check.EXPECTED in verdict.ran and Check.NO_LEAK in verdict.ran


def test_the_expectation_is_restated_for_the_claim() -> None:
    judge = Judge(hermes_only, MESSAGE, tools=TOOLS, expectation=STORED, claim=HERMES)
    assert judge.expectation is not None and judge.expectation.calls is not None
    assert [c.name for c in judge.expectation.calls] == ["get_weather"]
    assert MISTRAL in (judge.expectation.text or "")


def test_a_detector_that_turns_unclaimed_markup_into_a_call_fails_expected() -> None:
    judge = Judge(
        calls_unclaimed, MESSAGE, tools=TOOLS, expectation=STORED, claim=HERMES, checks=BUT_HOLDBACK
    )
    assert checks(judge, [MESSAGE]) == checks(judge, list(MESSAGE)) == {Check.EXPECTED}


def test_a_detector_that_eats_unclaimed_markup_fails_conservation_and_expected() -> None:
    judge = Judge(
        eats_unclaimed, MESSAGE, tools=TOOLS, expectation=STORED, claim=HERMES, checks=BUT_HOLDBACK
    )
    assert checks(judge, list(MESSAGE)) == {Check.CONSERVATION, Check.EXPECTED}


def test_judged_against_everything_the_unclaimed_call_is_expected() -> None:
    judge = Judge(hermes_only, MESSAGE, tools=TOOLS, expectation=STORED)
    assert judge.expectation is STORED
    assert checks(judge, [MESSAGE]) == {Check.EXPECTED, Check.NO_LEAK}  # blamed for Mistral


def test_no_leak_looks_for_claimed_markers_only() -> None:
    unclaimed = f"Say {MISTRAL} or <|python_tag|> or <tools>."
    assert Check.NO_LEAK not in checks(Judge(ShowsAll, unclaimed, claim=HERMES), [unclaimed])
    assert Check.NO_LEAK in checks(Judge(ShowsAll, unclaimed), [unclaimed])
    claimed = f"Say {CALL}."
    verdict = Judge(ShowsAll, claimed, claim=HERMES).verdict([claimed])
    assert [v.message for v in verdict.violations if v.check == Check.NO_LEAK] == [
        "Text shows the opening marker '<tool_call>'"
    ]


def test_holdback_bound_is_the_claim_s() -> None:
    assert Judge(ShowsAll, "x").bound == HOLDBACK_BOUND
    assert Judge(ShowsAll, "x", claim=HERMES).bound == len("<tool_call>") - 1
    nothing = Claim(None, "text")
    assert Judge(ShowsAll, "x", tools=[], claim=nothing).bound == 0
    assert Judge(ShowsAll, "x", tools=TOOLS, claim=nothing).bound == HOLDBACK_BOUND
    assert Judge(ShowsAll, "x", claim=HERMES, bound=3).bound == 3


def test_with_text_for_no_tools_markup_must_be_shown_verbatim() -> None:
    stored = reference_expectation(MESSAGE, tools=[])  # the reference rejects every call
    nothing = Claim(None, "text")
    parses_nothing = functools.partial(StreamDetector, empty_tools="text")
    judge = Judge(parses_nothing, MESSAGE, tools=[], expectation=stored, claim=nothing)
    assert judge.expectation is not None and judge.expectation.text == MESSAGE
    verdict = judge.verdict(list(MESSAGE))
    assert verdict.ok, verdict.violations
    assert verdict.skipped[Check.NO_LEAK] == NO_MARKER
    assert Check.EXPECTED in checks(
        Judge(StreamDetector, MESSAGE, tools=[], expectation=stored, claim=nothing), [MESSAGE]
    )


def test_an_expectation_the_reference_did_not_make_is_not_guessed_at() -> None:
    blessed = Expectation(text=MESSAGE)  # a user blessed a detector that parses nothing
    judge = Judge(hermes_only, MESSAGE, tools=TOOLS, expectation=blessed, claim=HERMES)
    assert judge.expectation is None
    verdict = judge.verdict([MESSAGE])
    assert Check.EXPECTED not in verdict.ran
    assert verdict.skipped[Check.EXPECTED] == NOT_RESTATED
    assert judge.not_judged == {Check.EXPECTED: NOT_RESTATED}


def test_a_stored_expectation_the_restricted_reference_agrees_with_is_kept() -> None:
    plain = "No markup at all."
    stored = Expectation(text=plain)
    judge = Judge(hermes_only, plain, expectation=stored, claim=HERMES)
    assert judge.expectation is stored and not judge.not_judged


def test_without_a_stored_expectation_expected_is_not_judged() -> None:
    judge = Judge(hermes_only, MESSAGE, tools=TOOLS, claim=HERMES)
    assert judge.expectation is None
    assert judge.verdict([MESSAGE]).skipped[Check.EXPECTED] == "no expectation"


def test_an_expectation_made_for_the_claim_is_used_as_is() -> None:
    truth = Expectation(text="anything", calls=())
    judge = Judge(hermes_only, MESSAGE, expectation=truth, claim=HERMES, expectation_for=HERMES)
    assert judge.expectation is truth
    assert Judge(hermes_only, MESSAGE, expectation=truth, claim=EVERYTHING).expectation is truth


def glm_recordings(stem: str) -> list[Path]:
    """The GLM recordings whose content holds GLM markup (a native stream's calls are not)."""
    return [p for p in bundled() if stem in p.stem and not p.stem.startswith("native_")]


def reads_no_glm47_block(tools: Sequence[str] | None = None) -> StreamDetector:
    """A correct glm45 parser on GLM-4.7 messages, as SGLang's Glm4MoeDetector, which needs
    a newline after the name: no block there is a call. The reference restricted to hermes
    stands in for it: it rejects every GLM body the same way (malformed, the body shown)."""
    return StreamDetector(tools, dialects=["hermes"])


@pytest.mark.parametrize("path", glm_recordings("glm47"), ids=lambda p: p.stem)
def test_a_glm45_claim_is_not_blamed_for_glm47_blocks(path: Path) -> None:
    recording = read_recording(path)
    text = "".join(decode(recording).content)
    claim = Claim(frozenset({"glm45"}))
    judge = Judge(
        reads_no_glm47_block, text, tools=recording.tools, expectation=recording.expect, claim=claim
    )
    assert judge.expectation is not None and judge.expectation.calls == ()  # no call expected
    for chunks in ([text], list(text)):
        verdict = judge.verdict(chunks)
        assert verdict.ok, verdict.violations


@pytest.mark.parametrize("path", glm_recordings("glm"), ids=lambda p: p.stem)
def test_a_glm45_and_glm47_claim_expects_every_glm_call(path: Path) -> None:
    recording = read_recording(path)
    text = "".join(decode(recording).content)
    claim = Claim(frozenset({"glm45", "glm47"}))
    assert isinstance(recording.expect, dict)
    stored_calls = recording.expect["calls"]
    assert stored_calls
    judge = Judge(
        StreamDetector, text, tools=recording.tools, expectation=recording.expect, claim=claim
    )
    assert judge.expectation is not None and judge.expectation.calls is not None
    assert [c.name for c in judge.expectation.calls] == [c["name"] for c in stored_calls]
    verdict = judge.verdict([text])
    assert verdict.ok, verdict.violations
