"""The stdio protocol carries tool specs: ``new`` may hold ``"tool_specs"`` (the request's
OpenAI ``tools`` list), which the reference harness passes to a factory that takes it.
A client sends it only when there are specs, so older harnesses see what they saw."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from tcr.corpora import bundled
from tcr.oracle import Check
from tcr.replay import run
from tcr.stdio import command_factory
from tcr.stdio.server import serve

TESTS = Path(__file__).resolve().parents[1]
GLM = [p for p in bundled() if Path(p).name == "format_tool_call_tag_glm.msgpack"]
SPECS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
        },
    }
]
BODY = "<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"


def harness(factory: str) -> str:
    code = f"import sys; sys.path.insert(0, {str(TESTS)!r}); from tcr.stdio import main; "
    code += f"sys.exit(main([{factory!r}]))"
    return shlex.join([sys.executable, "-c", code])


def _arguments(factory: object, new: dict[str, object]) -> str:
    requests = [new, {"op": "feed", "chunk": BODY}, {"op": "finish"}]
    stdin = io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    stdout = io.BytesIO()
    serve(factory, stdin, stdout)  # type: ignore[arg-type]
    events = [e for line in stdout.getvalue().splitlines()[1:] for e in json.loads(line)["events"]]
    (call,) = [e for e in events if e["type"] == "tool_call"]
    return str(call["arguments"])


def test_the_harness_passes_tool_specs_in_new_to_the_factory() -> None:
    from typing_detectors import types_by_schema

    new = {"op": "new", "tools": ["f"], "tool_specs": SPECS}
    assert _arguments(types_by_schema, new) == '{"n": 3}'


def test_a_new_without_tool_specs_is_as_before() -> None:
    from typing_detectors import types_by_schema

    assert _arguments(types_by_schema, {"op": "new", "tools": ["f"]}) == '{"n": "3"}'


@pytest.mark.process
@pytest.mark.parametrize(("factory", "findings"), [("types_by_schema", 0), ("ignores_schema", 1)])
def test_a_harness_in_another_process_gets_the_recording_s_specs(
    factory: str, findings: int
) -> None:
    with command_factory(harness(f"typing_detectors:{factory}")) as detector:
        report = run(GLM, detector=detector, strategies=["whole"])
    expected = [f for _, f in report.failures if f.violation.check is Check.EXPECTED]
    assert len(expected) == findings, [f.violation.message for f in expected]
