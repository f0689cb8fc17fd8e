"""A mistyped name gets the closest known one: checks, strategies, dialects, detectors, choices."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tcr.claims import Claim
from tcr.cli import main
from tcr.detector.loader import load_factory
from tcr.errors import TcrError, did_you_mean
from tcr.judge import checks_of
from tcr.rechunk import parse_strategy


def test_the_closest_name_or_nothing() -> None:
    assert did_you_mean("no-leak", ["no_leak", "holdback"]) == " (did you mean 'no_leak'?)"
    assert did_you_mean("zzzz", ["no_leak", "holdback"]) == ""


@pytest.mark.parametrize(
    ("call", "hint"),
    [
        (lambda: checks_of(["invarance"]), "did you mean 'invariance'?"),
        (lambda: parse_strategy("randon:4"), "did you mean 'random'?"),
        (lambda: Claim.of(["hermez"]), "did you mean 'hermes'?"),
        (
            lambda: load_factory("tcr.detector.broken:per_chunk_marker"),
            "did you mean 'per_chunk_markers'?",
        ),
    ],
    ids=["check", "strategy", "dialect", "detector"],
)
def test_library_errors_suggest(call: object, hint: str) -> None:
    with pytest.raises(TcrError) as caught:
        call()  # type: ignore[operator]
    assert hint in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_command_line_choice_suggests_and_exits_2() -> None:
    result = CliRunner().invoke(main, ["replay", "--check", "no-leak", "corpora/regressions"])
    assert result.exit_code == 2
    assert "(did you mean 'no_leak'?)" in result.output


MODULE_TYPO = "tcr.detector.brokn:per_chunk_markers"
FACTORY_TYPO = "tcr.detector.broken:per_chunk_marker"


@pytest.mark.parametrize(
    "command",
    [
        ["replay", "corpora/regressions"],
        ["fuzz", "--max-examples", "1"],
        ["show", "corpora/regressions/format_tool_call_tag_json.msgpack"],
        ["matrix", "--row", "hermes"],
        ["bless", "--dry-run", "corpora/regressions/format_tool_call_tag_json.msgpack"],
        ["tui", "corpora/regressions/format_tool_call_tag_json.msgpack"],
    ],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        (MODULE_TYPO, "(did you mean 'tcr.detector.broken:per_chunk_markers'?)"),
        (FACTORY_TYPO, "(did you mean 'per_chunk_markers'?)"),
    ],
    ids=["module", "factory"],
)
def test_a_misspelt_detector_suggests_in_one_line_and_exits_2(
    command: list[str], spec: str, hint: str
) -> None:
    result = CliRunner().invoke(main, [*command, "--detector", spec])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tcr {command[0]}: "), result.output
    assert lines[0].endswith(hint)
