"""The client's end of a harness process: request lines out, answer lines in.

Requests are queued and written while answers are awaited, so a client can
pipeline (send many requests before reading their answers) and neither side
can block the other, however much each writes: a Linux pipe holds only
64 KiB, and a harness blocked writing answers nobody reads, facing a client
blocked writing requests nobody reads, would be a deadlock. Both of our ends
are non-blocking and one ``poll`` waits for whichever can move.

Each answer is due ``timeout`` seconds after the client starts waiting for it,
and at most ``IN_FLIGHT`` requests (and about ``WINDOW`` bytes of them) are out
ahead of their answers: a harness that holds its answers back until it would
wait for input has ``timeout`` for ``IN_FLIGHT`` requests, however small they
are (64 KiB of one-character feeds is thousands). The first answer a process
gives, awaited as soon as it starts, may take ``START_UP`` seconds instead (or
``timeout``, if longer): starting an interpreter and importing a parser takes a
fraction of a second on an idle machine and many seconds on a busy CI runner,
and a short per-answer timeout should not have to allow for it.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
import time
from collections import deque
from typing import IO

__all__ = ["IN_FLIGHT", "START_UP", "WINDOW", "DetectorProcessError", "Pipe", "excerpt"]

WINDOW = 1 << 16  # request bytes queued ahead of the answers; a single request may be larger
IN_FLIGHT = 64  # requests sent ahead of their answers (the reference harness answers 64 a write)
START_UP = 30.0  # seconds for a new process's first answer: its start-up, then that answer
_MAX_LINE = 1 << 28  # an answer without a newline this long is garbage, not a slow reply
_READ = 1 << 17


class DetectorProcessError(RuntimeError):
    """The detector process crashed, hung, printed garbage or answered with an error."""

    def __init__(self, message: str, *, lost: bool = False) -> None:
        super().__init__(message)
        self.lost = lost  # it exited or stopped answering: no answer comes for what is due


class Pipe:
    """One running harness: request lines queued with ``send``, answers read with ``answer``."""

    def __init__(self, argv: list[str], timeout: float) -> None:
        self.timeout = timeout
        self.start_up = max(timeout, START_UP)
        # stderr goes to a file, not a pipe nobody drains; its last line explains a crash.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 closed in close()
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0
            )
        except OSError as error:
            self._stderr.close()
            raise DetectorProcessError(f"cannot start detector process: {error}") from None
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._wfd = self._proc.stdin.fileno()
        self._rfd = self._proc.stdout.fileno()
        os.set_blocking(self._wfd, False)
        os.set_blocking(self._rfd, False)
        self._poll = select.poll()
        self._poll.register(self._rfd, select.POLLIN)
        self._polling_writes = False
        self._unsent = bytearray()  # queued request bytes not yet taken by the pipe
        self._lines: deque[bytes] = deque()  # complete answer lines not yet taken
        self._partial: list[bytes] = []  # the start of an answer line still being read
        self._partial_size = 0
        self._broken = False  # the harness stopped reading: nothing more reaches it
        self.due = 0  # requests sent whose answers have not been taken
        self._answered = False  # it has answered once: it started

    @property
    def room(self) -> bool:
        """Whether another request may be queued without waiting for answers first."""
        # Answers read but not yet taken do not count: the harness is done with those.
        return self.due - len(self._lines) < IN_FLIGHT and len(self._unsent) < WINDOW

    def send(self, line: bytes) -> None:
        """Queue one request line (ending in a newline); it is written while answers are awaited."""
        if not self._broken:
            self._unsent += line
        self.due += 1

    def answer(self) -> bytes:
        """The next answer line, in request order; raises (``lost``) if none comes in time."""
        assert self.due > 0, "answer() with no request outstanding"
        lines = self._lines
        if lines and self._unsent:
            self._write()  # the next requests, to be worked on while these answers are taken
        if not lines:
            allowed = self.timeout if self._answered else self.start_up
            deadline = time.monotonic() + allowed
            while not lines:
                if not self._pump(deadline):
                    start = "" if self._answered else " of starting"
                    message = f"detector process did not answer within {allowed:g} s{start}"
                    raise DetectorProcessError(message, lost=True)
            self._answered = True
        self.due -= 1
        return lines.popleft()

    def request(self, line: bytes) -> bytes:
        """Send one request and wait for its answer."""
        self.send(line)
        return self.answer()

    def drain(self) -> None:
        """Take and drop every answer still due (of requests whose results nobody wants)."""
        while self.due:
            self.answer()

    def _pump(self, deadline: float) -> bool:
        """Write what the pipe takes, read what is there, or wait for either; False if too late."""
        if self._unsent:
            self._write()
        if self._read():
            return True
        wants_write = bool(self._unsent)
        if wants_write != self._polling_writes:
            if wants_write:
                self._poll.register(self._wfd, select.POLLOUT)
            else:
                self._poll.unregister(self._wfd)
            self._polling_writes = wants_write
        remaining = deadline - time.monotonic()
        return remaining > 0 and bool(self._poll.poll(max(1, int(remaining * 1000))))

    def _write(self) -> None:
        try:
            written = os.write(self._wfd, self._unsent)
        except BlockingIOError:
            return
        except (BrokenPipeError, ConnectionResetError):
            # It closed its input or exited; the answers it did write are still to be read.
            self._broken = True
            self._unsent.clear()
            return
        del self._unsent[:written]

    def _read(self) -> bool:
        try:
            data = os.read(self._rfd, _READ)
        except BlockingIOError:
            return False
        if not data:
            raise DetectorProcessError(self._exited(), lost=True)
        if b"\n" not in data:
            self._partial.append(data)
            self._partial_size += len(data)
            if self._partial_size > _MAX_LINE:
                start = b"".join(self._partial)[:80]
                raise DetectorProcessError(f"detector process printed garbage: {excerpt(start)}")
            return True
        head, *lines, tail = data.split(b"\n")
        if self._partial:
            head = b"".join(self._partial) + head
            self._partial.clear()
        self._lines.append(head)
        self._lines.extend(lines)
        if tail:
            self._partial.append(tail)
        self._partial_size = len(tail)
        return True

    def _exited(self) -> str:
        try:
            code = self._proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        self._stderr.seek(0)
        lines = self._stderr.read()[-2000:].decode(errors="replace").splitlines()
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        status = "closed its output" if code is None else f"exited with code {code}"
        return f"detector process {status}" + (f": {last}" if last else "")

    def close(self) -> None:
        """Close its input (a harness stops at end of input) and wait a moment for it to exit."""
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()
        try:
            self._proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._stderr.close()

    def kill(self) -> None:
        self._proc.kill()
        self.close()


def excerpt(line: bytes) -> str:
    """A line as a short quoted string for an error message."""
    text = line.decode(errors="replace")
    return repr(text if len(text) <= 80 else text[:79] + "…")
