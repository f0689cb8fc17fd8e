"""Small real HTTP servers for the recorder's tests, each on 127.0.0.1 port 0 in a
background thread with its own event loop (so sync tests, CliRunner and
subprocesses can all reach them).

Routes of :func:`llm_app`, shaped like the backends tcr records:

* ``POST /v1/chat/completions`` — OpenAI SSE, ``n`` events ``delay`` seconds apart;
* ``POST /api/chat`` — Ollama NDJSON;
* ``POST /completion`` — llama.cpp SSE;
* ``POST /error`` — 500 with a JSON error;
* ``POST /unauthorized`` — 401 with a JSON error echoing the request's credentials
  (``Authorization``, ``X-Api-Key`` and the query string), as careless servers do;
* ``POST /json`` — 200 ``application/json``, not a stream;
* ``POST /drop`` — half the events, then the connection is cut;
* ``POST /stall`` — two events, then silence;
* ``POST /silent`` — never answers at all;
* ``GET /echo``, ``/base/…`` — the request it got, as JSON (plus a ``Set-Cookie``).

Every request is logged in ``Upstream.requests`` as ``(method, path_qs, headers, body)``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from collections.abc import Awaitable, Callable
from types import TracebackType

from aiohttp import web

STALL_SECONDS = 10.0  # long enough for any timeout under test, short enough to end


def openai_events(n: int, text: str = "tok") -> list[bytes]:
    """The SSE body of an OpenAI chat-completion stream, one item per event."""
    events = []
    for i in range(n):
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": f"{text}{i} "}, "finish_reason": None}],
        }
        events.append(f"data: {json.dumps(chunk)}\n\n".encode())
    stop = {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    events.append(f"data: {json.dumps(stop)}\n\n".encode())
    events.append(b"data: [DONE]\n\n")
    return events


def ollama_lines(n: int) -> list[bytes]:
    lines = [
        json.dumps(
            {"model": "m", "message": {"role": "assistant", "content": f"w{i} "}, "done": False}
        ).encode()
        + b"\n"
        for i in range(n)
    ]
    lines.append(
        json.dumps(
            {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True}
        ).encode()
        + b"\n"
    )
    return lines


def llamacpp_events(n: int) -> list[bytes]:
    events = [
        f"data: {json.dumps({'content': f'c{i} ', 'stop': False})}\n\n".encode() for i in range(n)
    ]
    events.append(f"data: {json.dumps({'content': '', 'stop': True})}\n\n".encode())
    return events


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Upstream:
    """``with Upstream(app) as url:`` serves ``app`` until the block ends."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def _start(self) -> None:
        @web.middleware
        async def log(request: web.Request, handler: Handler) -> web.StreamResponse:
            body = await request.read()
            self.requests.append((request.method, request.path_qs, dict(request.headers), body))
            return await handler(request)

        self.app.middlewares.append(log)
        self.runner = web.AppRunner(self.app, shutdown_timeout=0.2, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"

    async def _stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
        # Handlers whose client went away keep running (aiohttp does not cancel them).
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def __enter__(self) -> Upstream:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=10)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


async def _stream(
    request: web.Request,
    items: list[bytes],
    content_type: str,
    *,
    delay: float = 0.0,
    cut_after: int | None = None,
    stall_after: int | None = None,
    headers: dict[str, str] | None = None,
) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": content_type, **(headers or {})})
    await response.prepare(request)
    for index, item in enumerate(items):
        if index == cut_after:
            assert request.transport is not None
            request.transport.close()
            return response
        if index == stall_after:
            await asyncio.sleep(STALL_SECONDS)
        await response.write(item)
        if delay:
            await asyncio.sleep(delay)
    await response.write_eof()
    return response


def _n(request: web.Request, default: int = 20) -> int:
    return min(int(request.query.get("n", default)), 100_000)


def _delay(request: web.Request) -> float:
    return min(float(request.query.get("delay", 0.001)), 1.0)


def llm_app() -> web.Application:
    async def chat(request: web.Request) -> web.StreamResponse:
        extra = (
            {"Set-Cookie": "session=cookie-secret-123; HttpOnly"}
            if "cookie" in request.query
            else {}
        )
        return await _stream(
            request,
            openai_events(_n(request)),
            "text/event-stream",
            delay=_delay(request),
            headers=extra,
        )

    async def ollama(request: web.Request) -> web.StreamResponse:
        return await _stream(
            request, ollama_lines(_n(request)), "application/x-ndjson", delay=_delay(request)
        )

    async def completion(request: web.Request) -> web.StreamResponse:
        return await _stream(
            request, llamacpp_events(_n(request)), "text/event-stream", delay=_delay(request)
        )

    async def error(request: web.Request) -> web.StreamResponse:
        body = {"error": {"code": 500, "message": "the model exploded", "type": "server_error"}}
        return web.json_response(body, status=500)

    async def unauthorized(request: web.Request) -> web.StreamResponse:
        given = [request.headers.get(name, "") for name in ("Authorization", "X-Api-Key")]
        message = f"invalid credentials {' '.join(given)} for {request.path_qs}"
        body = {"error": {"code": 401, "message": message, "type": "auth_error"}}
        return web.json_response(body, status=401)

    async def not_a_stream(request: web.Request) -> web.StreamResponse:
        body = {
            "id": "c",
            "object": "chat.completion",
            "choices": [{"message": {"role": "assistant", "content": "hi"}}],
        }
        return web.json_response(body)

    async def drop(request: web.Request) -> web.StreamResponse:
        events = openai_events(_n(request))
        return await _stream(
            request, events, "text/event-stream", delay=_delay(request), cut_after=len(events) // 2
        )

    async def stall(request: web.Request) -> web.StreamResponse:
        return await _stream(request, openai_events(5), "text/event-stream", stall_after=2)

    async def silent(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(STALL_SECONDS)
        return web.Response(text="too late")

    async def echo(request: web.Request) -> web.StreamResponse:
        seen = {
            "method": request.method,
            "path_qs": request.path_qs,
            "raw_path": request.raw_path,
            "headers": dict(request.headers),
        }
        return web.json_response(seen, headers={"Set-Cookie": "session=cookie-secret-123"})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/api/chat", ollama)
    app.router.add_post("/completion", completion)
    app.router.add_post("/error", error)
    app.router.add_post("/unauthorized", unauthorized)
    app.router.add_post("/json", not_a_stream)
    app.router.add_post("/drop", drop)
    app.router.add_post("/stall", stall)
    app.router.add_post("/silent", silent)
    app.router.add_route("*", "/echo", echo)
    app.router.add_route("*", "/base/{tail:.*}", echo)
    return app


def free_port() -> int:
    """A port with nothing listening (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# A chunked response whose second chunk-size line is not hexadecimal: aiohttp 3.14's
# parser stalls on it without raising or timing out, and the server keeps the
# connection open.
MALFORMED_CHUNK = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
    b'10\r\ndata: {"a": 1}\n\n\r\n',
    b"zz\r\ndata: x\n\n\r\n",
)


class RawUpstream:
    """``with RawUpstream(parts) as url:`` answers every request with ``parts``, the raw
    bytes of an HTTP response written a little apart, then holds the connection open
    without a word (``end="close"``: closes it, ``end="reset"``: resets it, a TCP RST):
    what no aiohttp handler can send."""

    def __init__(self, parts: tuple[bytes, ...], *, end: str = "hold") -> None:
        self.parts = parts
        self.end = end
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server: asyncio.Server | None = None
        self.url = ""

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            for part in self.parts:
                writer.write(part)
                await writer.drain()
                await asyncio.sleep(0.05)
            if self.end == "reset":  # SO_LINGER 0: the close sends a reset, not an orderly end
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return
            if self.end == "close":
                writer.close()
                return
            await asyncio.sleep(3600)
        except asyncio.CancelledError:  # stopped: a cancelled handler is logged as an error
            writer.close()

    async def _start(self) -> None:
        self.server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _stop(self) -> None:
        assert self.server is not None
        self.server.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def __enter__(self) -> RawUpstream:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()
