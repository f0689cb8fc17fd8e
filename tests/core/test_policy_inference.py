"""Reading a detector's policies from probe messages, and judging with them (``tcr.probes``,
``tcr.readings``)."""

from __future__ import annotations

import functools
import json

import pytest
from helpers import chunkings
from policy_detectors import (
    CHOOSING,
    INCONSISTENT,
    UNEXPLAINED,
    accepts_undeclared_loses_whole_blocks,
    skips_variants,
)

from tcr import readings
from tcr.claims import EVERYTHING, Claim
from tcr.detector.core import DEFAULT_MAX_BLOCK, StreamDetector
from tcr.detector.events import Rejected, Text, ToolCall, merge_text
from tcr.dialects import BY_ID as BY_DIALECT
from tcr.judge import Judge
from tcr.oracle import TRACE_CHECKS, Check
from tcr.policies import Policies
from tcr.probes import probes_for, read_policies
from tcr.readings import newline_openers, read
from tcr.replay import check_chunks

HERMES = Claim(frozenset({"hermes"}))
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_the_reference_reads_as_its_own_choices() -> None:
    reading = read_policies(StreamDetector, EVERYTHING)
    assert reading.violations == ()
    assert reading.claim.policies.chosen == ()
    assert reading.claim.policies.read


def test_every_claimed_call_dialect_is_probed() -> None:
    dialects = {p.dialect for p in probes_for(None)}
    assert {"hermes", "qwen3_coder", "glm45", "mistral", "bare_json"} <= dialects
    assert {p.dialect for p in probes_for(frozenset({"hermes"}))} == {"hermes"}


def test_arguments_are_probed_wherever_a_call_is_one_json_object() -> None:
    """Mistral's array items too: vLLM reads only 'arguments' there, SGLang 'parameters'."""
    probed = {p.dialect for p in probes_for(None) if p.policy == "arguments"}
    assert {"hermes", "mistral", "internlm", "tools_tag"} <= probed


@pytest.mark.parametrize("name", sorted(CHOOSING))
def test_a_detector_making_a_legitimate_choice_is_read_as_making_it(name: str) -> None:
    factory, chosen = CHOOSING[name]
    reading = read_policies(factory, HERMES)
    assert reading.violations == ()
    for policy_id, choice in chosen.items():
        assert reading.claim.choice(policy_id) == choice


@pytest.mark.parametrize("name", sorted(UNEXPLAINED))
def test_output_no_choice_explains_is_one_finding_named_for_the_policy(name: str) -> None:
    factory, policy_id = UNEXPLAINED[name]
    reading = read_policies(factory, HERMES)
    assert [v.kind for v in reading.violations] == [policy_id]
    found = reading.violations[0]
    assert found.check is Check.POLICY
    assert found.message.startswith(f"policy/{policy_id}: ")
    assert '"tools": ["probe_undeclared_tool"]' in found.excerpt  # the probe, to reproduce


def test_a_pinned_choice_is_enforced_not_read() -> None:
    factory, _ = CHOOSING["accepts_undeclared"]
    pinned = HERMES.with_options(policies={"undeclared": "rejected"})
    reading = read_policies(factory, pinned)
    assert reading.claim.choice("undeclared") == "rejected"
    assert [v.kind for v in reading.violations] == ["undeclared"]
    assert "not the pinned choice rejected" in reading.violations[0].message


def test_malformed_dropped_reads_without_the_block_and_accounts_for_it() -> None:
    text = "before <tool_call>{oops</tool_call> after"
    reading = read(text, None, policies=Policies.of({"malformed": "dropped"}))
    assert reading.events == (Text("before "), Text(" after"))
    start = text.index("<tool_call>")
    assert reading.dropped == ((start, text.index(" after")),)


def test_undeclared_accepted_reads_the_call() -> None:
    events = read("x " + CALL, ["other"], policies=Policies.of({"undeclared": "accepted"})).events
    assert [type(e) for e in events] == [Text, ToolCall]


def test_empty_tools_drop_drops_every_call() -> None:
    reading = read("x " + CALL, [], policies=Policies.of({"empty_tools": "drop"}))
    assert reading.events == (Text("x "),)
    assert reading.dropped == ((2, 2 + len(CALL)),)


def test_unterminated_rejected_shows_a_complete_body_without_its_markers() -> None:
    text = "x " + CALL.removesuffix("</tool_call>")
    events = read(text, None, policies=Policies.of({"unterminated": "rejected"})).events
    assert isinstance(events[-1], Rejected) and events[-1].reason == "unterminated"


def test_whitespace_trimmed_leaves_out_the_white_space_next_to_a_call() -> None:
    text = "Hi \n" + CALL + "\n bye"
    reading = read(text, None, policies=Policies.of({"whitespace": "trimmed"}))
    assert [e.text for e in reading.events if isinstance(e, Text)] == ["Hi", "bye"]
    assert reading.dropped == ((2, 4), (4 + len(CALL), 6 + len(CALL)))


def test_arguments_strict_rejects_a_shape_its_dialect_does_not_write() -> None:
    body = '<tool_call>{"name": "f", "parameters": {}}</tool_call>'
    strict = read(body, None, policies=Policies.of({"arguments": "strict"})).events
    assert [type(e) for e in strict] == [Rejected]
    assert [type(e) for e in read(body, None).events] == [ToolCall]


def test_a_judge_holds_a_lossy_detector_to_exactly_what_its_choice_drops() -> None:
    factory, chosen = CHOOSING["drops_malformed"]
    claim = HERMES.with_policies(Policies().reading(chosen))
    text = "before <tool_call>{oops</tool_call> after"
    expectation = {"text": "before {oops after", "calls": []}  # the reference's reading
    judge = Judge(factory, text, claim=claim, expectation=expectation)
    for chunks in ([text], list(text)):
        verdict = judge.verdict(chunks)
        assert verdict.ok, verdict.violations
        assert Check.CONSERVATION in verdict.ran


def test_a_detector_that_breaks_a_pinned_lossy_choice_shows_what_it_should_drop() -> None:
    claim = HERMES.with_options(policies={"malformed": "dropped"})
    text = "before <tool_call>{oops</tool_call> after"
    judge = Judge(StreamDetector, text, claim=claim, expectation={"text": "before {oops after"})
    found = {v.check for v in judge.verdict([text]).violations}
    assert found == {Check.EXPECTED, Check.CONSERVATION}  # pinned: no other choice explains


@pytest.mark.parametrize("name", sorted(INCONSISTENT))
def test_one_choice_on_the_probe_and_another_in_a_message_is_policy_inconsistent(
    name: str,
) -> None:
    factory = INCONSISTENT[name]
    reading = read_policies(factory, HERMES)
    assert reading.violations == ()
    assert reading.claim.choice("malformed") == "shown"
    body = "{" + "x" * 150
    text = f"before <tool_call>{body}</tool_call> after"
    expectation = {"text": f"before {body} after", "calls": []}
    judge = Judge(factory, text, claim=reading.claim, expectation=expectation)
    found = judge.verdict([text]).violations
    assert [(v.check, v.kind) for v in found] == [(Check.POLICY, "inconsistent")]
    assert "malformed dropped in this message, but shown on its probe" in found[0].message


def test_trailing_text_dropped_shows_only_the_text_before_the_first_call() -> None:
    text = "Hi " + CALL + " bye"
    reading = read(text, None, policies=Policies.of({"trailing_text": "dropped"}))
    assert [type(e) for e in reading.events] == [Text, ToolCall]
    assert reading.dropped == ((3 + len(CALL), len(text)),)


def test_opener_newline_required_reads_a_block_without_it_as_text() -> None:
    bare = CALL.replace("<tool_call>\n", "<tool_call>")
    required = Policies.of({"opener_newline": "required"})
    assert merge_text(read("x " + bare, None, policies=required).events) == [Text("x " + bare)]
    assert [type(e) for e in read("x " + CALL, None, policies=required).events] == [Text, ToolCall]


def test_opener_newline_required_reads_on_after_an_opener_without_it() -> None:
    """Text to such a parser, the bare opener starts no block: one just after it does."""
    required = Policies.of({"opener_newline": "required"})
    events = read("<tool_call>" + CALL, None, policies=required).events
    assert [type(e) for e in events] == [Text, ToolCall]
    assert events[0] == Text("<tool_call>")
    inside = CALL.replace('"Paris"', '"<tool_call>Paris"')  # in a value: the value's text
    assert json.loads(read(inside, None, policies=required).events[0].arguments) == {
        "city": "<tool_call>Paris"
    }


def test_every_opener_a_newline_follows_begins_with_the_character_the_reading_masks() -> None:
    """``opener_newline: required`` reads with each bare opener's first character masked
    and gives a ``<`` back: a dialect whose such opener began otherwise would read wrong."""
    assert newline_openers(None)
    assert all(o.startswith(readings._MASKED) for o in newline_openers(None))


def test_json_in_a_name_value_block_is_no_call_with_any_choice() -> None:
    """The lenient shapes are a JSON dialect's: JSON in a Qwen3-Coder block is malformed,
    whichever choices transform the reading."""
    qwen3 = frozenset({"qwen3_coder"})
    for chosen in ({}, {"opener_newline": "required"}, {"whitespace": "trimmed"}):
        events = read(CALL, None, dialects=qwen3, policies=Policies.of(chosen)).events
        assert not any(isinstance(e, ToolCall) for e in events), chosen


def test_cut_closer_unterminated_reads_no_call_in_a_block_cut_inside_its_closer() -> None:
    function = "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n"
    text = "<tool_call>\n" + function + function + "</tool_"
    qwen3 = frozenset({"qwen3_coder"})
    assert [type(e) for e in read(text, None, dialects=qwen3).events] == [ToolCall, ToolCall]
    for unterminated, shown in (("completed", [Rejected]), ("dropped", [])):
        chosen = Policies.of({"cut_closer": "unterminated", "unterminated": unterminated})
        events = read(text, None, dialects=qwen3, policies=chosen).events
        assert [type(e) for e in events] == shown, unterminated
    closed = text.removesuffix("</tool_") + "</tool_call>"  # a closed block: not its question
    chosen = Policies.of({"cut_closer": "unterminated"})
    assert [type(e) for e in read(closed, None, dialects=qwen3, policies=chosen).events] == [
        ToolCall,
        ToolCall,
    ]


def test_a_bug_that_shows_unsplit_hides_no_choice() -> None:
    """It loses every block that arrives in one chunk (a bug the replay finds): its probes
    are fed one character at a time, and its choice is read."""
    reading = read_policies(accepts_undeclared_loses_whole_blocks, HERMES)
    assert reading.violations == ()
    assert reading.claim.choice("undeclared") == "accepted"


VARIANTS = ["internlm", "kimi_k2", "pythonic"]
# skips_variants holds a block as the reference does before it shows it as text; a parser
# that does not know the form would not hold it at all
NOT_HOLDBACK = [c for c in TRACE_CHECKS if c is not Check.HOLDBACK]


def test_a_parser_that_reads_no_variant_is_read_so_and_judged_without_finding() -> None:
    claim = Claim.of(VARIANTS)
    reading = read_policies(skips_variants, claim)
    assert reading.violations == ()
    assert {p: c for p, c in reading.claim.policies.chosen if "." in p} == {
        "internlm.spaced": "text",
        "kimi_k2.singular": "text",
        "pythonic.leading_space": "text",
        "pythonic.multiline": "text",
    }
    for dialect in VARIANTS:
        for variant in BY_DIALECT[dialect].variants:
            text = variant.probe
            for how, chunks in chunkings(text, randoms=5):
                verdict = check_chunks(
                    chunks, detector=skips_variants, dialects=VARIANTS, checks=NOT_HOLDBACK
                )
                assert verdict.ok, (variant.id, how, verdict.violations)


def test_the_reference_reads_every_variant() -> None:
    for dialect in VARIANTS:
        for variant in BY_DIALECT[dialect].variants:
            events = read(variant.probe, None, dialects=frozenset({dialect})).events
            assert any(isinstance(e, ToolCall) for e in events), variant.id


def test_long_block_held_reads_a_block_past_the_bound_to_its_end() -> None:
    long = CALL.replace("Paris", "Paris" + " ." * (DEFAULT_MAX_BLOCK // 2))
    released = read(long, None).events
    assert isinstance(released[0], Rejected) and released[0].reason == "too_long"
    held = read(long, None, policies=Policies.of({"long_block": "held"})).events
    assert [type(e) for e in held] == [ToolCall]
    unterminated = long.removesuffix("\n</tool_call>")
    dropped = Policies.of({"long_block": "held", "unterminated": "dropped"})
    assert read(unterminated, None, policies=dropped).dropped == ((0, len(unterminated)),)


def test_whitespace_leading_drops_only_white_space_alone_before_the_first_call() -> None:
    leading = Policies.of({"whitespace": "leading"})
    assert [
        e.text
        for e in read("\n" + CALL + "\n ok", None, policies=leading).events
        if isinstance(e, Text)
    ] == ["\n ok"]
    kept = read("Hi\n" + CALL, None, policies=leading).events
    assert kept[0] == Text("Hi\n")


def test_values_typed_by_their_look_are_read_as_that_choice() -> None:
    from policy_detectors import types_by_look

    reading = read_policies(types_by_look, Claim(frozenset({"glm45"})))
    assert reading.violations == ()
    assert reading.claim.choice("typed_arguments") == "look"
    assert (
        read_policies(StreamDetector, Claim(frozenset({"glm45"}))).claim.choice("typed_arguments")
        == "schema"
    )


def test_json_that_is_no_call_inside_a_marker_is_a_malformed_block() -> None:
    text = '<tool_call>\n{"arguments":{}}\n</tool_call>'
    assert read(text, None, policies=Policies.of({"malformed": "dropped"})).events == ()


def test_holdback_closer_completes_a_call_cut_inside_its_closer_at_the_end() -> None:
    text = "x " + CALL[:-3]
    held = read(text, None, policies=Policies.of({"holdback": "closer"})).events
    assert [type(e) for e in held] == [Text, ToolCall]
    assert [type(e) for e in read(text, None).events] == [Text, Rejected]


@pytest.mark.parametrize(
    ("module", "dialect", "chosen"),
    [
        ("parsers.undeclared", "hermes", {"undeclared": "accepted", "empty_tools": "parse"}),
        (
            "parsers.strict",
            "hermes",
            {"arguments": "strict", "malformed": "dropped", "unterminated": "dropped"},
        ),
        ("parsers.trimming", "hermes", {"whitespace": "trimmed", "holdback": "closer"}),
        ("parsers.qwen3_coder", "qwen3_coder", {"opener_newline": "required"}),
    ],
)
def test_the_disagreeing_test_parsers_are_read_as_making_their_choices(
    module: str, dialect: str, chosen: dict[str, str]
) -> None:
    import importlib

    factory = importlib.import_module(module).factory
    reading = read_policies(factory, Claim(frozenset({dialect})))
    assert reading.violations == ()
    assert {k: reading.claim.choice(k) for k in chosen} == chosen


def test_white_space_a_trimming_detector_holds_before_an_opener_is_not_held_back() -> None:
    trims, chosen = CHOOSING["trims_whitespace"]
    factory = functools.partial(trims, dialects=["hermes"])
    claim = HERMES.with_policies(Policies().reading(chosen))
    text = " <tool_calls"
    verdict = Judge(factory, text, claim=claim).verdict([" <tool_call", "s"])
    assert Check.HOLDBACK in verdict.ran and verdict.ok, verdict.violations
    kept = Judge(factory, text, claim=HERMES).verdict([" <tool_call", "s"])
    assert [v.check for v in kept.violations] == [Check.HOLDBACK]
