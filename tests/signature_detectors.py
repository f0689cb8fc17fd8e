"""Detectors with two bugs each, one of them chunk dependent: a run must report both, and
shrinking one must not turn it into the other (tests of signatures, ARCHITECTURE.md §7.4).

Importable by name (``signature_detectors:renames_and_loses_text``) so reproducers,
snippets and ``--jobs`` workers can load them.
"""

from __future__ import annotations

from collections.abc import Iterable

from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text, ToolCall


class RenamesAndLosesText(StreamDetector):
    """Every call's name comes out upper-cased (under any chunking: the whole run too), and
    text after a block that arrived over several chunks is dropped (chunk dependent)."""

    def reset(self) -> None:
        super().reset()
        self._losing = False

    def feed(self, chunk: str) -> list[Event]:
        inside = self._block is not None
        return self._bend(super().feed(chunk), inside)

    def finish(self) -> list[Event]:
        return self._bend(super().finish(), self._block is not None)

    def _bend(self, events: list[Event], block_was_open: bool) -> list[Event]:
        out: list[Event] = []
        for event in events:
            if isinstance(event, ToolCall):
                self._losing = self._losing or block_was_open
                out.append(ToolCall(event.name.upper(), event.arguments, event.raw, event.format))
            elif not (isinstance(event, Text) and self._losing):
                out.append(event)
        return out


def renames_and_loses_text(
    tools: Iterable[str] | None = None,
    format: str | None = None,
    max_block: int = 1 << 20,
    dialects: Iterable[str] | None = None,
) -> StreamDetector:
    """Restricted to the dialects it is asked for, as the reference is (``--dialect``)."""
    return RenamesAndLosesText(tools=tools, format=format, max_block=max_block, dialects=dialects)
