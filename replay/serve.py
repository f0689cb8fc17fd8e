"""``tcr serve``: an OpenAI-compatible (and llama.cpp ``/completion``) endpoint that
replays recordings, so an agent written in any language runs against recorded streams.

Which recording answers a request: the one named by the ``X-Tcr-Recording``
header (its id or file name), else the one whose id equals the request's
``model``, else the next one in turn. Every response says which one it was
(``X-Tcr-Recording``) and how it was chunked (``X-Tcr-Chunking``), so a failure
seen by the client can be replayed with ``tcr replay``. The n-th request for a
recording gets the strategy's n-th chunking (``random:8#n``). What is sent is
decided by :func:`tcr.replay.playback.playing`; this module only routes and
paces it (``speed`` 1: the recorded timing, 2: twice as fast, 0: no waiting),
sending each write as it is made, so a client costs the same memory whatever
the length of the recording.

A request aiohttp cannot handle (a NUL in a header, a negative Content-Length,
a client that resets the connection) is reported in one line to ``on_bad_request``,
not as aiohttp's traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any

from aiohttp import web

from tcr._runtime.background import AsyncService, in_background
from tcr._runtime.names import safe_text
from tcr.corpus import Recording, iter_recordings, read_recording
from tcr.errors import TcrError
from tcr.rechunk import Strategy, parse_strategy

from .playback import Playing, Write, playing

__all__ = ["ReplayServer", "Served", "load_recordings", "running_server", "serve"]

HEADER = "X-Tcr-Recording"
_MAX_REQUEST = 16 << 20
# Writes made at a time, in a thread: making them on the event loop would stall the
# other clients (a million per-character SSE events are seconds of JSON), and making
# them all before sending held the whole response (hundreds of MB per client).
_BATCH = 256
_ROUTES = {
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/completion": "completion",
}


@dataclass(frozen=True, slots=True)
class Served:
    """One request answered: for the command's log line and for tests."""

    method: str
    path: str
    status: int
    recording: str | None
    chunking: str | None
    chosen_by: str | None  # "header", "model" or "turn"


def load_recordings(
    paths: Sequence[str | Path] | None, *, on_skipped: Callable[[str], object] | None = None
) -> list[tuple[Path, Recording]]:
    """The recordings under ``paths`` (None: the bundled corpora). A file that
    cannot be read is reported to ``on_skipped`` and left out; none at all is an error."""
    if paths is None:
        from tcr.corpora import bundled

        files = bundled()
    else:
        files = list(iter_recordings([Path(p) for p in paths]))
    loaded: list[tuple[Path, Recording]] = []
    for file in files:
        try:
            loaded.append((file, read_recording(file)))
        except TcrError as error:
            if on_skipped is not None:
                on_skipped(str(error))
    if not loaded:
        where = "the bundled corpora" if paths is None else ", ".join(map(str, paths))
        raise TcrError(f"{where}: no readable recordings to serve")
    return loaded


class ReplayServer(AsyncService):
    """``async with ReplayServer(recordings) as server`` serves on ``server.url``
    (port 0 picks a free port) until the block ends."""

    def __init__(
        self,
        recordings: Sequence[tuple[Path, Recording]],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        rechunk: str | None = None,
        speed: float = 1.0,
        seed: int = 0,
        on_served: Callable[[Served], object] | None = None,
        on_bad_request: Callable[[str], object] | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        """``on_bad_request`` gets one line per request that aiohttp could not handle;
        ``sleep`` paces the writes (tests pass one that records the delays)."""
        if not recordings:
            raise TcrError("no recordings to serve")
        if speed < 0:
            raise TcrError(f"--speed must be 0 (no waiting) or more, not {speed:g}")
        self.strategy: Strategy | None = None if rechunk is None else parse_strategy(rechunk)
        self.recordings = [recording for _, recording in recordings]
        self.host = host
        self.port = port
        self.speed = speed
        self.seed = seed
        self.on_served = on_served
        self.sleep = sleep
        self._aiohttp_log = _one_line_logger(on_bad_request)
        # Each recording's name is its file stem (its folder and stem when two share one):
        # what /v1/models lists and the answer's header says.
        stems = [path.stem for path, _ in recordings]
        self.names: list[str] = []  # each recording's, in order
        self._name_of: dict[int, str] = {}  # a recording object's name (two may share an id)
        self._by_name: dict[str, Recording] = {}
        for path, recording in recordings:
            shared = stems.count(path.stem) > 1
            name = _header_safe(f"{path.parent.name}/{path.stem}" if shared else path.stem)
            self.names.append(name)
            self._name_of[id(recording)] = name
            for alias in (name, path.name, path.stem):
                self._by_name.setdefault(alias, recording)
        self._by_id = {recording.id: recording for recording in self.recordings}
        self._turns: dict[str, int] = {}  # requests answered so far, per recording
        self._next = 0  # the recording "in turn"
        self._runner: web.AppRunner | None = None

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """The (host, port) of each socket it listens on."""
        return [] if self._runner is None else [a[:2] for a in self._runner.addresses]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        app = web.Application(client_max_size=_MAX_REQUEST)
        for path, endpoint in _ROUTES.items():
            app.router.add_post(path, self._answer(endpoint))
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/models", self._models)
        app.router.add_get("/health", self._health)
        self._runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=1.0, logger=self._aiohttp_log
        )
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self.host, self.port).start()
        except OSError as exc:
            await self.close()
            raise TcrError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        self.port = int(self._runner.addresses[0][1])

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- choosing ------------------------------------------------------------------------

    def choose(self, body: Mapping[str, Any], headers: Mapping[str, str]) -> tuple[Recording, str]:
        """The recording for a request, and what chose it; ``KeyError`` for an
        unknown name in the header."""
        wanted = headers.get(HEADER)
        if wanted:
            recording = self._by_id.get(wanted) or self._by_name.get(wanted)
            if recording is None:
                raise KeyError(wanted)
            return recording, "header"
        model = body.get("model")
        if isinstance(model, str) and model in self._by_id:
            return self._by_id[model], "model"
        if isinstance(model, str) and model in self._by_name:
            return self._by_name[model], "model"
        recording = self.recordings[self._next % len(self.recordings)]
        self._next += 1
        return recording, "turn"

    # --- answering -----------------------------------------------------------------------

    def _answer(self, endpoint: str) -> Callable[[web.Request], Any]:
        async def answer(request: web.Request) -> web.StreamResponse:
            try:
                body = json.loads(await request.read() or b"{}")
            except (ValueError, RecursionError):
                return self._error(request, 400, "the request body is not JSON")
            if not isinstance(body, dict):
                return self._error(request, 400, "the request body is not a JSON object")
            try:
                recording, chosen_by = self.choose(body, request.headers)
            except KeyError as missing:
                message = f"{HEADER}: no recording {missing.args[0]!r}; {self._known()}"
                return self._error(request, 404, message)
            turn = self._turns.get(recording.id, 0)
            self._turns[recording.id] = turn + 1
            play = partial(
                playing,
                recording,
                endpoint,
                strategy=self.strategy,
                stream=body.get("stream") is True,
                turn=turn,
                seed=self.seed,
            )
            try:  # in a thread: re-chunking a large recording must not stall other clients
                played = await asyncio.get_running_loop().run_in_executor(None, play)
            except TcrError as error:
                return self._error(request, 500, str(error), recording=self._name_of[id(recording)])
            name = self._name_of[id(recording)]
            self._log(request, played.status, name, played.chunking, chosen_by)
            return await self._send(request, name, played)

        return answer

    async def _send(self, request: web.Request, ident: str, played: Playing) -> web.StreamResponse:
        headers = {
            "Content-Type": played.content_type,
            "Cache-Control": "no-cache",
            HEADER: ident,
            "X-Tcr-Chunking": played.chunking,
        }
        response = web.StreamResponse(status=played.status, headers=headers)
        response.enable_chunked_encoding()  # one HTTP chunk per write: visible on the wire
        loop = asyncio.get_running_loop()
        try:
            await response.prepare(request)
            started = loop.time()
            while batch := await loop.run_in_executor(None, _next_batch, played.writes):
                for write in batch:
                    if self.speed > 0:
                        delay = started + write.t_ns / 1e9 / self.speed - loop.time()
                        if delay > 0:
                            await self.sleep(delay)
                    await response.write(write.data)
                del batch  # sent: not held while the next batch is made
        except ConnectionError:
            return response  # the client went away
        if played.complete:
            await response.write_eof()
        elif request.transport is not None:
            request.transport.close()  # as the recording ended: without an end of body
        return response

    async def _models(self, request: web.Request) -> web.Response:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "tcr"} for name in self.names
        ]
        return web.json_response({"object": "list", "data": data})

    def _known(self, shown: int = 20) -> str:
        """The names a request may ask for, the first ``shown`` of them."""
        names = self.names
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        return f"known: {', '.join(names[:shown])}{more}"

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    def _error(
        self, request: web.Request, status: int, message: str, *, recording: str | None = None
    ) -> web.Response:
        self._log(request, status, recording, None, None)
        error = {"error": {"message": f"tcr serve: {message}", "type": "invalid_request_error"}}
        return web.json_response(error, status=status)

    def _log(
        self,
        request: web.Request,
        status: int,
        recording: str | None,
        chunking: str | None,
        chosen_by: str | None,
    ) -> None:
        if self.on_served is not None:
            served = Served(request.method, request.path, status, recording, chunking, chosen_by)
            self.on_served(served)


_NOT_IN_A_HEADER = re.compile(r"[\x00-\x1f\x7f]")


def _header_safe(name: str) -> str:
    """A file name as a header value can hold it: a control character (a CR/LF made the
    answer a 500, issue 36) and a byte that is not UTF-8 as ``\\xNN``."""
    return _NOT_IN_A_HEADER.sub(lambda m: f"\\x{ord(m.group()):02x}", safe_text(name))


def _next_batch(writes: Iterator[Write]) -> list[Write]:
    return list(islice(writes, _BATCH))


class _OneLine(logging.Handler):
    """aiohttp's report of a request it could not handle, as one line: its own is a
    traceback (of its parser, or of a read cut by the client), which says nothing
    more to someone running ``tcr serve``."""

    def __init__(self, report: Callable[[str], object]) -> None:
        super().__init__(logging.DEBUG)
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        line = record.getMessage()
        error = record.exc_info[1] if record.exc_info else None
        if error is not None:
            # aiohttp's parser errors span lines, with a caret under the bad byte.
            said = [part.strip() for part in str(error).splitlines()]
            said = [part for part in said if part and part.strip("^")]
            line += f": {type(error).__name__}"
            if said:
                line += f": {' '.join(said)}"
        self.report(" ".join(line.split()))


def _one_line_logger(report: Callable[[str], object] | None) -> logging.Logger:
    """A logger of its own for aiohttp's request handlers (not a child of the root logger,
    so nothing else prints its records): one line each to ``report``, or nothing."""
    logger = logging.Logger("tcr.serve.aiohttp", logging.DEBUG)
    logger.addHandler(_OneLine(report) if report is not None else logging.NullHandler())
    return logger


async def serve(
    server: ReplayServer, *, on_started: Callable[[ReplayServer], object] | None = None
) -> None:
    """Serve until cancelled; ``on_started`` gets the server once it listens."""
    async with server:
        if on_started is not None:
            on_started(server)
        await asyncio.Event().wait()


def running_server(
    recordings: Sequence[tuple[Path, Recording]], **options: Any
) -> contextlib.AbstractContextManager[ReplayServer]:
    """A :class:`ReplayServer` on its own event loop in a background thread, for
    synchronous code (tests, scripts): ``with running_server(loaded) as server:``."""
    return in_background(ReplayServer(recordings, **options), name="tcr-serve")
