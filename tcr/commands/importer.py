"""``tcr import``: recordings from streams captured by other tools."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from tcr.commands.options import Choice, fail, json_option
from tcr.corpus import KINDS
from tcr.errors import TcrError

__all__ = ["import_command"]

EPILOG = """\b
Formats (detected from the content):
  a raw SSE or NDJSON body, as 'curl -N' saves it ('curl -N -i': headers too);
  JSON lines of chunks: "text" per line, or {"chunk": "text", "t": 0.05};
  a HAR file from a browser's developer tools (one recording per stream).
A dump keeps no read boundaries or arrival times: each SSE event or NDJSON line
becomes one frame, at time 0 (a HAR's at its time to first byte).

\b
Exit status: 0 imported; 2 a file that cannot be read or is in no known format.

\b
Examples:
  curl -N http://127.0.0.1:8080/v1/chat/completions -d @body.json > stream.sse
  tcr import stream.sse                        # writes stream.msgpack
  tcr import chunks.jsonl --out corpora/recorded/engine.msgpack --label dialect=hermes
  tcr import session.har --out recordings/     # one file per streamed response
  tcr import dump.txt --kind ndjson
"""


@click.command("import", epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="The recording to write (*.msgpack), or a directory (default: FILE with .msgpack).",
)
@click.option(
    "--kind",
    type=Choice(KINDS),
    help="Read the body as this kind instead of detecting it.",
)
@click.option(
    "--label",
    "label_values",
    multiple=True,
    metavar="KEY=VALUE",
    help="A header label (dialect, note, bug). Repeatable.",
)
@json_option
def import_command(
    file: Path, out: Path | None, kind: str | None, label_values: tuple[str, ...], as_json: bool
) -> None:
    """Import FILE (a curl -N dump, JSON lines of chunks, or a HAR file) as recordings."""
    from tcr.recorder import import_file, parse_labels, render_summary, summaries_json, summarize

    try:
        labels = parse_labels(label_values)
        imported = import_file(file, out, kind=kind, labels=labels)
        summaries = [summarize(item.path) for item in imported]
    except TcrError as error:
        fail("import", error)
    if as_json:
        click.echo(summaries_json(summaries))
        return
    console = Console(highlight=False)
    for item, summary in zip(imported, summaries, strict=True):
        console.print(f"imported {item.format} from {file}:", end=" ")
        render_summary(console, summary)
