"""``tcr fuzz --check``: the checks run, chosen as ``tcr replay --check`` chooses them.

The cost probe's measurement is replaced (``measure_cost`` answering a fixed ``Cost``),
so that whether it ran is what is tested, not what it measured.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.cost import Cost
from tcr.fuzz import cost as fuzz_cost
from tcr.fuzz import run
from tcr.fuzz import runner as fuzz_runner
from tcr.fuzz.model import Case, Finding
from tcr.oracle import Check, Violation
from tcr.signature import Signature

BROKEN = "tcr.detector.broken:per_chunk_markers"


@pytest.fixture
def probed(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The cost probe's calls (none: it did not run)."""
    calls: list[dict[str, Any]] = []

    def measure(factory: object, **kwargs: Any) -> Cost:
        calls.append(kwargs)
        return Cost()

    monkeypatch.setattr(fuzz_cost, "measure_cost", measure)
    return calls


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("value", ["costs", "no-leak", ""])
def test_a_malformed_check_is_one_error_line_as_replay_s_and_exit_2(value: str) -> None:
    code, out = invoke("fuzz", "--check", value)
    replayed, replay_out = invoke("replay", "--check", value)
    errors = [line for line in out.splitlines() if line.startswith("Error")]
    assert code == replayed == 2
    assert len(errors) == 1 and out.strip().splitlines()[-1] == errors[0]
    assert errors[0].startswith("Error: Invalid value for '--check'")
    assert errors == [line for line in replay_out.splitlines() if line.startswith("Error")]


def test_an_unknown_check_given_to_run_is_replay_s_error() -> None:
    from tcr.errors import TcrError
    from tcr.replay import run as replay

    with pytest.raises(TcrError) as fuzzed:
        run(checks=["invarance"], max_examples=1, corpus=[], save=None)
    with pytest.raises(TcrError) as replayed:
        replay(checks=["invarance"])  # the bundled corpora: none replayed
    assert str(fuzzed.value) == str(replayed.value)
    assert "(did you mean 'invariance'?)" in str(fuzzed.value)


def test_check_without_cost_skips_the_cost_probe(
    probed: list[dict[str, Any]], tmp_path: Path
) -> None:
    args = ["--check", "expected", "--check", "no_leak", "--max-examples", "30"]
    code, out = invoke("fuzz", *args, "--corpus", str(tmp_path))
    assert code == 0, out
    assert probed == [] and "cost:" not in out
    header = out.splitlines()[1]
    assert "at most 30 examples, checks no_leak, expected;" in header  # CHECKS order
    assert "30 examples" in out and out.splitlines()[-1] == "no violation"


def test_check_cost_alone_runs_the_probe_and_no_case(
    probed: list[dict[str, Any]], tmp_path: Path
) -> None:
    code, out = invoke("fuzz", "--check", "cost", "--max-examples", "30", "--corpus", str(tmp_path))
    assert code == 0, out
    assert len(probed) == 1 and "cost: " in out
    assert "0 examples" in out


def test_no_check_given_runs_every_one_as_before(probed: list[dict[str, Any]]) -> None:
    report = run(max_examples=10, corpus=[], save=None)
    assert len(probed) == 1 and report.selected is None and report.examples == 10


def _policy_finding() -> Finding:
    violation = Violation(Check.POLICY, "no choice explains it", 0, 0, "<tool_call>", "unexplained")
    return Finding(
        violation=violation,
        violations=(violation,),
        case=Case((), None, None, "the policy probe"),
        found_after=0,
        seconds_to_find=0.0,
        shrink_seconds=0.0,
        original_length=0,
        original_splits=0,
        signature=Signature("policy", "unexplained", "hermes", "whole"),
        replay_command="tcr replay --check policy",
    )


def test_policy_probes_report_only_when_policy_is_checked(
    probed: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As replay: the probes still read the choices every case is judged with; without
    # policy among the checks, what they found is not reported.
    monkeypatch.setattr(fuzz_runner, "policy_findings", lambda reading, spec: [_policy_finding()])
    every = run(max_examples=5, corpus=[], save=None)
    chosen = run(max_examples=5, corpus=[], save=None, checks=["policy", "expected"])
    without = run(max_examples=5, corpus=[], save=None, checks=["expected"])
    assert [f.check for f in every.findings] == [Check.POLICY] and len(probed) == 1
    assert [f.check for f in chosen.findings] == [Check.POLICY]
    assert without.findings == [] and without.exit_code == 0


def test_the_reproducer_and_the_reports_restate_the_checks(
    probed: list[dict[str, Any]], tmp_path: Path
) -> None:
    junit, sarif = tmp_path / "f.xml", tmp_path / "f.sarif"
    args = ["--detector", BROKEN, "--check", "no_leak", "--check", "invariance", "-x"]
    args += ["--max-examples", "3000", "--corpus", str(tmp_path), "--save", str(tmp_path)]
    code, out = invoke("fuzz", *args, "--junit", str(junit), "--sarif", str(sarif))
    assert code == 1, out
    saved = next(tmp_path.glob("*.msgpack"))
    flat = " ".join(out.split())
    assert f"tcr replay {saved} --rechunk original --detector {BROKEN}" in flat
    assert "--check invariance --check no_leak" in flat  # in CHECKS order, as replay's
    assert probed == []
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["checks"] == "invariance,no_leak"
    log = json.loads(sarif.read_text())["runs"][0]
    assert log["properties"]["checks"] == ["invariance", "no_leak"]
    (result,) = log["results"]
    assert result["properties"]["reproducer"].endswith("--check invariance --check no_leak")

    # the reproducer, run as printed, judges those checks and fails the same way
    line = next(x.strip() for x in out.splitlines() if x.strip().startswith("tcr replay "))
    replayed = CliRunner().invoke(main, line.split()[1:])
    assert replayed.exit_code == 1, replayed.output
