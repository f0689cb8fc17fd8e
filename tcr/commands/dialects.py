"""``tcr dialects``: every dialect id a claim may name, with its markers and an example."""

from __future__ import annotations

import json

import click

from tcr.commands.options import json_option
from tcr.dialects import DialectRow, rows

__all__ = ["dialects"]

EPILOG = """\b
Ids are what StreamDetector(dialects=...) takes; where an engine has a parser
for a dialect, its name is listed (vLLM/SGLang --tool-call-parser, or the
reasoning parser). Markers marked * are special tokens (one token to the model).

\b
Examples:
  tcr dialects
  tcr dialects --json | jq -r '.[].id'
  tcr dialects --json | jq '.[] | select(.id == "hermes")'
"""


def _markers(markers: tuple[str, ...], special: tuple[str, ...]) -> str:
    return "  ".join(repr(m) + ("*" if m in special else "") for m in markers) or "-"


def _lines(row: DialectRow) -> list[str]:
    return [
        f"{row.id} ({row.kind}): {row.summary}",
        f"  opens:    {_markers(row.opens, row.special_tokens)}  ({row.opens_where})",
        f"  closes:   {_markers(row.closes, row.special_tokens)}",
        f"  engines:  {', '.join(row.parser_names) or '-'}",
        f"  example:  {row.example!r}",
    ]


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@json_option
def dialects(as_json: bool) -> None:
    """List every dialect id with its markers, where it opens, an example and engine names."""
    table = rows()
    if as_json:
        click.echo(json.dumps([row.as_dict() for row in table], indent=2, ensure_ascii=False))
        return
    click.echo("\n\n".join("\n".join(_lines(row)) for row in table))
