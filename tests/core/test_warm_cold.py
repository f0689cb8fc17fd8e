"""Warm equals cold: a reused or format-seeded detector emits what a fresh one emits;
a reset() that forgets a buffer and a seed that changes the result are caught."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from test_oracle import TEXTS, WEATHER
from toy_detectors import ForeignAdapter, ForgetfulReset, RaisesOnThirdChunk, ToyDetector

from tcr import oracle
from tcr.detector.events import Event, ToolCall
from tcr.errors import FactoryError
from tcr.warm_cold import check_warm_cold, warm_cold_verdict


@pytest.mark.parametrize("text", TEXTS)
def test_correct_detector_is_warm_equals_cold(text: str) -> None:
    for chunks in [(text,), tuple(text), tuple(text[i : i + 3] for i in range(0, len(text), 3))]:
        verdict = warm_cold_verdict(ToyDetector, chunks)
        assert verdict.ok, verdict.violations
        assert verdict.ran == ("warm_cold",)


def test_reset_that_forgets_its_buffer_is_caught() -> None:
    violations = check_warm_cold(ForgetfulReset, [f"Let me check. {WEATHER} Done."])
    (violation,) = violations
    assert violation.check == "warm_cold"
    assert violation.message.startswith("after reset(), a detector reused")
    assert "a fresh detector has Text('Let me check. ')" in violation.message


class ExitsInReset(ToyDetector):
    def reset(self) -> None:
        raise SystemExit("reset() is not supported")


def test_a_reset_that_calls_sys_exit_is_a_finding() -> None:
    (violation,) = check_warm_cold(ExitsInReset, [f"Let me check. {WEATHER} Done."])
    assert violation.check == "warm_cold"
    assert "raised SystemExit: reset() is not supported" in violation.message


class SeedSensitive(ToyDetector):
    """Bug: a detector seeded with a format drops the arguments of calls."""

    def __init__(self, tools: Sequence[str] | None = None, format: str | None = None) -> None:
        super().__init__(tools, format)
        self.seeded = format is not None

    def feed(self, chunk: str) -> list[Event]:
        events = super().feed(chunk)
        if not self.seeded:
            return events
        return [replace(e, arguments="{}") if isinstance(e, ToolCall) else e for e in events]


def test_seeded_detector_that_differs_from_a_cold_one_is_caught() -> None:
    (violation,) = check_warm_cold(SeedSensitive, [f"Let me check. {WEATHER}"])
    assert violation.message.startswith("a detector seeded with format='tool_call_tag':")
    assert (violation.chunk, violation.offset) == (0, len("Let me check. "))


def test_seed_part_is_skipped_when_no_format_was_identified() -> None:
    verdict = warm_cold_verdict(ToyDetector, ["no calls here"])
    assert verdict.ran == ("warm_cold",)
    assert verdict.skipped == {"warm_cold.seed": "no format identified in this message"}


def test_seed_part_is_skipped_when_the_factory_takes_no_format() -> None:
    def factory(tools: Sequence[str] | None = None) -> ToyDetector:
        return ToyDetector(tools)

    verdict = warm_cold_verdict(factory, [WEATHER])
    assert verdict.skipped == {"warm_cold.seed": "the factory takes no format keyword"}


def test_warm_cold_is_skipped_with_reasons_for_a_detector_without_reset_or_format() -> None:
    verdict = warm_cold_verdict(ForeignAdapter, [WEATHER])
    assert verdict.ran == ()
    assert verdict.skipped == {
        "warm_cold": "reset: detector has no reset(); seed: detector exposes no format"
    }


def test_warm_cold_passes_the_tools_through() -> None:
    seen: list[object] = []

    def factory(tools: Sequence[str] | None = None, format: str | None = None) -> ToyDetector:
        seen.append(tools)
        return ToyDetector(tools, format)

    assert check_warm_cold(factory, [WEATHER], tools=["get_weather"]) == []
    assert seen and all(t == ["get_weather"] for t in seen)


def test_warm_cold_does_not_pass_tools_to_a_factory_without_them() -> None:
    assert check_warm_cold(lambda: ToyDetector(), [WEATHER], tools=["x"]) == []


def test_warm_cold_skips_a_message_that_crashes_a_fresh_detector() -> None:
    verdict = warm_cold_verdict(RaisesOnThirdChunk, ["a", "b", "c"])
    assert verdict.skipped == {"warm_cold": "a fresh detector crashed (see the crash check)"}


def test_a_factory_that_raises_is_a_tcr_error() -> None:
    def factory() -> ToyDetector:
        raise OSError("no model")

    with pytest.raises(
        FactoryError, match="detector factory test_warm_cold:factory raised OSError"
    ):
        check_warm_cold(factory, ["x"])


def test_a_factory_that_refuses_the_learned_format_is_a_finding() -> None:
    def factory(tools: Sequence[str] | None = None, format: str | None = None) -> ToyDetector:
        if format is not None:
            raise ValueError(f"unknown format {format}")
        return ToyDetector(tools)

    (violation,) = check_warm_cold(factory, [WEATHER])
    assert violation.message.startswith("a detector seeded with format='tool_call_tag' could not")
    assert "ValueError: unknown format tool_call_tag" in violation.message


def test_the_oracle_module_offers_warm_cold_too() -> None:
    assert oracle.check_warm_cold is check_warm_cold
    assert oracle.warm_cold_verdict is warm_cold_verdict
