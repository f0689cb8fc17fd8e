"""Stream decoding: transport bytes to content chunks (ARCHITECTURE.md §4).

Layers, each sans-I/O (``feed`` / ``finish``) and each in its own module:

* :mod:`tcr.stream.sse` — SSE body bytes to :class:`SSEEvent` (WHATWG rules);
* :mod:`tcr.stream.ndjson` — NDJSON body bytes to :class:`NDJSONLine`;
* :mod:`tcr.stream.payloads` — one JSON payload (OpenAI chunk, llama.cpp
  ``/completion``, Ollama) to a :class:`Delta`;
* :mod:`tcr.stream.deltas` — deltas, and native tool calls assembled by index;
* :mod:`tcr.stream.decode` — a whole recording to :class:`Decoded`;
* :mod:`tcr.stream.encode` — the other way: chat-completion chunks and
  llama.cpp ``/completion`` events as SSE (``tcr serve``, handmade corpora).
"""

from __future__ import annotations

from tcr.stream.decode import (
    DEFAULT_FRAMINGS,
    Decoded,
    FrameLike,
    RecordingLike,
    StreamDecoder,
    decode,
    decode_bytes,
    decode_chunks,
)
from tcr.stream.deltas import (
    CallAssembler,
    Delta,
    NativeCall,
    SurrogateJoiner,
    ToolCallFragment,
    scrub_surrogates,
)
from tcr.stream.encode import (
    SSE_DONE,
    ChunkOrder,
    chat_chunk,
    compact_json,
    completion_chunk,
    sse_event,
)
from tcr.stream.ndjson import NDJSONDecoder, NDJSONLine
from tcr.stream.payloads import detect_framing
from tcr.stream.sse import SSEDecoder, SSEEvent

__all__ = [
    "DEFAULT_FRAMINGS",
    "SSE_DONE",
    "CallAssembler",
    "ChunkOrder",
    "Decoded",
    "Delta",
    "FrameLike",
    "NDJSONDecoder",
    "NDJSONLine",
    "NativeCall",
    "RecordingLike",
    "SSEDecoder",
    "SSEEvent",
    "StreamDecoder",
    "SurrogateJoiner",
    "ToolCallFragment",
    "chat_chunk",
    "compact_json",
    "completion_chunk",
    "decode",
    "decode_bytes",
    "decode_chunks",
    "detect_framing",
    "scrub_surrogates",
    "sse_event",
]
