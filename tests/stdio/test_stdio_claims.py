"""The stdio protocol carries claims: the harness says its detector's, the client may ask for one.

The answer to ``new`` carries ``"claim": {"dialects", "empty_tools"}`` when the
harness's detector or factory declares one; a harness that says nothing claims
everything. ``new`` may carry ``dialects`` and ``empty_tools`` (``--dialect``,
``--empty-tools``), which the reference harness passes to a factory that takes them.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from tcr.claims import EVERYTHING, Claim
from tcr.detector.core import StreamDetector
from tcr.detector.events import Text
from tcr.detector.loader import resolve_detector
from tcr.errors import TcrError
from tcr.stdio import command_factory
from tcr.stdio.server import serve

TESTS = Path(__file__).resolve().parents[1]
HERMES = Claim(frozenset({"hermes"}))
MISTRAL = '[TOOL_CALLS][{"name": "f", "arguments": {}}]'


def harness(factory: str) -> str:
    """``python -m tcr.stdio FACTORY`` with the tests' helper modules importable."""
    code = f"import sys; sys.path.insert(0, {str(TESTS)!r}); from tcr.stdio import main; "
    code += f"sys.exit(main([{factory!r}]))"
    return shlex.join([sys.executable, "-c", code])


def answers(factory: object, *requests: dict[str, object]) -> list[dict[str, object]]:
    stdin = io.BytesIO(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    stdout = io.BytesIO()
    serve(factory, stdin, stdout)  # type: ignore[arg-type]
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def test_new_answers_with_the_detector_s_claim() -> None:
    got = answers(StreamDetector, {"op": "new", "tools": None})
    assert got == [{"ok": True, "claim": {"dialects": None, "empty_tools": "reject"}}]


def test_new_passes_the_asked_claim_to_a_factory_that_takes_it() -> None:
    request = {"op": "new", "tools": [], "dialects": ["hermes"], "empty_tools": "text"}
    got = answers(StreamDetector, request, {"op": "feed", "chunk": MISTRAL})
    assert got[0]["claim"] == {"dialects": ["hermes"], "empty_tools": "text"}
    assert got[1] == {"events": [{"type": "text", "text": MISTRAL}]}


def test_a_harness_whose_detector_declares_nothing_says_nothing() -> None:
    from toy_detectors import ToyDetector

    assert answers(ToyDetector, {"op": "new", "tools": None}) == [{"ok": True}]


def test_the_client_reads_the_harness_s_claim() -> None:
    with command_factory(harness("claimed_detectors:hermes_only")) as factory:
        spec = resolve_detector(factory)
        assert spec.claim == HERMES
        assert spec.options() == ["--detector-cmd", factory.command, "--dialect", "hermes"]
        assert resolve_detector(factory, dialects=["glm45"]).claim.dialects == {"glm45"}


def test_a_harness_that_says_nothing_claims_everything() -> None:
    with command_factory(harness("toy_detectors:ToyDetector")) as factory:
        assert resolve_detector(factory).claim == EVERYTHING


def test_dialect_restricts_the_reference_behind_the_protocol() -> None:
    with command_factory(harness("tcr.detector.core:StreamDetector")) as factory:
        spec = resolve_detector(factory, dialects=["hermes"])
        assert spec.claim == HERMES
        detector = spec.factory(tools=None)
        assert detector.feed(MISTRAL) + detector.finish() == [Text(MISTRAL)]


def test_a_harness_whose_factory_claims_nonsense_stops_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tcr.stdio import main

    assert main(["claimed_detectors:wrong_claim_type"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "tcr.stdio: wrong_claim_type.tcr_claim: dialects must be a list of dialect ids, "
        "not int 42\n"
    )


def test_a_foreign_harness_claiming_an_unknown_dialect_is_one_line() -> None:
    # A harness in any language: it answers new with a claim tcr does not know.
    code = (
        "import sys\n"
        "for line in sys.stdin:\n"
        '    print(\'{"ok": true, "claim": {"dialects": ["made_up_dialect"]}}\', flush=True)\n'
    )
    factory = command_factory(shlex.join([sys.executable, "-c", code]))
    with factory, pytest.raises(TcrError) as caught:
        resolve_detector(factory)
    assert str(caught.value).startswith(
        "ProcessDetector.tcr_claim: unknown dialect 'made_up_dialect'; known: "
    )
