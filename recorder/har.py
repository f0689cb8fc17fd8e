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
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from yarl import URL

from tcr.corpus import MAX_NESTING, MAX_T_NS, nests_too_deep
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
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a JSON \uXXXX escape can spell half a pair
        raise RecordError(
            f"{where}: response.content.text holds a lone surrogate "
            f"(U+{ord(text[exc.start]):04X}) at character {exc.start}"
        ) from None


def _request_body(request: Mapping[str, Any], where: str) -> dict[str, Any]:
    post = request.get("postData")
    if not isinstance(post, Mapping):
        return {}
    text = post.get("text")
    if not isinstance(text, str) or not text:
        return {}
    too_deep = f"{where}: request.postData.text nests deeper than {MAX_NESTING} levels"
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise RecordError(too_deep) from None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        if nests_too_deep(parsed):
            raise RecordError(too_deep)
        _check_tools(parsed.get("tools"), where)
        return parsed
    return {"_body": f"{len(text)} characters of {post.get('mimeType') or 'text'}, not JSON"}


def _check_tools(tools: object, where: str) -> None:
    """A tool's ``function``, when it has one, must be an object (its name is read)."""
    if not isinstance(tools, list):
        return
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if function is not None and not isinstance(function, Mapping):
            raise RecordError(
                f"{where}: request 'tools[{index}].function' is "
                f"{type(function).__name__}, not an object"
            )


def _url(request: Mapping[str, Any], where: str) -> str:
    url = str(request.get("url") or "")
    if url:
        try:
            URL(url)  # parses the host (IDNA) and the port
        except ValueError as exc:  # UnicodeError is one
            reason = " ".join(str(exc).split())
            raise RecordError(
                f"{where}: request.url {url!r} is not a valid URL ({reason})"
            ) from None
    return url


def _ttfb_ns(timings: object, where: str) -> int:
    if not isinstance(timings, Mapping):
        return 0
    total = 0.0
    for name in _TTFB_TIMINGS:
        value = timings.get(name)
        if isinstance(value, int | float) and value > 0:
            # JSON as Python reads it allows NaN, Infinity and 1e308
            if not (math.isfinite(value) and value * 1_000_000 <= MAX_T_NS):
                raise RecordError(f"{where}: timings.{name} is {value!r} ms, not a time")
            total += value
    if total * 1_000_000 > MAX_T_NS:
        raise RecordError(f"{where}: timings add up to {total!r} ms, not a time")
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
        mime_type = content.get("mimeType")
        content_type = content_type or (mime_type if isinstance(mime_type, str) else None) or None
        body = _body(content, at)
        if not body or not (is_stream_type(content_type) or sniff(body) == "sse"):
            continue
        status = response.get("status")
        started = entry.get("startedDateTime")
        yield HarStream(
            index=index,
            method=str(request.get("method") or "GET"),
            url=_url(request, at),
            request=_request_body(request, at),
            status=status if isinstance(status, int) else 0,
            reason=str(response.get("statusText") or ""),
            headers=headers,
            content_type=content_type,
            body=body,
            ttfb_ns=_ttfb_ns(entry.get("timings"), at),
            started=started if isinstance(started, str) else None,
        )
