"""Resolving the claim once, at the edge: ``--dialect``/``--empty-tools`` over the declared one.

``resolve_detector`` makes one detector to read its ``tcr_claim`` (then the
factory's), puts the options over it, and hands the options' parts to a factory
that takes ``dialects``/``empty_tools`` (the reference does), so that
``tcr replay --dialect hermes`` judges the reference restricted to Hermes.
"""

from __future__ import annotations

import pytest
from toy_detectors import ToyDetector

from tcr.claims import EVERYTHING, Claim
from tcr.detector.core import StreamDetector
from tcr.detector.loader import DetectorSpec, make_detector, resolve_detector
from tcr.errors import TcrError

HERMES = Claim(frozenset({"hermes"}))


def test_the_reference_claims_everything_and_options_restrict_it() -> None:
    assert resolve_detector(None).claim == EVERYTHING
    spec = DetectorSpec.load(None, dialects=["hermes"])
    assert spec.claim == HERMES
    detector = make_detector(spec.factory, ["get_weather"])
    assert isinstance(detector, StreamDetector)
    assert detector.dialects == {"hermes"} and detector.tools == {"get_weather"}


def test_empty_tools_reaches_a_factory_that_takes_it() -> None:
    spec = resolve_detector(None, empty_tools="text")
    assert spec.claim == Claim(None, "text")
    detector = make_detector(spec.factory, [])
    assert detector.feed("<tool_call>") == detector.feed("<tool_call>")  # nothing held
    assert detector.tcr_claim == Claim(None, "text")  # type: ignore[attr-defined]


def test_a_declared_claim_is_read_and_the_options_win() -> None:
    assert resolve_detector("claimed_detectors:hermes_only").claim == HERMES
    over = resolve_detector("claimed_detectors:hermes_only", dialects=["glm45"])
    assert over.claim == Claim(frozenset({"glm45"}))
    # hermes_only takes no dialects keyword: the option changes the judging, not it
    assert make_detector(over.factory).dialects == {"hermes"}  # type: ignore[attr-defined]


def test_a_factory_that_takes_no_claim_keywords_is_judged_by_the_options_alone() -> None:
    spec = resolve_detector(ToyDetector, dialects=["hermes"], empty_tools="text")
    assert spec.claim == Claim(frozenset({"hermes"}), "text")
    assert isinstance(make_detector(spec.factory), ToyDetector)
    assert resolve_detector(ToyDetector).claim == EVERYTHING


def test_options_restate_the_claim_for_a_reproducer() -> None:
    spec = DetectorSpec.load("toy_detectors:ToyDetector", dialects=["hermes", "think"])
    assert spec.options() == [
        "--detector",
        "toy_detectors:ToyDetector",
        "--dialect",
        "hermes",
        "--dialect",
        "think",
    ]
    assert resolve_detector(None, empty_tools="text").options() == ["--empty-tools", "text"]


def test_a_resolved_spec_is_kept_and_options_still_apply() -> None:
    spec = resolve_detector("claimed_detectors:hermes_only")
    assert resolve_detector(spec) is spec
    assert resolve_detector(spec, empty_tools="text").claim == Claim(frozenset({"hermes"}), "text")


def test_a_factory_that_raises_is_read_from_its_attribute_and_fails_later() -> None:
    spec = resolve_detector("crashing_detectors:factory_raises", dialects=["hermes"])
    assert spec.claim == HERMES


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dialects": ["nope"]}, "--dialect: unknown dialect 'nope'; known: "),
        ({"empty_tools": "maybe"}, "empty_tools is 'maybe'; known: reject, text"),
    ],
)
def test_a_bad_option_is_one_line(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(TcrError, match=message) as caught:
        resolve_detector(None, **kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


def test_a_claim_attribute_of_the_wrong_type_is_one_line() -> None:
    with pytest.raises(TcrError) as caught:
        resolve_detector("claimed_detectors:wrong_claim_type")
    assert str(caught.value) == (
        "wrong_claim_type.tcr_claim: dialects must be a list of dialect ids, not int 42"
    )
