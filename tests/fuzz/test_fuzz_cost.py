"""The cost check in tcr fuzz: once per run, before the search, inside the budget, of
which it gets a share (``tcr.fuzz.cost.SHARE``) and says when it was cut short.

The measurement is replaced (``measure_cost`` answering a fixed ``Cost``) except in
the test marked slow, which times a quadratic detector (a ratio, not a timing).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.cost import EVERY, KIND, Cost, Growth
from tcr.fuzz import cost as fuzz_cost
from tcr.fuzz import run
from tcr.fuzz.report import to_sarif, write_junit
from tcr.oracle import Check, Violation

QUADRATIC = "tcr.detector.broken:rejoins_buffer"
MESSAGE = (
    "time per character grew 3.8x from 32,768 to 131,072 characters (hermes probe, chunks of 8)"
)


def _cost(*dialects: str) -> Cost:
    found = tuple(Violation(Check.COST, MESSAGE, None, None, "", KIND, d) for d in dialects)
    return Cost(found, (Growth(EVERY, 65_536, 262_144, (0.03, 0.4), 3.3),))


@pytest.fixture
def grows(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def measure(factory: object, **kwargs: Any) -> Cost:
        calls.append({**kwargs, "called": time.perf_counter()})
        return _cost("hermes")

    monkeypatch.setattr(fuzz_cost, "measure_cost", measure)
    return calls


def test_cost_finding_is_seen_once_with_its_reproducer_and_not_saved(
    grows: list[dict[str, Any]], tmp_path: Path
) -> None:
    report = run(detector=QUADRATIC, max_examples=20, corpus=[], save=tmp_path)
    (finding,) = [f for f in report.findings if f.check is Check.COST]
    assert str(finding.signature) == "cost/superlinear/hermes@fixed:8"
    assert finding.count == 1 and finding.saved is None
    assert (
        finding.replay_command == f"tcr replay --check cost --detector {QUADRATIC} --dialect hermes"
    )
    assert not list(tmp_path.glob("cost-*"))
    assert report.exit_code == 1 and len(grows) == 1


def test_cost_finding_comes_first_and_the_search_goes_on(grows: list[dict[str, Any]]) -> None:
    report = run(max_examples=50, corpus=[], save=None)
    assert report.findings[0].check is Check.COST and report.examples == 50


def test_exitfirst_stops_at_a_cost_finding_before_searching(grows: list[dict[str, Any]]) -> None:
    report = run(max_examples=50, corpus=[], save=None, exitfirst=True)
    assert [f.check for f in report.findings] == [Check.COST]
    assert report.examples == 0 and report.stopped == "failure"


def test_reference_reproducer_names_no_detector(grows: list[dict[str, Any]]) -> None:
    report = run(max_examples=1, corpus=[], save=None, dialects=["hermes", "think"])
    assert report.findings[0].replay_command == "tcr replay --check cost --dialect hermes"
    assert grows[0]["clock"] is time.process_time


def test_cost_is_judged_in_the_first_shard_only(grows: list[dict[str, Any]]) -> None:
    assert run(max_examples=4, corpus=[], save=None, shard=(2, 2)).cost is None
    assert run(max_examples=4, corpus=[], save=None, shard=(1, 2)).cost is not None


def test_the_budget_counts_the_cost_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(factory: object, **kwargs: Any) -> Cost:
        time.sleep(0.3)
        return _cost()

    monkeypatch.setattr(fuzz_cost, "measure_cost", slow)
    report = run(budget_s=0.2, corpus=[], save=None)
    assert report.examples == 0 and report.stopped == "budget"


def test_command_prints_the_cost_finding_and_its_reproducer(
    grows: list[dict[str, Any]], tmp_path: Path
) -> None:
    args = ["--detector", QUADRATIC, "--max-examples", "20", "--corpus", str(tmp_path), "-x"]
    result = CliRunner().invoke(main, ["fuzz", *args])
    flat = " ".join(result.output.split())
    assert result.exit_code == 1, result.output
    assert "cost/superlinear/hermes@fixed:8: the probe message, once per run" in flat
    assert f"tcr replay --check cost --detector {QUADRATIC} --dialect hermes" in flat


def test_sarif_names_the_reproducer_of_a_cost_finding(grows: list[dict[str, Any]]) -> None:
    report = run(max_examples=1, corpus=[], save=None, exitfirst=True)
    (result,) = to_sarif(report, root=Path.cwd())["runs"][0]["results"]
    assert result["ruleId"] == "cost" and "locations" not in result
    assert result["properties"]["reproducer"].startswith("tcr replay --check cost")


def test_the_probe_gets_a_quarter_of_the_budget_on_the_wall_clock(
    grows: list[dict[str, Any]],
) -> None:
    before = time.perf_counter()
    run(budget_s=2.0, max_examples=5, corpus=[], save=None)
    (call,) = grows
    assert fuzz_cost.SHARE == 0.25 and call["wall"] is time.perf_counter
    assert before + 0.5 <= call["deadline"] <= call["called"] + 0.5


def test_with_no_budget_the_probe_runs_to_its_end(grows: list[dict[str, Any]]) -> None:
    run(max_examples=5, corpus=[], save=None)
    assert grows[0]["deadline"] is None


CUT = Cost((), (), "cost probe cut short at 4,096 characters", cut=4096)


@pytest.fixture
def cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz_cost, "measure_cost", lambda factory, **kwargs: CUT)


@pytest.mark.usefixtures("cut_short")
def test_a_probe_cut_short_says_so_in_the_report(tmp_path: Path) -> None:
    args = ["--budget", "0.4s", "--corpus", str(tmp_path), "--junit", str(tmp_path / "f.xml")]
    result = CliRunner().invoke(main, ["fuzz", *args, "--sarif", str(tmp_path / "f.sarif")])
    assert result.exit_code == 0, result.output
    assert (
        "cost: cost probe cut short at 4,096 characters (its share of the budget, 0.1 s, was spent)"
    ) in result.output
    junit = (tmp_path / "f.xml").read_text()
    assert '<skipped message="cost probe cut short at 4,096 characters"' in junit
    assert 'name="cost_probe" value="cost probe cut short at 4,096 characters"' in junit
    log = json.loads((tmp_path / "f.sarif").read_text())["runs"][0]
    assert log["properties"]["costProbe"] == "cost probe cut short at 4,096 characters"
    notes = [n["message"]["text"] for n in log["invocations"][0]["toolExecutionNotifications"]]
    assert any(n.startswith("cost probe cut short at 4,096 characters") for n in notes)


def test_a_finding_measured_before_the_cut_stands_and_the_cut_is_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    found = replace(_cost("hermes"), cut=8190)
    monkeypatch.setattr(fuzz_cost, "measure_cost", lambda factory, **kwargs: found)
    report = run(budget_s=0.4, corpus=[], save=None, exitfirst=True)
    assert [str(f.signature) for f in report.findings] == ["cost/superlinear/hermes@fixed:8"]
    assert report.cost is not None
    assert report.cost.summary().endswith("; cost probe cut short at 8,190 characters")
    write_junit(report, tmp_path / "f.xml")
    assert "cost probe cut short at 8,190 characters" in (tmp_path / "f.xml").read_text()


@pytest.mark.slow
def test_quadratic_detector_is_a_cost_finding_of_a_fuzz_run() -> None:
    report = run(
        detector=QUADRATIC,
        dialects=["hermes"],
        max_examples=1,
        corpus=[],
        save=None,
        exitfirst=True,
    )
    (finding,) = report.findings
    assert str(finding.signature) == "cost/superlinear/hermes@fixed:8"
