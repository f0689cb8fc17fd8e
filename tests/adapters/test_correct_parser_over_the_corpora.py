"""A parser tcr did not write, judged as a user would judge theirs (issue 12, "Done when"):
the correct Hermes parser in ``tests/parsers`` (through ``tcr.adapters``, claiming
``hermes``) gets no finding from ``tcr replay`` over every bundled recording, nor from
a fuzz search; the same parser with each bug switched on does."""

from __future__ import annotations

import pytest
from parsers.hermes import Bug
from parsers.shapes import CLAIM, correct_hermes, hermes_factory

from tcr.claims import Claim
from tcr.corpora import bundled
from tcr.detector.loader import DetectorSpec, resolve_detector
from tcr.fuzz import run as fuzz
from tcr.replay import run as replay

SPEC = "parsers.shapes:correct_hermes"


def test_the_parser_claims_hermes_and_no_parsing_without_tools() -> None:
    assert resolve_detector(correct_hermes).claim == Claim.of(CLAIM)


@pytest.mark.slow
def test_replay_of_every_bundled_recording_finds_nothing() -> None:
    report = replay(bundled(), detector=SPEC)
    assert [str(g.signature) for g in report.findings] == []
    assert (report.exit_code, report.errors) == (0, [])


@pytest.mark.slow
def test_a_fuzz_search_finds_nothing() -> None:
    report = fuzz(detector=SPEC, max_examples=3000, seed=0, save=None)
    assert [str(f.signature) for f in report.findings] == []


@pytest.mark.slow
@pytest.mark.parametrize("bug", list(Bug), ids=lambda b: b.value)
def test_each_bug_alone_is_found_by_replay(bug: Bug) -> None:
    files = [p for p in bundled() if p.stat().st_size < 1_000_000]
    spec = DetectorSpec(hermes_factory(bugs=(bug,)), claim=Claim.of(CLAIM))
    assert replay(files, detector=spec).findings
