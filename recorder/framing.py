"""Which body is a stream, and of which recording kind (ARCHITECTURE.md §3): decided from the
``Content-Type`` when it says, else from the first bytes, else from the API."""

from __future__ import annotations

from typing import Final

__all__ = ["NDJSON_TYPES", "SSE_TYPES", "detect_kind", "is_stream_type", "media_type", "sniff"]

SSE_TYPES: Final = frozenset({"text/event-stream"})
NDJSON_TYPES: Final = frozenset(
    {
        "application/x-ndjson",
        "application/ndjson",
        "application/jsonl",
        "application/x-jsonlines",
        "application/jsonlines",
        "application/stream+json",
    }
)
_SSE_STARTS: Final = (b"data:", b"event:", b"id:", b"retry:", b":")
_BOM: Final = b"\xef\xbb\xbf"


def media_type(content_type: str | None) -> str | None:
    """``text/event-stream; charset=utf-8`` → ``text/event-stream``; absent → ``None``."""
    if not content_type:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def is_stream_type(content_type: str | None) -> bool:
    return media_type(content_type) in SSE_TYPES | NDJSON_TYPES


def sniff(first: bytes) -> str | None:
    """``"sse"`` or ``"ndjson"`` from the first bytes of a body, or ``None``."""
    head = first.removeprefix(_BOM).lstrip(b" \t\r\n")
    if head.startswith(_SSE_STARTS):
        return "sse"
    if head.startswith(b"{"):
        return "ndjson"
    return None


def detect_kind(content_type: str | None, first: bytes, api: str | None) -> str:
    """The recording kind of a body: ``"sse"`` or ``"ndjson"``.

    A JSON (non-streaming or error) body is kept as ``ndjson``: a one-line NDJSON
    body that ``tcr show`` can still decode, error message included.
    """
    media = media_type(content_type)
    if media in SSE_TYPES:
        return "sse"
    if media in NDJSON_TYPES or media == "application/json":
        return "ndjson"
    return sniff(first) or ("ndjson" if api == "ollama" else "sse")
