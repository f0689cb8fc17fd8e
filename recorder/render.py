"""How ``tcr record`` and ``tcr import`` show recordings: a summary in three lines, a
recording the proxy just made in one, or a JSON list of summaries."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape

from tcr.recorder.capture import Recorded
from tcr.recorder.summary import Summary

__all__ = ["counted", "print_summaries", "recorded_line", "render_summary", "summaries_json"]


def counted(n: int, noun: str) -> str:
    """``1 frame``, ``1,024 bytes``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _ms(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:.1f} ms" if value < 10_000 else f"{value / 1000:.1f} s"


def render_summary(console: Console, summary: Summary) -> None:
    """One recording in three lines: verdict and file, numbers, content preview."""
    mark = "[green]✓[/]" if summary.complete else "[red]✗[/]"
    console.print(f"{mark} [bold]{escape(summary.path)}[/]", soft_wrap=True)  # copied whole
    status = f"HTTP {summary.status} · " if summary.status is not None else ""
    console.print(
        f"  {status}{summary.kind} · {counted(summary.frames, 'frame')} · "
        f"{counted(summary.bytes, 'byte')} · "
        f"TTFB {_ms(summary.ttfb_ms)} · duration {_ms(summary.duration_ms)}"
    )
    extra = [f"{summary.chars:,} chars"] if summary.chars else []
    if summary.calls:
        extra.append(f"tool calls: {', '.join(summary.calls)}")
    tail = f"  [dim]({'; '.join(extra)})[/]" if extra else ""
    console.print(f"  content: {escape(summary.preview) or '[dim](none)[/]'}{tail}")
    if not summary.complete:
        console.print(f"  [red]incomplete: {escape(summary.error or '')}[/]")


def summaries_json(summaries: Iterable[Summary]) -> str:
    return json.dumps([s.to_dict() for s in summaries], indent=2, ensure_ascii=False)


def print_summaries(console: Console, summaries: Iterable[Summary], *, as_json: bool) -> None:
    """Summaries rendered on ``console``, or as JSON on stdout."""
    if as_json:
        sys.stdout.write(summaries_json(summaries) + "\n")
        sys.stdout.flush()
        return
    for summary in summaries:
        render_summary(console, summary)


def recorded_line(result: Recorded) -> str:
    """A recording the proxy made, in one line of console markup: cheap to make, as
    decoding a preview while serving would stall the streams."""
    mark = "[green]✓[/]" if result.complete else "[red]✗[/]"
    ttfb = None if result.ttfb_ns is None else result.ttfb_ns / 1e6
    line = (
        f"{mark} {escape(str(result.path))} · HTTP {result.status} · {result.kind} · "
        f"{counted(result.frame_count, 'frame')} · {counted(result.byte_count, 'byte')} · "
        f"TTFB {_ms(ttfb)} · duration {_ms(result.duration_ns / 1e6)}"
    )
    return line if result.complete else f"{line} · [red]{escape(result.error or '')}[/]"
