"""The client's end of a harness process: request lines out, answer lines in.

Requests are queued and written while answers are awaited, so a client can
pipeline (send many requests before reading their answers) and neither side
can block the other, however much each writes: a Linux pipe holds only
64 KiB, and a harness blocked writing answers nobody reads, facing a client
blocked writing requests nobody reads, would be a deadlock. Both of our ends
are non-blocking and one ``poll`` waits for whichever can move.

Each answer is due ``timeout`` seconds after the client starts waiting for it,
and the whole message (from ``begin_message``, or from a new process's first
answer) ``timeout`` seconds plus ``PER_REQUEST`` for each request it sent: a
harness that answers every request just in time costs one timeout a message, not
one an answer (issue 36: 130 of them). At most ``IN_FLIGHT`` requests (and about
``WINDOW`` bytes of them) are out ahead of their answers: a harness that holds its
answers back until it would wait for input has ``timeout`` for ``IN_FLIGHT``
requests, however small they are (64 KiB of one-character feeds is thousands).
The first answer a process gives, awaited as soon as it starts, may take
``START_UP`` seconds instead (or ``timeout``, if longer): starting an interpreter
and importing a parser takes a fraction of a second on an idle machine and many
seconds on a busy CI runner, and a short per-answer timeout should not have to
allow for it.

A harness may be buggy or hostile, and what it costs tcr stays bounded. The
answers to one message may be ``LINE_LIMIT`` (16 MiB) long in all plus 8 bytes for
each byte of the requests it sent (an answer repeats its input, escaped, in several
fields: a whole message fed as one chunk comes back that large): more is garbage,
and reading stops there, whether one line holds it or each of many answers holds
some of it (a 12 MB answer to each of a message's feeds took 1 GB and 4 minutes).
Only the last ``STDERR_TAIL`` (64 KiB) of its stderr is kept, for the last words
an error message quotes. It runs in a process group of its own, and the whole
group is killed when the pipe closes, so what a harness starts ends with it.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import time
from collections import deque

from tcr.time_limit import OverTime

__all__ = [
    "IN_FLIGHT",
    "LINE_LIMIT",
    "PER_REQUEST",
    "START_UP",
    "STDERR_TAIL",
    "WINDOW",
    "DetectorProcessError",
    "DetectorTimeout",
    "Pipe",
    "excerpt",
]

WINDOW = 1 << 16  # request bytes queued ahead of the answers; a single request may be larger
IN_FLIGHT = 64  # requests sent ahead of their answers (the reference harness answers 64 a write)
START_UP = 30.0  # seconds for a new process's first answer: its start-up, then that answer
PER_REQUEST = 2e-3  # seconds a message's limit grows by, per request: the limit is for hangs
LINE_LIMIT = 1 << 24  # bytes of an answer line, beyond _LINE_GROWTH per byte of its message
_LINE_GROWTH = 8  # an answer repeats its input, JSON-escaped, in up to three fields
STDERR_TAIL = 1 << 16  # the last bytes of the harness's stderr kept for error messages
_READ = 1 << 17
_STDERR_READS = 16  # reads of stderr while waiting for an exit: 2 MiB, then look again


class DetectorProcessError(RuntimeError):
    """The detector process crashed, hung, printed garbage or answered with an error."""

    def __init__(self, message: str, *, lost: bool = False) -> None:
        super().__init__(message)
        self.lost = lost  # it exited or stopped answering: no answer comes for what is due


class DetectorTimeout(DetectorProcessError, OverTime):
    """The harness took longer than its time limit: as an in-process detector over its
    ``--timeout``, a crash shown as found and never shrunk (each try could take the limit
    again)."""


class Pipe:
    """One running harness: request lines queued with ``send``, answers read with ``answer``."""

    def __init__(self, argv: list[str], timeout: float) -> None:
        self.timeout = timeout
        self.start_up = max(timeout, START_UP)
        try:
            # A session of its own: killing its group ends what it started too.
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as error:
            raise DetectorProcessError(f"cannot start detector process: {error}") from None
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr
        self._wfd = self._proc.stdin.fileno()
        self._rfd = self._proc.stdout.fileno()
        self._efd: int | None = self._proc.stderr.fileno()  # None once it is closed
        for fd in (self._wfd, self._rfd, self._efd):
            os.set_blocking(fd, False)
        self._poll = select.poll()
        self._poll.register(self._rfd, select.POLLIN)
        # stderr is drained whenever answers are awaited, or a chatty harness would block on it.
        self._poll.register(self._efd, select.POLLIN)
        self._stderr_tail = (
            bytearray()
        )  # its last STDERR_TAIL bytes: its last line explains a crash
        self._polling_writes = False
        self._unsent = bytearray()  # queued request bytes not yet taken by the pipe
        self._lines: deque[bytes] = deque()  # complete answer lines not yet taken
        self._partial = bytearray()  # the start of an answer line still being read
        self._message_bytes = 0  # request bytes since begin_message(): an answer may grow with them
        self._answer_bytes = 0  # answer bytes read since begin_message(), bounded with them
        self._requests = 0  # requests since begin_message(): the message's time grows with them
        self._message_started: float | None = None  # None: at the process's first answer
        self._broken = False  # the harness stopped reading: nothing more reaches it
        self.due = 0  # requests sent whose answers have not been taken
        self._answered = False  # it has answered once: it started
        self._ended = False  # its group was killed and it was reaped

    @property
    def room(self) -> bool:
        """Whether another request may be queued without waiting for answers first."""
        # Answers read but not yet taken do not count: the harness is done with those.
        return self.due - len(self._lines) < IN_FLIGHT and len(self._unsent) < WINDOW

    def begin_message(self) -> None:
        """A new message starts: its time and the bytes of its answers count from here."""
        self._message_bytes = self._answer_bytes = self._requests = 0
        self._message_started = time.monotonic() if self._answered else None

    def send(self, line: bytes) -> None:
        """Queue one request line (ending in a newline); it is written while answers are awaited."""
        if not self._broken:
            self._unsent += line
        self._message_bytes += len(line)
        self._requests += 1
        self.due += 1

    def answer(self) -> bytes:
        """The next answer line, in request order; raises (``lost``) if none comes in time."""
        assert self.due > 0, "answer() with no request outstanding"
        lines = self._lines
        if lines and self._unsent:
            self._write()  # the next requests, to be worked on while these answers are taken
        if not lines:
            now = time.monotonic()
            allowed = self.timeout if self._answered else self.start_up
            deadline = now + allowed
            over = self._message_deadline(now)
            while not lines:
                if not self._pump(min(deadline, over)):
                    if self._exit_code(0) is not None:  # what it started holds its output open
                        raise DetectorProcessError(self._exited(), lost=True)
                    if over < deadline:  # answering all along, too slowly: no chunk hung
                        raise DetectorTimeout(
                            f"detector process took longer than {self.timeout:g} s over one "
                            f"message (and {PER_REQUEST * 1000:g} ms for each of its "
                            f"{self._requests} requests)"
                        )
                    start = "" if self._answered else " of starting"
                    message = f"detector process did not answer within {allowed:g} s{start}"
                    raise DetectorTimeout(message, lost=True)
            if not self._answered:
                self._answered = True
                self._message_started = time.monotonic()  # its start-up is not the message's
        self.due -= 1
        return lines.popleft()

    def _message_deadline(self, now: float) -> float:
        """When the message running now is over its time (infinity while starting up)."""
        if self._message_started is None:
            return math.inf
        return self._message_started + self.timeout + PER_REQUEST * self._requests

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
        if remaining <= 0:
            return False
        ready = self._poll.poll(max(1, int(remaining * 1000)))
        if any(fd == self._efd for fd, _ in ready):
            self._read_stderr(1)  # one read a turn: a flood of it cannot starve the answers
        return bool(ready)

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
        limit = LINE_LIMIT + _LINE_GROWTH * self._message_bytes
        self._answer_bytes += len(data)
        if self._answer_bytes > limit and len(self._partial) + len(data) <= limit:
            self._partial = bytearray()
            message = f"answers over {limit >> 20} MiB to one message of {self._requests} requests"
            raise DetectorProcessError(f"detector process printed garbage: {message}")
        if b"\n" not in data:
            self._partial += data
            if len(self._partial) > limit:
                raise self._overlong(limit)
            return True
        head, *lines, tail = data.split(b"\n")
        if self._partial:
            if len(self._partial) + len(head) > limit:
                raise self._overlong(limit)
            self._partial += head
            head = bytes(self._partial)
            self._partial.clear()
        self._lines.append(head)
        self._lines.extend(lines)
        self._partial += tail
        return True

    def _overlong(self, limit: int) -> DetectorProcessError:
        """The error for an answer line over ``limit``, its start quoted and the rest dropped."""
        start = bytes(self._partial[:80])
        self._partial = bytearray()
        message = f"an answer line over {limit >> 20} MiB: {excerpt(start)}"
        return DetectorProcessError(f"detector process printed garbage: {message}")

    def _read_stderr(self, reads: int) -> None:
        """Take up to ``reads`` reads of what it wrote to stderr, keeping the last STDERR_TAIL."""
        for _ in range(reads):
            if self._efd is None:
                return
            try:
                data = os.read(self._efd, _READ)
            except BlockingIOError:
                return
            if not data:
                self._poll.unregister(self._efd)
                self._efd = None
                return
            self._stderr_tail += data
            del self._stderr_tail[:-STDERR_TAIL]

    def _exited(self) -> str:
        code = self._exit_code(1.0)
        lines = self._stderr_tail[-2000:].decode(errors="replace").splitlines()
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        status = "closed its output" if code is None else f"exited with code {code}"
        return f"detector process {status}" + (f": {last}" if last else "")

    def _exit_code(self, seconds: float) -> int | None:
        """Its exit code once it exits (``None`` if it runs ``seconds`` on), its stderr drained.

        It is not reaped: while it is a zombie its pid, the id of its process
        group, cannot be reused, so ``_end`` kills its group and nothing else.
        """
        deadline = time.monotonic() + seconds
        while True:
            self._read_stderr(_STDERR_READS)
            if self._ended:
                return self._proc.returncode
            try:
                exited = os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # reaped already, by nobody here
                return self._proc.poll()
            if exited is not None:
                self._read_stderr(_STDERR_READS)  # its last words, still in the pipe
                code = exited.si_status
                return code if exited.si_code == os.CLD_EXITED else -code
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def _end(self) -> None:
        """Kill its process group (it and whatever it started) and reap it."""
        if self._ended:
            return
        self._ended = True
        # An empty group is no error (a zombie leader may not count, as on macOS).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.kill()  # in case it left its group
        self._proc.wait()

    def close(self, grace: float = 1.0) -> None:
        """Close its input (a harness stops at end of input), wait ``grace`` s, end its group."""
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()
        self._exit_code(grace)
        self._end()
        if self._proc.stderr is not None:
            self._proc.stderr.close()
        self._efd = None

    def kill(self) -> None:
        self.close(grace=0)


def excerpt(line: bytes) -> str:
    """A line as a short quoted string for an error message."""
    text = line.decode(errors="replace")
    return repr(text if len(text) <= 80 else text[:79] + "…")
