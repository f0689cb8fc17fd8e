"""Detectors in other processes: a JSON-lines protocol over stdin and stdout (DESIGN §5).

One JSON object per line each way; every request gets exactly one answer line,
and answers come in the order of the requests.

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

The client pipelines: when it knows a message's chunks up front (a replay) it
sends ``feed`` requests ahead of their answers, up to ``IN_FLIGHT`` (64) of
them and about 64 KiB, so a chunk does not cost a pipe round trip. A harness
needs nothing for that but to answer each line in turn and to flush its answers
before it waits for more input (flushing each one is simplest).

Timing: the client waits ``timeout`` seconds for each answer (from when it
starts waiting for it), so a harness that holds its answers until it would wait
for input has ``timeout`` for the 64 requests it may have in hand. The first
answer a process gives (to the first ``new``) may take ``START_UP`` (30)
seconds, or ``timeout`` if that is longer: an interpreter starting and
importing a parser on a busy machine is not a hang, and the per-answer timeout
can stay short.

``python -m tcr.detector.stdio package.module:factory`` serves any in-process
detector this way (the reference side; it writes answers in batches and
flushes before it reads on). ``command_factory(cmd)`` is the client: one
process, started lazily, one ``new`` per detector; its detectors' ``feed_many``
is the pipelined path, which ``tcr.trace.run_trace`` takes when it is offered.
A process that exits, hangs past the timeout or prints a line that is not the
expected JSON makes ``feed``/``finish`` raise ``DetectorProcessError`` (in
``feed_many``: at that chunk's result), which a replay reports as a crash with
the chunk index; the process is killed and restarted on the next ``new``. When
it exited or hung with several requests outstanding, the chunk that did it is
not known (a harness may hold answers back until it would wait for input): the
message so far is replayed on a fresh process and the outstanding chunks are
fed one at a time, so the one named is the one that fails alone.
"""

from __future__ import annotations

import dataclasses
import enum
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from tcr.detector._pipe import IN_FLIGHT, START_UP, DetectorProcessError, Pipe, excerpt
from tcr.detector._wire import encode, event_from_json, event_to_json, events_json, loads
from tcr.detector.events import Event
from tcr.detector.loader import Factory, load_factory, make_detector
from tcr.errors import TcrError

__all__ = [
    "IN_FLIGHT",
    "START_UP",
    "CommandFactory",
    "DetectorProcessError",
    "ProcessDetector",
    "command_factory",
    "event_from_json",
    "event_to_json",
    "serve",
]


# -- the reference side: any in-process detector behind the protocol ----------------


def serve(factory: Factory, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer requests from ``stdin`` until it closes, one line each, in order.

    Answers are written ``_BATCH`` at a time, and whatever is ready before the
    next read (which may wait): a pipelining client gets them in bulk, one that
    waits for each answer gets it at once. A slow detector's answers still go
    out every ``_FLUSH_EVERY`` seconds, as the client's timeout runs per answer.
    """
    server = _Server(factory)
    read = getattr(stdin, "read1", stdin.read)  # read1: what is there, without waiting for more
    start: list[bytes] = []  # a request line split across reads
    answers: list[bytes] = []
    try:
        while data := read(1 << 16):
            if b"\n" not in data:
                start.append(data)
                continue
            head, *lines, tail = data.split(b"\n")
            if start:
                head = b"".join(start) + head
            start = [tail] if tail else []
            flushed = time.monotonic()
            for line in (head, *lines):
                answers.append(server.answer(line))
                if len(answers) >= _BATCH or time.monotonic() - flushed > _FLUSH_EVERY:
                    _write(stdout, answers)
                    flushed = time.monotonic()
            _write(stdout, answers)
        if b"".join(start).strip():
            answers.append(server.answer(b"".join(start)))
    finally:  # a detector that calls sys.exit() still gets its earlier answers out
        _write(stdout, answers)


_FLUSH_EVERY = 0.02
_BATCH = 64  # answers per write at most: the client takes them while the next are worked out


def _write(stdout: BinaryIO, answers: list[bytes]) -> None:
    if answers:
        stdout.write(b"".join(answers))
        stdout.flush()
        answers.clear()


class _Server:
    """The reference harness's state: the current detector, one answer per request line."""

    def __init__(self, factory: Factory) -> None:
        self.factory = factory
        self.detector: Any = None

    def answer(self, line: bytes) -> bytes:
        try:
            answer = self._respond(loads(line))
        except Exception as error:  # the detector's failure is the client's finding
            answer = encode({"error": _describe(error)})
        return answer.encode() + b"\n"  # ASCII: the encoder escapes the rest

    def _respond(self, request: Any) -> str:
        op = request["op"]
        if op == "feed" and self.detector is not None:
            return events_json(self.detector.feed(request["chunk"]))
        if op == "new":
            self.detector = None
            self.detector = make_detector(self.factory, request.get("tools"))
            return _OK
        detector = self.detector
        if detector is None:
            return encode({"error": f"no detector for {op!r}: send new first"})
        if op == "finish":
            return events_json(detector.finish())
        if op == "reset" and callable(getattr(detector, "reset", None)):
            detector.reset()
            return _OK
        if op == "state" and hasattr(detector, "state"):
            return encode({"state": _jsonable(detector.state)})
        if op in ("reset", "state"):
            return encode({"error": "unsupported"})
        return encode({"error": f"unknown op {op!r}"})


_OK = '{"ok":true}'


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


def _line(message: dict[str, Any]) -> bytes:
    return encode(message).encode() + b"\n"


def _feed_line(chunk: str) -> bytes:
    return b'{"op":"feed","chunk":' + encode(chunk).encode() + b"}\n"


_STALE = (
    "this detector's process was restarted or another detector started since "
    "(detectors of one --detector-cmd run one message at a time)"
)
_FINISH = _line({"op": "finish"})
_RESET = _line({"op": "reset"})
_STATE = _line({"op": "state"})


def _parse(line: bytes) -> dict[str, Any]:
    try:
        response = loads(line)
    except ValueError:
        response = None
    if not isinstance(response, dict):
        raise DetectorProcessError(f"detector process printed garbage: {excerpt(line)}")
    return response


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
        self._pipe: Pipe | None = None
        self._current: ProcessDetector | None = None

    def __call__(self, tools: list[str] | None = None) -> ProcessDetector:
        detector = ProcessDetector(self, tools)
        self._start(detector)
        return detector

    def _start(self, detector: ProcessDetector) -> Pipe:
        """A fresh detector in the harness for ``detector``, the process started if need be."""
        self._current = None
        if self._pipe is not None and self._pipe.due:
            self._settle()  # answers to a feed_many nobody read to the end
        if self._pipe is None:
            self._pipe = Pipe(self.argv, self.timeout)
        response = self._request(_line({"op": "new", "tools": detector._tools}))
        if "error" in response:
            raise DetectorProcessError(f"detector process could not start one: {response['error']}")
        if response.get("ok") is not True:
            self._fail()
            raise DetectorProcessError(f"detector process answered new with {response!r}")
        self._current = detector
        return self._pipe

    def _request(self, line: bytes) -> dict[str, Any]:
        assert self._pipe is not None
        try:
            return _parse(self._pipe.request(line))
        except DetectorProcessError:
            self._fail()
            raise

    def _settle(self) -> None:
        assert self._pipe is not None
        try:
            self._pipe.drain()
        except DetectorProcessError:
            self._fail()

    def _fail(self) -> None:
        # After a crash, a hang or garbage the line stream cannot be trusted: start over.
        self._current = None
        if self._pipe is not None:
            self._pipe.kill()
            self._pipe = None

    def _pipe_of(self, detector: ProcessDetector) -> Pipe:
        if detector is not self._current or self._pipe is None:
            raise DetectorProcessError(_STALE)
        if detector._pipelining:
            raise DetectorProcessError(
                "this detector's feed_many() is still running: take all its results first"
            )
        return self._pipe

    def _call(self, detector: ProcessDetector, line: bytes) -> dict[str, Any]:
        self._pipe_of(detector)
        return self._request(line)

    def close(self) -> None:
        """Stop the process (it sees its stdin close); a later call starts another."""
        self._current = None
        if self._pipe is not None:
            self._pipe.close()
            self._pipe = None

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
        self._pipe, self._current = None, None

    def __repr__(self) -> str:
        return f"command_factory({self.command!r})"


class ProcessDetector:
    """A detector in another process, driven over the JSON-lines protocol."""

    def __init__(self, owner: CommandFactory, tools: list[str] | None = None) -> None:
        self._owner = owner
        self._tools = tools
        self._state_supported = True
        self._pipelining = False
        # What changed the detector since ``new`` (chunks fed, finish/reset lines sent):
        # enough to bring a fresh process to the same point.
        self._history: list[str | bytes] = []

    def feed(self, chunk: str) -> list[Event]:
        response = self._owner._call(self, _feed_line(chunk))
        self._history.append(chunk)
        return self._events(response)

    def feed_many(self, chunks: Sequence[str]) -> Iterator[list[Event]]:
        """What ``feed`` returns for each chunk, in order, with the requests pipelined.

        Requests go out ahead of their answers, so a message costs about one pipe
        round trip instead of one per chunk. A failure raises when the failing
        chunk's result is taken, as ``feed`` would have for that chunk. Take
        every result (or close the iterator) before the next ``finish``.
        """
        owner = self._owner
        pipe = owner._pipe_of(self)
        self._pipelining = True
        total = len(chunks)
        index = 0  # the chunk whose result comes next
        queued = 0  # chunks sent; results from ``index`` to here are due
        one_by_one = 0  # chunks before this go one request at a time (after a lost process)
        try:
            while index < total:
                if index < one_by_one:
                    response = owner._request(_feed_line(chunks[index]))
                    self._history.append(chunks[index])
                    queued = index + 1
                else:
                    while queued < total and pipe.room:
                        pipe.send(_feed_line(chunks[queued]))
                        self._history.append(chunks[queued])
                        queued += 1
                    try:
                        response = _parse(pipe.answer())
                    except DetectorProcessError as error:
                        owner._fail()
                        if not error.lost or queued - index == 1:
                            raise
                        # It exited or hung with several requests in: which one did it?
                        pipe = self._revive(error, queued - index)
                        one_by_one, queued = queued, index
                        continue
                index += 1
                events = self._events(response)
                if index == total:
                    self._pipelining = False  # finish() may follow the last result at once
                yield events
                if owner._current is not self or owner._pipe is not pipe:
                    raise DetectorProcessError(_STALE)
        finally:
            self._pipelining = False
            if queued > index and owner._current is self and owner._pipe is pipe:
                owner._settle()

    def _revive(self, lost: DetectorProcessError, unanswered: int) -> Pipe:
        """A fresh process brought to where this one last answered: everything before replayed."""
        owner = self._owner
        before = self._history[: len(self._history) - unanswered]
        try:
            pipe = owner._start(self)
            for item in before:
                pipe.send(item if isinstance(item, bytes) else _feed_line(item))
                while not pipe.room:
                    _parse(pipe.answer())
            while pipe.due:
                _parse(pipe.answer())
        except DetectorProcessError as error:
            owner._fail()
            raise DetectorProcessError(
                f"{lost} (a fresh process replaying the chunks before failed too: {error})"
            ) from None
        self._history = before
        return pipe

    def finish(self) -> list[Event]:
        response = self._owner._call(self, _FINISH)
        self._history.append(_FINISH)
        return self._events(response)

    def reset(self) -> None:
        response = self._owner._call(self, _RESET)
        self._history.append(_RESET)
        if "error" in response:
            raise DetectorProcessError(f"reset() in the detector process: {response['error']}")

    @property
    def state(self) -> object:
        """The harness's ``state`` answer, or ``None`` when it does not implement it."""
        if not self._state_supported:
            return None
        response = self._owner._call(self, _STATE)
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
        raise DetectorProcessError(f"detector process printed garbage: {excerpt(_line(response))}")


def command_factory(command: str, *, timeout: float = 5.0) -> CommandFactory:
    """A factory whose detectors live in the process ``command`` starts (once, lazily).

    ``command`` is split like a shell line (no shell runs it). ``timeout`` bounds
    the wait for each answer, in seconds, except the first of each process
    started, which may take ``START_UP`` seconds (or ``timeout``, if longer).
    """
    if timeout <= 0:
        raise TcrError(f"--detector-timeout must be positive, not {timeout:g}")
    return CommandFactory(command, timeout=timeout)


if __name__ == "__main__":
    raise SystemExit(main())
