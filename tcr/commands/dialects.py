"""``tcr dialects``: every dialect id a claim may name, with its markers and an example."""

from __future__ import annotations

import json
import re

import click

from tcr.commands.options import json_option
from tcr.dialects import ALIASES, DIALECTS, Closing, Dialect, DialectRow, rows

__all__ = ["dialects", "markdown_table"]

EPILOG = """\b
Ids are what StreamDetector(dialects=...) takes; where an engine has a parser
for a dialect, its name is listed (vLLM/SGLang --tool-call-parser, or the
reasoning parser). Markers marked * are special tokens (one token to the model).
An alias (llama3_json, ...) claims every id it stands for.

\b
Examples:
  tcr dialects
  tcr dialects --json | jq -r '.[].id'
  tcr dialects --json | jq '.[] | select(.id == "hermes")'
  tcr dialects --markdown    # the README's table
"""


def _markers(markers: tuple[str, ...], special: tuple[str, ...]) -> str:
    return "  ".join(repr(m) + ("*" if m in special else "") for m in markers) or "-"


def _lines(row: DialectRow) -> list[str]:
    return [
        f"{row.id} ({row.kind}): {row.summary}",
        f"  opens:    {_markers(row.opens, row.special_tokens)}  ({row.opens_where})",
        f"  closes:   {_markers(row.closes, row.special_tokens)}",
        f"  engines:  {', '.join(row.parser_names) or '-'}",
        *(f"  variant:  {row.id}.{i}: {what} (read | text)" for i, what in row.variants),
        f"  example:  {row.example!r}",
    ]


def _code(marker: str) -> str:
    """A marker as a Markdown code span inside a table cell (``|`` escaped, newlines shown)."""
    text = marker.replace("\n", "\\n").replace("|", "\\|")
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _prose(text: str) -> str:
    """Plain text in a table cell: Markdown's punctuation escaped, so markup shows as written."""
    return re.sub(r"([\\`*<|])", r"\\\1", text)


def _closes_on(d: Dialect) -> str:
    if d.closing == Closing.BALANCED:
        return "the bracket balancing its first one"
    if d.closing == Closing.FENCED:
        return f"the bracket balancing its first one, then an optional {_code('```')}"
    markers = " or ".join(map(_code, d.closes))
    return markers + (" or end of message" if d.closed_by_end else "")


def markdown_table(records: tuple[Dialect, ...] = DIALECTS) -> str:
    """The README's dialect table, one row per registered dialect in registry order."""
    lines = [
        "| dialect | opens on | closes on | body | engines' parsers | example block |",
        "|---|---|---|---|---|---|",
    ]
    for d in records:
        opens = " or ".join(map(_code, d.opens)) + ("" if d.anywhere else " at message start only")
        engines = ", ".join(f"`{name}`" for name in d.parser_names) or "-"
        lines.append(
            f"| `{d.id}` | {opens} | {_closes_on(d)} | {_prose(d.summary)} | {engines} "
            f"| {_code(d.example.block)} |"
        )
    return "\n".join(lines) + "\n\n" + _aliases("`") + "\n"


def _aliases(quote: str = "") -> str:
    """The aliases a claim may name, and the ids each stands for."""
    each = (
        f"{quote}{alias}{quote} = {' + '.join(f'{quote}{i}{quote}' for i in ids)}"
        for alias, ids in ALIASES.items()
    )
    return "Aliases (claiming one claims every id it stands for): " + "; ".join(each) + "."


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@json_option
@click.option("--markdown", is_flag=True, help="Print the README's Markdown table of dialects.")
def dialects(as_json: bool, markdown: bool) -> None:
    """List every dialect id with its markers, where it opens, an example and engine names."""
    if markdown:
        click.echo(markdown_table(), nl=False)
        return
    table = rows()
    if as_json:
        click.echo(json.dumps([row.as_dict() for row in table], indent=2, ensure_ascii=False))
        return
    click.echo("\n\n".join("\n".join(_lines(row)) for row in table))
    click.echo("\n" + _aliases())
