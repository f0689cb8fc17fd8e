"""tcr replay: the library run() and the command, on recordings built here."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.corpus import Frame, new_header, write_recording
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION
from tcr.replay import check_chunks, run

CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
# The marker split the way llama-server's tokenizer splits it.
SPLIT = [
    "Let me check. ",
    "<",
    "t",
    "oo",
    "l",
    "_",
    "c",
    "al",
    "l",
    ">",
    CALL,
    "</tool_call>",
    " Done.",
]


def sse_body(pieces: list[str]) -> list[bytes]:
    frames = [b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}\n\n']
    for piece in pieces:
        payload = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        frames.append(f"data: {json.dumps(payload)}\n\n".encode())
    frames.append(
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    return frames


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    write_recording(
        folder / "split_marker.msgpack",
        new_header("chunks", tools=["get_weather"]),
        [Frame(i * 1_000_000, c) for i, c in enumerate(SPLIT)],
    )
    write_recording(
        folder / "nested" / "sse_call.msgpack",
        new_header("sse", tools=["get_weather"]),
        [Frame(i * 1_000_000, b) for i, b in enumerate(sse_body(SPLIT))],
    )
    write_recording(
        folder / "held_prefix.msgpack",
        new_header("chunks"),
        [Frame(0, "The answer is 42 "), Frame(1, "<tool")],
    )
    return folder


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["replay", *args])
    return result.exit_code, result.output


def test_reference_detector_passes_every_check(corpus: Path) -> None:
    report = run([corpus], runs=30)
    assert report.exit_code == EXIT_OK
    assert report.recordings == 3
    strategies = {o.strategy for o in report.outcomes}
    assert strategies == {"original", "whole", "char", "random:8", "tokens", "warm-cold"}
    assert all(o.runs >= 1 and o.checks for o in report.outcomes)


def test_marker_split_bug_exits_1_names_the_check_and_shrinks_to_two_splits(corpus: Path) -> None:
    code, out = invoke(
        str(corpus / "split_marker.msgpack"), "--detector", "tcr.detector.broken:per_chunk_markers"
    )
    assert code == EXIT_VIOLATION
    assert "no_leak" in out
    report = run(
        [corpus / "split_marker.msgpack"], detector="tcr.detector.broken:per_chunk_markers"
    )
    failures = [f for _, f in report.failures if f.violation.check == "no_leak"]
    assert failures and all(1 <= len(f.splits) <= 2 for f in failures)
    assert all("--rechunk splits:" in f.reproducer for f in failures)


@pytest.mark.process
def test_printed_reproducer_reproduces_the_failure(corpus: Path) -> None:
    report = run(
        [corpus / "split_marker.msgpack"], detector="tcr.detector.broken:per_chunk_markers"
    )
    failure = next(f for _, f in report.failures if f.violation.check == "no_leak")
    argv = shlex.split(failure.reproducer)
    assert argv[:2] == ["tcr", "replay"]
    # The printed line, run as a user would run it (the installed console script).
    tcr = Path(sys.executable).with_name("tcr")
    done = subprocess.run([str(tcr), *argv[1:]], capture_output=True, text=True)
    assert done.returncode == EXIT_VIOLATION, done.stdout + done.stderr
    assert "no_leak" in done.stdout


def test_pytest_snippet_pins_the_failure(corpus: Path) -> None:
    report = run(
        [corpus / "split_marker.msgpack"], detector="tcr.detector.broken:per_chunk_markers"
    )
    failure = next(f for _, f in report.failures if f.violation.check == "no_leak")
    namespace: dict[str, object] = {}
    exec(compile(failure.snippet, "<snippet>", "exec"), namespace)
    test = next(v for k, v in namespace.items() if k.startswith("test_"))
    with pytest.raises(AssertionError):
        test()  # type: ignore[operator]
    assert len("".join(failure.chunks)) < len("".join(SPLIT))  # the text was shortened too


def test_pending_dropped_at_finish_is_shrunk_to_at_most_one_split(corpus: Path) -> None:
    report = run(
        [corpus / "held_prefix.msgpack"], detector="tcr.detector.broken:drops_pending_at_finish"
    )
    assert report.exit_code == EXIT_VIOLATION
    assert {f.violation.check for _, f in report.failures} >= {"conservation"}
    assert all(len(f.splits) <= 1 for _, f in report.failures)


def test_corrupt_file_among_good_ones_is_reported_and_the_rest_replayed(corpus: Path) -> None:
    (corpus / "broken.msgpack").write_bytes(b"\x81\xa3tcr\x01garbage")
    code, out = invoke(str(corpus), "--runs", "3")
    assert code == EXIT_ERROR
    assert "broken.msgpack" in out and "byte" in out
    report = run([corpus], runs=3)
    assert report.recordings == 3
    assert [e.path.endswith("broken.msgpack") for e in report.errors] == [True]
    assert all(o.ok for o in report.outcomes)


def test_factory_that_raises_is_reported_per_recording_and_the_run_goes_on(corpus: Path) -> None:
    report = run([corpus], detector="crashing_detectors:factory_raises", runs=2)
    assert report.exit_code == EXIT_ERROR
    assert len(report.errors) == 3
    message = (
        "detector factory crashing_detectors:factory_raises raised RuntimeError: cannot connect"
    )
    assert all(e.message.startswith(message) for e in report.errors)


def test_detector_that_raises_in_feed_is_reported_with_the_chunk_index(corpus: Path) -> None:
    report = run([corpus], detector="crashing_detectors:feed_raises", runs=2, checks=["crash"])
    crashes = [(o, f) for o, f in report.failures if f.violation.check == "crash"]
    assert crashes, report.to_dict()
    assert report.exit_code == EXIT_ERROR
    assert {Path(o.path).name for o, _ in crashes} == {"split_marker.msgpack", "sse_call.msgpack"}
    assert all(f.violation.chunk is not None for _, f in crashes)
    assert all("KeyError" in f.violation.message for _, f in crashes)
    assert report.recordings == 3  # the run went on past the crash


@pytest.mark.parametrize(
    ("detector", "error"),
    [
        ("crashing_detectors:feed_sys_exits", "SystemExit: a parser calling sys.exit()"),
        ("crashing_detectors:text_not_str", "TypeError: feed() returned Text.text is bytes"),
    ],
)
def test_a_detector_that_exits_or_emits_wrong_types_is_a_crash_finding(
    corpus: Path, detector: str, error: str
) -> None:
    report = run([corpus], detector=detector, runs=2, checks=["crash"])
    crashes = [f.violation for _, f in report.failures if f.violation.check == "crash"]
    assert crashes, report.to_dict()
    assert all(v.chunk is not None and error in v.message for v in crashes)
    assert report.exit_code == EXIT_ERROR
    assert report.recordings == 3  # the run went on past the crash


@pytest.mark.slow
def test_a_detector_over_the_time_limit_is_a_crash_finding_and_the_run_goes_on(
    corpus: Path,
) -> None:
    detector = "crashing_detectors:hangs_on_a_call"
    report = run([corpus], detector=detector, runs=2, checks=["crash"], timeout=0.2, minimize=False)
    crashes = [f.violation for _, f in report.failures if f.violation.check == "crash"]
    assert crashes, report.to_dict()
    assert all(
        "the detector took longer than 0.2 s in feed() of chunk" in v.message for v in crashes
    )
    assert report.exit_code == EXIT_ERROR
    assert report.recordings == 3


@pytest.mark.slow
def test_timeout_on_the_command_line(corpus: Path) -> None:
    args = ["replay", str(corpus), "--runs", "1", "--check", "crash", "--no-minimize"]
    slow = CliRunner().invoke(
        main, [*args, "--detector", "crashing_detectors:hangs_on_a_call", "--timeout", "0.2"]
    )
    assert slow.exit_code == EXIT_ERROR, slow.output
    assert "took longer than 0.2 s" in slow.output
    bad = CliRunner().invoke(main, [*args, "--timeout", "0"])
    assert bad.exit_code == EXIT_ERROR
    assert "--timeout must be a positive number of seconds, not 0" in bad.output


def test_a_flaky_detector_is_reported_flaky_and_not_shrunk(corpus: Path) -> None:
    report = run([corpus], detector="crashing_detectors:flaky", runs=2, checks=["crash"])
    messages = [f.violation.message for _, f in report.failures]
    assert messages, report.to_dict()
    assert any("flaky: the same input did not fail again" in m for m in messages), messages
    assert report.recordings == 3


def test_factory_without_tools_keyword_is_called_bare(corpus: Path) -> None:
    assert (
        run([corpus], detector="crashing_detectors:no_tools_keyword", runs=2).exit_code == EXIT_OK
    )


def test_junit_output_is_one_test_case_per_recording_and_strategy(
    corpus: Path, tmp_path: Path
) -> None:
    junit = tmp_path / "out.xml"
    code, _ = invoke(
        str(corpus),
        "--runs",
        "2",
        "--junit",
        str(junit),
        "--detector",
        "tcr.detector.broken:per_chunk_markers",
    )
    assert code == EXIT_VIOLATION
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    # and the policy probes one more, once per run (tcr.probes)
    assert len(cases) == 3 * 6 + 2 == int(suite.get("tests", "0"))
    # the cost check is one case of its own, judged once per run: it passes
    (probe,) = [c for c in cases if c.get("classname") == "(cost probe)"]
    assert probe.get("name") == "fixed:8" and probe.find("failure") is None
    (policies,) = [c for c in cases if c.get("classname") == "(policy probes)"]
    assert policies.find("failure") is None
    cases = [c for c in cases if c is not probe and c is not policies]
    assert {c.get("name") for c in cases} == {
        "original", "whole", "char", "random:8", "tokens", "warm-cold"
    }  # fmt: skip
    failed = {
        (Path(c.get("classname", "")).name, c.get("name"))
        for c in cases
        if c.find("failure") is not None
    }
    assert len(failed) == int(suite.get("failures", "0"))
    # the chunkings that split the marker fail; whole does not split it, and a warm
    # detector is as wrong as a cold one (warm-cold)
    assert failed == {
        (name, strategy)
        for name in ("split_marker.msgpack", "sse_call.msgpack")
        for strategy in ("original", "char", "random:8")
    }
    assert all(c.get("classname", "").endswith(".msgpack") for c in cases)


def test_json_output_carries_outcomes_and_failures(corpus: Path) -> None:
    code, out = invoke(
        str(corpus / "split_marker.msgpack"),
        "--json",
        "--detector",
        "tcr.detector.broken:per_chunk_markers",
    )
    data = json.loads(out)
    assert code == data["exit_code"] == EXIT_VIOLATION
    failure = next(f for o in data["outcomes"] for f in o["failures"])
    assert {"check", "offset", "splits", "reproducer", "snippet"} <= set(failure)


def test_transport_layer_resplits_raw_bytes_and_decoding_is_unchanged(corpus: Path) -> None:
    report = run(
        [corpus],
        layer="transport",
        strategies=["bytes:1", "bytes-random", "bytes-exhaustive"],
        runs=10,
    )
    assert report.exit_code == EXIT_OK
    sse = [o for o in report.outcomes if o.path.endswith("sse_call.msgpack")]
    assert all(o.checks == ("transport",) and o.runs > 0 for o in sse)
    chunks = [o for o in report.outcomes if o.path.endswith("split_marker.msgpack")]
    assert all("transport" in o.skipped for o in chunks)


@pytest.mark.parametrize(
    "args",
    [
        ["--rechunk", "bogus"],
        ["--detector", "no.such.module:factory"],
        ["--detector", "tcr.detector.core"],
        ["--runs", "0"],
        ["--check", "nope"],
        ["--rechunk", "bytes:4"],
    ],
)
def test_bad_options_exit_2_with_one_line(args: list[str], corpus: Path) -> None:
    code, out = invoke(str(corpus), *args)
    assert code == EXIT_ERROR
    assert "Traceback" not in out


def test_missing_path_exits_2_naming_it(tmp_path: Path) -> None:
    code, out = invoke(str(tmp_path / "nope.msgpack"))
    assert code == EXIT_ERROR and "nope.msgpack" in out


def test_exitfirst_stops_at_the_first_failure(corpus: Path) -> None:
    report = run([corpus], detector="tcr.detector.broken:per_chunk_markers", exitfirst=True)
    assert report.stopped_early
    assert len(report.outcomes) < 15


def test_check_chunks_is_the_regression_helper() -> None:
    assert check_chunks(["a <tool", "_call>{}</tool_call>"]).ok
    verdict = check_chunks(
        ["a <tool", "_call>{}</tool_call>"], detector="tcr.detector.broken:per_chunk_markers"
    )
    assert "no_leak" in {v.check for v in verdict.violations}


def test_every_printed_snippet_fails_as_a_pinned_regression_test() -> None:
    from tcr.corpora import ROOT

    path = ROOT / "regressions" / "preamble_before_call.msgpack"
    report = run([path], detector="tcr.detector.broken:preamble_settles", runs=5)
    snippets = {f.violation.check: f.snippet for _, f in report.failures}
    assert {"no_leak", "expected"} <= set(snippets)
    for check, snippet in snippets.items():
        namespace: dict[str, object] = {}
        exec(compile(snippet, f"<{check}>", "exec"), namespace)
        test = next(v for k, v in namespace.items() if k.startswith("test_"))
        with pytest.raises(AssertionError):
            test()  # type: ignore[operator]


def test_shards_together_replay_every_recording_exactly_once() -> None:
    from tcr.corpora import bundled

    seen: list[str] = []
    for k in (1, 2, 3):
        report = run(None, strategies=["whole"], checks=["conservation"], shard=(k, 3))
        seen += sorted({o.path for o in report.outcomes})
    assert len(seen) == len(set(seen)) == len(bundled())


@pytest.mark.process
def test_jobs_give_the_same_report_in_the_same_order(corpus: Path) -> None:
    one = run([corpus], runs=5, detector="tcr.detector.broken:per_chunk_markers")
    two = run([corpus], runs=5, detector="tcr.detector.broken:per_chunk_markers", jobs=2)
    strip = [{k: v for k, v in o.to_dict().items() if k != "seconds"} for o in one.outcomes]
    assert strip == [{k: v for k, v in o.to_dict().items() if k != "seconds"} for o in two.outcomes]
    assert one.exit_code == two.exit_code == EXIT_VIOLATION


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1-3", "x/y", "2"])
def test_bad_shard_exits_2(spec: str, corpus: Path) -> None:
    code, out = invoke(str(corpus), "--shard", spec)
    assert code == EXIT_ERROR and "--shard" in out


def test_jobs_with_a_local_factory_is_a_clear_error(corpus: Path) -> None:
    from tcr.detector.core import StreamDetector
    from tcr.errors import TcrError

    with pytest.raises(TcrError, match="importable by name"):
        run([corpus], jobs=2, detector=lambda tools=None: StreamDetector(tools=tools))
