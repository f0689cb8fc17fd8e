"""One bug, one finding: signatures folded into their primary and grouped by cause."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import given
from hypothesis import strategies as st

from tcr.findings import SHOWN_DIALECTS, cause, group, symptoms
from tcr.signature import AT_END, IN_STRING, SHAPES, UNSPLIT, WHOLE, Signature

OPENER = "split-in-opener"


def sig(check: str, kind: str, dialect: str = "hermes", shape: str = OPENER) -> Signature:
    return Signature(check, kind, dialect, shape)


MISSED = sig("invariance", "missing ToolCall")
LEAKED = sig("no_leak", "<tool_call>")
EXPECTED = sig("expected", "missing ToolCall")


@dataclass(frozen=True)
class Item:
    signature: Signature


def test_a_split_cause_is_its_shape_whatever_the_checks_kinds_and_dialects() -> None:
    runs = [{MISSED, LEAKED, EXPECTED}, {sig("invariance", "missing Reasoning", "think")}]
    items = [Item(MISSED), Item(LEAKED), Item(EXPECTED), Item(*runs[1])]
    (finding,) = group(items, runs)
    assert str(finding.cause) == "split-in-opener"
    assert finding.checks == ["invariance", "no_leak", "expected"]
    assert finding.dialects == ["hermes", "think"]
    # one per dialect shown in full: the first check's
    assert [i.signature for i in finding.shown] == [MISSED, *runs[1]]


def test_another_split_shape_is_another_finding() -> None:
    body = sig("invariance", "missing ToolCall", shape="split-in-body")
    assert [str(g.cause) for g in group([Item(MISSED), Item(body)])] == [
        "split-in-opener",
        "split-in-body",
    ]


def test_whole_failures_are_named_by_check_and_kind_across_dialects() -> None:
    hermes = sig("expected", "missing ToolCall", shape=WHOLE)
    mistral = sig("expected", "missing ToolCall", "mistral", WHOLE)
    extra = sig("expected", "extra Text", shape=WHOLE)
    grouped = group([Item(hermes), Item(extra), Item(mistral)], [{hermes, extra}, {mistral}])
    assert [(str(g.cause), len(g.items)) for g in grouped] == [
        ("expected/missing ToolCall@whole", 2),
        ("expected/extra Text@whole", 1),  # one check's two kinds: two parsing bugs
    ]


def test_failures_that_need_a_marker_in_a_string_are_one_finding_whatever_the_check() -> None:
    # close_in_string's shapes: each kind a whole failure would be its own finding, but
    # each one goes away when the marker in the string is escaped
    kinds = ["extra Text", "Rejected instead of ToolCall", "missing ToolCall"]
    in_string = [sig("expected", kind, shape=IN_STRING) for kind in kinds]
    leak = sig("no_leak", "<tool_call>", shape=IN_STRING)
    parsing = sig("expected", "missing ToolCall", shape=WHOLE)  # another bug: two calls merged
    items = [Item(s) for s in (*in_string, leak, parsing)]
    grouped = group(items, [{s} for s in (*in_string, leak, parsing)])
    assert [(str(g.cause), len(g.items)) for g in grouped] == [
        ("marker-in-string", 4),
        ("expected/missing ToolCall@whole", 1),
    ]
    assert grouped[0].name == "marker-in-string (no_leak, expected) in hermes"


def test_a_loss_at_the_end_is_one_finding_whichever_check_sees_it() -> None:
    # flush_swallowed: conservation where the message has no call, expected where it has
    lost = sig("conservation", "lost at end", "", AT_END)
    missing = sig("expected", "missing Text", shape=AT_END)
    (finding,) = group([Item(lost), Item(missing)], [{lost}, {missing}])
    assert finding.name == "at-end (conservation, expected) in hermes"


def test_a_later_check_that_only_ever_shows_with_an_earlier_one_is_its_symptom() -> None:
    lost = sig("conservation", "lost at end", "", WHOLE)
    missing = sig("expected", "missing Text", "", WHOLE)
    assert symptoms([{lost, missing}, {lost}]) == {missing: lost}
    (finding,) = group([Item(lost), Item(missing)], [{lost, missing}, {lost}])
    assert str(finding.cause) == "conservation/lost at end@whole"
    assert symptoms([{lost, missing}, {missing}]) == {}  # it shows alone: a finding of its own


def test_a_symptom_whose_dialect_could_not_be_told_folds_into_any_dialects() -> None:
    lost = sig("conservation", "lost at end", "gemma4", WHOLE)
    missing = sig("expected", "missing Text", "", WHOLE)
    assert symptoms([{lost, missing}]) == {missing: lost}
    assert symptoms([{Signature("conservation", "lost", "", WHOLE), lost}]) == {}  # one check


def test_a_symptom_whose_dialect_could_not_be_told_may_show_with_any_of_one_causes() -> None:
    # an undeclared call dropped: its text lost in two dialects, on two recordings, and
    # the text the recordings expect missing on both, told in no dialect
    gemma = sig("conservation", "lost at end", "gemma4", WHOLE)
    hermes = sig("conservation", "lost at end", "hermes", WHOLE)
    missing = sig("expected", "missing Text", "", WHOLE)
    runs = [{gemma, missing}, {hermes, missing}]
    assert symptoms(runs) == {missing: gemma}
    (finding,) = group([Item(gemma), Item(missing), Item(hermes)], runs)
    assert str(finding.cause) == "conservation/lost at end@whole"
    other = sig("conservation", "duplicated", "mistral", WHOLE)  # another cause: not covered
    assert symptoms([{gemma, missing}, {other, missing}]) == {}


def test_a_chunking_that_differs_from_a_wrong_whole_run_is_that_runs_symptom() -> None:
    # two calls merged when one chunk completes both: the whole run misses a call, and a
    # chunking that completes them apart differs from it (invariance), being right
    merged = sig("expected", "missing ToolCall", "granite", WHOLE)
    differs = sig("invariance", "ToolCall raw differs", "granite", "split-in-body")
    runs = [{merged, differs}, {merged}]
    assert symptoms(runs) == {differs: merged}
    (finding,) = group([Item(merged), Item(differs)], runs)
    assert str(finding.cause) == "expected/missing ToolCall@whole"
    # not when the whole run fails in another dialect, nor when the split also shows alone
    elsewhere = sig("expected", "missing ToolCall", "hermes", WHOLE)
    assert symptoms([{elsewhere, differs}]) == {}
    assert symptoms([{merged, differs}, {differs}]) == {}
    # only invariance compares with the whole run
    leaked = sig("no_leak", "<tool_call>", "granite", "split-in-body")
    assert symptoms([{merged, leaked}]) == {}


def test_it_is_that_runs_finding_even_where_no_finding_of_its_own_shows_the_whole_failure() -> None:
    # fuzz shrank only the chunking's signature: its case is the only run showing both
    accepted = sig("expected", "extra ToolCall", "hermes", WHOLE)
    differs = sig("invariance", "Rejected instead of ToolCall", "hermes", "split-in-body")
    (finding,) = group([Item(differs)], [{differs, accepted}])
    assert str(finding.cause) == "expected/extra ToolCall@whole"
    assert finding.name == "expected/extra ToolCall@whole in hermes"
    assert [i.signature for i in finding.shown] == [differs]  # its reproducer, as shrunk
    # a leak is no comparison with the whole run: still its split's finding
    leaked = sig("no_leak", "<tool_call>", "hermes", "split-in-body")
    (finding,) = group([Item(leaked)], [{leaked, accepted}])
    assert str(finding.cause) == "split-in-body"


def test_a_crash_is_its_own_finding_whatever_the_split() -> None:
    crash = sig("crash", "RuntimeError")
    assert [str(g.cause) for g in group([Item(MISSED), Item(crash)])] == [
        "split-in-opener",
        "crash/RuntimeError@split-in-opener",
    ]


checks = st.sampled_from(["conservation", "invariance", "no_leak", "expected"])
signatures = st.builds(
    Signature,
    checks,
    st.sampled_from(["missing ToolCall", "extra Text"]),
    st.sampled_from(["", "hermes", "mistral"]),
    st.sampled_from((*SHAPES, IN_STRING, AT_END)),
)


@given(st.lists(st.sets(signatures, max_size=5), max_size=6))
def test_every_signature_lands_in_exactly_one_finding(runs: list[set[Signature]]) -> None:
    items = [Item(s) for s in dict.fromkeys(s for run in runs for s in run)]
    grouped = group(items, runs)
    assert sorted((i for g in grouped for i in g.items), key=str) == sorted(items, key=str)
    assert len({g.cause for g in grouped}) == len(grouped)
    for found, primary in symptoms(runs).items():
        # a symptom never shows without its primary, in its dialect and shape
        assert found.dialect in ("", primary.dialect)
        assert primary.check != found.check
        if found.dialect and primary.shape == found.shape:
            assert all(primary in run for run in runs if found in run)
        elif primary.shape != found.shape:  # differs from a wrong whole run
            assert found.check == "invariance" and primary.shape in UNSPLIT
            assert all(primary in run for run in runs if found in run)
        else:  # told in no dialect: each of its runs shows one signature of the cause
            assert all(any(cause(s) == cause(primary) for s in run) for run in runs if found in run)
        assert primary.shape in UNSPLIT or found.shape == primary.shape


def test_the_signatures_not_shown_are_counted_by_check() -> None:
    runs = [{MISSED, LEAKED, EXPECTED}]
    (finding,) = group([Item(MISSED), Item(LEAKED), Item(EXPECTED)], runs)
    assert finding.rest("--json") == (
        "its 2 other signatures: no_leak 1, expected 1 (--json lists each)"
    )
    (alone,) = group([Item(MISSED)])
    assert alone.rest("--json") == ""


def test_a_split_only_a_proxy_makes_is_the_same_finding_and_says_where() -> None:
    token = Signature("invariance", "missing ToolCall", "kimi_k2", OPENER, proxy=True)
    fence = Signature("invariance", "missing ToolCall", "fenced_json", OPENER)
    (finding,) = group([Item(token), Item(fence)])
    # the dialect an engine's own chunking can break is shown first
    assert [i.signature for i in finding.shown] == [fence, token]
    assert finding.name == (
        "split-in-opener (invariance) in 2 dialects, 1 of them only when a proxy re-chunks"
    )
    (proxied,) = group([Item(token), Item(replace(token, dialect="hermes"))])
    assert proxied.name.endswith("in 2 dialects (only when a proxy re-chunks)")


def test_a_finding_in_many_dialects_shows_a_few_and_counts_the_rest() -> None:
    # per_chunk_markers misses every dialect's opener: a reproducer line per dialect was
    # 31 lines of one finding; the first few are shown, the others counted
    dialects = [f"d{i}" for i in range(12)]
    (finding,) = group([Item(replace(MISSED, dialect=d)) for d in dialects])
    assert [i.signature.dialect for i in finding.shown] == dialects[:SHOWN_DIALECTS]
    assert finding.rest("--json") == (
        f"its {12 - SHOWN_DIALECTS} other signatures: invariance {12 - SHOWN_DIALECTS}"
        " (--json lists each)"
    )
    assert finding.name.endswith("in 12 dialects")
