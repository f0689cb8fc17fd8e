"""The pytest plugin: recordings x strategies become test items."""

from __future__ import annotations

import pytest

from tcr.corpora import ROOT

pytest_plugins = ["pytester"]

SPLIT = ROOT / "regressions" / "split_marker_llama_server.msgpack"


def test_each_recording_and_strategy_is_a_passing_item(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--tcr-corpus", str(SPLIT), "--tcr-rechunk", "original", "--tcr-rechunk", "char", "-v"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*tcr*split_marker_llama_server.msgpack-original*PASSED*"])


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
