"""Replay judges a detector against its claim (issue 12, parts 1 and 2).

The reference restricted to any one dialect replays every bundled recording
cleanly; a Hermes-only detector that shows other dialects' markup as text passes,
one that eats or rewrites it fails; the report says the claim once and counts
what the claim leaves unjudged in one line per reason, not per row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpora import ROOT
from tcr.corpus import Frame, new_header, write_recording
from tcr.dialects import BY_ID
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION
from tcr.judge import NO_MARKER, NOT_RESTATED
from tcr.oracle import Check
from tcr.replay import run

BRACKETS = [
    ROOT / "regressions" / "format_mistral.msgpack",
    ROOT / "regressions" / "format_mistral_v13.msgpack",
    ROOT / "recorded" / "mistral.msgpack",
]
QUICK = ["original", "whole"]
# The broken detectors hold the whole message until finish(): holdback is not what they test.
BUT_HOLDBACK = ["conservation", "invariance", "no_leak", "expected", "crash"]


def failed(report: object) -> set[str]:
    return {f.violation.check for _, f in report.failures}  # type: ignore[attr-defined]


def test_the_reference_restricted_to_hermes_replays_every_bundled_recording() -> None:
    report = run(None, strategies=QUICK, dialects=["hermes"])
    assert report.exit_code == EXIT_OK, [str(f.violation) for _, f in report.failures]
    assert str(report.claim) == "hermes"


@pytest.mark.slow
@pytest.mark.parametrize("dialect", list(BY_ID))
def test_the_reference_restricted_to_one_dialect_replays_every_bundled_recording(
    dialect: str,
) -> None:
    report = run(None, strategies=[*QUICK, "random:16"], runs=2, dialects=[dialect])
    assert report.exit_code == EXIT_OK, [str(f.violation) for _, f in report.failures][:3]


def test_a_detector_showing_unclaimed_markup_as_text_passes_where_everything_blames_it() -> None:
    claimed = run(BRACKETS, strategies=QUICK, detector="claimed_detectors:hermes_only")
    assert claimed.exit_code == EXIT_OK
    blamed = run(BRACKETS, strategies=QUICK, detector="claimed_detectors:hermes_only",
                 dialects=list(BY_ID))  # fmt: skip
    assert failed(blamed) == {Check.NO_LEAK, Check.EXPECTED}


def test_a_detector_rewriting_unclaimed_markup_into_calls_fails_expected() -> None:
    report = run(BRACKETS, strategies=QUICK, detector="claimed_detectors:calls_unclaimed",
                 checks=BUT_HOLDBACK)  # fmt: skip
    assert failed(report) == {Check.EXPECTED}


def test_a_detector_eating_unclaimed_markup_fails_conservation() -> None:
    report = run(BRACKETS, strategies=["char"], detector="claimed_detectors:eats_unclaimed",
                 checks=BUT_HOLDBACK)  # fmt: skip
    assert Check.CONSERVATION in failed(report) and report.exit_code == EXIT_VIOLATION


def test_reproducers_restate_the_claim_and_the_snippet_fails_the_same_way() -> None:
    report = run(BRACKETS[:1], strategies=["whole"], detector="claimed_detectors:calls_unclaimed",
                 checks=BUT_HOLDBACK)  # fmt: skip
    (_, failure), *_ = report.failures
    assert "--dialect hermes" in failure.reproducer
    assert "dialects=['hermes']" in failure.snippet
    namespace: dict[str, object] = {}
    exec(failure.snippet, namespace)  # the snippet tcr prints, as a user pastes it
    test = next(v for k, v in namespace.items() if k.startswith("test_"))
    with pytest.raises(AssertionError, match="expected"):
        test()  # type: ignore[operator]


def test_what_the_claim_leaves_unjudged_is_counted_once(tmp_path: Path) -> None:
    blessed = tmp_path / "blessed.msgpack"  # a user's own detector blessed this
    text = '<tool_call>{"name": "f", "arguments": {}}</tool_call> [TOOL_CALLS]'
    write_recording(blessed, new_header("chunks"), [Frame(0, text)], expect={"text": text})
    plain = tmp_path / "plain.msgpack"
    write_recording(plain, new_header("chunks"), [Frame(0, "hi")], expect={"text": "hi"})

    report = run([tmp_path], strategies=QUICK, dialects=["hermes"])
    assert report.exit_code == EXIT_OK
    assert report.not_judged == {(Check.EXPECTED, NOT_RESTATED): 1}
    data = report.to_dict()
    assert data["claim"] == {"dialects": ["hermes"], "empty_tools": "reject"}
    assert data["not_judged"] == [{"check": "expected", "reason": NOT_RESTATED, "recordings": 1}]
    rows = {(o["path"], o["strategy"]): o for o in data["outcomes"]}
    assert rows[(str(blessed), "whole")]["not_judged"] == {"expected": NOT_RESTATED}
    assert rows[(str(blessed), "whole")]["skipped"]["expected"] == NOT_RESTATED

    bare = run([tmp_path], strategies=QUICK, dialects=["bare_json"])
    assert bare.not_judged[(Check.NO_LEAK, NO_MARKER)] == 2


def test_the_command_says_the_claim_once_and_counts_the_unjudged_in_one_line() -> None:
    result = CliRunner().invoke(main, ["replay", "--rechunk", "whole", "--dialect", "bare_json"])
    assert result.exit_code == EXIT_OK, result.output
    assert result.output.count("judged against: bare_json;") == 1
    lines = [line for line in result.output.splitlines() if "not judged" in line]
    unjudged = run(strategies=["whole"], dialects=["bare_json"]).not_judged[
        (Check.NO_LEAK, NO_MARKER)
    ]
    assert len(lines) == 1 and lines[0].startswith(f"{unjudged} recordings: no_leak not judged (")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--dialect", "no_such_dialect"],
            "tcr replay: --dialect: unknown dialect 'no_such_dialect'; known: ",
        ),
        (
            ["--detector", "claimed_detectors:wrong_claim_type"],
            "tcr replay: wrong_claim_type.tcr_claim: dialects must be a list of dialect ids",
        ),
    ],
)
def test_a_bad_claim_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["replay", *args])
    assert result.exit_code == EXIT_ERROR
    assert result.output.startswith(message) and result.output.count("\n") == 1


def test_json_report_keeps_its_fields_and_adds_the_claim() -> None:
    result = CliRunner().invoke(
        main, ["replay", str(BRACKETS[0]), "--rechunk", "whole", "--json", "--dialect", "hermes"]
    )
    data = json.loads(result.output)
    assert {"exit_code", "recordings", "outcomes", "errors", "claim", "not_judged"} <= set(data)
    assert data["claim"]["dialects"] == ["hermes"]


@pytest.mark.process
@pytest.mark.slow
def test_worker_processes_judge_against_the_same_claim() -> None:
    one = run(None, strategies=QUICK, dialects=["hermes"], empty_tools="text")
    two = run(None, strategies=QUICK, dialects=["hermes"], empty_tools="text", jobs=2)
    assert two.exit_code == one.exit_code == EXIT_OK
    assert two.not_judged == one.not_judged == {(Check.NO_LEAK, NO_MARKER): 1}
    assert str(two.claim) == "hermes; tools=[] means text"
