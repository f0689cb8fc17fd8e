"""``tcr import``: recordings from streams captured by other tools.

Formats, told apart by content (``kind`` forces the recording kind):

* a raw SSE or NDJSON body, as ``curl -N`` saves it (``curl -N -i`` too: the
  status line and headers are kept as the response's);
* JSON lines of engine chunks: each line a JSON string, or an object with the
  chunk under ``chunk``, ``text``, ``content`` or ``delta`` and optionally its
  time as ``t_ns`` (nanoseconds) or ``t`` (seconds); a JSON array of either;
* a HAR file (browsers' developer tools): one recording per streamed response.

The bytes are kept exactly; what a capture did not keep is not invented. A
dump has no read boundaries and no times: it becomes one frame per SSE event
or NDJSON line, each at time 0 (a HAR's at its time to first byte), and the
label ``note`` says so.
"""

from __future__ import annotations

import json
import math
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tcr.corpus import KINDS, MAX_T_NS, RecordingWriter, new_header
from tcr.recorder.errors import RecordError
from tcr.recorder.framing import detect_kind, sniff
from tcr.recorder.har import HarStream, har_streams
from tcr.recorder.redact import redact_body, redact_headers, redact_url
from tcr.recorder.request import detect_api, tool_names
from tcr.stream import SurrogateJoiner
from tcr.stream.payloads import detect_framing

__all__ = ["FORMATS", "Imported", "import_file"]

FORMATS: Final = ("sse", "ndjson", "chunks", "har")
_CHUNK_KEYS: Final = ("chunk", "text", "content", "delta")
_BOM: Final = b"\xef\xbb\xbf"
_SSE_EVENT_END: Final = re.compile(rb"(?<=\r\n\r\n)|(?<=\n\n)|(?<=\r\r)")
_LINE_END: Final = re.compile(rb"(?<=\n)")
_HEAD_END: Final = re.compile(rb"\r?\n\r?\n")
_NO_TIMES: Final = "read boundaries and arrival times were not captured"
_NOT_ONE_DOCUMENT: Final = object()


@dataclass(frozen=True, slots=True)
class Imported:
    """One recording an import wrote."""

    path: Path
    kind: str
    format: str
    frame_count: int
    byte_count: int


@dataclass(slots=True)
class _Body:
    """A body to record, with what is known about the response that carried it."""

    kind: str
    frames: Iterable[tuple[int, bytes | str]]  # taken once, as they are written
    note: str
    status: int | None = None
    reason: str = ""
    headers: Sequence[tuple[str, str]] = ()
    endpoint: str | None = None
    request: Mapping[str, Any] | None = None
    created: str | None = None


def _split(kind: str, body: bytes, t_ns: int = 0) -> Iterator[tuple[int, bytes | str]]:
    """One frame per SSE event or NDJSON line, each cut as it is written: the list of
    every piece was the body once more, and an object per frame (issue 36)."""
    pattern = _SSE_EVENT_END if kind == "sse" else _LINE_END
    start = 0
    for match in pattern.finditer(body):
        if match.end() > start:
            yield t_ns, body[start : match.end()]
            start = match.end()
    if start < len(body):
        yield t_ns, body[start:]


def _chunk(item: object, where: str) -> tuple[int | None, str]:
    if isinstance(item, str):
        return None, item
    if isinstance(item, Mapping):
        text = next((item[k] for k in _CHUNK_KEYS if isinstance(item.get(k), str)), None)
        if text is not None:
            t_ns = item.get("t_ns")
            if isinstance(t_ns, int) and not isinstance(t_ns, bool) and t_ns >= 0:
                if t_ns > MAX_T_NS:
                    raise RecordError(f"{where}: 't_ns' is {t_ns}, beyond {MAX_T_NS}")
                return t_ns, text
            seconds = item.get("t")
            if isinstance(seconds, int | float) and not isinstance(seconds, bool):
                # JSON as Python reads it allows NaN and Infinity, and a finite number of
                # seconds may be infinite in nanoseconds (-1.8e299)
                t_ns_float = seconds * 1e9
                if not (math.isfinite(t_ns_float) and t_ns_float <= MAX_T_NS):
                    raise RecordError(f"{where}: 't' is {seconds!r}, not a time in seconds")
                return max(0, round(t_ns_float)), text
            return None, text
    raise RecordError(
        f"{where}: not a chunk: expected a JSON string or an object with one of "
        f"{', '.join(_CHUNK_KEYS)}"
    )


def _chunks(items: Sequence[object], where: str) -> _Body:
    chunks: list[tuple[int, str]] = []
    timed = False
    # a JSON chunk may end in half an emoji's surrogate pair, the next one begin
    # with the other half; a recording stores UTF-8, so the halves are rejoined
    pairs = SurrogateJoiner()
    for index, item in enumerate(items):
        t_ns, text = _chunk(item, f"{where}: chunk {index}")
        timed = timed or t_ns is not None
        chunks.append((t_ns or 0, pairs.feed(text)))
    if tail := pairs.finish():
        last_t_ns, last_text = chunks[-1]
        chunks[-1] = (last_t_ns, last_text + tail)
    frames: list[tuple[int, bytes | str]] = list(chunks)
    note = "chunks" if timed else f"chunks; {_NO_TIMES}"
    return _Body("chunks", frames, note)


def _json_lines(text: str, where: str) -> list[object]:
    items: list[object] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except RecursionError:
                raise RecordError(f"{where}: line {number}: JSON nested too deeply") from None
            except ValueError as exc:
                raise RecordError(f"{where}: line {number}: not JSON ({exc})") from None
    return items


def _is_chunk_object(item: object) -> bool:
    return isinstance(item, Mapping) and any(isinstance(item.get(k), str) for k in _CHUNK_KEYS)


def _json_document(data: bytes, where: str) -> object:
    """The file as one JSON document, or ``_NOT_ONE_DOCUMENT`` (JSON lines, or not JSON)."""
    try:
        return json.loads(data.decode("utf-8", "replace"))
    except RecursionError:
        raise RecordError(f"{where}: JSON nested too deeply") from None
    except ValueError:
        return _NOT_ONE_DOCUMENT


def _json_body(data: bytes, document: object, where: str) -> _Body:
    """JSON that is not a HAR: chunks (lines or an array), or an NDJSON stream body."""
    if isinstance(document, list):
        return _chunks(document, where)
    if document is _NOT_ONE_DOCUMENT:
        items = _json_lines(data.decode("utf-8", "replace"), where)
    else:
        items = [document]
    first = items[0] if items else None
    if isinstance(first, Mapping) and detect_framing(dict(first)) is not None:
        return _Body("ndjson", _split("ndjson", data), f"NDJSON body; {_NO_TIMES}")
    if isinstance(first, str) or _is_chunk_object(first):
        return _chunks(items, where)
    raise RecordError(
        f"{where}: JSON lines that are neither stream payloads (OpenAI, llama.cpp, "
        "Ollama) nor chunks (strings, or objects with a 'chunk' or 'text')"
    )


def _http_dump(data: bytes, where: str, forced: str | None) -> _Body:
    """``curl -N -i``: status line and headers, then the body (interim 1xx blocks skipped)."""
    while data.startswith(b"HTTP/"):
        match = _HEAD_END.search(data)
        if match is None:
            raise RecordError(f"{where}: the HTTP headers never end (no blank line)")
        head, data = data[: match.start()], data[match.end() :]
        status_line, *lines = head.decode("latin-1").splitlines()
        parts = status_line.split(None, 2)
        status = (
            int(parts[1]) if len(parts) > 1 and parts[1].isascii() and parts[1].isdigit() else 0
        )
        if not 100 <= status < 200:
            break
    headers = [
        (name.strip(), value.strip())
        for name, sep, value in (line.partition(":") for line in lines)
        if sep
    ]
    content_type = next((v for k, v in headers if k.lower() == "content-type"), None)
    kind = forced or detect_kind(content_type, data, None)
    body = _Body(kind, _split(kind, data), f"{kind.upper()} body with headers; {_NO_TIMES}")
    body.status, body.reason, body.headers = status, parts[2] if len(parts) > 2 else "", headers
    return body


def _har_body(stream: HarStream, forced: str | None) -> _Body:
    kind = forced or detect_kind(stream.content_type, stream.body, detect_api(stream.url))
    note = (
        f"HAR entry {stream.index}; read boundaries were not captured: one frame per "
        f"{'event' if kind == 'sse' else 'line'}, all at the time to first byte"
    )
    return _Body(
        kind,
        _split(kind, stream.body, stream.ttfb_ns),
        note,
        status=stream.status,
        reason=stream.reason,
        headers=stream.headers,
        endpoint=stream.url or None,
        request=stream.request,
        created=stream.started,
    )


def _bodies(path: Path, data: bytes, kind: str | None) -> tuple[str, list[_Body]]:
    where = str(path)
    head = data.removeprefix(_BOM).lstrip()
    if not head:
        raise RecordError(f"{where}: the file is empty")
    if head.startswith(b"HTTP/"):
        body = _http_dump(head, where, kind if kind in ("sse", "ndjson") else None)
        return body.kind, [body]
    if kind in ("sse", "ndjson"):
        return kind, [_Body(kind, _split(kind, data), f"{kind.upper()} body; {_NO_TIMES}")]
    if kind in (None, "chunks") and sniff(data) == "sse":
        return "sse", [_Body("sse", _split("sse", data), f"SSE body; {_NO_TIMES}")]
    if head.startswith((b"{", b"[", b'"')):
        document = _json_document(data, where)
        if isinstance(document, Mapping) and "log" in document:
            forced = kind if kind in ("sse", "ndjson") else None
            bodies = [_har_body(stream, forced) for stream in har_streams(document, where)]
            if not bodies:
                raise RecordError(
                    f"{where}: the HAR holds no streamed response with its body "
                    "(text/event-stream or application/x-ndjson with content.text)"
                )
            return "har", bodies
        body = _json_body(data, document, where)
        return body.kind, [body]
    raise RecordError(
        f"{where}: not a format tcr imports: expected an SSE or NDJSON body "
        "(as curl -N saves it), JSON lines of chunks, or a HAR file"
    )


def _targets(source: Path, out: Path | None, count: int) -> list[Path]:
    if out is None:
        base = source.with_suffix(".msgpack")
    elif out.is_dir() or out.suffix != ".msgpack":
        base = out / f"{source.stem}.msgpack"
    else:
        base = out
    if count == 1:
        targets = [base]
    else:
        targets = [base.with_name(f"{base.stem}-{n:02d}{base.suffix}") for n in range(count)]
    if source.resolve() in {target.resolve() for target in targets}:
        raise RecordError(f"{source}: the recording would overwrite its source: give --out")
    return targets


# The largest dump or HAR import reads: it is held whole, with what is decoded from it.
MAX_IMPORT_BYTES = 1 << 30


def _read_bounded(source: Path) -> bytes:
    """The bytes of ``source``, a regular file of at most ``MAX_IMPORT_BYTES``: a device
    (``/dev/zero`` read without end), a FIFO (blocks until a writer comes) or a folder is
    refused before it is opened."""
    try:
        info = source.stat()
        if not stat.S_ISREG(info.st_mode):
            raise RecordError(f"{source}: not a regular file: import reads a saved dump or HAR")
        if info.st_size > MAX_IMPORT_BYTES:
            raise RecordError(
                f"{source}: {info.st_size:,} bytes; import reads at most {MAX_IMPORT_BYTES:,}"
            )
        limit = MAX_IMPORT_BYTES + 1
        with source.open("rb") as file:
            # read(limit) would allocate the limit, a gigabyte, whatever the file's size
            data = file.read(min(info.st_size + 1, limit))
            if len(data) == info.st_size + 1 < limit:  # it has grown since
                data += file.read(limit - len(data))
    except OSError as exc:
        raise RecordError(f"{source}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise RecordError(f"{source}: over {MAX_IMPORT_BYTES:,} bytes; import reads no more")
    return data


def import_file(
    path: str | Path,
    out: str | Path | None = None,
    *,
    kind: str | None = None,
    labels: Mapping[str, Any] | None = None,
) -> list[Imported]:
    """Import ``path`` as one recording (a HAR: one per streamed response).

    ``out`` is the file to write (``*.msgpack``), or else a directory; by default
    the recording goes beside the source, named ``SOURCE.msgpack``
    (``SOURCE-NN.msgpack`` for several).
    ``kind`` (``sse``, ``ndjson`` or ``chunks``) forces how a dump is read.
    """
    source = Path(path)
    if kind is not None and kind not in KINDS:
        raise RecordError(f"--kind {kind!r}: expected one of {', '.join(KINDS)}")
    data = _read_bounded(source)
    fmt, bodies = _bodies(source, data, kind)
    if kind == "chunks":
        for body in bodies:
            if body.kind != "chunks":
                raise RecordError(f"{source}: --kind chunks, but the file is a {body.kind} body")
    targets = _targets(source, Path(out) if out is not None else None, len(bodies))
    pairs = zip(targets, bodies, strict=True)
    return [_write(source, target, fmt, body, labels) for target, body in pairs]


def _write(
    source: Path, target: Path, fmt: str, body: _Body, labels: Mapping[str, Any] | None
) -> Imported:
    request = redact_body(body.request or {})
    header = new_header(
        body.kind,
        source={
            "endpoint": redact_url(body.endpoint) if body.endpoint else None,
            "backend": detect_api(body.endpoint) if body.endpoint else None,
            "model": request.get("model"),
        },
        request=request,
        response={"status": body.status, "headers": redact_headers(body.headers)},
        tools=tool_names(request),
        labels={
            "origin": "recorded",
            "note": f"imported from {source.name}: {body.note}",
            **(labels or {}),
        },
        created=body.created,
    )
    with RecordingWriter(target, header) as writer:
        for t_ns, data in body.frames:
            writer.frame(t_ns, data)
    return Imported(target, body.kind, fmt, writer.frame_count, writer.byte_count)
