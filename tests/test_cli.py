"""The tcr command group: what every command shares."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import tcr.fuzz
import tcr.replay
from tcr.cli import EXIT_INTERRUPTED, main


def _interrupted(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("module", "args"), [(tcr.replay, ["replay"]), (tcr.fuzz, ["fuzz", "--budget", "1s"])]
)
def test_ctrl_c_is_exit_130_not_the_code_for_a_violation(
    module: object, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "run", _interrupted)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == EXIT_INTERRUPTED == 130
    assert result.output.strip().splitlines()[-1] == "tcr: interrupted"
