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
