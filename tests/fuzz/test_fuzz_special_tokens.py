"""Fuzzing a detector whose special tokens reach it whole (an engine-side parser): no
generated or mutated chunking cuts one, and findings say when only a proxy's cut makes
them (issue 13, "Chunking as engines really chunk")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tcr.claims import Claim
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event
from tcr.fuzz import run
from tcr.signature import special_split

WHOLE = Claim(special_tokens="whole")


class CutTokenRefused(StreamDetector):
    """The reference, raising at ``finish()`` if any chunk boundary cut a special token."""

    def __init__(self, tools: Sequence[str] | None = None) -> None:
        super().__init__(tools)
        self.tcr_claim = WHOLE  # the reference declares its own claim: this one's instead
        self.chunks: list[str] = []

    def feed(self, chunk: str) -> list[Event]:
        self.chunks.append(chunk)
        return super().feed(chunk)

    def finish(self) -> list[Event]:
        chunks, self.chunks = self.chunks, []
        cut = special_split(chunks, WHOLE.special_markers)
        if cut:
            raise AssertionError(f"a chunk boundary cut the special token {cut!r}")
        return super().finish()

    def reset(self) -> None:
        self.chunks = []
        super().reset()


def cut_token_refused(tools: Sequence[str] | None = None) -> CutTokenRefused:
    return CutTokenRefused(tools)


def test_no_fuzzed_chunking_cuts_a_special_token_that_reaches_the_detector_whole() -> None:
    report = run(detector=cut_token_refused, max_examples=600, seed=0, save=None)
    assert [f.signature.label for f in report.findings] == []
    assert report.examples == 600


def test_the_same_detector_claiming_split_tokens_is_cut() -> None:
    report = run(detector=cut_token_refused, special_tokens="split", max_examples=600,
                 seed=0, save=None, exitfirst=True)  # fmt: skip
    assert [f.check for f in report.findings] == ["crash"]
    assert report.findings[0].signature.proxy


def test_a_parser_keyed_on_token_ids_behind_a_proxy_gets_proxy_only_findings() -> None:
    report = run(detector="parsers.token_ids:split_factory", max_examples=400, seed=0,
                 save=None, exitfirst=True)  # fmt: skip
    assert report.findings
    assert all(f.signature.proxy for f in report.findings)


@pytest.mark.slow
def test_a_parser_keyed_on_token_ids_claiming_them_whole_gets_no_finding() -> None:
    report = run(detector="parsers.token_ids:factory", max_examples=3000, seed=0, save=None)
    assert [f.signature.label for f in report.findings] == []
