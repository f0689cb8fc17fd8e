"""Wire framing for handmade recordings: content chunks to the bytes a backend sends.

The regression table (``build_regressions``) says *what* a model wrote and how
its tokenizer split it; this module says how each backend puts that on the
wire, byte for byte, so a handmade recording decodes like a captured one:

* ``sse_chat`` — llama-server ``/v1/chat/completions``: one OpenAI chunk per
  token, nlohmann-style compact JSON (keys in llama-server's order, UTF-8 left
  raw), a role-only first chunk, a final chunk with ``finish_reason``, usage
  and timings, then ``data: [DONE]``;
* ``sse_completion`` — llama-server's native ``/completion`` (``content``,
  ``stop``, ``stop_type``), no ``[DONE]``;
* ``ndjson_ollama`` — Ollama ``/api/chat``: Go ``encoding/json`` lines (which
  escape ``<``, ``>`` and ``&``), a final ``done: true`` line with durations;
* ``engine_chunks`` — an in-process engine's text chunks, one frame each.

Everything random (ids, timings) is drawn from a generator seeded with the
file name, so a rebuild is byte-identical.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

from tcr.stream.encode import SSE_DONE, ChunkOrder, chat_chunk, compact_json, sse_event

__all__ = [
    "CREATED",
    "TOOL_SCHEMAS",
    "Backend",
    "Encoded",
    "Exchange",
    "Wire",
    "encode",
    "engine_chunks",
    "ndjson_ollama",
    "sse_chat",
    "sse_completion",
]

#: Every handmade recording claims this moment, so rebuilding never changes a byte.
CREATED = datetime(2026, 5, 18, 9, 0, tzinfo=UTC)

_LLAMA_SERVER_BUILD = "b6121-e71ee9a1"

#: JSON schemas of the tools the cases offer, as a client would send them.
TOOL_SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "get_weather": {
        "description": "Current weather and forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "days": {"type": "integer", "description": "Forecast days (1-7)"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
    "get_time": {
        "description": "Current local time in an IANA time zone.",
        "parameters": {
            "type": "object",
            "properties": {"tz": {"type": "string", "description": "e.g. Europe/Paris"}},
            "required": ["tz"],
        },
    },
    "write_file": {
        "description": "Create or overwrite a file in the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    "run_sql": {
        "description": "Run a read-only SQL query against the orders database.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    },
}


class Wire(Enum):
    """How a backend frames the stream: the recording kind (ARCHITECTURE.md §3) and the payload
    framing ``tcr.stream`` detects in it."""

    SSE_CHAT = ("sse", "openai")
    SSE_COMPLETION = ("sse", "llamacpp")
    NDJSON_OLLAMA = ("ndjson", "ollama")
    ENGINE_CHUNKS = ("chunks", "chunks")

    @property
    def kind(self) -> str:
        return self.value[0]

    @property
    def framing(self) -> str:
        return self.value[1]


@dataclass(frozen=True, slots=True)
class Backend:
    """Where a recording came from: the serving program, its model and its framing."""

    wire: Wire
    backend: str
    model: str
    endpoint: str | None
    ms_per_chunk: float  # mean time between chunks: one decode step for a token stream


def sse_chat(model: str, *, ms_per_chunk: float = 22.0) -> Backend:
    """llama-server's OpenAI-compatible chat endpoint."""
    url = "http://127.0.0.1:8080/v1/chat/completions"
    return Backend(Wire.SSE_CHAT, "llama-server", model, url, ms_per_chunk)


def sse_completion(model: str, *, ms_per_chunk: float = 38.0) -> Backend:
    """llama-server's native ``/completion`` endpoint (a raw, pre-rendered prompt)."""
    url = "http://127.0.0.1:8080/completion"
    return Backend(Wire.SSE_COMPLETION, "llama-server", model, url, ms_per_chunk)


def ndjson_ollama(model: str, *, ms_per_chunk: float = 26.0) -> Backend:
    """Ollama's native ``/api/chat``."""
    url = "http://127.0.0.1:11434/api/chat"
    return Backend(Wire.NDJSON_OLLAMA, "ollama", model, url, ms_per_chunk)


def engine_chunks(engine: str, model: str, *, ms_per_chunk: float = 16.0) -> Backend:
    """An in-process engine's chunk sequence (no transport, no endpoint)."""
    return Backend(Wire.ENGINE_CHUNKS, engine, model, None, ms_per_chunk)


# --- encoding --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Encoded:
    """A case as a recording: header parts and frames ``(t_ns, data)``."""

    kind: str
    source: dict[str, Any]
    request: dict[str, Any]
    response: dict[str, Any]
    frames: list[tuple[int, bytes | str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Exchange:
    """What the client asked: the messages, the tools offered and any extra fields."""

    messages: list[dict[str, Any]]
    offered: Sequence[str] | None
    extra: Mapping[str, Any]
    finish: str  # "stop" or "length"


def encode(name: str, backend: Backend, chunks: Sequence[str], exchange: Exchange) -> Encoded:
    """The recording of ``chunks`` as ``backend`` streams them, timed and framed."""
    rng = random.Random(name)  # str seeds are hashed with SHA-512: stable across runs
    times = _arrivals(rng, backend, len(chunks))
    source = {"endpoint": backend.endpoint, "backend": backend.backend, "model": backend.model}
    prompt_tokens = _prompt_tokens(exchange)
    wire = backend.wire
    if wire is Wire.SSE_CHAT:
        frames = _sse_chat_frames(rng, backend, chunks, times, exchange.finish, prompt_tokens)
        request = _chat_request(backend, exchange, len(chunks))
        return Encoded(wire.kind, source, request, _SSE_RESPONSE, frames)
    if wire is Wire.SSE_COMPLETION:
        frames = _completion_frames(backend, chunks, times, exchange.finish, prompt_tokens)
        request = _completion_request(exchange, len(chunks))
        return Encoded(wire.kind, source, request, _SSE_RESPONSE, frames)
    if wire is Wire.NDJSON_OLLAMA:
        frames = _ollama_frames(backend, chunks, times, exchange.finish, prompt_tokens)
        request = _ollama_request(backend, exchange, len(chunks))
        return Encoded(wire.kind, source, request, _NDJSON_RESPONSE, frames)
    frames = [(t, chunk) for t, chunk in zip(times, chunks, strict=True)]
    request = _chat_request(backend, exchange, len(chunks), stream=False)
    return Encoded(wire.kind, source, request, {"status": None, "headers": {}}, frames)


def _arrivals(rng: random.Random, backend: Backend, count: int) -> list[int]:
    """Arrival times in ns: prompt processing first, then one decode step per chunk."""
    t = rng.randint(90_000_000, 420_000_000)
    times: list[int] = []
    for _ in range(count):
        times.append(t)
        t += int(backend.ms_per_chunk * rng.uniform(0.8, 1.35) * 1_000_000)
    return times


def _prompt_tokens(exchange: Exchange) -> int:
    words = sum(len(str(m.get("content", "")).split()) for m in exchange.messages)
    return 12 + int(words * 1.4) + 90 * len(exchange.offered or ())


def _tool_list(names: Sequence[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, **TOOL_SCHEMAS[n]}} for n in names]


def _chat_request(
    backend: Backend, exchange: Exchange, count: int, *, stream: bool = True
) -> dict[str, Any]:
    body: dict[str, Any] = {"model": backend.model, "messages": exchange.messages}
    if stream:
        body["stream"] = True
    if exchange.offered is not None:
        body["tools"] = _tool_list(exchange.offered)
    if exchange.finish == "length":  # the stream was cut by the token limit the client set
        body["max_tokens"] = count
    body.update(exchange.extra)
    return body


def _ollama_request(backend: Backend, exchange: Exchange, count: int) -> dict[str, Any]:
    body: dict[str, Any] = {"model": backend.model, "messages": exchange.messages, "stream": True}
    if exchange.offered is not None:
        body["tools"] = _tool_list(exchange.offered)
    if exchange.finish == "length":
        body["options"] = {"num_predict": count}
    body.update(exchange.extra)
    return body


def _completion_request(exchange: Exchange, count: int) -> dict[str, Any]:
    # Mistral's v7 template, rendered by the client: tools in [AVAILABLE_TOOLS].
    tools = json.dumps(_tool_list(exchange.offered or ()), ensure_ascii=False)
    user = next(m["content"] for m in exchange.messages if m["role"] == "user")
    prompt = f"<s>[AVAILABLE_TOOLS]{tools}[/AVAILABLE_TOOLS][INST]{user}[/INST]"
    n_predict = count if exchange.finish == "length" else 512
    return {"prompt": prompt, "n_predict": n_predict, "stream": True, **exchange.extra}


_SSE_RESPONSE: dict[str, Any] = {
    "status": 200,
    "headers": {
        "server": "llama.cpp",
        "content-type": "text/event-stream",
        "transfer-encoding": "chunked",
        "keep-alive": "timeout=5, max=100",
    },
}

_NDJSON_RESPONSE: dict[str, Any] = {
    "status": 200,
    "headers": {
        "content-type": "application/x-ndjson",
        "date": CREATED.strftime("%a, %d %b %Y %H:%M:%S GMT"),
        "transfer-encoding": "chunked",
    },
}


def _timings(prompt_n: int, predicted_n: int, predicted_ms: float) -> dict[str, Any]:
    prompt_ms = round(prompt_n * 0.41, 3)
    predicted_n = max(predicted_n, 1)
    return {
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": round(prompt_ms / prompt_n, 3),
        "prompt_per_second": round(prompt_n * 1000 / prompt_ms, 3),
        "predicted_n": predicted_n,
        "predicted_ms": round(predicted_ms, 3),
        "predicted_per_token_ms": round(predicted_ms / predicted_n, 3),
        "predicted_per_second": round(predicted_n * 1000 / max(predicted_ms, 0.001), 3),
    }


def _sse_chat_frames(
    rng: random.Random,
    backend: Backend,
    chunks: Sequence[str],
    times: Sequence[int],
    finish: str,
    prompt_tokens: int,
) -> list[tuple[int, bytes | str]]:
    ident = "chatcmpl-" + "".join(rng.choice(_ALNUM) for _ in range(32))
    base = int(CREATED.timestamp())

    def chunk(t_ns: int, delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
        return chat_chunk(
            delta,
            reason,
            chunk_id=ident,
            model=backend.model,
            created=base + t_ns // 1_000_000_000,
            system_fingerprint=_LLAMA_SERVER_BUILD,
            order=ChunkOrder.LLAMA_SERVER,
        )

    frames: list[tuple[int, bytes | str]] = []
    for index, (t_ns, text) in enumerate(zip(times, chunks, strict=True)):
        data = sse_event(chunk(t_ns, {"content": text}, None))
        if index == 0:  # the role-only chunk goes out in the same write as the first token
            data = sse_event(chunk(t_ns, {"role": "assistant", "content": None}, None)) + data
        frames.append((t_ns, data))
    end = (times[-1] if times else 0) + rng.randint(300_000, 2_000_000)
    final = chunk(end, {}, finish)
    final["usage"] = {
        "completion_tokens": len(chunks),
        "prompt_tokens": prompt_tokens,
        "total_tokens": len(chunks) + prompt_tokens,
    }
    decode_ms = (end - (times[0] if times else end)) / 1_000_000
    final["timings"] = _timings(prompt_tokens, len(chunks), decode_ms)
    frames.append((end, sse_event(final) + SSE_DONE))
    return frames


def _completion_frames(
    backend: Backend,
    chunks: Sequence[str],
    times: Sequence[int],
    finish: str,
    prompt_tokens: int,
) -> list[tuple[int, bytes | str]]:
    frames: list[tuple[int, bytes | str]] = []
    for index, (t_ns, text) in enumerate(zip(times, chunks, strict=True)):
        partial = {
            "index": 0,
            "content": text,
            "tokens": [],
            "stop": False,
            "id_slot": -1,
            "tokens_predicted": index + 1,
            "tokens_evaluated": prompt_tokens,
        }
        frames.append((t_ns, sse_event(partial)))
    end = (times[-1] if times else 0) + 1_200_000
    final = {
        "index": 0,
        "content": "",
        "tokens": [],
        "id_slot": 0,
        "stop": True,
        "model": backend.model,
        "tokens_predicted": len(chunks),
        "tokens_evaluated": prompt_tokens,
        "has_new_line": any("\n" in c for c in chunks),
        "truncated": False,
        "stop_type": "limit" if finish == "length" else "eos",
        "stopping_word": "",
        "tokens_cached": prompt_tokens + len(chunks),
        "timings": _timings(prompt_tokens, len(chunks), (end - times[0]) / 1_000_000),
    }
    frames.append((end, sse_event(final)))
    return frames


_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028"}
_GO_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def _go_json(obj: object) -> str:
    """JSON as Go's ``encoding/json`` writes it: compact, with HTML characters escaped."""
    return _GO_ESCAPE_RE.sub(lambda m: _GO_ESCAPES.get(m.group(), "\\u2029"), compact_json(obj))


def _rfc3339_nano(t_ns: int) -> str:
    moment = CREATED + timedelta(microseconds=t_ns // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond:06d}{t_ns % 1000:03d}Z"


def _ollama_frames(
    backend: Backend,
    chunks: Sequence[str],
    times: Sequence[int],
    finish: str,
    prompt_tokens: int,
) -> list[tuple[int, bytes | str]]:
    frames: list[tuple[int, bytes | str]] = []
    for t_ns, text in zip(times, chunks, strict=True):
        line = {
            "model": backend.model,
            "created_at": _rfc3339_nano(t_ns),
            "message": {"role": "assistant", "content": text},
            "done": False,
        }
        frames.append((t_ns, (_go_json(line) + "\n").encode()))
    end = (times[-1] if times else 0) + 850_000
    first = times[0] if times else end
    final = {
        "model": backend.model,
        "created_at": _rfc3339_nano(end),
        "message": {"role": "assistant", "content": ""},
        "done_reason": finish,
        "done": True,
        "total_duration": end + 2_100_000,
        "load_duration": 31_400_000,
        "prompt_eval_count": prompt_tokens,
        "prompt_eval_duration": first - 35_000_000 if first > 35_000_000 else first,
        "eval_count": len(chunks),
        "eval_duration": end - first,
    }
    frames.append((end, (_go_json(final) + "\n").encode()))
    return frames


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
