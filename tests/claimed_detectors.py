"""Detectors that claim only some dialects, the way a user's parser declares it (``tcr_claim``).

``hermes_only`` parses Hermes JSON in ``<tool_call>`` and nothing else, and says
so on its factory; ``swallows_mistral`` claims the same but silently drops
``[TOOL_CALLS]`` markup it does not claim, a bug fuzzing against the claim must
find; ``hermes_text_without_tools`` parses nothing when no tools are offered, the
other choice for ``tools=[]``; ``wrong_claim`` declares its claim with the wrong type.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcr.detector.core import StreamDetector
from tcr.detector.events import Event, Text


class _Restricted:
    """The reference restricted to ``dialects``, without a claim of its own."""

    def __init__(
        self, dialects: Sequence[str], tools: Sequence[str] | None, format: str | None
    ) -> None:
        self._inner = StreamDetector(tools, format, dialects=dialects)

    @property
    def format(self) -> str | None:
        return self._inner.format

    def feed(self, chunk: str) -> list[Event]:
        return self._inner.feed(chunk)

    def finish(self) -> list[Event]:
        return self._inner.finish()

    def reset(self) -> None:
        self._inner.reset()


class _DropsMistral(_Restricted):
    """Reads ``[TOOL_CALLS]`` blocks, then drops them: markup it never claimed is lost."""

    def feed(self, chunk: str) -> list[Event]:
        return [
            e for e in super().feed(chunk) if getattr(e, "format", None) != "bracket_tool_calls"
        ]

    def finish(self) -> list[Event]:
        return [e for e in super().finish() if getattr(e, "format", None) != "bracket_tool_calls"]


def hermes_only(tools: Sequence[str] | None = None, format: str | None = None) -> _Restricted:
    return _Restricted(["hermes"], tools, format)


def swallows_mistral(tools: Sequence[str] | None = None, format: str | None = None) -> _Restricted:
    return _DropsMistral(["hermes", "bracket_tool_calls"], tools, format)


class _ShowsAll:
    """Parses nothing: what a server does with a request that offers no tools."""

    format = None

    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk)] if chunk else []

    def finish(self) -> list[Event]:
        return []

    def reset(self) -> None:
        pass


def hermes_text_without_tools(
    tools: Sequence[str] | None = None, format: str | None = None
) -> _Restricted | _ShowsAll:
    """Hermes only, and with ``tools=[]`` no parsing at all (``empty_tools="text"``)."""
    return _ShowsAll() if tools is not None and not tools else hermes_only(tools, format)


def wrong_claim(tools: Sequence[str] | None = None) -> _Restricted:
    return _Restricted(["hermes"], tools, None)


hermes_only.tcr_claim = {"dialects": ["hermes"]}  # type: ignore[attr-defined]
swallows_mistral.tcr_claim = ["hermes"]  # type: ignore[attr-defined]
hermes_text_without_tools.tcr_claim = {"dialects": ["hermes"], "empty_tools": "text"}  # type: ignore[attr-defined]
wrong_claim.tcr_claim = "hermes"  # type: ignore[attr-defined]  # a string, not a list of ids
