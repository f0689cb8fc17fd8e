"""Typed comparison follows the schema (ARCHITECTURE.md §5.2, "Tool specs").

A parser that types Qwen3-Coder and GLM values by the recording's tool schemas is right;
one that is given the schemas and keeps ``"3"`` a string where the schema says integer
gets an ``expected`` finding naming the argument; one never given them is not blamed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcr.corpora import bundled
from tcr.errors import TcrError
from tcr.oracle import Check
from tcr.replay import check_chunks, run

GLM = "format_tool_call_tag_glm.msgpack"
QWEN = "format_tool_call_tag_qwen3_coder.msgpack"
TYPED = [p for p in bundled() if Path(p).name in (GLM, QWEN)]
SPECS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
GLM_CITY_3 = (
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
)
CITY_3 = {"text": "", "calls": [{"name": "get_weather", "arguments": {"city": "3"}}]}


def _messages(detector: str) -> list[str]:
    report = run(TYPED, detector=f"typing_detectors:{detector}", strategies=["whole", "char"])
    assert not report.errors
    return [f.violation.message for _, f in report.failures if f.violation.check is Check.EXPECTED]


def test_the_bundled_untyped_recordings_hold_their_schemas() -> None:
    assert len(TYPED) == 2


def test_a_parser_that_types_by_the_schema_gets_no_finding() -> None:
    assert _messages("types_by_schema") == []


@pytest.mark.parametrize(("argument", "value"), [("days", '"3"'), ("limit", '"10"')])
def test_a_parser_that_ignores_the_schema_gets_a_finding_naming_the_argument(
    argument: str, value: str
) -> None:
    found = [m for m in _messages("ignores_schema") if f"argument {argument!r}" in m]
    assert found, _messages("ignores_schema")
    assert f"is {value}, expected {value.strip(chr(34))} (the schema types it integer)" in found[0]


def test_a_parser_never_given_the_schema_is_not_blamed_for_keeping_text() -> None:
    assert _messages("never_told") == []


def test_check_chunks_types_by_the_specs_it_is_given() -> None:
    chunks = [GLM_CITY_3[:20], GLM_CITY_3[20:]]
    good = "typing_detectors:types_by_schema"
    bad = "typing_detectors:guesses_types"
    checks = ["expected"]
    assert check_chunks(
        chunks, detector=good, expectation=CITY_3, tool_specs=SPECS, checks=checks
    ).ok
    # typing by the value's look is a choice engines make (typed_arguments=look): held to
    # the schema, the guess is a finding
    schema = {"typed_arguments": "schema"}
    verdict = check_chunks(
        chunks,
        detector=bad,
        expectation=CITY_3,
        tool_specs=SPECS,
        checks=checks,
        policies=schema,
    )
    (violation,) = verdict.violations
    assert "argument 'city' is 3, expected \"3\" (the schema types it string)" in violation.message


def test_a_snippet_for_a_typed_finding_carries_the_specs() -> None:
    report = run(TYPED, detector="typing_detectors:ignores_schema", strategies=["whole"])
    snippet = next(f.snippet for _, f in report.failures if f.violation.check is Check.EXPECTED)
    assert "tool_specs=[" in snippet
    namespace: dict[str, object] = {}
    exec(snippet, namespace)  # the pinned test fails as the finding did
    with pytest.raises(AssertionError):
        next(v for k, v in namespace.items() if k.startswith("test_"))()  # type: ignore[operator]


def test_tool_specs_from_a_file_override_the_recording_s(tmp_path: Path) -> None:
    # days as a string: keeping "3" is right then, and the reproducer names the file
    path = tmp_path / "tools.json"
    days = {"type": "object", "properties": {"days": {"type": "string"}}}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": days}}]
    path.write_text(json.dumps({"tools": tools}))
    glm = [p for p in TYPED if Path(p).name == GLM]
    report = run(glm, detector="typing_detectors:ignores_schema", tool_specs=path)
    assert report.failures == []
    report = run(glm, detector="typing_detectors:types_by_schema", tool_specs=tools)
    assert report.failures == []


def test_a_malformed_tool_specs_file_is_one_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('[{"name": 3}]')
    with pytest.raises(TcrError, match=r"--tool-specs .*tools\.json\[0\]: a function needs"):
        run(TYPED, tool_specs=path)


def test_bless_with_the_reference_stores_values_typed_by_the_request_s_schema(
    tmp_path: Path,
) -> None:
    from tcr.corpus import read_recording
    from tcr.replay.bless import bless

    copy = tmp_path / GLM
    copy.write_bytes(next(Path(p) for p in TYPED if Path(p).name == GLM).read_bytes())
    bless([copy])
    expect = read_recording(copy).expect
    assert expect is not None
    assert expect["calls"][0]["arguments"] == {"city": "Paris", "days": 3}
    assert _messages_of([copy], "ignores_schema")  # the typed expectation still blames it
    assert not _messages_of([copy], "never_told")  # and still spares one never told


def test_the_tui_session_gives_the_detector_the_recording_s_specs() -> None:
    from tcr.tui.model import open_session

    glm = next(Path(p) for p in TYPED if Path(p).name == GLM)
    session = open_session(glm, detector="typing_detectors:ignores_schema")
    verdict = session.analyse(session.run)
    assert any("argument 'days'" in v.message for v in verdict.violations)


def _messages_of(paths: list[Path], detector: str) -> list[str]:
    report = run(paths, detector=f"typing_detectors:{detector}", strategies=["whole"])
    return [f.violation.message for _, f in report.failures if f.violation.check is Check.EXPECTED]
