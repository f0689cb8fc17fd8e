"""``tcr record --proxy``: a transparent reverse proxy that records every streamed response.

Clients point at the proxy instead of the server. Requests and responses pass
through unchanged (hop-by-hop headers aside, as RFC 9110 §7.6.1 requires);
nothing is buffered: each upstream read is written to the client at once,
then appended to the recording. Responses whose ``Content-Type`` is a stream
(SSE, NDJSON) are recorded, one file each; others pass through unrecorded.

When the upstream drops or stalls mid-stream the client's connection is cut
the same way (no clean end of body), so the client sees what it would have
seen without the proxy, and the recording is closed as incomplete.

Whatever cannot be recorded never reaches the client: a request the header
cannot hold as sent is kept as far as it fits (see :mod:`tcr.recorder.capture`),
and a recording that cannot be written at all (the directory gone, the disk
full) is dropped with one line on stderr while the stream goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import aiohttp
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from tcr._runtime.background import AsyncService, in_background
from tcr.recorder.body import BodyReader
from tcr.recorder.capture import (
    Capture,
    Recorded,
    disconnected,
    interrupted,
    one_line,
    timed_out,
)
from tcr.recorder.client import DEFAULT_TIMEOUT, check_url
from tcr.recorder.errors import RecordError
from tcr.recorder.framing import is_stream_type, media_type
from tcr.recorder.redact import Secrets, redact_url
from tcr.recorder.request import detect_api, url_credentials

__all__ = ["HOP_BY_HOP", "RecordingProxy", "running_proxy", "serve_proxy"]

HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
# Headers aiohttp's client adds when absent; a transparent proxy must not.
_AUTO_HEADERS: Final = ("Accept", "Accept-Encoding", "Content-Type", "User-Agent")
_MAX_REQUEST: Final = 256 << 20
_STOPPED: Final = "proxy stopped"


class _ExactHeadResponse(web.StreamResponse):
    """A response whose head is sent as the upstream's bytes were received.

    aiohttp reads a header byte that is not UTF-8 as a lone surrogate
    (``surrogateescape``) and writes headers as UTF-8, dropping such a surrogate:
    a proxy in between would change the header. When a value holds one, the head is
    written here, each value encoded back with ``surrogateescape``; otherwise, and for
    everything after the head, aiohttp's own writer runs. (``_write_headers`` is
    aiohttp's hook for the head, 3.9 to 3.14; the raw-socket test in
    tests/recorder/test_record_unrecordable.py pins what it sends.)
    """

    async def _write_headers(self) -> None:
        request = self._req
        if request is None or request.transport is None or not _has_raw_bytes(self.headers):
            await super()._write_headers()
            return
        version = request.version
        lines = [f"HTTP/{version.major}.{version.minor} {self.status} {self.reason}"]
        lines += [f"{name}: {value}" for name, value in self.headers.items()]
        for line in lines:
            if _FORBIDDEN_IN_HEAD.search(line):  # as aiohttp refuses: no header injection
                raise ValueError("a control character in a response header")
        head = "\r\n".join(lines) + "\r\n\r\n"
        request.transport.write(head.encode("utf-8", "surrogateescape"))


_FORBIDDEN_IN_HEAD: Final = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _has_raw_bytes(headers: Mapping[str, str]) -> bool:
    """Whether a value holds a byte aiohttp read as a lone surrogate (``surrogateescape``)."""
    return any(not value.isascii() and _SURROGATE.search(value) for value in headers.values())


_SURROGATE: Final = re.compile("[\udc80-\udcff]")


def _end_to_end(headers: CIMultiDictProxy[str], *, drop: tuple[str, ...] = ()) -> CIMultiDict[str]:
    """The headers a proxy forwards: all but hop-by-hop ones and those ``Connection`` names."""
    listed = {
        token.strip().lower()
        for value in headers.getall("Connection", [])
        for token in value.split(",")
    }
    skip = HOP_BY_HOP | listed | {name.lower() for name in drop}
    return CIMultiDict((k, v) for k, v in headers.items() if k.lower() not in skip)


class RecordingProxy(AsyncService):
    """The proxy as an object: ``async with RecordingProxy(upstream, out_dir) as proxy``
    serves on ``proxy.url`` (port 0 picks a free port) until the block ends.

    ``recordings`` lists what was recorded, in the order the streams ended. A
    stream's recording is closed before the client sees the end of its body, so
    a client that has read a whole stream finds it complete on disk and in
    ``recordings``; ``on_recorded`` is called with it just after.
    """

    def __init__(
        self,
        upstream: str,
        out_dir: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = DEFAULT_TIMEOUT,
        labels: Mapping[str, Any] | None = None,
        on_recorded: Callable[[Recorded], object] | None = None,
    ) -> None:
        url, self._basic = url_credentials(check_url(upstream))
        self.upstream = url.with_query(None).with_fragment(None)
        self.out_dir = Path(out_dir)
        self.host = host
        self.port = port
        self.timeout = timeout
        self.labels = dict(labels or {})
        self.on_recorded = on_recorded
        self.recordings: list[Recorded] = []
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._handlers: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        """The proxy's base URL (what clients use instead of the upstream's)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        """Bind and start serving; ``port`` is then the bound one."""
        if self.out_dir.exists() and not self.out_dir.is_dir():
            raise RecordError(f"--out {self.out_dir}: not a directory")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._session = aiohttp.ClientSession(
            auto_decompress=False,
            connector=aiohttp.TCPConnector(limit=0),
            cookie_jar=aiohttp.DummyCookieJar(),  # clients' cookies are theirs, not shared
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=self.timeout, sock_read=self.timeout
            ),
        )
        app = web.Application(client_max_size=_MAX_REQUEST)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, auto_decompress=False, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self.close()
            raise RecordError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        address = self._runner.addresses[0]
        self.port = int(address[1])

    async def close(self) -> None:
        """Stop serving; streams still in flight are recorded as interrupted."""
        for task in list(self._handlers):
            task.cancel(_STOPPED)
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=5)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        task = asyncio.current_task()
        assert task is not None and self._session is not None
        self._handlers.add(task)
        try:
            return await self._forward(request, self._session)
        finally:
            self._handlers.discard(task)

    async def _forward(
        self, request: web.Request, session: aiohttp.ClientSession
    ) -> web.StreamResponse:
        body = await request.read()
        target = URL(str(self.upstream).rstrip("/") + request.raw_path, encoded=True)
        headers = _end_to_end(request.headers, drop=("Host", "Content-Length"))
        if self._basic is not None:
            headers.setdefault("Authorization", self._basic)  # the client's own one wins
        secrets = Secrets.of(target, headers.items())
        start_ns = time.monotonic_ns()
        try:
            upstream = await session.request(
                request.method,
                target,
                headers=headers,
                data=body or None,
                allow_redirects=False,
                skip_auto_headers=[h for h in _AUTO_HEADERS if h not in request.headers],
            )
        except TimeoutError:
            return _bad_gateway(504, target, f"no response after {self.timeout:g}s", secrets)
        except (aiohttp.ClientError, OSError) as exc:
            return _bad_gateway(502, target, one_line(exc), secrets)
        async with upstream:
            response = _ExactHeadResponse(status=upstream.status, reason=upstream.reason)
            response.headers.extend(_end_to_end(upstream.headers))
            await response.prepare(request)
            capture = None
            if is_stream_type(upstream.headers.get("Content-Type")):
                try:
                    capture = Capture(
                        self.out_dir,
                        start_ns=start_ns,
                        endpoint=str(target),
                        request=_json_body(body, request.headers.get("Content-Type")),
                        status=upstream.status,
                        reason=upstream.reason or "",
                        headers=upstream.headers.items(),
                        api=detect_api(target),
                        labels={"note": f"{request.method} via tcr proxy", **self.labels},
                        request_headers=headers.items(),
                    )
                except Exception as exc:  # the client's stream goes on unrecorded
                    _not_recorded(target, exc)
            await self._relay(request, upstream, response, capture)
            return response

    async def _relay(
        self,
        request: web.Request,
        upstream: aiohttp.ClientResponse,
        response: web.StreamResponse,
        capture: Capture | None,
    ) -> None:
        reader = BodyReader(upstream.content, self.timeout)
        error: str | None = None
        unrecorded: list[bytes] = []  # forwarded (or being forwarded), not yet recorded
        arrived_ns = 0
        try:
            while error is None:
                try:
                    reads = await reader.take()
                except TimeoutError:
                    error, reads = timed_out(self.timeout), []
                except (aiohttp.ClientError, ConnectionError) as exc:
                    error, reads = disconnected(exc), reader.stranded()
                if reads:
                    arrived_ns, unrecorded = time.monotonic_ns(), reads
                    try:
                        await response.write(b"".join(reads))  # forward first, then record
                    except ConnectionError as exc:
                        error = error or f"client disconnected: {one_line(exc)}"
                    if capture is not None:
                        capture = _fed(capture, reads, arrived_ns)
                    unrecorded = []
                elif error is None:
                    break  # the end of the body
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            if capture is not None and (capture := _fed(capture, unrecorded, arrived_ns)):
                stopped = self._closed(capture, interrupted(exc))
                if stopped is not None and self.on_recorded is not None:
                    self.on_recorded(stopped)
            _cut(request)
            raise
        recorded = None if capture is None else self._closed(capture, error)
        if error is None:
            await response.write_eof()
        else:
            _cut(request)
        if recorded is not None and self.on_recorded is not None:
            self.on_recorded(recorded)  # after the client has its answer

    def _closed(self, capture: Capture, error: str | None) -> Recorded | None:
        """Close ``capture`` with ``error`` and list it, or say why it could not be."""
        try:
            recorded = capture.close(error)
        except Exception as exc:  # the client is answered all the same
            _not_recorded(capture.endpoint, exc)
            return None
        self.recordings.append(recorded)
        return recorded


def _fed(capture: Capture, reads: list[bytes], arrived_ns: int) -> Capture | None:
    """``capture`` with ``reads`` appended, or ``None`` (after saying why) when the
    recording cannot go on: the stream then goes on unrecorded."""
    try:
        capture.feed(reads, arrived_ns)
    except Exception as exc:
        _not_recorded(capture.endpoint, exc)
        with contextlib.suppress(Exception):  # keep what was written, as incomplete
            capture.close(f"not recorded further: {one_line(exc)}", judge=False)
        return None
    return capture


def _not_recorded(endpoint: str | URL, exc: Exception) -> None:
    """One stderr line: the stream to ``endpoint`` is forwarded, but not recorded."""
    print(f"tcr proxy: {redact_url(endpoint)}: not recorded: {one_line(exc)}", file=sys.stderr)


def _cut(request: web.Request) -> None:
    """End the client's connection without a clean end of body: what the client
    would have seen from the upstream itself."""
    if request.transport is not None:
        request.transport.close()


def _bad_gateway(status: int, target: URL, message: str, secrets: Secrets) -> web.Response:
    text = secrets.scrub(f"tcr proxy: upstream {redact_url(target)}: {message}\n")
    return web.Response(status=status, text=text)


def _json_body(body: bytes, content_type: str | None) -> dict[str, Any]:
    """The request as the header's ``request`` map: the JSON body when it is a
    JSON object, else a note of what it was (its bytes are not recorded)."""
    if not body:
        return {}
    problem = "not a JSON object"
    try:
        parsed = json.loads(body)
    except RecursionError:
        problem = "JSON nested too deep to read"
    except ValueError:
        pass
    else:
        if isinstance(parsed, dict):
            return parsed
    media = media_type(content_type) or "no Content-Type"
    return {"_body": f"{len(body)} bytes of {media}, {problem}"}


async def serve_proxy(
    host: str,
    port: int,
    upstream: str,
    out_dir: str | Path,
    *,
    ready: asyncio.Event | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    labels: Mapping[str, Any] | None = None,
    on_started: Callable[[RecordingProxy], object] | None = None,
    on_recorded: Callable[[Recorded], object] | None = None,
) -> None:
    """Serve a :class:`RecordingProxy` until cancelled.

    ``ready`` is set once it listens; ``on_started`` receives the proxy then
    (its ``port`` is the bound one when ``port`` is 0). Cancelling closes it,
    recording streams in flight as ``"interrupted: proxy stopped"``.
    """
    async with RecordingProxy(
        upstream,
        out_dir,
        host=host,
        port=port,
        timeout=timeout,
        labels=labels,
        on_recorded=on_recorded,
    ) as proxy:
        if on_started is not None:
            on_started(proxy)
        if ready is not None:
            ready.set()
        await asyncio.Event().wait()


def running_proxy(
    upstream: str,
    out_dir: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    timeout: float = DEFAULT_TIMEOUT,
    labels: Mapping[str, Any] | None = None,
) -> contextlib.AbstractContextManager[RecordingProxy]:
    """A :class:`RecordingProxy` on its own event loop in a background thread, for
    synchronous code (tests, scripts): ``with running_proxy(url, dir) as proxy:``."""
    proxy = RecordingProxy(upstream, out_dir, host=host, port=port, timeout=timeout, labels=labels)
    return in_background(proxy, name="tcr-proxy")
