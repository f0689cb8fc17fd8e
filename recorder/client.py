"""``record()``: send one streaming request and record the response as it arrives.

Reads are kept as aiohttp's HTTP parser delivered them (one transfer chunk, or
one socket read of an unchunked body; see :mod:`tcr.recorder.body`), never
merged, however far the recorder falls behind. Bodies are recorded after
transfer decoding and before any content decoding (``auto_decompress=False``,
and ``Accept-Encoding: identity`` is sent unless the caller overrides it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from tcr.recorder.body import BodyReader
from tcr.recorder.capture import (
    Capture,
    Recorded,
    disconnected,
    interrupted,
    one_line,
    timed_out,
)
from tcr.recorder.errors import RecordError
from tcr.recorder.redact import Secrets, redact_url
from tcr.recorder.request import detect_api, url_credentials

__all__ = ["DEFAULT_TIMEOUT", "capture_body", "check_url", "record", "record_sync"]

DEFAULT_TIMEOUT: Final = 120.0
_DEFAULT_HEADERS: Final = (
    ("Content-Type", "application/json"),
    ("Accept-Encoding", "identity"),
)


Progress = Callable[[int, int], None]  # frames and bytes recorded so far


def check_url(endpoint: str | URL) -> URL:
    """The endpoint as a URL, refused unless it is absolute http(s)."""
    try:
        url = endpoint if isinstance(endpoint, URL) else URL(endpoint)
    except (ValueError, TypeError) as exc:
        raise RecordError(f"{endpoint!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise RecordError(f"{redact_url(url)!r} is not an http:// or https:// URL")
    return url


async def record(
    endpoint: str,
    request_body: Mapping[str, Any],
    out_path: str | Path,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    labels: Mapping[str, Any] | None = None,
    api: str | None = None,
    progress: Progress | None = None,
) -> Recorded:
    """POST ``request_body`` as JSON to ``endpoint`` and record the response.

    ``out_path`` is the recording's file, or a directory to create a new
    time-stamped one in. ``headers`` are sent as given (credentials included)
    and never written to disk, nor is the URL's ``user:pass`` (sent as
    ``Authorization: Basic`` unless ``headers`` has an ``Authorization``);
    ``timeout`` bounds the wait for the connection and for each read, in
    seconds; ``labels`` go into the header (``origin`` is ``"recorded"``);
    ``api`` overrides the one the URL path names; ``progress`` is called with the
    frames and bytes recorded so far after each read.

    Once a response has arrived, the result is always a :class:`Recorded` (its
    file holds every read): complete, or incomplete with ``error`` saying why:
    ``"HTTP 500 …"``, ``"not a stream: …"``, ``"upstream disconnected: …"``,
    ``"timed out after …s without data"``. A cancel or Ctrl-C closes the file
    as ``"interrupted: …"`` and propagates. Without a response (refused, DNS,
    no answer in time) it raises :class:`RecordError` and writes nothing.
    """
    url, basic = url_credentials(check_url(endpoint))
    send: CIMultiDict[str] = CIMultiDict(_DEFAULT_HEADERS)
    send.update(headers or {})
    if basic is not None:
        send.setdefault("Authorization", basic)  # an explicit one (--api-key-env) wins
    secrets = Secrets.of(endpoint, send.items(), request_body)
    shown = secrets.scrub(redact_url(url))
    try:
        body = json.dumps(request_body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON can carry it only as a \u escape
        body = json.dumps(request_body).encode("ascii")
    session_timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout)
    async with aiohttp.ClientSession(auto_decompress=False, timeout=session_timeout) as session:
        start_ns = time.monotonic_ns()
        try:
            response = await session.post(url, data=body, headers=send, allow_redirects=False)
        except TimeoutError:
            raise RecordError(f"{shown}: no response after {timeout:g}s") from None
        except aiohttp.ClientConnectorError as exc:
            raise RecordError(secrets.scrub(f"{shown}: {_cannot_connect(exc)}")) from None
        except aiohttp.ServerDisconnectedError:
            raise RecordError(
                f"{shown}: the server closed the connection without answering"
            ) from None
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise RecordError(secrets.scrub(f"{shown}: {one_line(exc)}")) from None
        async with response:
            capture = Capture(
                Path(out_path),
                start_ns=start_ns,
                endpoint=str(url),
                request=request_body,
                status=response.status,
                reason=response.reason or "",
                headers=response.headers.items(),
                api=api or detect_api(url),
                labels=labels,
                request_headers=send.items(),
            )
            return await capture_body(response.content, capture, timeout, progress)


def _cannot_connect(exc: aiohttp.ClientConnectorError) -> str:
    cause = exc.os_error
    where = f"{exc.host}:{exc.port}"
    if isinstance(cause, socket.gaierror):
        return f"cannot resolve host {exc.host!r} ({cause.strerror or cause})"
    if isinstance(cause, ConnectionRefusedError):
        return f"connection refused at {where} (is the server running?)"
    return f"cannot connect to {where}: {cause.strerror or one_line(exc)}"


async def capture_body(
    content: aiohttp.StreamReader,
    capture: Capture,
    timeout: float | None = None,
    progress: Progress | None = None,
) -> Recorded:
    """Feed ``capture`` every read of ``content`` and close it with the outcome."""
    reader = BodyReader(content, timeout)
    try:
        while reads := await reader.take():
            capture.feed(reads)
            if progress is not None:
                progress(capture.frame_count, capture.byte_count)
    except TimeoutError:
        return capture.close(timed_out(timeout) if timeout else "timed out")
    except (aiohttp.ClientError, ConnectionError) as exc:
        capture.feed(reader.stranded())
        return capture.close(disconnected(exc))
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:
        capture.close(interrupted(exc))
        raise
    except BaseException as exc:
        with contextlib.suppress(Exception):
            capture.close(one_line(exc))
        raise
    return capture.close()


def record_sync(
    endpoint: str,
    request_body: Mapping[str, Any],
    out_path: str | Path,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    labels: Mapping[str, Any] | None = None,
    api: str | None = None,
) -> Recorded:
    """:func:`record` for synchronous callers (runs its own event loop)."""
    return asyncio.run(
        record(
            endpoint,
            request_body,
            out_path,
            headers=headers,
            timeout=timeout,
            labels=labels,
            api=api,
        )
    )
