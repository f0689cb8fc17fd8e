"""Detectors in other processes: a JSON-lines protocol over stdin and stdout (DESIGN §5).

One JSON object per line each way; every request gets exactly one response line.

Requests: ``{"op": "new", "tools": [..] | null}`` (a fresh detector for a new
message), ``{"op": "feed", "chunk": "..."}``, ``{"op": "finish"}``,
``{"op": "reset"}``, ``{"op": "state"}`` (optional).
Responses: ``{"events": [ev, ...]}`` for feed/finish, ``{"ok": true}`` for
new/reset, ``{"state": {...}}`` for state, ``{"error": "..."}`` for a failure
(``"unsupported"`` for an op the harness does not implement).
An event is ``{"type": "text", "text"}``, ``{"type": "tool_call", "name",
"arguments", "raw", "format"}``, ``{"type": "reasoning", "text", "raw",
"format"}`` or ``{"type": "rejected", "raw", "content", "format", "reason"}``;
``raw`` may be ``null``.

``python -m tcr.detector.stdio package.module:factory`` serves any in-process
detector this way (the reference side); ``command_factory(cmd)`` is the client:
one process, started lazily, one ``new`` per detector. A process that exits,
hangs past the timeout or prints a line that is not the expected JSON makes
``feed``/``finish`` raise ``DetectorProcessError``, which a replay reports as a
crash with the chunk index; the process is killed and restarted on the next ``new``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import select
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import IO, Any, BinaryIO

from tcr.detector.events import Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.loader import Factory, load_factory, make_detector
from tcr.errors import TcrError

__all__ = [
    "CommandFactory",
    "DetectorProcessError",
    "ProcessDetector",
    "command_factory",
    "event_from_json",
    "event_to_json",
    "serve",
]

_MAX_LINE = 1 << 28  # a response without a newline this long is garbage, not a slow reply
_encode = json.JSONEncoder(separators=(",", ":")).encode  # one encoder: dumps() builds one per call


class DetectorProcessError(RuntimeError):
    """The detector process crashed, hung, printed garbage or answered with an error."""


# -- events as JSON ----------------------------------------------------------------


def event_to_json(event: Event) -> dict[str, Any]:
    """One event as the protocol's JSON object."""
    if isinstance(event, Text):
        return {"type": "text", "text": event.text}
    if isinstance(event, ToolCall):
        return {
            "type": "tool_call",
            "name": event.name,
            "arguments": event.arguments,
            "raw": event.raw,
            "format": event.format,
        }
    if isinstance(event, Reasoning):
        return {"type": "reasoning", "text": event.text, "raw": event.raw, "format": event.format}
    return {
        "type": "rejected",
        "raw": event.raw,
        "content": event.content,
        "format": event.format,
        "reason": event.reason,
    }


def event_from_json(data: object) -> Event:
    """The protocol's JSON object as an event; ``ValueError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"an event must be an object, not {type(data).__name__}")
    kind = data.get("type")
    if kind == "text":
        return Text(_text(data, "text"))
    if kind == "tool_call":
        return ToolCall(
            _text(data, "name"),
            _text(data, "arguments"),
            _raw(data),
            _text(data, "format", ""),
        )
    if kind == "reasoning":
        return Reasoning(_text(data, "text"), _raw(data), _text(data, "format", ""))
    if kind == "rejected":
        return Rejected(
            _raw(data),
            _text(data, "content"),
            _text(data, "format", ""),
            _text(data, "reason", "malformed"),
        )
    raise ValueError(f"unknown event type {kind!r}")


def _text(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"event field {key!r} must be a string, not {type(value).__name__}")
    return value


def _raw(data: dict[str, Any]) -> str | None:
    raw = data.get("raw")
    if raw is not None and not isinstance(raw, str):
        raise ValueError(f"event field 'raw' must be a string or null, not {type(raw).__name__}")
    return raw


# -- the reference side: any in-process detector behind the protocol ----------------


def serve(factory: Factory, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer requests from ``stdin`` until it closes, one flushed line per request."""
    detector: Any = None
    for line in stdin:
        try:
            request = json.loads(line)
            op = request["op"]
            if op == "new":
                detector = None
                detector = make_detector(factory, request.get("tools"))
                response: dict[str, Any] = {"ok": True}
            elif detector is None:
                response = {"error": f"no detector for {op!r}: send new first"}
            elif op == "feed":
                response = _events(detector.feed(request["chunk"]))
            elif op == "finish":
                response = _events(detector.finish())
            elif op == "reset" and callable(getattr(detector, "reset", None)):
                detector.reset()
                response = {"ok": True}
            elif op == "state" and hasattr(detector, "state"):
                response = {"state": _jsonable(detector.state)}
            elif op in ("reset", "state"):
                response = {"error": "unsupported"}
            else:
                response = {"error": f"unknown op {op!r}"}
        except Exception as error:  # the detector's failure is the client's finding
            response = {"error": _describe(error)}
        stdout.write(_encode(response).encode() + b"\n")
        stdout.flush()


def _events(events: Sequence[Event]) -> dict[str, Any]:
    return {"events": [event_to_json(event) for event in events]}


def _jsonable(value: object) -> object:
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


def _describe(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m tcr.detector.stdio package.module:factory", file=sys.stderr)
        return 2
    try:
        factory = load_factory(args[0])
    except TcrError as error:
        print(f"tcr.detector.stdio: {error}", file=sys.stderr)
        return 2
    serve(factory, sys.stdin.buffer, sys.stdout.buffer)
    return 0


# -- the client side ---------------------------------------------------------------


class _Process:
    """One running harness: requests written, response lines read, each under a deadline."""

    def __init__(self, argv: list[str], timeout: float) -> None:
        self.timeout = timeout
        # stderr goes to a file, not a pipe nobody drains; its last line explains a crash.
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 closed in close()
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, bufsize=0
            )
        except OSError as error:
            self.stderr.close()
            raise DetectorProcessError(f"cannot start detector process: {error}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        os.set_blocking(self.wfd, False)  # a harness that stops reading must not block us
        self.readable = select.poll()
        self.readable.register(self.rfd, select.POLLIN)
        self.writable = select.poll()
        self.writable.register(self.wfd, select.POLLOUT)
        self.buffer = bytearray()

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        self._write(_encode(message).encode() + b"\n", deadline)
        line = self._readline(deadline)
        try:
            response = json.loads(line)
        except ValueError:
            response = None
        if not isinstance(response, dict):
            raise DetectorProcessError(f"detector process printed garbage: {_excerpt(line)}")
        return response

    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.wfd, view)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                raise DetectorProcessError(self._exited()) from None
            view = view[written:]
            if view and not self.writable.poll(self._remaining(deadline)):
                raise self._timed_out()

    def _readline(self, deadline: float) -> bytes:
        buffer = self.buffer
        while True:
            end = buffer.find(b"\n")
            if end >= 0:
                line = bytes(buffer[:end])
                del buffer[: end + 1]
                return line
            if len(buffer) > _MAX_LINE:
                raise DetectorProcessError(
                    f"detector process printed garbage: {_excerpt(bytes(buffer[:80]))}"
                )
            if not self.readable.poll(self._remaining(deadline)):
                raise self._timed_out()
            data = os.read(self.rfd, 1 << 16)
            if not data:
                raise DetectorProcessError(self._exited())
            buffer += data

    def _remaining(self, deadline: float) -> int:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._timed_out()
        return max(1, int(remaining * 1000))

    def _timed_out(self) -> DetectorProcessError:
        return DetectorProcessError(f"detector process did not answer within {self.timeout:g} s")

    def _exited(self) -> str:
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        self.stderr.seek(0)
        lines = [ln for ln in self.stderr.read()[-2000:].decode(errors="replace").splitlines()]
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        status = "closed its output" if code is None else f"exited with code {code}"
        return f"detector process {status}" + (f": {last}" if last else "")

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        try:
            self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()

    def kill(self) -> None:
        self.proc.kill()
        self.close()


def _excerpt(line: bytes) -> str:
    text = line.decode(errors="replace")
    return repr(text if len(text) <= 80 else text[:79] + "…")


class CommandFactory:
    """A detector factory backed by one harness process (``command_factory``).

    Detectors it makes share the process, so they are used one message at a
    time: a detector made earlier raises once a later one has started.
    """

    def __init__(self, command: str, *, timeout: float = 5.0) -> None:
        self.command = command
        self.timeout = timeout
        self.argv = shlex.split(command)
        if not self.argv:
            raise TcrError("--detector-cmd: empty command")
        self._process: _Process | None = None
        self._current: ProcessDetector | None = None

    def __call__(self, tools: list[str] | None = None) -> ProcessDetector:
        self._current = None
        if self._process is None:
            self._process = _Process(self.argv, self.timeout)
        response = self._request({"op": "new", "tools": tools})
        if "error" in response:
            raise DetectorProcessError(f"detector process could not start one: {response['error']}")
        if response.get("ok") is not True:
            self._fail()
            raise DetectorProcessError(f"detector process answered new with {response!r}")
        self._current = ProcessDetector(self)
        return self._current

    def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self._process is not None
        try:
            return self._process.request(message)
        except DetectorProcessError:
            self._fail()
            raise

    def _fail(self) -> None:
        # After a crash, a hang or garbage the line stream cannot be trusted: start over.
        self._current = None
        if self._process is not None:
            self._process.kill()
            self._process = None

    def _call(self, detector: ProcessDetector, message: dict[str, Any]) -> dict[str, Any]:
        if detector is not self._current or self._process is None:
            raise DetectorProcessError(
                "this detector's process was restarted or another detector started since "
                "(detectors of one --detector-cmd run one message at a time)"
            )
        return self._request(message)

    def close(self) -> None:
        """Stop the process (it sees its stdin close); a later call starts another."""
        self._current = None
        if self._process is not None:
            self._process.close()
            self._process = None

    def __enter__(self) -> CommandFactory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        # Picklable for ``--jobs``: each worker starts its own process.
        return {"command": self.command, "timeout": self.timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.command, self.timeout = state["command"], state["timeout"]
        self.argv = shlex.split(self.command)
        self._process, self._current = None, None

    def __repr__(self) -> str:
        return f"command_factory({self.command!r})"


class ProcessDetector:
    """A detector in another process, driven over the JSON-lines protocol."""

    def __init__(self, owner: CommandFactory) -> None:
        self._owner = owner
        self._state_supported = True

    def feed(self, chunk: str) -> list[Event]:
        return self._events(self._owner._call(self, {"op": "feed", "chunk": chunk}))

    def finish(self) -> list[Event]:
        return self._events(self._owner._call(self, {"op": "finish"}))

    def reset(self) -> None:
        response = self._owner._call(self, {"op": "reset"})
        if "error" in response:
            raise DetectorProcessError(f"reset() in the detector process: {response['error']}")

    @property
    def state(self) -> object:
        """The harness's ``state`` answer, or ``None`` when it does not implement it."""
        if not self._state_supported:
            return None
        response = self._owner._call(self, {"op": "state"})
        if response.get("error") == "unsupported":
            self._state_supported = False
            return None
        if "state" not in response:
            raise DetectorProcessError(f"state in the detector process: {response.get('error')}")
        return response["state"]

    def _events(self, response: dict[str, Any]) -> list[Event]:
        events = response.get("events")
        if isinstance(events, list):
            try:
                return [event_from_json(event) for event in events]
            except ValueError as error:
                self._owner._fail()
                raise DetectorProcessError(f"detector process printed garbage: {error}") from None
        if "error" in response:
            raise DetectorProcessError(f"the detector raised {response['error']}")
        self._owner._fail()
        raise DetectorProcessError(f"detector process printed garbage: {_excerpt(_dump(response))}")


def _dump(response: dict[str, Any]) -> bytes:
    return _encode(response).encode()


def command_factory(command: str, *, timeout: float = 5.0) -> CommandFactory:
    """A factory whose detectors live in the process ``command`` starts (once, lazily).

    ``command`` is split like a shell line (no shell runs it). ``timeout`` bounds
    each request in seconds.
    """
    if timeout <= 0:
        raise TcrError(f"--detector-timeout must be positive, not {timeout:g}")
    return CommandFactory(command, timeout=timeout)


if __name__ == "__main__":
    raise SystemExit(main())
