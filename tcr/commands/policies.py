"""``tcr policies``: the choices where correct parsers differ, and the engines behind each."""

from __future__ import annotations

import json

import click

from tcr.commands.options import json_option
from tcr.policies import POLICIES, Policy
from tcr.policies import as_json as registry_json

__all__ = ["policies"]

EPILOG = """\b
A policy is a question correct parsers answer differently on purpose; tcr
reads the detector's choice from probe messages before judging, shows every
choice on the report's first line (lossy ones marked), and judges the
recordings with them. Pin a choice to enforce it instead:
--policy ID=CHOICE (repeatable) on replay, fuzz and show, or in the
detector's claim: tcr_claim = {"dialects": [...], "policies": {ID: CHOICE}}.
The reference's choice is marked *.

\b
Examples:
  tcr policies
  tcr policies --json | jq -r '.[].id'
  tcr replay --detector mypkg.parser:make --dialect hermes --policy undeclared=rejected
"""


def _lines(policy: Policy) -> list[str]:
    lines = [f"{policy.id}: {policy.question}"]
    if not policy.probed:
        lines[0] += " (not probed: the reference's choice unless pinned)"
    for choice in policy.choices:
        mark = "*" if choice.id == policy.default else " "
        lossy = " (lossy)" if choice.lossy else ""
        lines.append(f"  {mark} {choice.id}{lossy}: {choice.meaning}")
        lines += [f"      {engine.name}: {engine.source}" for engine in choice.engines]
    return lines


@click.command(epilog=EPILOG)
@json_option
def policies(as_json: bool) -> None:
    """List each policy: its question, its choices (lossy ones marked) and the engines
    that make each, with the source they were read in."""
    if as_json:
        click.echo(json.dumps(registry_json(), indent=2, ensure_ascii=False))
        return
    click.echo("\n\n".join("\n".join(_lines(p)) for p in POLICIES))
