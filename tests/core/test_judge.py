"""The one judge and what it stands on: making a detector, checks, expectations, exit codes."""

from __future__ import annotations

import json

import pytest
from parsers.hermes import Bug
from parsers.shapes import hermes_factory
from test_oracle import WEATHER
from toy_detectors import (
    DropsPendingAtFinish,
    ForgetfulReset,
    MatchesPerChunk,
    RaisesOnThirdChunk,
    ToyDetector,
)

from tcr.claims import Claim
from tcr.detector.broken import drops_pending_at_finish
from tcr.detector.core import StreamDetector
from tcr.detector.events import Rejected, Text, ToolCall, merge_text
from tcr.detector.loader import DetectorSpec, make_detector, resolve_detector
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION, FactoryError, TcrError
from tcr.expectation import Expectation, ExpectedCall, expectation_of
from tcr.judge import Judge, checks_of
from tcr.oracle import CHECKS, TRACE_CHECKS, Check, Verdict, Violation, check_trace
from tcr.signature import AT_END, IN_STRING, SEVERAL_BLOCKS, key
from tcr.trace import Crash, Step, iter_steps, run_trace

MESSAGE = f"Let me check. {WEATHER} Done."


# --- Check ---------------------------------------------------------------------------


def test_a_check_is_its_name_in_json_and_comparisons() -> None:
    assert Check.CRASH == "crash"
    assert json.dumps([Check.NO_LEAK]) == '["no_leak"]'
    assert f"{Check.WARM_COLD}" == "warm_cold"


def test_only_a_crash_is_an_error() -> None:
    assert [c for c in Check if c.is_error] == [Check.CRASH]
    assert Check.CRASH.exit_code == EXIT_ERROR
    assert Check.NO_LEAK.exit_code == EXIT_VIOLATION


def test_transport_is_a_check_but_no_oracle_on_events() -> None:
    assert Check.TRANSPORT not in CHECKS
    assert Check.WARM_COLD in CHECKS and Check.WARM_COLD not in TRACE_CHECKS


def test_checks_of_orders_names_and_refuses_unknown_ones() -> None:
    assert checks_of(["crash", "no_leak"]) == (Check.NO_LEAK, Check.CRASH)
    assert checks_of(None) == CHECKS
    with pytest.raises(TcrError, match="unknown check 'leak'"):
        checks_of(["leak"])


def test_a_verdicts_exit_code_is_its_worst_check() -> None:
    leak = Violation(Check.NO_LEAK, "m", 0, 0, "")
    crash = Violation(Check.CRASH, "m", 0, 0, "")
    assert Verdict((), ()).exit_code == EXIT_OK
    assert Verdict((leak,), (Check.NO_LEAK,)).exit_code == EXIT_VIOLATION
    assert Verdict((leak, crash), (Check.NO_LEAK, Check.CRASH)).exit_code == EXIT_ERROR


def test_verdicts_add_up_in_check_order() -> None:
    first = Verdict((), (Check.CRASH,), {"expected": "no expectation"})
    second = Verdict((), (Check.WARM_COLD,), {"warm_cold.seed": "no format"})
    total = first + second
    assert total.ran == (Check.WARM_COLD, Check.CRASH)
    assert total.skipped == {"expected": "no expectation", "warm_cold.seed": "no format"}


# --- Expectation ---------------------------------------------------------------------


def test_an_expectation_is_validated_when_built() -> None:
    expect = Expectation.from_map({"text": "a", "calls": [{"name": "f", "arguments": '{"k": 1}'}]})
    assert expect.text == "a" and expect.reasoning is None
    assert expect.calls == (ExpectedCall("f", {"k": 1}),)


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ({"txt": "x"}, "unknown keys"),
        ({"reasoning": 3}, "'reasoning' must be a string"),
        ({"calls": [{"name": "f", "arguments": "{nope"}]}, "call 0: 'arguments' is not JSON"),
    ],
)
def test_an_invalid_expectation_names_the_key(expect: dict[str, object], message: str) -> None:
    with pytest.raises(TcrError, match=message):
        Expectation.from_map(expect)


def test_an_expectation_gives_back_the_map_it_was_built_from() -> None:
    given = {"calls": [{"name": "f", "arguments": '{"k": 1}'}]}
    assert Expectation.from_map(given).to_map() == given
    built = Expectation("a", (ExpectedCall("f", {}),), "")
    assert built.to_map() == {
        "text": "a",
        "calls": [{"name": "f", "arguments": {}}],
        "reasoning": "",
    }


# --- make_detector and DetectorSpec --------------------------------------------------


def test_tools_are_passed_only_to_a_factory_that_takes_them() -> None:
    seen: list[object] = []

    def takes_tools(tools: list[str] | None = None) -> ToyDetector:
        seen.append(tools)
        return ToyDetector(tools)

    make_detector(takes_tools, ("f",))
    assert seen == [["f"]]
    assert isinstance(make_detector(lambda: ToyDetector(), ("f",)), ToyDetector)


def test_a_factory_that_raises_is_a_factory_error_naming_it() -> None:
    def broken_factory() -> ToyDetector:
        raise OSError("no model")

    with pytest.raises(FactoryError, match="broken_factory raised OSError: no model"):
        make_detector(broken_factory)


def test_a_factory_that_returns_no_detector_is_a_factory_error() -> None:
    with pytest.raises(FactoryError, match="returned str, not a detector"):
        make_detector(lambda: "not a detector")  # type: ignore[arg-type, return-value]


def test_a_detector_spec_names_the_detector_again() -> None:
    assert DetectorSpec.load(None).options() == []
    assert DetectorSpec.load(None).name == "tcr.detector.core:StreamDetector"
    loaded = DetectorSpec.load("toy_detectors:ToyDetector")
    assert loaded.factory is ToyDetector
    assert loaded.options() == ["--detector", "toy_detectors:ToyDetector"]
    assert DetectorSpec(ToyDetector, command="./d --stdio").options() == [
        "--detector-cmd",
        "./d --stdio",
    ]
    assert resolve_detector(ToyDetector).spec == "toy_detectors:ToyDetector"
    assert resolve_detector(loaded) is loaded


# --- the judge -----------------------------------------------------------------------


def test_the_judge_runs_every_check_against_one_whole_run() -> None:
    judge = Judge(ToyDetector, MESSAGE)
    whole = judge.whole
    verdict = judge.verdict(list(MESSAGE))
    assert verdict.ok, verdict.violations
    assert Check.WARM_COLD in verdict.ran and Check.INVARIANCE in verdict.ran
    assert judge.whole is whole  # made once


def test_the_judge_equals_the_lower_layer() -> None:
    chunks = ["Let me check. <tool_", MESSAGE[len("Let me check. <tool_") :]]
    judge = Judge(MatchesPerChunk, MESSAGE, checks=TRACE_CHECKS)
    whole = run_trace(MatchesPerChunk(), [MESSAGE], states=False)
    trace = run_trace(MatchesPerChunk(), chunks, states=False)
    assert judge.verdict(chunks) == check_trace(trace, whole=whole)
    assert not judge.verdict(chunks).ok


def test_the_judge_includes_warm_equals_cold_when_asked() -> None:
    verdict = Judge(ForgetfulReset, MESSAGE, checks=["warm_cold"]).verdict([MESSAGE])
    assert [v.check for v in verdict.violations] == [Check.WARM_COLD]


def test_the_judge_checks_an_expectation_map() -> None:
    judge = Judge(ToyDetector, MESSAGE, expectation={"text": "nothing like it"})
    assert [v.check for v in judge.verdict([MESSAGE]).violations] == [Check.EXPECTED]


def test_the_judge_reports_a_crash_as_an_error() -> None:
    verdict = Judge(RaisesOnThirdChunk, "abcdef").verdict(list("abcdef"))
    assert Check.CRASH in [v.check for v in verdict.violations]
    assert verdict.exit_code == EXIT_ERROR


# --- helpers: merge_text and iter_steps ----------------------------------------------


def test_merge_text_joins_adjacent_text_and_drops_empty_text() -> None:
    call = ToolCall("f", "{}")
    rejected = Rejected("{x", "{x")
    events = [Text(""), Text("a"), Text("b"), call, Text(""), rejected, Text("c"), Text("")]
    assert merge_text(events) == [Text("ab"), call, rejected, Text("c")]
    assert merge_text([Text("")]) == []


def test_iter_steps_ends_with_finish_or_the_crash() -> None:
    steps = list(iter_steps(ToyDetector(), ["a", "b"]))
    assert [type(s) for s in steps] == [Step, Step, Step]
    assert [s.chunk for s in steps if isinstance(s, Step)] == ["a", "b", None]
    crashed = list(iter_steps(RaisesOnThirdChunk(), list("abcd")))
    assert isinstance(crashed[-1], Crash) and crashed[-1].index == 2


def test_iter_steps_takes_chunks_that_arrive_while_it_runs() -> None:
    chunks = ["a"]
    stepping = iter_steps(ToyDetector(), chunks)
    first = next(stepping)
    chunks.append("b")  # loaded later, as the TUI does
    rest = list(stepping)
    assert [s.chunk for s in [first, *rest] if isinstance(s, Step)] == ["a", "b", None]


# --- unsplit shapes: what a whole failure needs ----------------------------------------

HERMES_ONLY = Claim(frozenset({"hermes"}), empty_tools="text")
IN_ARGUMENT = '<tool_call>{"name": "f", "arguments": {"q": "a</tool_call>b"}}</tool_call>'


def _shapes(factory: object, text: str, expectation: Expectation | None = None) -> dict[str, str]:
    judge = Judge(factory, text, expectation=expectation, claim=HERMES_ONLY)  # type: ignore[arg-type]
    shown = {key(v) for v in judge.judge_trace(judge.whole).violations}
    assert shown, "the whole run must fail for its failures to have a shape"
    return {str(k): shape for k, shape in judge.unsplit_shapes(shown).items()}


def test_a_failure_that_goes_away_when_the_marker_in_the_string_is_escaped_is_in_string() -> None:
    closes_early = hermes_factory(bugs=(Bug.CLOSE_IN_STRING,))
    expectation = Expectation("", (ExpectedCall("f", {"q": "a</tool_call>b"}),))
    assert _shapes(closes_early, IN_ARGUMENT, expectation) == {
        "expected/Rejected instead of ToolCall/hermes": IN_STRING,  # the body cut short
        "expected/extra Text/hermes": IN_STRING,  # and the rest of it shown
    }


def test_a_failure_that_goes_away_with_more_text_after_it_is_at_end() -> None:
    held = f"Let me check. {WEATHER} Done. <tool"
    shapes = _shapes(DropsPendingAtFinish, held, Expectation(None, None))
    assert shapes == {"conservation/lost at end": AT_END}


def test_a_failure_that_each_block_alone_does_not_show_needs_several_blocks() -> None:
    merged = hermes_factory(bugs=(Bug.INDEX_REUSED,))
    weather = ExpectedCall("get_weather", {"city": "Paris"})
    two = f"Sure. {WEATHER} and {WEATHER}"
    assert _shapes(merged, two, Expectation("Sure.  and ", (weather, weather))) == {
        "expected/missing ToolCall/hermes": SEVERAL_BLOCKS
    }


def test_a_parsing_bug_that_one_block_shows_keeps_the_whole_shape() -> None:
    dropped = hermes_factory(bugs=(Bug.ARGUMENTS_WITH_NAME_DROPPED,))
    weather = ExpectedCall("get_weather", {"city": "Paris"})
    two = f"{WEATHER}{WEATHER}"
    assert _shapes(dropped, two, Expectation("", (weather, weather))) == {}
    assert _shapes(dropped, WEATHER, Expectation("", (weather,))) == {}


def test_a_rejected_block_shows_its_escaped_marker_and_is_judged_alike() -> None:
    # a block never closed is rejected, its body shown: escaped, the body shows the escape,
    # and nothing else changes, so the expectation is changed alike and the failure (the
    # body cut at the marker in its string) is in-string
    closes_early = hermes_factory(bugs=(Bug.CLOSE_IN_STRING,))
    unclosed = IN_ARGUMENT[: -len("}}</tool_call>")]
    reference = StreamDetector(dialects=frozenset({"hermes"}))
    shown = expectation_of([*reference.feed(unclosed), *reference.finish()])
    assert set(_shapes(closes_early, unclosed, shown).values()) == {IN_STRING}


def test_the_character_after_the_message_continues_no_marker() -> None:
    # "<|channel|>analysis " still begins Harmony's opener: a "." follows it instead
    held = "Done. <|channel|>analysis"
    shapes = _shapes(drops_pending_at_finish, held, Expectation(None, None))
    assert shapes == {"conservation/lost at end": AT_END}
