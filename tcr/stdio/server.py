"""The reference side of the stdio protocol: any in-process detector behind it.

``python -m tcr.stdio package.module:factory`` runs ``main``.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import time
from collections.abc import Sequence
from typing import Any, BinaryIO

from tcr.claims import read_claim
from tcr.detector.loader import Factory, accepts_keyword, load_factory, make_detector
from tcr.errors import TcrError
from tcr.stdio._wire import encode, events_json, loads

__all__ = ["main", "serve"]


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
    finally:  # Ctrl-C still gets the earlier answers out
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
        except KeyboardInterrupt:  # only Ctrl-C stops the harness
            raise
        except BaseException as error:  # SystemExit too: the detector's failure is a finding
            answer = encode({"error": _describe(error)})
        return answer.encode() + b"\n"  # ASCII: the encoder escapes the rest

    def _respond(self, request: Any) -> str:
        op = request["op"]
        if op == "feed" and self.detector is not None:
            return events_json(self.detector.feed(request["chunk"]))
        if op == "new":
            self.detector = None
            self.detector = make_detector(
                self.factory,
                request.get("tools"),
                tool_specs=request.get("tool_specs"),  # passed on when the factory takes it
                **self._asked(request),
            )
            claim = read_claim(self.detector, self.factory)  # a harness may say what it speaks
            return _OK if claim is None else encode({"ok": True, "claim": claim.to_map()})
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

    def _asked(self, request: Any) -> dict[str, Any]:
        """The claim the client asks for (``--dialect``, ``--empty-tools``,
        ``--special-tokens``), for a factory that takes it."""
        return {
            key: request[key]
            for key in ("dialects", "empty_tools", "special_tokens")
            if request.get(key) is not None and accepts_keyword(self.factory, key)
        }


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
        print("usage: python -m tcr.stdio package.module:factory", file=sys.stderr)
        return 2
    try:
        factory = load_factory(args[0])
        read_claim(factory)  # a claim of the wrong shape: one line now, not one per message
    except TcrError as error:
        print(f"tcr.stdio: {error}", file=sys.stderr)
        return 2
    serve(factory, sys.stdin.buffer, sys.stdout.buffer)
    return 0
