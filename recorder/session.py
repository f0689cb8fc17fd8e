"""A ``tcr record`` session: ``count`` recordings from an endpoint, or a recording proxy
until Ctrl-C, each summarized when it ends.

The session prints its summaries and raises :class:`RecordError` for everything
that ends it early (bad options, an endpoint that fails, a stream cut short, an
interrupt), after the summaries of the recordings made before: the command turns
that into one line on stderr and exit code 2.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from rich.console import Console
from rich.markup import escape

from tcr.recorder.capture import Recorded, recording_paths
from tcr.recorder.client import DEFAULT_TIMEOUT, record
from tcr.recorder.errors import RecordError
from tcr.recorder.proxy import RecordingProxy, serve_proxy
from tcr.recorder.redact import redact_url
from tcr.recorder.render import counted, print_summaries, recorded_line
from tcr.recorder.request import (
    build_request,
    detect_api,
    load_json_file,
    load_tools,
    parse_param,
    request_headers,
    with_params,
    with_token_limit,
)
from tcr.recorder.summary import Summary, summarize

__all__ = ["DEFAULT_OUT", "RecordOptions", "Runner", "parse_labels", "record_session"]

T = TypeVar("T")

DEFAULT_OUT = Path("recordings")
DEFAULT_MAX_TOKENS = 1024  # set when a request bounds nothing: see with_token_limit
LONG_STREAM_S = 60.0  # a stream still running after this long is worth a word


class Runner(Protocol):
    """Runs a coroutine to its end: ``asyncio.run``, or the CLI's, which turns
    Ctrl-C into a cancel so that a recording in progress is closed properly."""

    def __call__(self, main: Coroutine[Any, Any, T], /) -> T: ...


@dataclass(frozen=True, slots=True)
class RecordOptions:
    """What ``tcr record`` is asked, as its options give it (``None``: not given)."""

    endpoint: str | None = None
    prompt: str | None = None
    system: str | None = None
    tools_file: Path | None = None
    model: str | None = None
    params: tuple[str, ...] = ()
    request_file: Path | None = None
    api: str | None = None
    count: int = 1
    out: Path | None = None  # None: DEFAULT_OUT
    headers: tuple[str, ...] = ()
    api_key_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    labels: tuple[str, ...] = ()
    proxy: str | None = None
    upstream: str | None = None
    as_json: bool = False
    max_tokens: int = DEFAULT_MAX_TOKENS  # 0: send the request as it is
    long_stream_s: float = LONG_STREAM_S


def parse_labels(values: Iterable[str]) -> dict[str, str]:
    """``note=split marker`` → ``{"note": "split marker"}``."""
    labels: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise RecordError(f"--label {value!r}: expected KEY=VALUE (e.g. dialect=hermes)")
        labels[key.strip()] = text
    return labels


def record_session(options: RecordOptions, *, run: Runner = asyncio.run) -> None:
    """Record as ``options`` ask: from ``endpoint``, or through a proxy when ``proxy``
    or ``upstream`` is given. Raises :class:`RecordError` for what ends it early."""
    labels = parse_labels(options.labels)
    if options.proxy is not None or options.upstream is not None:
        listen, upstream = _proxy_options(options)
        _proxy(listen, upstream, options, labels, run)
        return
    if options.endpoint is None:
        raise RecordError("give --endpoint URL (or --proxy and --upstream)")
    body = _request_body(options.endpoint, options)
    headers = request_headers(options.headers, options.api_key_env)
    _endpoint(options.endpoint, body, headers, options, labels, run)


def _request_body(endpoint: str, options: RecordOptions) -> dict[str, Any]:
    """The body to send: ``--request`` whole (``--model`` and ``--param`` on top), or
    one built from ``--prompt`` for the API the endpoint speaks."""
    prompt, system, tools_file = options.prompt, options.system, options.tools_file
    model, request_file = options.model, options.request_file
    parsed = [parse_param(param) for param in options.params]
    if request_file is not None:
        building = (("--prompt", prompt), ("--system", system), ("--tools", tools_file))
        given = [name for name, value in building if value is not None]
        if given:
            raise RecordError(f"{', '.join(given)}: not used with --request (edit the file)")
        body = load_json_file(request_file, "--request")
        if not isinstance(body, dict):
            raise RecordError(f"--request {request_file}: expected a JSON object")
        body.setdefault("stream", True)
        if model is not None:
            parsed.insert(0, ("model", model))
        body = with_params(body, parsed)
        return with_token_limit(body, options.api or detect_api(endpoint), options.max_tokens)
    if prompt is None:
        raise RecordError("give --prompt TEXT or --request FILE.json")
    api = options.api or detect_api(endpoint)
    if api is None:
        raise RecordError(
            f"{redact_url(endpoint)}: cannot tell the API from the path "
            "(expected …/chat/completions, …/completion or …/api/chat): give --api"
        )
    tools = load_tools(tools_file) if tools_file is not None else None
    body = build_request(api, prompt=prompt, system=system, tools=tools, model=model, params=parsed)
    return with_token_limit(body, api, options.max_tokens)


def _proxy_options(options: RecordOptions) -> tuple[str, str]:
    """``--proxy`` and ``--upstream``, given together and without a request's options."""
    building = [
        name
        for name, value in (
            ("--endpoint", options.endpoint),
            ("--prompt", options.prompt),
            ("--system", options.system),
            ("--tools", options.tools_file),
            ("--model", options.model),
            ("--request", options.request_file),
            ("--param", options.params or None),
            ("--header", options.headers or None),
            ("--api-key-env", options.api_key_env),
        )
        if value is not None
    ]
    if building:
        raise RecordError(f"{', '.join(building)}: not used with --proxy")
    if options.proxy is None or options.upstream is None:
        raise RecordError("a proxy needs both --proxy [HOST:]PORT and --upstream URL")
    return options.proxy, options.upstream


def _endpoint(
    endpoint: str,
    body: dict[str, Any],
    headers: Mapping[str, str],
    options: RecordOptions,
    labels: dict[str, str],
    run: Runner,
) -> None:
    console = Console(highlight=False)
    target = recording_paths(options.out or DEFAULT_OUT, options.count)
    done: list[Summary] = []
    for index in range(options.count):
        path = target(index)
        counter = _Counter(Console(stderr=True, highlight=False), options.long_stream_s)
        recording = record(
            endpoint,
            body,
            path,
            headers=headers,
            timeout=options.timeout,
            labels=labels,
            api=options.api,
            progress=counter,
        )
        try:
            with counter.shown():
                recorded = run(recording)
        except RecordError:
            print_summaries(console, done, as_json=options.as_json)
            raise
        except asyncio.CancelledError as stop:
            print_summaries(console, done, as_json=options.as_json)
            reason = stop.args[0] if stop.args else "cancelled"
            kept = f"; what arrived is kept in {path} (incomplete)" if path.exists() else ""
            raise RecordError(f"{redact_url(endpoint)}: interrupted by {reason}{kept}") from None
        done.append(_summary(recorded))
        if not recorded.complete:
            print_summaries(console, done, as_json=options.as_json)
            frames = counted(recorded.frame_count, "frame")
            size = counted(recorded.byte_count, "byte")
            raise RecordError(
                f"{recorded.endpoint}: {recorded.error}; "
                f"kept {frames} ({size}) in {recorded.path} (incomplete)"
            )
    print_summaries(console, done, as_json=options.as_json)


class _Counter:
    """Frames and bytes so far: a live line on a terminal, and one warning on stderr
    when a stream runs long (a model that never stops writing)."""

    def __init__(self, console: Console, long_stream_s: float) -> None:
        self.console = console
        self.long_stream_s = long_stream_s
        self.started = time.monotonic()
        self.warned = False
        self.status: Any = None

    @contextlib.contextmanager
    def shown(self) -> Iterator[None]:
        if not self.console.is_terminal:
            yield
            return
        with self.console.status("waiting for the response") as status:
            self.status = status
            yield

    def __call__(self, frames: int, size: int) -> None:
        elapsed = time.monotonic() - self.started
        so_far = f"{counted(frames, 'frame')}, {counted(size, 'byte')}"
        if self.status is not None:
            self.status.update(f"recording: {so_far}, {elapsed:.0f} s")
        if not self.warned and elapsed >= self.long_stream_s:
            self.warned = True
            self.console.print(
                f"tcr record: still streaming after {elapsed:.0f} s ({so_far}); "
                "Ctrl-C ends it and keeps what arrived, --max-tokens bounds the answer",
                soft_wrap=True,
            )


def _summary(recorded: Recorded) -> Summary:
    return summarize(recorded.path, ttfb_ns=recorded.ttfb_ns, duration_ns=recorded.duration_ns)


def _listen_address(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` → ``(host, port)``, the host 127.0.0.1 when not given."""
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") if sep else ""
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise RecordError(f"--proxy {value!r}: expected [HOST:]PORT, e.g. 127.0.0.1:9000")
    return host or "127.0.0.1", int(port)


def _proxy(
    listen: str, upstream: str, options: RecordOptions, labels: dict[str, str], run: Runner
) -> None:
    host, port = _listen_address(listen)
    out, as_json = options.out or DEFAULT_OUT, options.as_json
    console = Console(highlight=False, stderr=as_json)
    made: list[Recorded] = []

    def started(proxy: RecordingProxy) -> None:
        console.print(
            f"tcr record: proxying [bold]{proxy.url}[/] → {escape(str(proxy.upstream))}, "
            f"recording streams into {escape(str(out))}/ (Ctrl-C stops)"
        )

    def recorded(result: Recorded) -> None:
        made.append(result)
        if not as_json:
            console.print(recorded_line(result))

    serving = serve_proxy(
        host,
        port,
        upstream,
        out,
        timeout=options.timeout,
        labels=labels,
        on_started=started,
        on_recorded=recorded,
    )
    with contextlib.suppress(asyncio.CancelledError):  # Ctrl-C is how a proxy is stopped
        run(serving)
    if as_json:
        print_summaries(console, [_summary(result) for result in made], as_json=True)
    else:
        complete = sum(result.complete for result in made)
        console.print(f"tcr record: proxy stopped; {len(made)} recordings ({complete} complete)")
