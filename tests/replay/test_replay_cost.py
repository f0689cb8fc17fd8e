"""The cost check in tcr replay: one row per run, in every report, selectable with --check.

The wiring is tested with the measurement replaced (``measure_cost`` answering a fixed
``Cost``), so nothing here depends on the clock; the tests marked slow time real
detectors, as ratios, never as absolute times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.cost import EVERY, KIND, Cost, Growth
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION
from tcr.oracle import Check, Violation
from tcr.replay import cost as replay_cost
from tcr.replay import run
from tcr.replay.report import to_sarif

QUADRATIC = "tcr.detector.broken:rejoins_buffer"
GROWTH = Growth(EVERY, 65_536, 262_144, (0.03, 0.4), 3.3)
HERMES = Growth("hermes", 32_768, 131_072, (0.03, 0.45), 3.8)
MESSAGE = (
    "time per character grew 3.8x from 32,768 to 131,072 characters (hermes probe, chunks of 8)"
)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["replay", *args])
    return result.exit_code, result.output


@pytest.fixture
def grows(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``measure_cost`` answering a hermes finding; the calls it got."""
    calls: list[dict[str, Any]] = []

    def measure(factory: object, **kwargs: Any) -> Cost:
        calls.append(kwargs)
        found = Violation(Check.COST, MESSAGE, None, None, "", KIND, "hermes")
        return Cost((found,), (GROWTH, GROWTH, HERMES))

    monkeypatch.setattr(replay_cost, "measure_cost", measure)
    return calls


@pytest.fixture
def linear(monkeypatch: pytest.MonkeyPatch) -> None:
    growth = Growth(EVERY, 262_141, 1_048_575, (0.03, 0.12), 1.0)
    monkeypatch.setattr(replay_cost, "measure_cost", lambda factory, **kw: Cost((), (growth,)))


def test_check_cost_alone_replays_no_recording(linear: None) -> None:
    report = run(checks=["cost"])
    assert report.outcomes == [] and report.recordings == 0
    assert report.cost is not None and report.cost.checks == (Check.COST,)
    assert report.exit_code == EXIT_OK


def test_cost_is_one_row_per_run_after_the_recordings(linear: None, tmp_path: Path) -> None:
    report = run(checks=["cost", "crash"], strategies=["whole"])
    assert report.recordings > 1 and report.rows[-1] is report.cost
    assert [o for o in report.rows if o.path == replay_cost.PROBE] == [report.cost]


def test_cost_finding_names_its_dialect_and_reproducer(grows: list[dict[str, Any]]) -> None:
    report = run(checks=["cost"], detector=QUADRATIC)
    assert report.exit_code == EXIT_VIOLATION
    (group,) = report.findings
    assert str(group.signature) == "cost/superlinear/hermes@fixed:8"
    _, failure = group.first
    assert failure.violation.message == MESSAGE
    assert failure.reproducer == f"tcr replay --check cost --detector {QUADRATIC} --dialect hermes"


def test_in_process_detector_is_timed_on_cpu_time(grows: list[dict[str, Any]]) -> None:
    import time

    run(checks=["cost"], detector=QUADRATIC)
    assert grows[0]["clock"] is time.process_time


def test_cost_is_left_out_when_not_selected(grows: list[dict[str, Any]]) -> None:
    report = run(checks=["crash"], strategies=["whole"])
    assert report.cost is None and grows == []


def test_cost_is_judged_in_the_first_shard_only(grows: list[dict[str, Any]]) -> None:
    assert run(checks=["cost"], shard=(2, 3)).cost is None
    assert run(checks=["cost"], shard=(1, 3)).cost is not None


def test_cost_is_not_judged_on_the_transport_layer(grows: list[dict[str, Any]]) -> None:
    assert run(checks=["cost"], layer="transport").cost is None


def test_command_prints_the_finding_and_its_reproducer(grows: list[dict[str, Any]]) -> None:
    code, out = invoke("--check", "cost", "--detector", QUADRATIC)
    assert code == EXIT_VIOLATION
    flat = " ".join(out.split())
    assert "cost/superlinear/hermes@fixed:8" in flat and " ".join(MESSAGE.split()) in flat
    assert f"tcr replay --check cost --detector {QUADRATIC} --dialect hermes" in flat


def test_json_carries_the_cost_row_and_its_measurements(grows: list[dict[str, Any]]) -> None:
    code, out = invoke("--check", "cost", "--detector", QUADRATIC, "--json")
    data = json.loads(out)
    assert code == EXIT_VIOLATION and data["outcomes"] == []
    assert data["cost"]["failures"][0]["signature"] == "cost/superlinear/hermes@fixed:8"
    assert [m["probe"] for m in data["cost"]["measured"]] == [EVERY, EVERY, "hermes"]
    assert data["cost"]["measured"][2]["growth"] == 3.8
    assert data["findings"][0]["reproducer"].startswith("tcr replay --check cost")


def test_junit_has_a_failing_case_for_the_cost_check(
    grows: list[dict[str, Any]], tmp_path: Path
) -> None:
    junit = tmp_path / "out.xml"
    invoke("--check", "cost", "--detector", QUADRATIC, "--junit", str(junit))
    text = junit.read_text()
    assert 'classname="(cost probe)"' in text and "cost/superlinear/hermes@fixed:8" in text


def test_sarif_result_for_cost_names_no_recording(grows: list[dict[str, Any]]) -> None:
    log = to_sarif(run(checks=["cost"], detector=QUADRATIC), root=Path.cwd())
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "cost" and "locations" not in result
    assert result["properties"]["signature"] == "cost/superlinear/hermes@fixed:8"
    assert "Reproduce with: tcr replay --check cost" in result["message"]["text"]


def test_a_detector_that_raises_on_the_probe_leaves_cost_skipped() -> None:
    report = run(checks=["cost"], detector="crashing_detectors:feed_raises")
    assert report.cost is not None and report.cost.checks == ()
    assert report.cost.skipped[Check.COST].startswith("the detector raised on the probe")
    assert report.exit_code == EXIT_OK


def test_an_unknown_check_is_one_line_and_exit_2() -> None:
    code, out = invoke("--check", "costs")
    assert code == EXIT_ERROR
    assert out.strip().splitlines()[-1].startswith("Error: Invalid value for '--check'")


# --- on the real clock: ratios, not timings -----------------------------------------


@pytest.mark.slow
def test_quadratic_detector_fails_the_cost_check_from_the_command() -> None:
    code, out = invoke("--check", "cost", "--detector", QUADRATIC, "--dialect", "hermes")
    assert code == EXIT_VIOLATION, out
    flat = " ".join(out.split())
    assert "cost/superlinear/hermes@fixed:8" in flat
    assert f"tcr replay --check cost --detector {QUADRATIC} --dialect hermes" in flat


@pytest.mark.slow
def test_reference_passes_the_cost_check_from_the_command() -> None:
    code, out = invoke("--check", "cost")
    assert code == EXIT_OK, out
    assert "0 recordings" in out
