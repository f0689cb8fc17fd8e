"""The client side of the stdio protocol: detectors whose work is done by a harness process."""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterator, Sequence
from typing import Any

from tcr.detector.events import Event
from tcr.errors import TcrError
from tcr.stdio._pipe import DetectorProcessError, DetectorTimeout, Pipe, excerpt
from tcr.stdio._wire import encode, event_from_json, loads

__all__ = ["CommandFactory", "ProcessDetector", "command_factory"]


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


def _argv(command: str) -> list[str]:
    """``command`` split like a shell line; a ``TcrError`` naming the option if it cannot be."""
    try:
        argv = shlex.split(command)
    except ValueError as error:  # an unclosed quote or a trailing backslash
        raise TcrError(
            f"--detector-cmd: cannot split {command!r} like a shell line: {error}"
        ) from None
    if not argv:
        raise TcrError("--detector-cmd: empty command")
    return argv


class CommandFactory:
    """A detector factory backed by one harness process (``command_factory``).

    Detectors it makes share the process, so they are used one message at a
    time: a detector made earlier raises once a later one has started.
    """

    def __init__(self, command: str, *, timeout: float = 5.0) -> None:
        self.command = command
        self.timeout = timeout
        self.argv = _argv(command)
        self._pipe: Pipe | None = None
        self._current: ProcessDetector | None = None

    def __call__(
        self,
        tools: list[str] | None = None,
        dialects: list[str] | None = None,
        empty_tools: str | None = None,
        tool_specs: list[dict[str, Any]] | None = None,
        special_tokens: str | None = None,
    ) -> ProcessDetector:
        """A fresh detector in the harness; ``dialects``/``empty_tools``/``special_tokens``
        ask it for a claim (``--dialect``, ``--empty-tools``, ``--special-tokens``), which
        a harness may ignore. ``tool_specs``
        (the request's OpenAI ``tools`` list) goes in ``new`` as ``"tool_specs"`` when
        there are some: a harness that types values by schema reads it, an older one
        ignores the key."""
        detector = ProcessDetector(self, tools)
        asked = {
            "dialects": dialects,
            "empty_tools": empty_tools,
            "special_tokens": special_tokens,
            "tool_specs": tool_specs,
        }
        detector._asked = {key: value for key, value in asked.items() if value is not None}
        self._start(detector)
        return detector

    def _start(self, detector: ProcessDetector) -> Pipe:
        """A fresh detector in the harness for ``detector``, the process started if need be."""
        self._current = None
        if self._pipe is not None and self._pipe.due:
            self._settle()  # answers to a feed_many nobody read to the end
        if self._pipe is None:
            self._pipe = Pipe(self.argv, self.timeout)
        self._pipe.begin_message()
        response = self._request(_line({"op": "new", "tools": detector._tools, **detector._asked}))
        if "error" in response:
            raise DetectorProcessError(f"detector process could not start one: {response['error']}")
        if response.get("ok") is not True:
            self._fail()
            raise DetectorProcessError(f"detector process answered new with {response!r}")
        # What the harness says it speaks (None: nothing said, every dialect); a claim of
        # the wrong shape is reported where it is read (tcr.claims.read_claim).
        detector.tcr_claim = response.get("claim")
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
        self.argv = _argv(self.command)
        self._pipe, self._current = None, None

    def __repr__(self) -> str:
        return f"command_factory({self.command!r})"


class ProcessDetector:
    """A detector in another process, driven over the JSON-lines protocol."""

    def __init__(self, owner: CommandFactory, tools: list[str] | None = None) -> None:
        self._owner = owner
        self._tools = tools
        self._asked: dict[str, Any] = {}  # the claim asked of the harness in ``new``
        self.tcr_claim: object = None  # the claim the harness answered ``new`` with
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
            failed = DetectorTimeout if isinstance(error, DetectorTimeout) else DetectorProcessError
            raise failed(
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
    if not (timeout > 0 and math.isfinite(timeout)):  # nan and inf compare as no number does
        raise TcrError(f"--detector-timeout must be a positive number of seconds, not {timeout:g}")
    return CommandFactory(command, timeout=timeout)
