"""The pytest plugin: recordings x strategies become test items."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcr.corpora import ROOT

pytest_plugins = ["pytester"]

SPLIT = ROOT / "regressions" / "split_marker_llama_server.msgpack"


def test_each_recording_and_strategy_is_a_passing_item(pytester: pytest.Pytester) -> None:
    # Ids as the replay report shows recordings (a bundled one under its corpus folder),
    # relative to the root directory (here the working directory, as in a project's root).
    result = pytester.runpytest_subprocess(
        "--tcr-corpus", str(SPLIT), "--tcr-rechunk", "original", "--tcr-rechunk", "char", "-v",
        "--rootdir", str(pytester.path),
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "regressions/split_marker_llama_server[[]original[]] PASSED*",
            "regressions/split_marker_llama_server[[]char[]] PASSED*",
        ]
    )


def test_a_recording_of_the_project_is_named_by_its_path_without_suffix(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "corpus").mkdir()
    (pytester.path / "corpus" / "mine.msgpack").write_bytes(SPLIT.read_bytes())
    result = pytester.runpytest_subprocess("--tcr-corpus", "corpus", "--tcr-rechunk", "whole", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["corpus/mine[[]whole[]] PASSED*"])


def test_a_corpus_with_no_recording_is_a_usage_error_not_zero_items(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "empty").mkdir()
    result = pytester.runpytest_subprocess("--tcr-corpus", "empty")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*empty: no recording (*.msgpack) found there*"])


def test_a_broken_detector_fails_with_the_reproducer(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--tcr-corpus", str(SPLIT), "--tcr-rechunk", "original",
        "--tcr-detector", "tcr.detector.broken:per_chunk_markers",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no_leak*", "*reproduce: tcr replay*--rechunk splits:*"])


def test_the_fixture_replays_with_the_chosen_detector(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        def test_replay(tcr_replay):
            report = tcr_replay([{str(SPLIT)!r}], strategies=["original"])
            assert report.exit_code == 1
        """
    )
    result = pytester.runpytest_subprocess(
        "--tcr-detector", "tcr.detector.broken:per_chunk_markers"
    )
    result.assert_outcomes(passed=1)


def test_without_a_corpus_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one():\n    pass\n")
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


BRACKET = ROOT / "regressions" / "format_mistral.msgpack"


def test_the_claim_option_judges_against_the_claim(pytester: pytest.Pytester) -> None:
    # A factory that cannot be restricted: it parses the Mistral call hermes does not claim.
    pytester.makepyfile(
        full="from tcr.detector.core import StreamDetector\n\n"
        "def detector(tools=None):\n    return StreamDetector(tools)\n"
    )
    args = [
        "--tcr-corpus",
        str(BRACKET),
        "--tcr-rechunk",
        "whole",
        "--tcr-detector",
        "full:detector",
    ]
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
    result = pytester.runpytest_subprocess(*args, "--tcr-dialect", "hermes")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected*", "*reproduce: tcr replay*--dialect hermes*"])


def test_the_ini_states_the_claim_and_the_reference_restricts_itself(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\ntcr_dialects = hermes\ntcr_empty_tools = text\n")
    pytester.makepyfile(
        f"""
        def test_replay(tcr_replay):
            report = tcr_replay([{str(BRACKET)!r}], strategies=["whole"])
            assert str(report.claim) == "hermes; tools=[] means text"
            assert report.exit_code == 0
        """
    )
    # One argument, so that pytest does not take the path for a rootdir (and miss the ini).
    result = pytester.runpytest_subprocess(f"--tcr-corpus={BRACKET}", "--tcr-rechunk", "char")
    result.assert_outcomes(passed=2)


HANGS = "crashing_detectors:hangs_on_a_call"  # tests/crashing_detectors.py
TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_detector_over_the_time_limit_fails_its_item_naming_the_timeout(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(TESTS))  # the subprocess imports crashing_detectors
    result = pytester.runpytest_subprocess(
        "--tcr-corpus", str(SPLIT), "--tcr-rechunk", "original", "--tcr-detector", HANGS,
        "--tcr-timeout", "0.1", timeout=60,
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*crash*the detector took longer than 0.1 s in feed() of chunk*"])


@pytest.mark.slow
def test_the_ini_sets_the_time_limit_of_the_items_and_the_fixture(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    pytester.makeini("[pytest]\ntcr_timeout = 0.2\n")
    pytester.makepyfile(
        f"""
        def test_replay(tcr_replay):
            report = tcr_replay([{str(SPLIT)!r}], strategies=["original"], checks=["crash"])
            (violation,) = {{f.violation.message for _, f in report.failures}}
            assert "took longer than 0.2 s" in violation
        """
    )
    result = pytester.runpytest_subprocess(
        f"--tcr-corpus={SPLIT}", "--tcr-rechunk", "original", "--tcr-detector", HANGS, timeout=60
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*the detector took longer than 0.2 s*"])


def test_the_time_limit_is_the_command_line_s_default_unless_set(
    pytester: pytest.Pytester,
) -> None:
    from tcr.replay.pytest_plugin import timeout_of
    from tcr.time_limit import DEFAULT_TIMEOUT

    assert timeout_of(pytester.parseconfig()) == DEFAULT_TIMEOUT
    assert timeout_of(pytester.parseconfig("--tcr-timeout", "2.5")) == 2.5
    pytester.makeini("[pytest]\ntcr_timeout = 3\n")
    assert timeout_of(pytester.parseconfig()) == 3.0
