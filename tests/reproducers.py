"""Shrinking keeps the signature: a finding's printed reproducer, its pinned snippet and its
saved recording fail the same way as the finding they are printed under (ARCHITECTURE.md §7.4)."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from typing import Any

import pytest
from click.testing import CliRunner

from tcr.cli import main
from tcr.fuzz.model import Finding
from tcr.replay.model import Failure, Outcome
from tcr.signature import UNSPLIT, WHOLE, Signature, signature

__all__ = ["replays_to_its_signature", "reproduces"]


def _snippet_fails_as(snippet: str, found: Signature, chunks: tuple[str, ...]) -> None:
    namespace: dict[str, object] = {}
    exec(compile(snippet, "<snippet>", "exec"), namespace)
    test = next(v for k, v in namespace.items() if k.startswith("test_"))
    with pytest.raises(AssertionError) as failed:
        test()  # type: ignore[operator]
    violations = failed.value.args[0]
    shown = {signature(v, chunks) for v in violations}
    # unsplit shapes (a marker in a string, the end) are the text's, not its chunks'
    want = replace(found, shape=WHOLE) if found.shape in UNSPLIT else found
    assert want in shown, (snippet, shown)


def reproduces(outcome: Outcome, failure: Failure) -> None:
    """The printed reproducer and the pinned snippet both fail with ``failure.signature``."""
    args = shlex.split(failure.reproducer)
    assert args[:2] == ["tcr", "replay"]
    replayed = CliRunner().invoke(main, [*args[1:], "--json"])
    assert replayed.exit_code in (1, 2), replayed.output
    found = _signatures(json.loads(replayed.stdout))
    assert str(failure.signature) in found, (failure.reproducer, found)

    if failure.snippet:  # a policy probe's finding has none: its reproducer is the probe's run
        _snippet_fails_as(failure.snippet, failure.signature, tuple(failure.chunks))


def replays_to_its_signature(found: Finding) -> None:
    """The saved recording, replayed with the printed command, shows the same signature, and
    the printed regression test fails with it."""
    if found.snippet:
        _snippet_fails_as(found.snippet, found.signature, found.case.chunks)
    args = shlex.split(found.replay_command)
    result = CliRunner().invoke(main, [*args[1:], "--json"])
    assert result.exit_code in (1, 2), result.output
    shown = _signatures(json.loads(result.stdout))
    assert str(found.signature) in shown, (found.replay_command, shown)


def _signatures(data: dict[str, Any]) -> set[str]:
    """Every failure's signature in a replay's ``--json``, the policy probes' row too."""
    rows = [*data["outcomes"], *([data["policy"]] if data.get("policy") else [])]
    return {f["signature"] for row in rows for f in row["failures"]}
