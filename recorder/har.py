"""The streamed responses of a HAR file (HTTP Archive 1.2, as browsers' developer
tools export it): the JSON request, the response status and headers, and the body.

A HAR keeps a body whole, without the times of its reads; the time to its first
byte is the sum of the entry's ``blocked``, ``dns``, ``connect``, ``send`` and
``wait`` timings (``ssl`` is part of ``connect``; ``-1`` means none).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from tcr.recorder.errors import RecordError
from tcr.recorder.framing import is_stream_type, sniff

__all__ = ["HarStream", "har_streams"]

_TTFB_TIMINGS: Final = ("blocked", "dns", "connect", "send", "wait")


@dataclass(frozen=True, slots=True)
class HarStream:
    """One entry of a HAR whose response is a stream."""

    index: int
    method: str
    url: str
    request: dict[str, Any]
    status: int
    reason: str
    headers: list[tuple[str, str]]
    content_type: str | None
    body: bytes
    ttfb_ns: int
    started: str | None


def _map(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RecordError(f"{where} is not a JSON object")
    return value


def _pairs(value: object) -> list[tuple[str, str]]:
    if not isinstance(value, list):
        return []
    return [
        (str(item["name"]), str(item["value"]))
        for item in value
        if isinstance(item, Mapping) and "name" in item and "value" in item
    ]


def _body(content: Mapping[str, Any], where: str) -> bytes | None:
    text = content.get("text")
    if not isinstance(text, str):
        return None
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise RecordError(f"{where}: content.text is not valid base64") from None
    return text.encode("utf-8")


def _request_body(request: Mapping[str, Any]) -> dict[str, Any]:
    post = request.get("postData")
    if not isinstance(post, Mapping):
        return {}
    text = post.get("text")
    if not isinstance(text, str) or not text:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return {"_body": f"{len(text)} characters of {post.get('mimeType') or 'text'}, not JSON"}


def _ttfb_ns(timings: object) -> int:
    if not isinstance(timings, Mapping):
        return 0
    total = 0.0
    for name in _TTFB_TIMINGS:
        value = timings.get(name)
        if isinstance(value, int | float) and value > 0:
            total += value
    return round(total * 1_000_000)


def har_streams(har: Mapping[str, Any], where: str) -> Iterator[HarStream]:
    """Each entry whose response is a stream (by its Content-Type, or an SSE-looking
    body) and whose body the HAR kept."""
    log = _map(har.get("log"), f"{where}: 'log'")
    entries = log.get("entries")
    if not isinstance(entries, list):
        raise RecordError(f"{where}: 'log.entries' is not a list")
    for index, raw in enumerate(entries):
        at = f"{where}: entry {index}"
        entry = _map(raw, at)
        request = _map(entry.get("request", {}), f"{at}: 'request'")
        response = _map(entry.get("response", {}), f"{at}: 'response'")
        content = _map(response.get("content", {}), f"{at}: 'response.content'")
        headers = _pairs(response.get("headers"))
        content_type = next((v for k, v in headers if k.lower() == "content-type"), None)
        content_type = content_type or content.get("mimeType") or None
        body = _body(content, at)
        if not body or not (is_stream_type(content_type) or sniff(body) == "sse"):
            continue
        status = response.get("status")
        started = entry.get("startedDateTime")
        yield HarStream(
            index=index,
            method=str(request.get("method") or "GET"),
            url=str(request.get("url") or ""),
            request=_request_body(request),
            status=status if isinstance(status, int) else 0,
            reason=str(response.get("statusText") or ""),
            headers=headers,
            content_type=content_type,
            body=body,
            ttfb_ns=_ttfb_ns(entry.get("timings")),
            started=started if isinstance(started, str) else None,
        )
