"""``tcr tui``: options parsed, bad input refused with one line and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tui_helpers import DROPS_PENDING, SPLIT_MARKER

from tcr.commands.tui import tui
from tcr.time_limit import DEFAULT_TIMEOUT
from tcr.tui import DebuggerApp


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[DebuggerApp]:
    """The apps the command would have run (not run: there is no terminal here)."""
    apps: list[DebuggerApp] = []
    monkeypatch.setattr(DebuggerApp, "run", lambda self, **_: apps.append(self))
    monkeypatch.setattr("tcr.commands.tui._on_a_terminal", lambda: True)
    return apps


def test_help_ends_with_examples() -> None:
    result = CliRunner().invoke(tui, ["--help"])
    assert result.exit_code == 0
    assert "--rechunk STRATEGY" in result.output and "--at-first-violation" in result.output
    tail = result.output.rstrip().splitlines()
    assert "Examples:" in result.output
    assert tail[-1].strip().startswith("tcr tui ")


def test_the_options_reach_the_app(started: list[DebuggerApp]) -> None:
    args = [str(SPLIT_MARKER), "--rechunk", "splits:1", "--rechunk", "random:3", "--seed", "7"]
    args += ["--detector", DROPS_PENDING, "--tools", "get_weather", "--at-first-violation"]
    result = CliRunner().invoke(tui, args)
    assert result.exit_code == 0, result.output
    (app,) = started
    session = app.session
    assert session.strategies == ("splits:1", "random:3")
    assert session.seed == 7
    assert session.detector.name == DROPS_PENDING
    assert session.source.tools == ("get_weather",)
    assert app._jump_to_violation


def test_the_default_strategies_are_original_then_char(started: list[DebuggerApp]) -> None:
    assert CliRunner().invoke(tui, [str(SPLIT_MARKER)]).exit_code == 0
    assert started[0].session.strategies == ("original", "char")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.msgpack"], "missing.msgpack"),
        ([str(SPLIT_MARKER), "--rechunk", "exhaustive"], "makes many chunkings"),
        ([str(SPLIT_MARKER), "--rechunk", "bytes:3"], "transport bytes"),
        ([str(SPLIT_MARKER), "--rechunk", "splits:999"], "not inside"),
        ([str(SPLIT_MARKER), "--detector", "no.such.module:f"], "cannot import"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(
    started: list[DebuggerApp], args: list[str], message: str
) -> None:
    result = CliRunner().invoke(tui, args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tcr tui: ") and message in lines[0]
    assert not started


def test_a_corrupt_recording_is_bad_input(tmp_path: Path, started: list[DebuggerApp]) -> None:
    path = tmp_path / "junk.msgpack"
    path.write_bytes(b"\xc1 not msgpack")
    result = CliRunner().invoke(tui, [str(path)])
    assert result.exit_code == 2 and "junk.msgpack" in result.output


def _piped(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from tcr.cli import main; main()", "tui", *args]
    return subprocess.run(
        command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )


def test_with_no_terminal_it_refuses_in_one_line_and_exit_code_2() -> None:
    done = _piped(str(SPLIT_MARKER))
    assert done.returncode == 2
    assert done.stdout == ""  # no escape codes
    assert done.stderr == (
        "tcr tui: stdout is not a terminal; tcr show FILE prints the same steps as text\n"
    )


def test_bad_input_is_named_before_the_missing_terminal() -> None:
    done = _piped("missing.msgpack")
    assert done.returncode == 2
    assert "missing.msgpack" in done.stderr and "terminal" not in done.stderr


def test_the_time_limit_reaches_the_session(started: list[DebuggerApp]) -> None:
    assert CliRunner().invoke(tui, [str(SPLIT_MARKER)]).exit_code == 0
    assert started[0].session.timeout == DEFAULT_TIMEOUT
    assert CliRunner().invoke(tui, [str(SPLIT_MARKER), "--timeout", "0.5"]).exit_code == 0
    assert started[1].session.timeout == 0.5
    refused = CliRunner().invoke(tui, [str(SPLIT_MARKER), "--timeout", "-1"])
    assert refused.exit_code == 2 and "--timeout must be a positive number" in refused.output
