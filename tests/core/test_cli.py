"""The tcr command group: what every command shares."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.errors import EXIT_INTERRUPTED

INTERRUPTED = "crashing_detectors:interrupted_in_feed"


@pytest.mark.parametrize(
    "args",
    [["replay", "--detector", INTERRUPTED], ["fuzz", "--detector", INTERRUPTED, "--budget", "5s"]],
)
def test_ctrl_c_is_exit_130_not_the_code_for_a_violation(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == EXIT_INTERRUPTED == 130, result.output
    assert result.output.strip().splitlines()[-1] == "tcr: interrupted"


@pytest.mark.parametrize("command", ["replay", "show"])
def test_a_keyboard_interrupt_a_detector_raises_is_its_crash_not_exit_130(command: str) -> None:
    # issue 36: no Ctrl-C came, so it is the detector's failure: a crash finding, exit 2
    from tcr.corpora import ROOT

    sample = str(ROOT / "recorded" / "tool_call_tag_json.msgpack")
    args = [command, sample, "--detector", "crashing_detectors:raises_keyboard_interrupt"]
    result = CliRunner().invoke(main, [*args, *(["--rechunk", "original"] * (command == "replay"))])
    assert result.exit_code == 2, result.output
    assert "KeyboardInterrupt" in result.output and "interrupted" not in result.output
