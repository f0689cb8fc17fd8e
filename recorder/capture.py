"""One response being recorded, shared by the client and the proxy.

A :class:`Capture` opens its file as soon as the status arrives and writes the
header there (status and redacted headers included), before the first body
byte, so a recorder killed while waiting for the body still leaves them on disk.
The recording kind comes from the ``Content-Type``, or when that does not say,
from the first read (the header is then rewritten, before any frame). It
appends one frame per read through :class:`~tcr.corpus.RecordingWriter`
(flushed before the recorder waits for more, so a killed recorder keeps every
frame it took), and closes with the reason it is incomplete, if it is: the
response was an error or not a stream, or the upstream dropped, stalled or was
interrupted. Its result is a :class:`Recorded`.

A request may hold what a recording cannot: an integer beyond msgpack's 64 bits,
a lone surrogate (legal JSON as ``"\\ud800"``), nesting deeper than
``MAX_NESTING``. The header then keeps what fits: such an integer as its decimal
string, such a string with ``\\u`` escapes, such a value cut at the limit; and the
label ``altered`` says what was changed, e.g. ``"request: 1 integer beyond 64
bits kept as its decimal string"``. The stream is recorded all the same.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from uuid import uuid4

from tcr.corpus import MAX_NESTING, MAX_T_NS, RecordingReader, RecordingWriter, new_header
from tcr.errors import TcrError
from tcr.recorder.errors import RecordError
from tcr.recorder.framing import detect_kind, is_stream_type, media_type, sniff
from tcr.recorder.redact import REDACTED, Secrets, redact_body, redact_headers, redact_url
from tcr.recorder.request import tool_names
from tcr.stream.payloads import error_text

__all__ = [
    "Capture",
    "Recorded",
    "disconnected",
    "interrupted",
    "new_recording_path",
    "one_line",
    "recording_paths",
    "timed_out",
]

_ERROR_BODY_LIMIT: Final = 4096
_MESSAGE_LIMIT: Final = 200
_TAIL: Final = 4  # bytes: the longest end of an event, b"\r\n\r\n"
_MSGPACK_INTS: Final = range(-(2**63), MAX_T_NS + 1)
_CUT: Final = f"<not kept: nested deeper than {MAX_NESTING} levels>"
# What was changed to fit, in the singular and the plural.
_BIG_INT: Final = (
    "integer beyond 64 bits kept as its decimal string",
    "integers beyond 64 bits kept as their decimal strings",
)
_SURROGATE: Final = (
    "string with a lone surrogate kept with \\u escapes",
    "strings with lone surrogates kept with \\u escapes",
)
_ECHO: Final = (
    f"echo of the request's credentials replaced by {REDACTED}",
    f"echoes of the request's credentials replaced by {REDACTED}",
)
_TOO_DEEP: Final = (
    f"value nested deeper than {MAX_NESTING} levels not kept",
    f"values nested deeper than {MAX_NESTING} levels not kept",
)


@dataclass(frozen=True, slots=True)
class Recorded:
    """What one recorded response came to.

    ``complete`` is the trailer's verdict: false for an error status, a body
    that is not a stream, and a stream cut short; ``error`` then says which,
    in one line. Times are nanoseconds since the request started;
    ``ttfb_ns`` is ``None`` when no body byte arrived.
    """

    path: Path
    endpoint: str
    status: int
    reason: str
    kind: str
    content_type: str | None
    frame_count: int
    byte_count: int
    ttfb_ns: int | None
    duration_ns: int
    complete: bool
    error: str | None


def new_recording_path(out: str | Path, ident: str | None = None) -> Path:
    """``out`` itself, or when it is a directory (existing, or written with a
    trailing slash) a new time-stamped file name inside it."""
    path = Path(out)
    if path.is_dir() or str(out).endswith(("/", "\\")):
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        return path / f"{stamp}-{(ident or uuid4().hex)[:12]}.msgpack"
    return path


def recording_paths(out: str | Path, count: int) -> Callable[[int], Path]:
    """The path of recording ``index`` of ``count``: ``out`` if it is a ``.msgpack`` file
    (numbered ``-001``, ``-002``… when there are several), else a new time-stamped
    file in the directory ``out``, made now if need be."""
    path = Path(out)
    if path.suffix == ".msgpack" and not path.is_dir():
        if count == 1:
            return lambda index: path
        return lambda index: path.with_name(f"{path.stem}-{index + 1:03d}{path.suffix}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"--out {out}: cannot create the directory: {exc.strerror}") from None
    return lambda index: new_recording_path(path)


def interrupted(exc: BaseException) -> str:
    """The trailer error of a recording stopped by Ctrl-C, a cancel or a kill signal."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted: Ctrl-C (KeyboardInterrupt)"
    if isinstance(exc, asyncio.CancelledError) and exc.args and exc.args[0]:
        return f"interrupted: {exc.args[0]}"
    return "interrupted: cancelled"


def disconnected(exc: BaseException) -> str:
    """The trailer error of a stream the upstream broke off."""
    cause = getattr(exc.__cause__, "message", None)  # aiohttp's parser error behind it
    if isinstance(cause, str) and cause:
        return f"upstream disconnected: the body was cut short ({cause.rstrip('.')})"
    return f"upstream disconnected: {one_line(exc)}"


def timed_out(seconds: float) -> str:
    return f"timed out after {seconds:g}s without data"


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line (aiohttp nests the cause's repr in its messages)."""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "…"


class Capture:
    """Records one response: :meth:`feed` its reads as they arrive, then :meth:`close` once."""

    def __init__(
        self,
        path: Path,
        *,
        start_ns: int,
        endpoint: str,
        request: Mapping[str, Any],
        status: int,
        reason: str,
        headers: Iterable[tuple[str, str]],
        api: str | None = None,
        labels: Mapping[str, Any] | None = None,
        request_headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        # The request's own credentials, scrubbed from whatever may echo them
        # (response headers, the error message taken from an error body).
        self.secrets = Secrets.of(endpoint, request_headers, request)
        self.start_ns = start_ns
        self.status = status
        self.reason = reason
        self.api = api
        self.endpoint = self.secrets.scrub(redact_url(endpoint))
        self.id = uuid4().hex
        self.path = new_recording_path(path, self.id)
        pairs = list(headers)
        self.content_type = next((v for k, v in pairs if k.lower() == "content-type"), None)
        fields, altered = _fitted(
            {
                "source": {
                    "endpoint": self.endpoint,
                    "backend": api,
                    "model": request.get("model"),
                },
                "request": request,
                "response": {"status": status, "headers": _as_received(redact_headers(pairs))},
                "tools": tool_names(request),
                "labels": {"origin": "recorded", **(labels or {})},
            }
        )
        fields["request"] = redact_body(fields["request"])  # fitted first: never too deep
        fields = self.secrets.scrub_value(fields)
        if altered:
            fields["labels"]["altered"] = altered
        self.kind = detect_kind(self.content_type, b"", api)
        self._writer = RecordingWriter(self.path, new_header(self.kind, id=self.id, **fields))
        self.first_ns: int | None = None
        self._kept: list[bytes] = []
        self._kept_size = 0
        self._keep = not (200 <= status < 300 and is_stream_type(self.content_type))
        self._echoes = _byte_pattern(self.secrets)  # the request's secrets, echoed in the body
        self._echoes_longest = max(
            (len(v.encode("utf-8", "surrogatepass")) for v in self.secrets.values), default=0
        )
        self._carry = b""  # the end of the last read, where an echo split in two begins
        self._echoed = 0
        self._tail = b""  # the body's last bytes: does it end between two SSE events?
        self._short = True  # the whole body is in _tail

    def feed(self, reads: Sequence[bytes], arrived_ns: int | None = None) -> None:
        """Append reads that had arrived by ``arrived_ns`` (``time.monotonic_ns()``,
        default now): one frame each, written and flushed together."""
        if not reads:
            return
        if self._echoes is not None:
            reads = [self._scrub(read) for read in reads]
        t_ns = (time.monotonic_ns() if arrived_ns is None else arrived_ns) - self.start_ns
        writer = self._writer
        if self.first_ns is None:  # the first bytes may tell the kind the headers did not
            self.kind = detect_kind(self.content_type, reads[0], self.api)
            writer.rekind(self.kind)
            self.first_ns = t_ns
        writer.frames(t_ns, reads)
        for read in reads:
            self._short = self._short and len(self._tail) + len(read) <= _TAIL
            self._tail = (self._tail + read[-_TAIL:])[-_TAIL:]
        if self._keep and self._kept_size < _ERROR_BODY_LIMIT:
            self._kept += reads
            self._kept_size += sum(map(len, reads))

    def _scrub(self, read: bytes) -> bytes:
        """``read`` with each echo of the request's secrets replaced by ``REDACTED``, an
        echo begun in the read before included (only its part in this read can go: the
        first is on disk already, and holding bytes back would merge reads)."""
        assert self._echoes is not None
        carry = self._carry
        joined = carry + read
        out, at = [], len(carry)
        for match in self._echoes.finditer(joined):
            if match.end() <= len(carry):
                continue
            out += [joined[at : max(match.start(), at)], _REDACTED_BYTES]
            at = match.end()
            self._echoed += 1
        scrubbed = read if not out else b"".join([*out, joined[at:]])
        keep = self._echoes_longest - 1
        self._carry = (carry + scrubbed)[-keep:] if keep else b""
        return scrubbed

    def _say_altered(self, note: str) -> None:
        """Add ``body: note`` to the header's ``labels.altered`` of the closed recording.

        The header is written before the body (a kill keeps the status), so the file is
        copied with the new header and renamed over the old; should that fail, the old
        one stays: every frame in it, every echo in them already replaced."""
        header = self._writer.header
        labels = dict(header["labels"])
        labels["altered"] = "; ".join(filter(None, (labels.get("altered"), f"body: {note}")))
        temporary = self.path.with_name(f".{self.path.name}.{uuid4().hex[:12]}.tmp")
        try:
            reader = RecordingReader(self.path)
            try:
                copy = RecordingWriter(temporary, {**header, "labels": labels})
                for frame in reader.frames():
                    copy.frame(frame.t_ns, frame.data, frame.meta)
                end = reader.end or {"complete": False, "error": None}
                copy.close(complete=end["complete"], error=end["error"])
            finally:
                reader.close()
            os.replace(temporary, self.path)
        except (OSError, TcrError):
            temporary.unlink(missing_ok=True)

    @property
    def frame_count(self) -> int:
        return self._writer.frame_count

    @property
    def byte_count(self) -> int:
        return self._writer.byte_count

    def problem(self) -> str | None:
        """Why a response that arrived whole is still not a good recording, or ``None``."""
        body = b"".join(self._kept)[:_ERROR_BODY_LIMIT].decode("utf-8", "replace")
        # Scrubbed before it is cut short, so no part of a secret is left at the cut.
        shown = self.secrets.scrub(body)
        if not 200 <= self.status < 300:
            return f"HTTP {self.status} {self.reason}: {_error_message(shown)}".rstrip(": ")
        if is_stream_type(self.content_type):
            return self._cut()
        media = media_type(self.content_type)
        if media is None and sniff(body.encode()) is not None:
            return self._cut()
        return (
            f"not a stream: the server answered {media or 'without a Content-Type'}"
            + (f" ({_excerpt(shown)})" if shown.strip() else "")
            + ' — did the request ask for "stream": true?'
        )

    def _cut(self) -> str | None:
        """Why a stream that ended cleanly is cut all the same: an SSE body that ends
        inside an event. A body read until the connection closes cannot tell a reset
        from its end (aiohttp reads both as the end), and such an event was never whole
        (issue 36: one was recorded as complete)."""
        if self.kind != "sse" or _ends_between_events(self._tail, whole=self._short):
            return None
        return "upstream disconnected: the body ends inside an SSE event (cut short)"

    def close(self, error: str | None = None, *, judge: bool = True) -> Recorded:
        """Write the trailer: incomplete with ``error``, or (with ``judge``) with
        :meth:`problem`; complete when neither says anything."""
        end_ns = time.monotonic_ns() - self.start_ns
        writer = self._writer
        if error is None and judge:
            error = self.problem()
        if error is not None:
            error = self.secrets.scrub(error)
        writer.close(complete=error is None, error=error)
        if self._echoed:
            self._say_altered(_said(_ECHO, self._echoed))
        return Recorded(
            path=self.path,
            endpoint=self.endpoint,
            status=self.status,
            reason=self.reason,
            kind=self.kind,
            content_type=self.content_type,
            frame_count=writer.frame_count,
            byte_count=writer.byte_count,
            ttfb_ns=self.first_ns,
            duration_ns=end_ns,
            complete=error is None,
            error=error,
        )


def _byte_pattern(secrets: Secrets) -> re.Pattern[bytes] | None:
    found = sorted(
        {value.encode("utf-8", "surrogatepass") for value in secrets.values}, key=len, reverse=True
    )
    return re.compile(b"|".join(map(re.escape, found))) if found else None


_REDACTED_BYTES: Final = REDACTED.encode()


def _said(forms: tuple[str, str], count: int) -> str:
    return f"{count} {forms[0] if count == 1 else forms[1]}"


def _ends_between_events(tail: bytes, *, whole: bool) -> bool:
    """Whether a body whose last bytes are ``tail`` (``whole``: the entire body) ends
    with the blank line that ends an SSE event (or is empty)."""
    if not tail:
        return True
    for end in (b"\r\n", b"\n", b"\r"):
        if tail.endswith(end):
            rest = tail[: -len(end)]
            return (whole and not rest) or rest.endswith((b"\n", b"\r"))
    return False


def _error_message(body: str) -> str:
    try:
        return _excerpt(error_text(json.loads(body)))
    except (ValueError, RecursionError):
        return _excerpt(body)


def _as_received(headers: Mapping[str, str]) -> dict[str, str | bytes]:
    """Header values as the bytes received where they are not UTF-8: aiohttp reads such a
    byte as a lone surrogate (``surrogateescape``), and a recording holds bytes
    (ARCHITECTURE.md §3)."""
    return {name: _raw_value(value) for name, value in headers.items()}


def _raw_value(value: str) -> str | bytes:
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate no byte was read as: _fit says what it keeps
            return value
    return value


def _fitted(fields: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Header ``fields`` as a recording can hold them, and what was changed to fit
    (``"request: 1 integer beyond 64 bits kept as its decimal string"``), if anything."""
    fitted: dict[str, Any] = {}
    notes = []
    for name, value in fields.items():
        changes: Counter[tuple[str, str]] = Counter()
        fitted[name] = _fit(value, 2, changes)  # the header is level 1, its fields level 2
        if changes:
            said = ", ".join(
                f"{count} {one if count == 1 else many}" for (one, many), count in changes.items()
            )
            notes.append(f"{name}: {said}")
    return fitted, "; ".join(notes) or None


def _fit(value: Any, level: int, changes: Counter[tuple[str, str]]) -> Any:
    """``value`` with what msgpack and the format refuse replaced, counted in ``changes``
    (recursing at most ``MAX_NESTING`` levels)."""
    if isinstance(value, Mapping | list | tuple) and level > MAX_NESTING:
        changes[_TOO_DEEP] += 1
        return _CUT
    if isinstance(value, Mapping):
        return {
            _fit(key, level, changes): _fit(item, level + 1, changes) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_fit(item, level + 1, changes) for item in value]
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            changes[_SURROGATE] += 1
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, int) and not isinstance(value, bool) and value not in _MSGPACK_INTS:
        changes[_BIG_INT] += 1
        return str(value)
    return value
