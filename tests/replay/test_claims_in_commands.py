"""``--dialect`` and ``--empty-tools`` on show, tui, bless and review: the same claim as replay."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.claims import Claim
from tcr.cli import main
from tcr.corpora import ROOT
from tcr.corpus import read_recording
from tcr.errors import EXIT_ERROR, EXIT_OK, EXIT_VIOLATION
from tcr.replay.bless import bless, changes
from tcr.tui import DebuggerApp

BRACKET = ROOT / "regressions" / "format_mistral.msgpack"
HERMES = Claim(frozenset({"hermes"}))


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_show_judges_against_the_claim_and_says_so() -> None:
    code, output = invoke("show", str(BRACKET), "--detector", "claimed_detectors:hermes_only")
    assert code == EXIT_OK, output
    assert "judged against: hermes" in output
    code, output = invoke("show", str(BRACKET), "--json", "--dialect", "hermes", "--empty-tools",
                          "text")  # fmt: skip
    assert code == EXIT_OK
    detector = json.loads(output)["detector"]
    assert detector["claim"] == {"dialects": ["hermes"], "empty_tools": "text"}
    assert detector["not_judged"] == {}


def test_show_fails_a_detector_that_rewrites_unclaimed_markup() -> None:
    code, output = invoke(
        "show", str(BRACKET), "--json", "--detector", "claimed_detectors:calls_unclaimed"
    )
    assert code == EXIT_VIOLATION
    assert "expected" in {v["check"] for v in json.loads(output)["verdict"]["violations"]}


@pytest.mark.parametrize("command", ["show", "tui", "bless", "review"])
def test_an_unknown_dialect_is_one_line_and_exit_2(command: str) -> None:
    code, output = invoke(command, str(BRACKET), "--dialect", "nope")
    assert code == EXIT_ERROR
    assert output.startswith(f"tcr {command}: --dialect: unknown dialect 'nope'; known: ")
    assert output.count("\n") == 1


def test_tui_steps_the_restricted_reference_against_its_claim(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    apps: list[DebuggerApp] = []
    monkeypatch.setattr(DebuggerApp, "run", lambda self, **_: apps.append(self))
    monkeypatch.setattr("tcr.commands.tui._on_a_terminal", lambda: True)
    code, output = invoke("tui", str(BRACKET), "--dialect", "hermes")
    assert code == EXIT_OK, output
    session = apps[0].session
    assert session.detector.claim == HERMES and session.judge().claim == HERMES
    assert session.analyse(session.run).ok
    reference = session.reference()
    assert reference is not None and "[TOOL_CALLS]" in reference.text


def test_bless_with_a_claim_stores_what_the_restricted_reference_shows(tmp_path: Path) -> None:
    path = tmp_path / BRACKET.name
    shutil.copy(BRACKET, path)
    assert changes([path], dialects=["hermes"])  # the stored one is the full reference's
    (change,) = bless([path], dialects=["hermes"])
    stored = read_recording(path).expect
    assert stored == change.current and stored is not None
    assert stored["calls"] == [] and "[TOOL_CALLS]" in stored["text"]
    assert not changes([path], dialects=["hermes"])
    code, _ = invoke("review", str(path), "--dialect", "hermes")
    assert code == EXIT_OK
