"""Fuzz gives each case tool specs that agree with its truth, and compares typed values.

A parser that types Qwen3-Coder and GLM values by the schemas it is given gets no
finding; one that keeps them as text gets an ``expected`` finding naming the argument,
saved with the specs so that ``tcr replay SAVED`` fails the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from tcr.corpus import read_recording
from tcr.dialects import BY_ID
from tcr.fuzz import FuzzReport, Message, messages, run
from tcr.fuzz.specs import json_type
from tcr.oracle import Check
from tcr.replay import run as replay
from tcr.tool_specs import parameter_schemas, read_tool_specs, schema_type

UNTYPED = ["qwen3_coder", "glm45"]


def fuzz(
    parser: str,
    dialect: str,
    max_examples: int = 300,
    save: Path | None = None,
    corpus: tuple[Path, ...] | None = (),  # none: generated cases only; None: the bundled ones
) -> FuzzReport:
    """A short search of a ``typing_detectors`` parser in one untyped dialect."""
    detector = f"typing_detectors:{parser}"
    return run(
        detector=detector, dialects=[dialect], max_examples=max_examples, save=save, corpus=corpus
    )


@settings(max_examples=200, deadline=None)
@given(messages(formats=UNTYPED))
def test_generated_specs_agree_with_the_truth_s_argument_types(message: Message) -> None:
    if message.tools is None:
        assert message.tool_specs is None
        return
    specs = read_tool_specs(message.tool_specs)
    assert [s["function"]["name"] for s in specs] == list(message.tools)
    schemas = parameter_schemas(specs)
    for call in message.truth.calls:
        assert BY_ID[call.dialect].schema_typed
        for key, value in call.arguments.items():
            if key in schemas.get(call.name, {}):
                assert schema_type(schemas[call.name][key])[0] == json_type(value)


@pytest.mark.slow
@pytest.mark.parametrize("dialect", UNTYPED)
def test_fuzzing_a_parser_that_types_by_schema_finds_nothing(dialect: str) -> None:
    assert fuzz("types_by_schema", dialect).findings == []


@pytest.mark.slow
@pytest.mark.parametrize("dialect", UNTYPED)
def test_fuzzing_a_parser_never_given_the_schema_finds_nothing(dialect: str) -> None:
    # The bundled recordings are mutated too (the others generate only).
    assert fuzz("never_told", dialect, corpus=None).findings == []


@pytest.mark.slow
@pytest.mark.parametrize("dialect", UNTYPED)
def test_fuzzing_a_parser_that_ignores_the_schema_finds_the_argument_saved_with_specs(
    dialect: str, tmp_path: Path
) -> None:
    report = fuzz("ignores_schema", dialect, 600, save=tmp_path)
    (finding,) = report.findings
    assert finding.check is Check.EXPECTED
    assert "argument " in finding.violation.message
    assert "(the schema types it " in finding.violation.message
    assert finding.saved is not None
    saved = read_recording(finding.saved)
    assert saved.tool_specs == finding.case.tool_specs
    again = replay(
        [finding.saved],
        detector="typing_detectors:ignores_schema",
        dialects=[dialect],
        strategies=["original"],
        checks=["expected"],
    )
    (_, failure) = again.failures[0]
    assert failure.violation.message == finding.violation.message
