"""The cost check on the real clock: growth ratios of real detectors, never absolute times.

Marked slow: each measures until its runs take tens of milliseconds, and a quadratic
detector is timed at sizes where it shows.
"""

from __future__ import annotations

import time

import pytest
from parsers.shapes import hermes_factory

from tcr.claims import Claim
from tcr.cost import measure_cost
from tcr.detector import Event, Text
from tcr.detector.broken import rejoins_buffer
from tcr.detector.core import StreamDetector
from tcr.signature import key

pytestmark = pytest.mark.slow

HERMES = Claim(frozenset({"hermes"}))


class ReparsesWholeBuffer:
    """The measured case: every chunk re-joins and re-scans the whole message so far."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.shown = 0

    def feed(self, chunk: str) -> list[Event]:
        self.parts.append(chunk)
        text = "".join(self.parts)
        if text.find("<tool_call>") < 0 and text.find("</tool_call>") < 0:
            shown, self.shown = text[self.shown :], len(text)
            return [Text(shown)] if shown else []
        return []

    def finish(self) -> list[Event]:
        return []


def test_reference_detector_has_no_cost_finding() -> None:
    cost = measure_cost(StreamDetector, clock=time.process_time)
    assert cost.verdict.ok and cost.verdict.ran == ("cost",), cost.measured


def test_hermes_test_parser_has_no_cost_finding() -> None:
    cost = measure_cost(hermes_factory(), claim=HERMES, clock=time.process_time)
    assert cost.verdict.ok and cost.verdict.ran == ("cost",), cost.measured


def test_detector_rejoining_its_block_per_chunk_is_a_hermes_cost_finding() -> None:
    cost = measure_cost(rejoins_buffer, claim=HERMES, clock=time.process_time)
    (found,) = cost.violations
    assert str(key(found)) == "cost/superlinear/hermes"
    assert "(hermes probe, chunks of 8)" in found.message


def test_detector_reparsing_its_whole_buffer_is_a_cost_finding_of_no_dialect() -> None:
    cost = measure_cost(ReparsesWholeBuffer, claim=HERMES, clock=time.process_time)
    (found,) = cost.violations
    assert str(key(found)) == "cost/superlinear" and "(text probe" in found.message
