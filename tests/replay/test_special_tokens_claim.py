"""The claim that special tokens reach a detector whole travels as ``--dialect`` does: the
``tcr_claim`` attribute, ``--special-tokens`` on every judging command, the pytest
plugin's option and ini, and the stdio protocol (issue 13, "Chunking as engines really
chunk")."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcr.claims import EVERYTHING, SPECIAL_TOKENS, Claim
from tcr.cli import main
from tcr.corpora import ROOT
from tcr.detector.core import StreamDetector
from tcr.detector.loader import resolve_detector
from tcr.errors import EXIT_ERROR, EXIT_OK, TcrError
from tcr.rechunk import DEFAULT_STRATEGIES
from tcr.stdio import command_factory
from tcr.stdio.server import serve

pytest_plugins = ["pytester"]

HERMES = ROOT / "regressions" / "format_tool_call_tag_json.msgpack"
TESTS = Path(__file__).resolve().parents[1]
PER_CHUNK = "tcr.detector.broken:per_chunk_markers"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_the_claim_reads_special_tokens_from_a_mapping_and_states_it_again() -> None:
    claim = Claim.of({"dialects": ["hermes"], "special_tokens": "whole"})
    assert claim.tokens_whole
    assert claim.options() == ["--dialect", "hermes", "--special-tokens", "whole"]
    assert Claim.of(claim.to_map()) == claim
    assert str(claim) == "hermes; special tokens whole"
    assert (
        "special_tokens" not in EVERYTHING.to_map()
    )  # a harness that predates it sees it as before
    assert SPECIAL_TOKENS == ("split", "whole")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"special_tokens": "sometimes"}, "special_tokens is 'sometimes'; known: split, whole"),
        ({"special_tokens": True}, "special_tokens is a bool, not one of split, whole"),
    ],
)
def test_a_bad_special_tokens_part_is_one_line(value: dict[str, object], message: str) -> None:
    with pytest.raises(TcrError, match=message):
        Claim.of(value)


def test_the_command_line_puts_special_tokens_over_the_declared_claim() -> None:
    spec = resolve_detector(None, special_tokens="whole")
    assert spec.claim == Claim(special_tokens="whole")
    assert spec.options() == ["--special-tokens", "whole"]
    assert resolve_detector(spec, special_tokens="split").claim == EVERYTHING


def test_the_claims_special_markers_are_its_dialects_special_tokens() -> None:
    assert Claim(frozenset({"hermes"})).special_markers == ("</tool_call>", "<tool_call>")
    assert "[TOOL_CALLS]" in EVERYTHING.special_markers


@pytest.mark.parametrize("command", ["replay", "fuzz", "show", "tui", "bless", "review", "matrix"])
def test_every_judging_command_takes_special_tokens(command: str) -> None:
    code, output = invoke(command, "--help")
    assert code == EXIT_OK
    assert "--special-tokens" in output


@pytest.mark.parametrize("command", ["replay", "show", "bless", "review"])
def test_a_bad_special_tokens_value_is_a_usage_error(command: str) -> None:
    code, output = invoke(command, str(HERMES), "--special-tokens", "maybe")
    assert code == EXIT_ERROR
    assert "'maybe' is not one of 'split', 'whole'" in output


def test_replay_help_lists_the_default_strategies() -> None:
    _, output = invoke("replay", "--help")
    assert "(default: " + ", ".join(DEFAULT_STRATEGIES) + ")" in " ".join(output.split())


def test_show_keeps_special_tokens_whole_under_char_for_such_a_claim() -> None:
    code, output = invoke("show", str(HERMES), "--json", "--rechunk", "char",
                          "--detector", PER_CHUNK, "--special-tokens", "whole")  # fmt: skip
    assert code == EXIT_OK, output
    data = json.loads(output)
    chunks = [row["text"] for row in data["content"]["chunks"]]
    assert "<tool_call>" in chunks and "</tool_call>" in chunks
    assert data["detector"]["claim"]["special_tokens"] == "whole"


def answers(factory: object, *requests: dict[str, object]) -> list[dict[str, object]]:
    stdin = io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    stdout = io.BytesIO()
    serve(factory, stdin, stdout)  # type: ignore[arg-type]
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def whole_reference(
    tools: list[str] | None = None, special_tokens: str = "split"
) -> StreamDetector:
    detector = StreamDetector(tools)
    detector.tcr_claim = Claim(special_tokens=special_tokens)
    return detector


def test_new_passes_the_asked_special_tokens_to_a_factory_that_takes_them() -> None:
    got = answers(whole_reference, {"op": "new", "tools": None, "special_tokens": "whole"})
    assert got == [
        {
            "ok": True,
            "claim": {"dialects": None, "empty_tools": "reject", "special_tokens": "whole"},
        }
    ]


def test_a_harness_claiming_whole_special_tokens_is_judged_so() -> None:
    code = f"import sys; sys.path.insert(0, {str(TESTS)!r}); from tcr.stdio import main; "
    code += "sys.exit(main(['parsers.token_ids:factory']))"
    with command_factory(shlex.join([sys.executable, "-c", code])) as factory:
        claim = resolve_detector(factory).claim
    assert claim.tokens_whole


@pytest.mark.slow  # pytest run again inside
def test_the_pytest_plugin_takes_special_tokens(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntcr_special_tokens = whole\n")
    pytester.makepyfile(
        test_it=f"""
def test_replay(tcr_replay):
    report = tcr_replay([{str(HERMES)!r}], detector={PER_CHUNK!r}, strategies=["char"])
    assert report.exit_code == 0
    assert report.claim.tokens_whole
"""
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
