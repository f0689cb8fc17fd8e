"""``tcr show FILE``: one recording, decoded, chunked, detected and judged, for reading."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn

import click
from rich.console import Console

from tcr.claims import Claim
from tcr.commands.options import (
    claim_options,
    claimed,
    detector_option,
    json_option,
    junit_option,
    parse_tools,
    pinned,
    policy_option,
    sarif_option,
    seed_option,
    timeout_option,
    tools_option,
    write_reports,
)
from tcr.errors import EXIT_ERROR, TcrError
from tcr.rechunk import STRATEGY_FORMS

if TYPE_CHECKING:
    from tcr.replay.show import ShowSummary

__all__ = ["show"]

DEFAULT_ROWS: Final = 40  # rows of each table without --frames

EPILOG = """\b
Exit status: 0 every check passed, 1 a violation was found, 2 bad input
(unreadable file, body that does not decode, bad strategy, detector that
cannot be loaded or that crashed: the crash is shown as a finding), or a
--junit or --sarif file that cannot be written.

\b
Examples:
  tcr show rec.msgpack
  tcr show rec.msgpack --rechunk char --detector tcr.detector.broken:per_chunk_markers
  tcr show rec.msgpack --rechunk splits:12,40     # the chunking a replay failure names
  tcr show rec.msgpack --detector mypkg.parser:make_detector --dialect hermes
  tcr show rec.msgpack --frames 0 | less -R       # every frame
  tcr show rec.msgpack --json | jq .verdict
  tcr show rec.msgpack --rechunk char --junit show.xml --sarif show.sarif
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--rechunk",
    metavar="STRATEGY",
    default="original",
    show_default=True,
    help=f"The one chunking to feed the detector ({STRATEGY_FORMS}; "
    "exhaustive and boundary make many: pick one with splits:).",
)
@detector_option
@timeout_option
@tools_option
@claim_options
@policy_option
@seed_option
@click.option(
    "--frames",
    "frames_limit",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Show the first and last frames, deltas, events and chunks of the content, "
    "N of each in all (0: every one). Without it: 40 rows of each table, and all the content.",
)
@json_option
@junit_option
@sarif_option
@click.pass_context
def show(
    ctx: click.Context,
    file: Path,
    rechunk: str,
    detector: str | None,
    timeout: float,
    tools: str | None,
    dialects: tuple[str, ...],
    empty_tools: str | None,
    special_tokens: str | None,
    policies: tuple[str, ...],
    seed: int,
    frames_limit: int | None,
    as_json: bool,
    junit: Path | None,
    sarif: Path | None,
) -> None:
    """Show one recording: header, frames with timing, decoded deltas, the content
    with its chunk boundaries, the detector's events and the oracles' verdict."""
    # Imported here so `tcr --help` does not load the replay package. mypy cannot
    # follow the package-dir mapping of replay/ to tcr.replay (an editable install
    # resolves it with an import hook), hence the ignore; mypy checks replay/show.py
    # when it is named on the command line.
    from tcr.replay.show import printable, render, summarize
    from tcr.replay.show_report import command_line, write_junit, write_sarif

    try:
        summary = summarize(
            file,
            detector=detector,
            tools=parse_tools(tools),
            rechunk=rechunk,
            seed=seed,
            timeout=timeout,
            dialects=claimed(dialects),
            empty_tools=empty_tools,
            special_tokens=special_tokens,
            policies=pinned(policies),
        )
    except TcrError as error:
        _fail(ctx, error)
    if as_json:
        _echo_pieces(summary.iter_json())
    elif frames_limit is None:
        render(summary, Console(highlight=False), frames_limit=DEFAULT_ROWS)
    else:
        render(
            summary, Console(highlight=False), frames_limit=frames_limit, chunks_limit=frames_limit
        )
    code = summary.exit_code
    if code == EXIT_ERROR:
        click.echo(f"tcr show: {printable(_one_line(_unusable(summary)))}", err=True)
    claim = summary.detector["claim"] if summary.detector else None
    restated = [] if claim is None else Claim.of(claim).options()
    command = command_line(
        file, rechunk=rechunk, detector=detector, tools=tools, seed=seed, claim=restated
    )
    written = write_reports(
        "show",
        (junit, lambda path: write_junit(summary, path)),
        (sarif, lambda path: write_sarif(summary, path, command=command)),
    )
    ctx.exit(code if written else EXIT_ERROR)


def _echo_pieces(pieces: Iterable[str]) -> None:
    """Text made in many small pieces, written in blocks of about 64 KiB, then a newline."""
    block: list[str] = []
    size = 0
    for piece in pieces:
        block.append(piece)
        size += len(piece)
        if size >= 1 << 16:
            click.echo("".join(block), nl=False)
            block, size = [], 0
    click.echo("".join(block))


def _fail(ctx: click.Context, error: TcrError) -> NoReturn:
    from tcr.replay.show import printable

    click.echo(f"tcr show: {printable(_one_line(str(error)))}", err=True)
    ctx.exit(EXIT_ERROR)


def _unusable(summary: ShowSummary) -> str:
    """Why the exit status is 2: the body does not decode, or the detector crashed."""
    if summary.decode_error is not None:
        return summary.decode_error
    crash = summary.crash
    assert crash is not None
    return f"{summary.path}: {crash.message}"


def _one_line(message: str) -> str:
    return " ".join(line.strip() for line in message.splitlines()) or "error"
