"""Reports for CI: SARIF from tcr replay and tcr show, JUnit XML from tcr show, and the
shared SARIF builder (tcr.sarif). tcr fuzz's SARIF is tested in tests/fuzz."""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from click.testing import CliRunner
from click.testing import Result as Invocation
from sarif_checks import check_sarif, load_sarif, location_uri

from tcr.cli import main
from tcr.corpus import Frame, new_header, write_recording
from tcr.oracle import CHECKS, Check, Violation
from tcr.replay import run
from tcr.replay.model import Failure, Outcome, Report
from tcr.replay.report import sarif_results, to_sarif
from tcr.sarif import RULES, Result, artifact_location
from tcr.sarif import to_sarif as to_sarif_log
from tcr.signature import TIMEOUT, Signature

BROKEN = "tcr.detector.broken:per_chunk_markers"
CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
SPLIT = ["Let me check. ", "<", "tool", "_c", "all>", CALL, "</tool_call>", " Done."]


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two recordings under the working directory, so reports name them relatively."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "corpus"
    write_recording(
        folder / "split marker.msgpack",  # a space: URIs must encode it
        new_header("chunks", id="split-marker", tools=["get_weather"]),
        [Frame(i * 1_000_000, c) for i, c in enumerate(SPLIT)],
    )
    write_recording(
        folder / "plain.msgpack",
        new_header("chunks", id="plain"),
        [Frame(0, "The answer "), Frame(1, "is 42.")],
    )
    return folder


def tcr(*args: str) -> Invocation:
    return CliRunner().invoke(main, list(args))


# --- the builder -------------------------------------------------------------------


def test_every_check_is_a_rule_in_the_order_tcr_checks_them() -> None:
    assert [rule.id for rule in RULES] == [*CHECKS, "input"]
    assert all(rule.name and rule.short and rule.meaning and rule.action for rule in RULES)


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("corpus/a b.msgpack", {"uri": "corpus/a%20b.msgpack", "uriBaseId": "%SRCROOT%"}),
        ("/work/corpus/x.msgpack", {"uri": "corpus/x.msgpack", "uriBaseId": "%SRCROOT%"}),
        ("./corpus/../x.msgpack", {"uri": "x.msgpack", "uriBaseId": "%SRCROOT%"}),
        ("../elsewhere/x.msgpack", {"uri": "file:///elsewhere/x.msgpack"}),
        ("/tmp/found/x y.msgpack", {"uri": "file:///tmp/found/x%20y.msgpack"}),
    ],
)
def test_a_path_is_relative_to_the_working_directory_when_inside_it(
    path: str, location: dict[str, str]
) -> None:
    assert artifact_location(path, PurePosixPath("/work")) == location


@pytest.mark.parametrize(
    "damage",
    [
        lambda result: result.update(level="fatal"),
        lambda result: result.update(ruleID=result.pop("ruleId")),
        lambda result: result["message"].pop("text"),
        lambda result: result["locations"][0]["physicalLocation"].update(region={}),
    ],
    ids=["bad level", "misspelt property", "message without text", "empty region"],
)
def test_the_schema_rejects_what_sarif_forbids(damage: Callable[[dict[str, Any]], object]) -> None:
    result = Result("no_leak", "leaked", "a.msgpack", ("x",), chunk=1, offset=2)
    log = to_sarif_log([result], root=PurePosixPath("/work"))
    check_sarif(log)
    damage(log["runs"][0]["results"][0])
    with pytest.raises(AssertionError):
        check_sarif(log)


# --- tcr replay --------------------------------------------------------------------


def test_replay_sarif_has_one_result_per_failure_naming_the_check_and_the_file(
    corpus: Path,
) -> None:
    done = tcr(
        "replay", "corpus", "--runs", "2", "--detector", BROKEN, "--json", "--sarif", "out.sarif"
    )

    assert done.exit_code == 1, done.output
    failures = [(o, f) for o in json.loads(done.stdout)["outcomes"] for f in o["failures"]]
    results = load_sarif(corpus.parent / "out.sarif")["results"]
    assert [(o["strategy"], f["check"]) for o, f in failures] == [
        (strategy, check)
        for strategy in ("original", "char", "random:8")  # the chunkings that split the marker
        for check in ("invariance", "no_leak")
    ]
    assert len(results) == len(failures)
    for result, (outcome, failure) in zip(results, failures, strict=True):
        assert result["ruleId"] == failure["check"]
        assert location_uri(result) == "corpus/split%20marker.msgpack"
        text = result["message"]["text"]
        assert text.startswith(f"{failure['check']} fails on corpus/split marker.msgpack under ")
        assert text.endswith(f"reproduce with: {failure['reproducer']}")
        assert "--rechunk splits:" in text
        assert result["properties"]["strategy"] == outcome["strategy"]
        logical = result["locations"][0]["logicalLocations"][0]
        assert logical["name"] == f"chunk {failure['chunk']}"
    fingerprints = [json.dumps(r["partialFingerprints"]) for r in results]
    assert len(set(fingerprints)) == len(fingerprints)


def test_passing_replay_writes_a_valid_sarif_with_no_results(corpus: Path) -> None:
    done = tcr("replay", "corpus", "--runs", "2", "--sarif", "reports/replay.sarif")

    assert done.exit_code == 0, done.output
    sarif_run = load_sarif(corpus.parent / "reports" / "replay.sarif")
    assert sarif_run["results"] == []
    assert sarif_run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]
    assert {r["id"] for r in sarif_run["tool"]["driver"]["rules"]} == {*CHECKS, "input"}


def test_fingerprints_are_the_same_run_after_run(corpus: Path) -> None:
    def fingerprints() -> list[dict[str, str]]:
        report = run([corpus], runs=2, seed=3, detector=BROKEN)
        return [r["partialFingerprints"] for r in check_sarif(to_sarif(report))["results"]]

    assert fingerprints() == fingerprints()


def test_corrupt_recording_is_an_input_result_with_its_path(corpus: Path) -> None:
    (corpus / "broken.msgpack").write_bytes(b"\x81\xa3tcr\x01garbage")

    report = run([corpus], runs=2)
    sarif_run = check_sarif(to_sarif(report))
    (result,) = sarif_run["results"]

    assert report.exit_code == 2
    assert sarif_run["invocations"] == [{"executionSuccessful": False, "exitCode": 2}]
    assert result["ruleId"] == "input"
    assert location_uri(result) == "corpus/broken.msgpack"
    assert "corpus/broken.msgpack" in result["message"]["text"]


def test_detector_crash_is_a_crash_result_at_its_chunk(corpus: Path) -> None:
    report = run([corpus], runs=2, detector="crashing_detectors:feed_raises", checks=["crash"])
    results = check_sarif(to_sarif(report))["results"]

    assert results and {r["ruleId"] for r in results} == {"crash"}
    assert all("KeyError" in r["message"]["text"] for r in results)
    assert all(r["properties"]["chunk"] is not None for r in results)
    assert check_sarif(to_sarif(report))["invocations"][0]["exitCode"] == 2


# --- tcr show ----------------------------------------------------------------------


def test_show_junit_has_a_test_case_per_check(corpus: Path) -> None:
    done = tcr(
        "show", "corpus/split marker.msgpack", "--rechunk", "char", "--detector", BROKEN,
        "--junit", "show.xml",
    )  # fmt: skip

    assert done.exit_code == 1, done.output
    suite = ET.parse(corpus.parent / "show.xml").getroot().find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert set(cases) <= set(CHECKS) and "no_leak" in cases
    assert int(suite.get("tests", "0")) == len(cases)
    failed = {name for name, case in cases.items() if case.find("failure") is not None}
    assert "no_leak" in failed and len(failed) == int(suite.get("failures", "0"))
    assert cases["expected"].find("skipped") is not None  # no expectation in the recording
    assert {case.get("classname") for case in cases.values()} == {"corpus/split marker.msgpack"}


def _sarif_message(
    original_splits: int,
    splits: tuple[int, ...],
    check: Check = Check.CONSERVATION,
    kind: str = "lost",
) -> str:
    signature = Signature(check, kind, "hermes", "split-in-opener")
    failure = Failure(
        Violation(check, "went wrong", 1, 4, "ab|c", kind, "hermes"),
        "char", splits, original_splits, (), "tcr replay x.msgpack", "", signature,
    )  # fmt: skip
    report = Report([Outcome("x.msgpack", "x", "char", failures=[failure])])
    (result,) = sarif_results(report)
    return result.message


@pytest.mark.parametrize(
    ("original", "splits", "worded"),
    [
        (5, (3,), "Shrunk from 5 to 1 split point;"),
        (2, (3, 7), "Shrunk keeping its 2 split points;"),
        (1, (3, 7), "Shrunk to 2 split points (the case as found had 1);"),
    ],
    ids=["one", "kept", "grew"],
)
def test_replay_sarif_words_a_shrink_as_the_text_report_does(
    original: int, splits: tuple[int, ...], worded: str
) -> None:
    assert worded in _sarif_message(original, splits)


def test_replay_sarif_says_a_timeout_was_not_shrunk() -> None:
    message = _sarif_message(4, (1, 2, 3, 4), Check.CRASH, TIMEOUT)
    assert "Not shrunk (each try could take the whole time limit); reproduce with:" in message
    assert "Shrunk" not in message


def test_show_sarif_has_a_result_per_violation_with_the_show_command(corpus: Path) -> None:
    path = "corpus/split marker.msgpack"
    done = tcr("show", path, "--rechunk", "char", "--detector", BROKEN, "--sarif", "show.sarif")

    results = load_sarif(corpus.parent / "show.sarif")["results"]
    assert done.exit_code == 1
    assert "no_leak" in {r["ruleId"] for r in results}
    for result in results:
        assert location_uri(result) == "corpus/split%20marker.msgpack"
        assert result["message"]["text"].endswith(
            f"Reproduce with: tcr show '{path}' --rechunk char --detector {BROKEN}"
        )


def test_show_of_a_clean_recording_writes_passing_reports(corpus: Path) -> None:
    done = tcr("show", "corpus/plain.msgpack", "--junit", "show.xml", "--sarif", "show.sarif")

    assert done.exit_code == 0, done.output
    assert load_sarif(corpus.parent / "show.sarif")["results"] == []
    suite = ET.parse(corpus.parent / "show.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and suite.get("errors") == "0"


def test_show_body_that_does_not_decode_is_an_input_result_and_an_errored_case(
    corpus: Path,
) -> None:
    write_recording(corpus / "bad.msgpack", new_header("sse"), [(0, b"data: nope\n\n")])

    done = tcr("show", "corpus/bad.msgpack", "--junit", "bad.xml", "--sarif", "bad.sarif")

    assert done.exit_code == 2
    (result,) = load_sarif(corpus.parent / "bad.sarif")["results"]
    assert result["ruleId"] == "input" and location_uri(result) == "corpus/bad.msgpack"
    suite = ET.parse(corpus.parent / "bad.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1"


# --- a report that cannot be written ----------------------------------------------


@pytest.mark.parametrize("option", ["--sarif", "--junit"])
@pytest.mark.parametrize(
    "command", [["replay", "corpus", "--runs", "1"], ["show", "corpus/plain.msgpack"]]
)
def test_report_path_that_cannot_be_written_is_exit_2_with_one_line_after_the_report(
    corpus: Path, command: list[str], option: str
) -> None:
    (corpus.parent / "a-file").write_text("")

    done = tcr(*command, option, "a-file/out")

    assert done.exit_code == 2
    assert done.stdout.strip()  # the report is still printed
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"tcr {command[0]}: cannot write ") and "a-file/out" in line


def test_report_path_that_is_a_directory_is_exit_2_and_the_other_report_is_written(
    corpus: Path,
) -> None:
    done = tcr("replay", "corpus", "--runs", "1", "--junit", "corpus", "--sarif", "ok.sarif")

    assert done.exit_code == 2
    assert done.stderr.startswith("tcr replay: cannot write JUnit XML to corpus: ")
    assert done.stderr.count("\n") == 1
    assert load_sarif(corpus.parent / "ok.sarif")["results"] == []


# --- a file name that is no UTF-8 (issue 36, item 3) --------------------------------

BAD_NAME = os.fsdecode(b"bad\xff.msgpack")  # U+DCFF: the byte surrogateescape kept


@pytest.fixture
def bad_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One failing recording whose file name holds a byte that is no UTF-8."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "corpus"
    write_recording(
        folder / BAD_NAME,
        new_header("chunks", id="bad-name", tools=["get_weather"]),
        [Frame(i * 1_000_000, c) for i, c in enumerate(SPLIT)],
    )
    return folder


def test_a_name_that_is_no_utf8_is_written_in_its_safe_form_in_every_report(
    bad_name: Path, tmp_path: Path
) -> None:
    options = ("--rechunk", "original", "--detector", BROKEN, "--check", "invariance")
    result = tcr("replay", str(bad_name), *options, "--sarif", "out.sarif", "--junit", "out.xml")
    assert result.exit_code == 1, result.output
    shown = result.stdout_bytes.decode("utf-8")  # strict: no lone surrogate reached stdout
    assert "bad\\xff.msgpack" in shown
    run_ = load_sarif(tmp_path / "out.sarif")
    assert {location_uri(r) for r in run_["results"]} == {"corpus/bad%FF.msgpack"}
    assert "bad\\xff.msgpack" in run_["results"][0]["message"]["text"]
    suite = ET.parse(tmp_path / "out.xml").getroot()  # valid XML: no &#56575;
    assert "corpus/bad\\xff.msgpack" in {case.get("classname") for case in suite.iter("testcase")}
    as_json = tcr("replay", str(bad_name), *options, "--json")
    data = json.loads(as_json.stdout_bytes.decode("utf-8"))
    assert data["outcomes"][0]["path"] == "corpus/bad\\xff.msgpack"


def test_a_reproducer_names_a_file_that_is_no_utf8_as_bash_reads_it_back(
    bad_name: Path, tmp_path: Path
) -> None:
    report = run([bad_name], strategies=["original"], detector=BROKEN)
    reproducer = report.failures[0][1].reproducer
    assert "$'corpus/bad\\xff.msgpack'" in reproducer
    reproducer.encode("utf-8")
    argv = subprocess.run(
        ["bash", "-c", f"printf '%s\\0' {reproducer}"], capture_output=True, check=True
    ).stdout.split(b"\0")
    assert argv[2] == b"corpus/bad\xff.msgpack"
