"""Oracles: a correct detector passes everything; each classic bug is caught by the right
check, at the right chunk and input offset."""

from __future__ import annotations

import json
import random
from collections.abc import Collection, Sequence

import pytest
from toy_detectors import (
    DropsPendingAtFinish,
    DuplicatesReleasedPrefix,
    ForeignAdapter,
    HoldsEverything,
    MatchesPerChunk,
    RaisesOnThirdChunk,
    ToyDetector,
)

from tcr.detector.broken import duplicates_flushed_prefix
from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.formats import HOLDBACK_BOUND
from tcr.errors import TcrError
from tcr.oracle import (
    CARET,
    CHECKS,
    TRACE_CHECKS,
    Verdict,
    Violation,
    check_trace,
    chunk_invariance,
    conservation,
    excerpt,
    expected,
    holdback,
    merge_text,
    no_leak,
)
from tcr.rechunk import parse_strategy
from tcr.trace import Trace, run_trace

WEATHER = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
TEXTS = [
    f"Let me check. {WEATHER} Done.",
    "plain prose, nothing to see here at all",
    "x <tool_result> y <tool_call",  # a false start, and a marker cut off by the end
    "<tool_call>not json</tool_call> after",
    'two <tool_call>{"name":"a","arguments":{}}</tool_call> and '
    '<tool_call>{"name":"b","arguments":{"k":[1,2]}}</tool_call>.',
    'unterminated <tool_call>{"name": "f", "arguments": {}}',
    "é€😀 <tool_c",
]
SPLIT_MARKER = ["a ", "<tool", "_c", "all>", '{"name": "f", "arguments": {}}', "</tool_call>", " b"]


def verdict_of(
    factory: type[ToyDetector] | type[ForeignAdapter],
    chunks: Sequence[str],
    checks: Collection[str] = TRACE_CHECKS,
) -> Verdict:
    whole = run_trace(factory(), ["".join(chunks)])
    return check_trace(run_trace(factory(), chunks), whole=whole, checks=checks)


def only(verdict: Verdict) -> Violation:
    assert len(verdict.violations) == 1, verdict.violations
    return verdict.violations[0]


def every_chunking(text: str) -> list[tuple[str, ...]]:
    chunkings = [(text,), tuple(text)]
    chunkings += [(text[:k], text[k:]) for k in range(1, len(text))]
    chunkings += [c.chunks for c in parse_strategy("random").chunkings(text, runs=50, seed=1)]
    return chunkings


# --- the correct detector passes everything ----------------------------------


@pytest.mark.parametrize("text", TEXTS)
def test_correct_detector_passes_every_check_under_every_chunking(text: str) -> None:
    whole = run_trace(ToyDetector(), [text])
    expectation = {
        "text": whole.shown,
        "calls": [
            {"name": e.name, "arguments": e.arguments}
            for e in whole.events
            if isinstance(e, ToolCall)
        ],
    }
    for chunks in every_chunking(text):
        verdict = check_trace(
            run_trace(ToyDetector(), chunks), whole=whole, expectation=expectation
        )
        assert verdict.ok, (chunks, verdict.violations)
        assert verdict.ran == TRACE_CHECKS
        assert verdict.skipped == {}


# --- each classic bug, caught by the right check at the right place ----------


def test_dropped_pending_buffer_is_conservation_at_the_finish_step() -> None:
    chunks = ["hello ", "<tool"]
    violation = only(verdict_of(DropsPendingAtFinish, chunks))
    assert violation.check == "conservation"
    assert violation.chunk == len(chunks)
    assert violation.offset == len("hello <tool") - len("<tool")
    assert "lost 5 characters at end" in violation.message
    assert violation.excerpt == f"hello {CARET}<tool"


def test_marker_matched_one_chunk_at_a_time_leaks_when_split() -> None:
    verdict = verdict_of(MatchesPerChunk, SPLIT_MARKER)
    leak = next(v for v in verdict.violations if v.check == "no_leak")
    assert leak.chunk == 3  # "all>" completes the marker in the shown text
    assert leak.offset == 2  # where "<tool_call>" starts in the input
    assert "'<tool_call>'" in leak.message
    assert leak.excerpt.startswith(f"a {CARET}<tool_call>")
    assert {v.check for v in verdict.violations} == {"no_leak", "invariance"}


def test_marker_matched_one_chunk_at_a_time_is_fine_unsplit() -> None:
    assert verdict_of(MatchesPerChunk, ["".join(SPLIT_MARKER)]).ok


def test_invariance_points_at_the_first_differing_character() -> None:
    verdict = verdict_of(MatchesPerChunk, SPLIT_MARKER)
    violation = next(v for v in verdict.violations if v.check == "invariance")
    assert (violation.chunk, violation.offset) == (2, 2)  # the held "<tool" released at chunk 2
    assert "event 0 is Text('a <tool_call>" in violation.message
    assert "the whole run has Text('a ')" in violation.message


def test_duplicated_released_prefix_is_conservation_at_that_step() -> None:
    chunks = ["x <tool", "_result> y"]
    verdict = verdict_of(DuplicatesReleasedPrefix, chunks)
    assert [v.check for v in verdict.violations] == ["conservation", "invariance"]
    violation = verdict.violations[0]
    assert violation.chunk == 1
    assert violation.offset == len("x <tool")  # where the emitted text parts from the input
    assert violation.message.startswith("duplicated: re-emits input from offset 2")


def test_a_duplicate_is_told_in_the_dialect_of_its_first_copy() -> None:
    # the "[" released twice is text: not the block that starts where the copies part
    chunks = ["l[", '<tool_call>{"name": "f", "arguments": {}}</tool_call>']
    whole = run_trace(duplicates_flushed_prefix(), ["".join(chunks)])
    trace = run_trace(duplicates_flushed_prefix(), chunks)
    expectation = {"text": "l[", "calls": [{"name": "f", "arguments": {}}]}
    duplicated, differs, shown = check_trace(trace, whole=whole, expectation=expectation).violations
    assert duplicated.kind == "duplicated" and duplicated.offset == 2
    assert duplicated.dialect == ""
    assert (differs.check, differs.kind, differs.dialect) == ("invariance", "Text differs", "")
    assert (shown.check, shown.kind, shown.dialect) == ("expected", "extra Text", "")


def test_holding_everything_breaks_the_holdback_bound_at_the_first_step_over_it() -> None:
    text = "the quick brown fox jumps over the lazy dog, " * 3  # longer than the bound
    chunks = next(parse_strategy("fixed:5").chunkings(text)).chunks
    violation = only(verdict_of(HoldsEverything, chunks))
    assert violation.check == "holdback"
    first_over = next(i for i in range(len(chunks)) if 5 * (i + 1) > HOLDBACK_BOUND)
    assert violation.chunk == first_over
    assert violation.offset == 0
    assert f"holds back {5 * (first_over + 1)} characters" in violation.message


def test_holdback_bound_is_a_parameter() -> None:
    whole = run_trace(ToyDetector(), ["abcdef"])
    trace = run_trace(HoldsEverything(), ["ab", "cd", "ef"])
    assert holdback(trace, whole, bound=3)[0].chunk == 1
    assert holdback(trace, whole, bound=6) == []


def test_holding_a_block_is_not_holding_back() -> None:
    # Inside a call the detector holds everything: the whole run says it is a block.
    chunks = tuple(WEATHER)
    assert holdback(run_trace(ToyDetector(), chunks), run_trace(ToyDetector(), [WEATHER])) == []


def test_text_held_after_a_long_block_breaks_the_bound_at_its_chunk() -> None:
    # Steps inside the block skip the block lookup; the text after it must not be missed.
    text = "ab" + WEATHER * 20 + "the quick brown fox jumps over the lazy dog, " * 3
    whole = run_trace(ToyDetector(), [text])
    (violation,) = holdback(run_trace(HoldsEverything(), tuple(text)), whole)
    assert violation.chunk == len("ab" + WEATHER * 20) + HOLDBACK_BOUND - 2
    assert f"holds back {HOLDBACK_BOUND + 1} characters" in violation.message


def test_exception_in_feed_is_a_crash_at_its_chunk() -> None:
    chunks = ["one ", "two ", "three ", "four"]
    verdict = verdict_of(RaisesOnThirdChunk, chunks)
    violation = only(verdict)
    assert violation.check == "crash"
    assert violation.chunk == 2
    assert violation.offset == len("one two ")
    assert "ValueError: boom" in violation.message
    assert verdict.skipped["invariance"] == "this run crashed at chunk 2"


def test_foreign_detector_without_raw_skips_what_needs_raw_and_runs_the_rest() -> None:
    verdict = verdict_of(ForeignAdapter, SPLIT_MARKER)
    assert verdict.ok
    assert verdict.skipped == {
        "conservation": "events carry no raw spans",
        "holdback": "events carry no raw spans",
        "expected": "no expectation",
    }
    assert "invariance" in verdict.ran
    assert "no_leak" in verdict.ran


class ForeignPerChunk(ForeignAdapter):
    def __init__(self, tools: Sequence[str] | None = None) -> None:
        self._inner = MatchesPerChunk(tools)


def test_foreign_detector_bugs_are_still_caught_by_invariance() -> None:
    text = '<tool_call>{"name": "g", "arguments": {}}</tool_call> then a <tool'
    chunks = [text[:-2], text[-2:], "_call>"]
    whole = run_trace(ForeignPerChunk(), ["".join(chunks)])
    verdict = check_trace(run_trace(ForeignPerChunk(), chunks), whole=whole)
    assert {v.check for v in verdict.violations} == {"invariance", "no_leak"}


def test_leak_after_an_unknown_raw_is_reported_in_shown_text_offsets() -> None:
    events: list[Event] = [ToolCall("f", "{}", None), Text("ab <tool_call> c")]
    trace = run_trace(Scripted(events, []), ["whatever"])
    (violation,) = no_leak(trace)
    assert violation.offset is None
    assert "at offset 3 of the shown text" in violation.message
    assert "input offset unknown" in violation.message
    assert violation.excerpt == f"ab {CARET}<tool_call> c"


# --- conservation's diagnosis ---------------------------------------------------


class Scripted:
    """Emits exactly the events it is given, one list per call."""

    def __init__(self, *answers: list[Event]) -> None:
        self.answers = list(answers)

    def feed(self, chunk: str) -> list[Event]:
        return self.answers.pop(0)

    def finish(self) -> list[Event]:
        return self.answers.pop(0)


def conservation_of(*answers: list[str]) -> Violation:
    script: list[list[Event]] = [[Text(t) for t in answer] for answer in answers]
    (violation,) = conservation(run_trace(Scripted(*script), ["hello ", "world ", "again"]))
    return violation


def test_conservation_names_lost_input() -> None:
    violation = conservation_of(["hello "], ["d "], ["again"], [])
    assert (violation.chunk, violation.offset) == (1, 6)
    assert violation.message == "lost 4 characters: 'worl' never emitted"


def test_conservation_names_reordered_input() -> None:
    violation = conservation_of(["hello "], ["d ", "worl"], ["again"], [])
    assert violation.message == "reordered: 'worl' is emitted after what follows it"


def test_conservation_names_input_emitted_before_it_arrived() -> None:
    violation = conservation_of(["hello world"], [" "], ["again"], [])
    assert (violation.chunk, violation.offset) == (0, 6)
    assert violation.message.startswith("emits 'world again' before receiving it")


def test_conservation_names_altered_input() -> None:
    violation = conservation_of(["hello "], ["WORLD "], ["again"], [])
    assert violation.message.startswith("altered: emits 'WORLD again'")


def test_conservation_passes_raw_that_accounts_for_everything() -> None:
    trace = run_trace(ToyDetector(), SPLIT_MARKER)
    assert conservation(trace) == []


def test_public_checks_return_nothing_when_they_cannot_judge() -> None:
    trace = run_trace(ForeignAdapter(), SPLIT_MARKER)
    assert conservation(trace) == []
    assert holdback(trace, trace) == []


# --- expected -------------------------------------------------------------------


def call_trace() -> Trace:
    return run_trace(ToyDetector(), [f"Let me check. {WEATHER[:30]}", WEATHER[30:], " Done."])


def test_expected_catches_a_wrong_argument() -> None:
    want = {"calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}}]}
    (violation,) = expected(call_trace(), want)
    assert violation.check == "expected"
    assert (violation.chunk, violation.offset) == (1, len("Let me check. "))
    assert "has arguments" in violation.message
    assert "Lyon" in violation.message


def test_expected_compares_arguments_as_json_not_text() -> None:
    want = {"calls": [{"name": "get_weather", "arguments": '{ "city" :"Paris" }'}]}
    assert expected(call_trace(), want) == []


def test_expected_catches_a_wrong_name_a_missing_and_an_extra_call() -> None:
    (wrong,) = expected(call_trace(), {"calls": [{"name": "get_time", "arguments": {}}]})
    assert "is to 'get_weather', expected 'get_time'" in wrong.message
    two = [{"name": "get_weather", "arguments": {"city": "Paris"}}] * 2
    (missing,) = expected(call_trace(), {"calls": two})
    assert "call 1 (get_weather) is missing" in missing.message
    assert missing.chunk == 3  # the finish step
    (extra,) = expected(call_trace(), {"calls": []})
    assert extra.message.startswith("unexpected call 0")


def test_expected_compares_the_shown_text() -> None:
    assert expected(call_trace(), {"text": "Let me check.  Done."}) == []
    (violation,) = expected(call_trace(), {"text": "Let me check.  Done!"})
    assert "differs at character 19" in violation.message
    assert (violation.chunk, violation.offset) == (2, len(f"Let me check. {WEATHER} Done"))


def test_expected_compares_the_reasoning() -> None:
    (violation,) = expected(call_trace(), {"reasoning": "hmm"})
    assert violation.message == "reasoning is '', expected 'hmm'"
    trace = run_trace(Scripted([Reasoning("hm", "<think>hm</think>")], [Reasoning("m")]), ["x"])
    assert expected(trace, {"reasoning": "hmm"}) == []


@pytest.mark.parametrize(
    ("expectation", "why"),
    [
        ({"txt": "x"}, "unknown keys"),
        ({"text": 3}, "'text' must be a string"),
        ({"calls": {"name": "f"}}, "'calls' must be a list"),
        ({"calls": [{"arguments": {}}]}, "call 0 must be a map with a string 'name'"),
        ({"calls": [{"name": "f", "arguments": "{nope"}]}, "'arguments' is not JSON"),
    ],
)
def test_a_malformed_expectation_is_a_tcr_error(expectation: dict[str, object], why: str) -> None:
    with pytest.raises(TcrError, match=why):
        expected(call_trace(), expectation)


# --- check_trace ----------------------------------------------------------------


def test_check_trace_says_why_it_skipped_checks() -> None:
    verdict = check_trace(run_trace(ToyDetector(), ["hi"]), whole=None, checks=CHECKS)
    assert verdict.ran == ("conservation", "no_leak", "crash")
    assert verdict.skipped == {
        "invariance": "no whole run to compare with",
        "holdback": "no whole run to compare with",
        "warm_cold": "needs a detector factory: see check_warm_cold()",
        "expected": "no expectation",
        "cost": "times a detector factory on a probe message: see tcr.cost.measure_cost()",
        "policy": "reads a detector factory's choices on probe messages: see tcr.probes",
    }


def test_check_trace_runs_only_the_checks_asked_for() -> None:
    verdict = verdict_of(MatchesPerChunk, SPLIT_MARKER, checks=["no_leak"])
    assert verdict.ran == ("no_leak",)
    assert [v.check for v in verdict.violations] == ["no_leak"]


def test_check_trace_refuses_unknown_checks() -> None:
    with pytest.raises(TcrError, match="unknown checks \\['nope'\\]"):
        check_trace(run_trace(ToyDetector(), ["hi"]), whole=None, checks=["nope"])


def test_whole_run_that_crashed_skips_the_comparisons() -> None:
    whole = run_trace(RaisesOnThirdChunk(), ["a", "b", "c"])
    verdict = check_trace(run_trace(ToyDetector(), ["abc"]), whole=whole)
    assert verdict.skipped["invariance"] == "the whole run crashed"


def test_chunk_invariance_on_its_own() -> None:
    whole = run_trace(ToyDetector(), ["".join(SPLIT_MARKER)])
    assert chunk_invariance(run_trace(ToyDetector(), SPLIT_MARKER), whole) == []
    assert chunk_invariance(run_trace(MatchesPerChunk(), SPLIT_MARKER), whole)


def test_invariance_ignores_raw_when_one_side_cannot_name_it() -> None:
    mine = run_trace(Scripted([ToolCall("f", "{}", None)], []), ["<x>"])
    whole = run_trace(Scripted([ToolCall("f", "{}", "<x>")], []), ["<x>"])
    assert chunk_invariance(mine, whole) == []
    other = run_trace(Scripted([Rejected(None, "c", reason="malformed")], []), ["<x>"])
    assert chunk_invariance(other, whole)


# --- helpers --------------------------------------------------------------------


def test_merge_text_joins_adjacent_text_and_drops_empty_text() -> None:
    call = ToolCall("f", "{}", "<c>")
    events: list[Event] = [Text("a"), Text(""), Text("b"), call, Text(""), Text("c")]
    assert merge_text(events) == [Text("ab"), call, Text("c")]


def test_excerpt_marks_the_offset() -> None:
    assert excerpt("a <tool_call> b", 8) == f"a <tool_{CARET}call> b"
    assert excerpt("x" * 40 + "\n" + "y" * 40, 40, width=4) == f"…xxxx{CARET}\\nyyy…"
    assert excerpt("ab", 99) == f"ab{CARET}"


def test_violation_reads_as_one_line() -> None:
    violation = Violation("no_leak", "Text shows '<tool_call>'", 3, 2, "a ‸<tool_call>")
    assert (
        str(violation) == "no_leak at chunk 3, offset 2: Text shows '<tool_call>'  [a ‸<tool_call>]"
    )


def test_a_random_chunking_of_a_long_json_argument_round_trips() -> None:
    # Guards the toy itself: the oracles are only as good as the correct detector.
    arguments = {"text": "".join(random.Random(3).choice('ab{}<>"\\') for _ in range(500))}
    call = f'<tool_call>{{"name": "w", "arguments": {json.dumps(arguments)}}}</tool_call>'
    for chunking in parse_strategy("random").chunkings(call, runs=5):
        (event,) = run_trace(ToyDetector(), chunking.chunks).events
        assert isinstance(event, ToolCall)
        assert json.loads(event.arguments) == arguments


def test_invariance_names_the_field_when_the_summaries_look_alike() -> None:
    mine = run_trace(Scripted([ToolCall("a", "{}", "<x><y>")], []), ["<x><y>"])
    whole = run_trace(Scripted([ToolCall("a", "{}", "<x>"), Text("<y>")], []), ["<x><y>"])
    (violation,) = chunk_invariance(mine, whole)
    assert violation.message == (
        "event 0 (ToolCall): raw differs at character 3: '<x><y>', the whole run has '<x>'"
    )


def test_invariance_leads_with_the_span_where_two_long_texts_part() -> None:
    prose = "The quick brown fox jumps over the lazy dog, then naps in the sun"
    mine = run_trace(Scripted([Text(prose + " <tool")], []), [prose + " <tool"])
    whole = run_trace(Scripted([Text(prose + " ")], []), [prose + " <tool"])
    (violation,) = chunk_invariance(mine, whole)
    assert violation.message == (
        "event 0 (Text): text differs at character 66: '…the sun <tool', "
        "the whole run has '…the sun '"
    )


def test_holdback_is_skipped_once_conservation_fails() -> None:
    verdict = verdict_of(DropsEverything, ["a <tool_call>", '{"name": "f", "arguments": {}}'])
    assert [v.check for v in verdict.violations] == ["conservation"]
    assert verdict.skipped["holdback"].startswith("conservation failed")


class DropsEverything(ToyDetector):
    def feed(self, chunk: str) -> list[Event]:
        super().feed(chunk)
        return []

    def finish(self) -> list[Event]:
        super().finish()
        return []


class RejectsTheFirstCall:
    """Holds everything, then rejects the first of the two blocks ``|`` separates."""

    def __init__(self) -> None:
        self.fed = ""

    def feed(self, chunk: str) -> list[Event]:
        self.fed += chunk
        return []

    def finish(self) -> list[Event]:
        first, second = self.fed.split("|")
        return [Rejected(first + "|", first, "hermes"), ToolCall("search", "{}", second, "hermes")]


def test_a_rejected_first_call_is_that_call_rejected_not_the_next_one_misnamed() -> None:
    trace = run_trace(RejectsTheFirstCall(), ["<a>|<b>"])
    want = {"calls": [{"name": "get_time", "arguments": {}}, {"name": "search", "arguments": {}}]}
    (violation,) = expected(trace, want)
    assert violation.kind == "Rejected instead of ToolCall"
    assert violation.message.startswith("call 0 (get_time) came out as Rejected(")
