"""Signatures: every violation says its kind and dialect, and a shrunk input has a shape, so
a run can tell distinct findings apart (ARCHITECTURE.md §7.4)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_oracle import WEATHER, Scripted, call_trace
from toy_detectors import DropsPendingAtFinish, MatchesPerChunk, RaisesOnThirdChunk, ToyDetector

from tcr.claims import Claim
from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text, ToolCall
from tcr.oracle import check_trace, conservation, expected, no_leak
from tcr.policies import Policies
from tcr.signature import (
    WHOLE,
    Signature,
    dialect_at,
    key,
    marker_dialect,
    requoted,
    shape,
    signature,
    unquoted,
)
from tcr.trace import Trace, run_trace

HERMES = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'


def test_a_signature_prints_short() -> None:
    found = Signature("expected", "missing ToolCall", "hermes", "split-in-closer")
    assert str(found) == "expected/missing ToolCall/hermes@split-in-closer"
    assert str(found.key) == "expected/missing ToolCall/hermes"
    assert str(Signature("crash", "ValueError")) == "crash/ValueError"


def test_a_signature_prints_on_one_line() -> None:
    # a pinned snippet names it in a comment: a marker's newline must not end the line
    found = Signature("no_leak", "```json\n{", "fenced_json", "split-in-opener")
    assert str(found) == "no_leak/```json\\n{/fenced_json@split-in-opener"


def test_a_signature_is_hashable_and_equal_by_value() -> None:
    a, b = (
        Signature("no_leak", "<tool_call>", "hermes"),
        Signature("no_leak", "<tool_call>", "hermes"),
    )
    assert a == b and len({a, b}) == 1
    assert a != Signature("no_leak", "<tools>", "tools_tag")


# --- shape --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "expected_shape"),
    [
        ([f"a {HERMES} b"], WHOLE),
        (["a <tool", f"{HERMES[5:]} b"], "split-in-opener"),
        ([f"a {HERMES[:-4]}", f"{HERMES[-4:]} b"], "split-in-closer"),
        (["a ", f"{HERMES} b"], "split-at-marker-edge"),
        ([f"a {HERMES}", " b"], "split-at-marker-edge"),
        ([f"a {HERMES[:20]}", f"{HERMES[20:]} b"], "split-in-body"),
        (["a", f" {HERMES} b"], "split-in-text"),
        (["hello <tool", "_c"], "split-in-opener"),  # a marker cut off by the end
        (["hello <tool_", "c"], "split-in-opener"),
        # a closing marker outside any block is text: a fence in prose, a stray </think>
        (["Here:\n``", "`python\nprint(1)\n```"], "split-in-text"),
        (["Here:\n```", "python\nprint(1)\n```"], "split-in-text"),
        (["ok </thi", "nk> then"], "split-in-text"),
        # a marker is one where the reference reads a block: inside a body it is body ...
        (["<think>a <tool", "_call> b</think>"], "split-in-body"),
        # ... so a reasoning block's closer after another dialect's markup in it closes it
        (["<think><|tool_call|></longcat_tool_call><", "/think>Hi"], "split-in-closer"),
        (["<|channel|>analysis<|message|>Hi<|end|", ">ok"], "split-in-closer"),
        (["<|python_start|><", "|python_end|>"], "split-in-closer"),
        # a block cut off by the end ends in the part of its closer it has
        ([f"a {HERMES[:-6]}", HERMES[-6:-3]], "split-in-closer"),
        # a block that closes by balance (a bare array at message start) has a body
        (['[{"a": "\\', '"}]'], "split-in-body"),
        (['<|tool_call|>[{"name": "s", "arguments": {"\\', '"": 0}}] ok'], "split-in-body"),
        # a bare "[" is a marker once what follows says a call begins: its head opens
        (["[", "get_weather(city='Paris')]"], "split-in-opener"),
        (["[get_wea", "ther(city='Paris')]"], "split-in-opener"),
        (["[get_weather(", "city='Paris')]"], "split-at-marker-edge"),
        (["[get_weather(ci", "ty='Paris')]"], "split-in-body"),
        (["[", '{"name": "s", "arguments": {}}]'], "split-in-opener"),
        ([" [", "2]"], "split-in-opener"),  # the character after "[" settles it: no call
    ],
)
def test_shape_says_where_the_split_falls(chunks: list[str], expected_shape: str) -> None:
    assert shape(chunks) == expected_shape


def test_shape_reads_blocks_as_the_claim_does() -> None:
    # for a Hermes-only parser, <think> is text: a split in its closer is a split in text
    chunks = ["<think>x</thi", "nk> then"]
    assert shape(chunks) == "split-in-closer"
    assert shape(chunks, Claim(frozenset({"hermes"}))) == "split-in-text"
    assert shape(["hello <tool", "_c"], Claim(frozenset({"tools_tag"}))) == "split-in-text"


def test_an_opener_the_claim_requires_a_newline_after_ends_past_it() -> None:
    chunks = ["<tool_call>", "\n<function=f>\n</function>\n</tool_call>"]
    claim = Claim(frozenset({"qwen3_coder"}))
    assert shape(chunks, claim) == "split-at-marker-edge"
    required = claim.with_policies(Policies.of({"opener_newline": "required"}))
    assert shape(chunks, required) == "split-in-opener"  # '<tool_call>\n' is its opener


def test_shape_names_the_most_telling_split() -> None:
    chunks = ["a", " <tool", f"{HERMES[5:20]}", f"{HERMES[20:]} b"]
    assert shape(chunks) == "split-in-opener"


def test_empty_chunks_split_nothing() -> None:
    assert shape(["", f"a {HERMES}", ""]) == WHOLE


# --- dialect from markup ---------------------------------------------------------------


def test_dialect_at_names_the_block_an_offset_is_in() -> None:
    text = f"a {HERMES} b <tools>[]</tools>"
    assert dialect_at(text, 2) == "hermes"  # where the opener starts
    assert dialect_at(text, 20) == "hermes"  # inside the body
    assert dialect_at(text, len(f"a {HERMES} ")) == ""  # text after the block
    assert dialect_at(text, len(text) - 3) == "tools_tag"
    assert dialect_at(text, 0) == "" and dialect_at(text, None) == ""


def test_dialect_at_names_blocks_as_the_reference_reads_them() -> None:
    # markup inside reasoning opens nothing: after the reasoning block is plain text
    text = "<think><tool_call></think> x"
    assert dialect_at(text, len(text) - 1) == ""
    assert dialect_at(text, 10) == "think"
    # a claim reads only its own markup: another dialect's is text, its blocks its own
    gemma = "a <|tool_call>call:f{}<tool_call|> b"
    assert dialect_at(gemma, 5) == "gemma4"
    assert dialect_at(gemma, 5, frozenset({"hermes"})) == ""
    nested = f"<think>{HERMES}</think>"
    assert dialect_at(nested, 20) == "think"
    assert dialect_at(nested, 20, frozenset({"hermes"})) == "hermes"


def test_dialect_at_knows_bare_json_at_message_start() -> None:
    assert dialect_at('  {"name": "f"', 5) == "bare_json"


def test_a_shared_marker_belongs_to_the_first_registered_dialect() -> None:
    assert marker_dialect("<tool_call>") == "hermes"
    assert marker_dialect("<|python_tag|>") == "python_tag"
    assert marker_dialect("not a marker") == ""


# --- kinds: each oracle says what went wrong in stable words ----------------------------


def conservation_kind(*answers: list[str]) -> str:
    script: list[list[Event]] = [[Text(t) for t in answer] for answer in answers]
    (violation,) = conservation(run_trace(Scripted(*script), ["hello ", "world ", "again"]))
    return violation.kind


def test_conservation_kinds() -> None:
    assert conservation_kind(["hello "], ["d "], ["again"], []) == "lost"
    assert conservation_kind(["hello "], ["d ", "worl"], ["again"], []) == "reordered"
    assert conservation_kind(["hello world"], [" "], ["again"], []) == "emitted early"
    assert conservation_kind(["hello "], ["WORLD "], ["again"], []) == "altered"
    assert conservation_kind(["hello "], ["hello world "], ["again"], []) == "duplicated"


def test_a_deleted_character_is_lost_where_what_follows_it_also_came_before() -> None:
    # "ab" after the deleted "]" is at offset 0 too: fewer characters out than in is a loss
    (violation,) = conservation(run_trace(Scripted([Text("ab")], [Text("ab")], []), ["ab]", "ab"]))
    assert (violation.kind, violation.offset) == ("lost", 2)
    assert violation.message == "lost 1 character: ']' never emitted"
    (twice,) = conservation(run_trace(Scripted([Text("ab]")], [Text("ab]ab")], []), ["ab]", "ab"]))
    assert twice.kind == "duplicated"


def test_lost_at_end_names_the_dialect_of_the_held_marker() -> None:
    trace = run_trace(DropsPendingAtFinish(), ["hello ", "<tool"])
    (violation,) = conservation(trace)
    assert (violation.kind, violation.dialect) == ("lost at end", "")
    full = run_trace(DropsPendingAtFinish(), ["hello ", '<tool_call>{"name": "f"'])
    assert [v.kind for v in conservation(full)] in ([], ["lost at end"])


def test_no_leak_reports_each_leaked_marker_once() -> None:
    class Verbatim:
        def feed(self, chunk: str) -> list[Event]:
            return [Text(chunk)]

        def finish(self) -> list[Event]:
            return []

    text = f"{HERMES} and {HERMES} and <tools>[]</tools>"
    found = no_leak(run_trace(Verbatim(), [text]))
    assert [(v.kind, v.dialect) for v in found] == [
        ("<tool_call>", "hermes"),
        ("<tools>", "tools_tag"),
    ]
    assert found[0].offset == 0


def test_expected_reports_lost_text_and_a_missing_call_as_two() -> None:
    second = WEATHER.replace("Paris", "Lyon")
    first = ToolCall("get_weather", '{"city": "Paris"}', WEATHER, "hermes")
    # The first call, then nothing: the second call and the text after it are lost.
    trace = run_trace(
        Scripted([Text("Look. "), first], [], []), ["Look. " + WEATHER, second + " Done."]
    )
    calls = [{"name": "get_weather", "arguments": {"city": c}} for c in ("Paris", "Lyon")]
    found = expected(trace, {"text": "Look.  Done.", "calls": calls})
    assert [(v.kind, v.dialect) for v in found] == [
        ("missing Text", "hermes"),
        ("missing ToolCall", "hermes"),
    ]
    three = [*calls, calls[1]]
    kinds = [v.kind for v in expected(trace, {"calls": three})]
    assert kinds == ["missing ToolCall"]  # two calls missing: one finding


def test_expected_kinds_for_calls() -> None:
    (wrong,) = expected(call_trace(), {"calls": [{"name": "get_time", "arguments": {}}]})
    assert (wrong.kind, wrong.dialect) == ("ToolCall name differs", "tool_call_tag")
    args = [{"name": "get_weather", "arguments": {"city": "Lyon"}}]
    assert [v.kind for v in expected(call_trace(), {"calls": args})] == [
        "ToolCall arguments differ"
    ]
    assert [v.kind for v in expected(call_trace(), {"calls": []})] == ["extra ToolCall"]
    assert [v.kind for v in expected(call_trace(), {"reasoning": "hmm"})] == ["missing Reasoning"]


def invariance_of(factory: type[ToyDetector], chunks: Sequence[str]) -> list[str]:
    whole = run_trace(factory(), ["".join(chunks)])
    verdict = check_trace(run_trace(factory(), chunks), whole=whole, checks=["invariance"])
    return [f"{v.kind}/{v.dialect}" for v in verdict.violations]


def test_invariance_kind_names_the_event_type_and_how_it_differs() -> None:
    # The leaked marker swallows the call whether text comes before it or not: one kind.
    # The toy detector names its format tool_call_tag: the whole run's block says so.
    with_text = ["a <tool", f"{HERMES[5:]} b"]
    assert invariance_of(MatchesPerChunk, with_text) == ["missing ToolCall/tool_call_tag"]
    alone = ["<tool", f"{HERMES[5:]} b"]
    assert invariance_of(MatchesPerChunk, alone) == ["missing ToolCall/tool_call_tag"]


@pytest.mark.parametrize(
    ("mine", "reference", "kind"),
    [
        ([Text("a")], [Text("a"), ToolCall("f", "{}")], "missing ToolCall"),
        ([Text("a"), ToolCall("f", "{}")], [Text("a")], "extra ToolCall"),
        ([Text("a <x> b")], [Text("a "), ToolCall("f", "{}"), Text(" b")], "missing ToolCall"),
        ([Text("a "), ToolCall("f", "{}")], [Text("a b")], "extra ToolCall"),
        ([Text("a")], [Text("a b")], "missing Text"),
        ([Text("a c")], [Text("a b")], "Text differs"),
        # both go on to the call: only the text differs, as when nothing follows (a prefix
        # emitted twice is one kind whatever comes after it)
        ([Text("a[["), ToolCall("f", "{}")], [Text("a["), ToolCall("f", "{}")], "Text differs"),
        ([Text("a[[b")], [Text("a[b")], "Text differs"),
        ([ToolCall("f", "{}")], [ToolCall("f", '{"k": 1}')], "ToolCall arguments differ"),
        ([ToolCall("g", "{}")], [ToolCall("f", "{}")], "ToolCall name differs"),
    ],
)
def test_difference_kinds(mine: list[Event], reference: list[Event], kind: str) -> None:
    from tcr._verdict import difference_kind

    def at(events: list[Event], index: int) -> Event | None:
        return events[index] if index < len(events) else None

    first = next(i for i in range(9) if at(mine, i) != at(reference, i))
    found = difference_kind(
        at(mine, first), at(reference, first), at(mine, first + 1), at(reference, first + 1)
    )
    assert found == kind


def test_crash_kinds() -> None:
    trace = run_trace(RaisesOnThirdChunk(), ["a", "b", "c"])
    verdict = check_trace(trace, whole=None, checks=["crash"])
    assert [v.kind for v in verdict.violations] == ["ValueError"]

    class ReturnsNone:
        def feed(self, chunk: str) -> list[Event]:
            return None  # type: ignore[return-value]

        def finish(self) -> list[Event]:
            return []

    bad = check_trace(run_trace(ReturnsNone(), ["a"]), whole=None, checks=["crash"])
    assert [v.kind for v in bad.violations] == ["bad event"]


def test_the_reference_names_the_exact_dialect_of_its_events() -> None:
    body = "<tool_call><function=f><parameter=k>v</parameter></function></tool_call>"
    trace: Trace = run_trace(StreamDetector(), [body])
    call = trace.events[0]
    assert isinstance(call, ToolCall) and call.format == "qwen3_coder"
    found = expected(trace, {"calls": []})
    assert [(v.kind, v.dialect) for v in found] == [("extra ToolCall", "qwen3_coder")]


def test_signature_of_a_violation_takes_the_shape_of_its_input() -> None:
    chunks = ["hello ", "<tool"]
    (violation,) = conservation(run_trace(DropsPendingAtFinish(), chunks))
    assert key(violation) == Signature("conservation", "lost at end")
    assert str(signature(violation, chunks)) == "conservation/lost at end@split-at-marker-edge"


# --- a marker inside a string of a call's value (IN_STRING) ---------------------------

HERMES_ONLY = Claim(frozenset({"hermes"}))


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        (
            '<tool_call>{"name": "f", "arguments": {"q": "a</tool_call>b"}}</tool_call>',
            '<tool_call>{"name": "f", "arguments": {"q": "a\\u003c/tool_call>b"}}</tool_call>',
        ),
        (  # an opener in a string, and arguments written as a string of JSON
            '<tool_call>{"name": "f", "arguments": "{\\"q\\": \\"<tool_call>\\"}"}</tool_call>',
            '<tool_call>{"name": "f", "arguments": "{\\"q\\": \\"\\u003ctool_call>\\"}"}'
            "</tool_call>",
        ),
        (  # text between and after the blocks is kept as it is
            'a "</tool_call>" <tool_call>{"name": "f", "arguments": {"q": "<tool_call>"}}'
            '</tool_call> b "<tool_call>"',
            'a "</tool_call>" <tool_call>{"name": "f", "arguments": {"q": "\\u003ctool_call>"}}'
            '</tool_call> b "<tool_call>"',
        ),
        (  # a string never closed runs to the end of the message: its marker closes nothing
            '<tool_call>{"name": "f", "arguments": {"q": "a</tool_call>',
            '<tool_call>{"name": "f", "arguments": {"q": "a\\u003c/tool_call>',
        ),
    ],
)
def test_unquoted_escapes_the_claimed_markers_inside_strings_of_a_calls_json(
    text: str, escaped: str
) -> None:
    assert unquoted(text, HERMES_ONLY) == escaped


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "f", "arguments": {}}</tool_call> and "<tool_call>" in prose',
        '<tool_call>\n<function=f>\n<parameter=q>\n"</tool_call>"\n</parameter>\n</function>',
        '<|tool_call>call:f{q:<|"|></tool_call><|"|>}<tool_call|>',  # gemma4: not claimed
        '<tool_call>{"name": "f", "arguments": {"q": "</tool_call',  # a marker never whole
    ],
)
def test_unquoted_leaves_prose_xml_bodies_unclaimed_markup_and_open_strings(text: str) -> None:
    assert unquoted(text, HERMES_ONLY) == text


def test_unquoted_reads_bare_json_at_the_start_only_when_it_is_claimed() -> None:
    text = '{"name": "f", "arguments": {"q": "<tool_call>"}}'
    assert unquoted(text, HERMES_ONLY) == text
    both = Claim(frozenset({"hermes", "bare_json"}))
    assert unquoted(text, both) == '{"name": "f", "arguments": {"q": "\\u003ctool_call>"}}'


_MARKERS = st.sampled_from(["<tool_call>", "</tool_call>", "<tools>", "x", '"', "\\", "}"])
_VALUES = st.recursive(
    st.none() | st.integers() | st.lists(_MARKERS).map("".join),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


@given(st.dictionaries(st.text(max_size=4), _VALUES, max_size=3), st.text(max_size=8))
def test_unquoted_keeps_every_value_and_leaves_no_marker_in_a_string(
    arguments: dict[str, object], prose: str
) -> None:
    body = json.dumps({"name": "f", "arguments": arguments})
    text = f"{prose}<tool_call>{body}</tool_call>"
    hint = "<tool_call>" not in prose and "</tool_call>" not in prose
    escaped = unquoted(text, HERMES_ONLY)
    assert escaped.startswith(prose)
    if hint:  # the block is where the text says: its value reads the same, marker-free
        inside = escaped[len(prose) + len("<tool_call>") : -len("</tool_call>")]
        assert json.loads(inside) == json.loads(body)
        assert "<tool_call>" not in inside and "</tool_call>" not in inside
    if "\\u003c" not in text:  # what a rejected block shows of it reads as the original
        assert requoted(escaped, HERMES_ONLY) == text
