"""``tcr bless`` and ``tcr review``: golden expectations for recordings."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from tcr._runtime.loading import load_detector
from tcr.commands.options import (
    claim_options,
    claimed,
    detector_option,
    fail,
    parse_tools,
    tools_option,
)
from tcr.errors import TcrError

try:
    import termios
    import tty
except ImportError:  # pragma: no cover - Windows: answers are read a line at a time
    termios = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from tcr.replay.bless import Change

__all__ = ["bless", "review"]

BLESS_EPILOG = """The expectation is what this detector shows. Judged later against a narrower
claim, replay restates an expectation only when it is the full reference's.

\b
Examples:
  tcr bless corpora/recorded/tool_call_tag_json.msgpack
  tcr bless corpora/ --dry-run                # the diffs, nothing written
  tcr bless .tcr/found/ --detector mypkg.parser:make_detector
  tcr bless .tcr/found/ --dialect hermes     # what the reference restricted to hermes shows
"""

REVIEW_EPILOG = """\b
Keys at each change, one keypress each (no Enter) on a terminal, else one line
each: a accept (store the current result), r reject (keep the stored one),
s skip, A accept this and every remaining change, q quit.

\b
Examples:
  tcr review corpora/
  tcr review corpora/recorded --detector mypkg.parser:make_detector
  tcr review corpora/ --dialect hermes --empty-tools text
"""


F = TypeVar("F", bound=Callable[..., Any])


def _recordings_and_detector(fn: F) -> F:
    """What both commands take: the recordings, the detector, its tools and its claim."""
    for option in (claim_options, tools_option, detector_option):
        fn = option(fn)
    argument = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
    return argument(fn)


@click.command(epilog=BLESS_EPILOG)
@_recordings_and_detector
@click.option("--dry-run", is_flag=True, help="Show what would change, as diffs; write nothing.")
def bless(
    paths: tuple[Path, ...],
    detector: str | None,
    tools: str | None,
    dialects: tuple[str, ...],
    empty_tools: str | None,
    special_tokens: str | None,
    dry_run: bool,
) -> None:
    """Store what the detector emits for each recording now as the recording's expectation
    (what the `expected` oracle checks from then on), showing each change as a diff."""
    from tcr.replay.bless import bless as bless_all
    from tcr.replay.bless import changes, render_diff

    console = Console(soft_wrap=True)  # piped, a diff line is not cut at 80 columns
    try:
        chosen = load_detector(
            detector,
            dialects=claimed(dialects),
            empty_tools=empty_tools,
            special_tokens=special_tokens,
        )
        if dry_run:
            found = changes(paths, detector=chosen, tools=parse_tools(tools))
        else:
            found = bless_all(paths, detector=chosen, tools=parse_tools(tools))
    except TcrError as error:
        fail("bless", error)
    changed = [c for c in found if c.stored != c.current]
    for change in found:
        if change.stored == change.current:
            console.print(f"[bold]{_named(change.path)}[/]: unchanged", highlight=False)
            continue
        what = "would change" if dry_run else "blessed"
        console.print(f"[bold]{_named(change.path)}[/]: {what}", highlight=False)
        console.print(styled(render_diff(change)))
    if dry_run:
        console.print(f"{len(changed)} would change; nothing written (--dry-run)")


@click.command(epilog=REVIEW_EPILOG)
@_recordings_and_detector
def review(
    paths: tuple[Path, ...],
    detector: str | None,
    tools: str | None,
    dialects: tuple[str, ...],
    empty_tools: str | None,
    special_tokens: str | None,
) -> None:
    """Walk the recordings whose stored expectation differs from what the detector
    emits now, with a diff of each, and accept or reject the change."""
    from tcr.replay.bless import changes

    console = Console()
    try:
        chosen = load_detector(
            detector,
            dialects=claimed(dialects),
            empty_tools=empty_tools,
            special_tokens=special_tokens,
        )
        found = changes(paths, detector=chosen, tools=parse_tools(tools))
    except TcrError as error:
        fail("review", error)
    if not found:
        console.print("every stored expectation matches: nothing to review")
        return
    with _keys() as key:
        accepted, rejected = _review(console, found, key)
    console.print(f"\naccepted {accepted}, rejected {rejected}, of {len(found)} changed")


def _named(path: Path) -> str:
    """A file name as printed: its control characters drawn (an escape sequence in a
    name must not reach the terminal), then escaped for rich's markup."""
    from tcr.replay.show_render import visible

    return escape(visible(str(path)))


def _review(
    console: Console, found: Sequence[Change], read: Callable[[], str | None]
) -> tuple[int, int]:
    from tcr.corpus import write_expectation
    from tcr.replay.bless import render_diff

    accept_rest = False
    accepted = rejected = 0
    for n, change in enumerate(found, 1):
        console.print(f"\n[bold]{n}/{len(found)} {_named(change.path)}[/]", highlight=False)
        console.print(styled(render_diff(change)), soft_wrap=True)
        key = "a" if accept_rest else _ask(read)
        if key == "q":
            break
        if key == "A":
            accept_rest, key = True, "a"
        if key == "a":
            write_expectation(change.path, change.current)
            accepted += 1
        elif key == "r":
            rejected += 1
    return accepted, rejected


ANSWERS = {"a": "accept", "r": "reject", "s": "skip", "A": "accept all", "q": "quit"}
_PROMPT = "a accept · r reject · s skip · A accept all · q quit: "


def _ask(key: Callable[[], str | None]) -> str:
    """One answer read by ``key``. The end of input is ``q``; anything else asks again."""
    while True:
        click.echo(_PROMPT, nl=False)
        answer = key()
        if answer is None:
            click.echo("quit (end of input)")
            return "q"
        click.echo(ANSWERS.get(answer, f"{answer!r}? one of a, r, s, A, q"))
        if answer in ANSWERS:
            return answer


@contextmanager
def _keys() -> Iterator[Callable[[], str | None]]:
    """Reads answers: on a terminal, one keypress each (no Enter, no echo), else a line
    each (a pipe, a script). The terminal stays in cbreak mode for the whole review, so
    a key typed while a diff prints waits for its prompt instead of being flushed (as
    switching modes per prompt would); Ctrl-C still interrupts."""
    if not sys.stdin.isatty() or termios is None:
        yield _line
        return
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        yield lambda: _keypress(fd)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _keypress(fd: int) -> str | None:
    data = os.read(fd, 1)
    return None if data in (b"", b"\x04") else data.decode(errors="replace")  # \x04: Ctrl-D


def _line() -> str | None:
    line = sys.stdin.readline()
    return line.strip()[:1] if line else None


_CHANGES = (
    (r"\[-.*?-\]", "bold red"),
    (r"\{\+.*?\+\}", "bold green"),
    (r"(?m)^- .*$", "red"),
    (r"(?m)^\+ .*$", "green"),
    (r"(?m)^~ .*$", "yellow"),
)


def styled(diff: str) -> Text:
    """The diff with its removals red and additions green on a terminal; its markers
    (``[-…-]``, ``{+…+}``, ``-``/``+``/``~``) say the same without colour."""
    text = Text(diff)
    for pattern, style in _CHANGES:
        text.highlight_regex(pattern, style)
    return text
