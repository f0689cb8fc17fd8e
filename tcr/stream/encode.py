"""Stream encoding, the decoders' inverse: the SSE events an OpenAI-compatible chat
endpoint or llama.cpp's ``/completion`` sends (``tcr serve``, the handmade corpora).

Payloads are compact JSON with UTF-8 left raw, as llama-server's nlohmann::json
writes them. Clients do not care in which order a chat chunk's keys come, but a
recording that imitates a server byte for byte does: :class:`ChunkOrder` says
whose order to follow.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import Enum
from typing import Any, Final

__all__ = [
    "SSE_DONE",
    "ChunkOrder",
    "chat_chunk",
    "compact_json",
    "completion_chunk",
    "sse_event",
]

#: The end of an OpenAI stream (llama.cpp's ``/completion`` has none: it stops with ``stop``).
SSE_DONE: Final = b"data: [DONE]\n\n"

#: ``obj`` as compact JSON, non-ASCII characters left as they are.
compact_json: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def sse_event(payload: object) -> bytes:
    """One SSE event whose data is ``payload`` as compact JSON."""
    return f"data: {compact_json(payload)}\n\n".encode()


class ChunkOrder(Enum):
    """Whose key order a chat-completion chunk follows."""

    OPENAI = "openai"  # id, object, created, model, system_fingerprint, choices
    LLAMA_SERVER = "llama-server"  # nlohmann::ordered_json: choices first, object last


def chat_chunk(
    delta: Mapping[str, Any],
    finish_reason: str | None = None,
    *,
    chunk_id: str,
    model: str,
    created: int,
    system_fingerprint: str | None = None,
    order: ChunkOrder = ChunkOrder.OPENAI,
) -> dict[str, Any]:
    """An OpenAI ``chat.completion.chunk`` with one choice carrying ``delta``."""
    fingerprint = {} if system_fingerprint is None else {"system_fingerprint": system_fingerprint}
    if order is ChunkOrder.LLAMA_SERVER:
        return {
            "choices": [{"finish_reason": finish_reason, "index": 0, "delta": dict(delta)}],
            "created": created,
            "id": chunk_id,
            "model": model,
            **fingerprint,
            "object": "chat.completion.chunk",
        }
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        **fingerprint,
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}],
    }


def completion_chunk(
    content: str, *, stop: bool = False, stop_type: str | None = None, model: str | None = None
) -> dict[str, Any]:
    """A llama.cpp ``/completion`` stream event: a piece of ``content``, or with ``stop``
    the last event, which says why (``stop_type``: ``eos``, ``limit``, ``word``)."""
    chunk: dict[str, Any] = {"content": content, "stop": stop}
    if stop_type is not None:
        chunk["stop_type"] = stop_type
    if model is not None:
        chunk["model"] = model
    return chunk
