"""``tcr serve``: replay recordings to any client as an OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape

from tcr.commands.options import fail, run_interruptible, seed_option
from tcr.errors import TcrError
from tcr.rechunk import STRATEGY_FORMS

if TYPE_CHECKING:
    from tcr.replay.serve import Served

_STRATEGIES = textwrap.fill(f"Strategies: {STRATEGY_FORMS}.", 80)
EPILOG = f"""\b
Endpoints: POST /v1/chat/completions (OpenAI chat completions, streamed or not),
POST /completion (llama.cpp), GET /v1/models (the recordings' names: file stems,
with their folder when two share one), GET /health. A request gets the
recording named by its X-Tcr-Recording header (name, file name or id), else
the one its "model" names, else the next one in turn. The answer's
X-Tcr-Recording (its name) and X-Tcr-Chunking headers say which recording and
which chunking it was, as tcr replay names it (the n-th request for a
recording gets the n-th: random:8#n, exhaustive@k).
--rechunk original sends the recorded bytes as they were read; a content
strategy (char, random, tokens, fixed:N, ...) sends the same text in different
deltas (tokens: as an engine streams tokens, each special token in a delta of its own);
a transport strategy (bytes:N, bytes-random) the same bytes in different writes,
one HTTP chunk each. A recording made on the other endpoint, or of engine
chunks, is re-encoded for the one asked.
{_STRATEGIES}
Exit codes: 0 stopped with Ctrl-C, 2 nothing to serve or the port is taken.

\b
Examples:
  tcr serve corpora/recorded --port 8080 --speed 0
  tcr serve rec.msgpack --rechunk char          # the same stream, one character per delta
  tcr serve rec.msgpack --rechunk tokens        # token-sized deltas, special tokens whole
  tcr serve corpora/ --rechunk bytes:7 --speed 2
  curl -N http://127.0.0.1:8080/v1/chat/completions -H 'X-Tcr-Recording: split_marker_mlx' \\
       -d '{{"stream": true, "messages": []}}'
"""


@click.command(epilog=EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help="0: any free."
)
@click.option(
    "--rechunk",
    default="original",
    show_default=True,
    metavar="STRATEGY",
    help="Send each recording as recorded, or re-split by this strategy.",
)
@click.option(
    "--speed",
    type=float,
    default=1.0,
    show_default=True,
    help="Pace of the recorded timing: 2 twice as fast, 0 no waiting.",
)
@seed_option
def serve(
    paths: tuple[Path, ...], host: str, port: int, rechunk: str, speed: float, seed: int
) -> None:
    """Serve recordings (files or directories; default the bundled corpora) as a
    streaming OpenAI-compatible and llama.cpp endpoint, so an agent in any
    language runs against recorded streams."""
    from tcr.replay.serve import ReplayServer, load_recordings
    from tcr.replay.serve import serve as serve_recordings

    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def skipped(why: str) -> None:
        err.print(f"tcr serve: skipped {escape(why)}")

    try:
        loaded = load_recordings(
            list(paths) or None,
            on_skipped=skipped,
        )

        def started(server: ReplayServer) -> None:
            out.print(
                f"tcr serve: {len(loaded)} recordings on [bold]{server.url}[/] "
                f"(rechunk {escape(rechunk)}, speed {speed:g}); Ctrl-C stops"
            )

        def served(request: Served) -> None:
            fields = [request.method, request.path, "→", str(request.status)]
            fields.append(request.recording or "-")
            if request.chosen_by:
                fields += [f"by {request.chosen_by}", request.chunking or ""]
            out.print(escape(" ".join(fields)))

        def bad_request(line: str) -> None:
            err.print(f"tcr serve: {escape(line)}")

        server = ReplayServer(
            loaded,
            host=host,
            port=port,
            rechunk=rechunk,
            speed=speed,
            seed=seed,
            on_served=served,
            on_bad_request=bad_request,
        )
        run_interruptible(serve_recordings(server, on_started=started))
    except asyncio.CancelledError:
        out.print("tcr serve: stopped")
    except TcrError as error:
        fail("serve", error)
