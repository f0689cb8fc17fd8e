"""The status line: what is open, under which chunking, where, and the verdict."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.style import Style
from rich.text import Text as RichText
from textual.widgets import Static

from ..model import Run, Session

__all__ = ["StatusBar", "status_text"]


def status_text(
    session: Session,
    run: Run,
    row: int,
    *,
    target: str | None = None,
    style: Callable[[str], Style] = lambda _: Style(),
) -> RichText:
    """``file · strategy k/m · step r/n · verdict`` (``style`` maps a role to a style)."""
    out = RichText(no_wrap=True, overflow="ellipsis")
    out.append(f" {session.source.label}", style("file"))
    count = len(session.strategies)
    out.append(f" · {run.spec} {session.current + 1}/{count}")
    last = "fin" if row == run.finish_row and run.complete else str(row)
    more = "" if run.complete else "+"
    out.append(f" · step {last}/{len(run.chunks)}{more}")
    if target is not None:
        out.append(f" · break at {target}")
    out.append(" · ")
    source = session.source
    if source.error is not None:
        out.append(f"read failed: {source.error} · ", style("bad"))
    if not source.done:
        out.append("reading…", style("busy"))
    elif not run.done:
        share = 100 * len(run.steps) // max(run.rows, 1)
        out.append(f"tracing {share}%…", style("busy"))
    elif run.analysis_error is not None:
        out.append(f"oracles failed: {run.analysis_error}", style("bad"))
    elif run.verdict is None:
        out.append("checking…", style("busy"))
    elif run.verdict.ok:
        out.append("✓ every check passes", style("good"))
    else:
        found = run.verdict.violations
        checks = ", ".join(dict.fromkeys(v.check for v in found))
        out.append(f"✗ {len(found)} violation{'s' * (len(found) != 1)}: {checks}", style("bad"))
    return out


class StatusBar(Static):
    """One line docked at the top."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "status--file",
        "status--busy",
        "status--bad",
        "status--good",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.plain = ""

    def _style(self, role: str) -> Style:
        return self.get_component_rich_style(f"status--{role}", partial=True)

    def show(self, session: Session, run: Run, row: int, *, target: str | None = None) -> None:
        text = status_text(session, run, row, target=target, style=self._style)
        self.plain = text.plain
        self.update(text, layout=False)
