"""The ``tcr`` command: a bare click group; each command lives in its own module."""

from __future__ import annotations

import click

from tcr import __version__
from tcr.errors import EXIT_INTERRUPTED

EPILOG = """\b
Examples:
  tcr record --endpoint http://127.0.0.1:8080/v1/chat/completions --prompt hi --out rec.msgpack
  tcr replay rec.msgpack --rechunk random --runs 50 --detector mypkg.parser:factory
  tcr show rec.msgpack --rechunk splits:12,15
  tcr tui rec.msgpack --rechunk splits:12,15
  tcr fuzz --budget 60s --seed 0
  tcr serve corpora/recorded --rechunk char --speed 0
"""


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # click would say "Aborted!" and exit 1
            click.echo("tcr: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)


@click.group(cls=_Group, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tcr")
def main() -> None:
    """Replay and fuzz recorded LLM token streams through a streaming tool-call detector."""


def _register() -> None:
    from tcr.commands.bless import bless, review
    from tcr.commands.dialects import dialects
    from tcr.commands.fuzz import fuzz
    from tcr.commands.importer import import_command
    from tcr.commands.matrix import matrix
    from tcr.commands.policies import policies
    from tcr.commands.record import record
    from tcr.commands.replay import replay
    from tcr.commands.serve import serve
    from tcr.commands.show import show
    from tcr.commands.tui import tui

    main.add_command(record)
    main.add_command(bless)
    main.add_command(dialects)
    main.add_command(review)
    main.add_command(fuzz)
    main.add_command(import_command)
    main.add_command(matrix)
    main.add_command(policies)
    main.add_command(replay)
    main.add_command(serve)
    main.add_command(show)
    main.add_command(tui)


_register()

if __name__ == "__main__":  # pragma: no cover
    main()
