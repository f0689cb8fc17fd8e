"""``tcr record``: record live streams, from an endpoint or through a recording proxy."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from tcr.commands.options import fail, json_option, run_interruptible
from tcr.errors import TcrError

if TYPE_CHECKING:
    from tcr.recorder import Recorded, RecordingProxy, Summary

__all__ = ["parse_labels", "record"]

T = TypeVar("T")

DEFAULT_OUT = Path("recordings")

EPILOG = """\b
Exit status: 0 every recording is complete; 2 bad options, an endpoint that
cannot be reached, an error status, a response that is not a stream, or a
stream cut short (disconnect, timeout, Ctrl-C). Whatever arrived is kept,
marked incomplete with the reason. Secrets (Authorization, API-key headers,
cookies, key-looking query parameters and body fields) never reach the disk.

\b
Examples:
  tcr record --endpoint http://127.0.0.1:8080/v1/chat/completions --prompt 'Weather in Paris?' \\
      --tools tools.json --param temperature=0 --out corpora/recorded/
  tcr record --endpoint http://127.0.0.1:8080/completion --prompt 'Once upon' --count 5
  tcr record --endpoint http://127.0.0.1:11434/api/chat --model qwen3 --prompt hi --out hi.msgpack
  tcr record --endpoint https://api.openai.com/v1/chat/completions --api-key-env OPENAI_API_KEY \\
      --request body.json --param model=gpt-4o-mini
  tcr record --proxy 127.0.0.1:9000 --upstream http://127.0.0.1:8080 --out recordings/
      # then point your client at http://127.0.0.1:9000; Ctrl-C stops the proxy
"""


def parse_labels(values: tuple[str, ...]) -> dict[str, str]:
    """``--label note=split marker`` → ``{"note": "split marker"}``."""
    labels: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"--label {value!r}: expected KEY=VALUE (e.g. dialect=hermes)")
        labels[key.strip()] = text
    return labels


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--endpoint", metavar="URL", help="Record from this streaming endpoint.")
@click.option("--prompt", help="The user message (or the raw prompt of /completion).")
@click.option("--system", help="A system message.")
@click.option(
    "--tools",
    "tools_file",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE.json",
    help="Tool declarations (a JSON list of OpenAI tools or function specs).",
)
@click.option("--model", help="The model name to request.")
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="Set a request field; VALUE is JSON if it parses (0.2, true, [...]); "
    "dots nest (options.temperature=0). Repeatable.",
)
@click.option(
    "--request",
    "request_file",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE.json",
    help="The whole JSON request body (with --param and --model applied on top).",
)
@click.option(
    "--api",
    type=click.Choice(["openai", "llamacpp", "ollama"]),
    help="The API the endpoint speaks (default: from the URL path).",
)
@click.option(
    "--count", type=click.IntRange(min=1), default=1, show_default=True, help="Recordings to make."
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    metavar="DIR|FILE",
    help=f"A directory for time-stamped recordings, or a .msgpack file (default: {DEFAULT_OUT}/).",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="K:V",
    help="Send this header (never recorded if secret). Repeatable.",
)
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="Send 'Authorization: Bearer $VAR' (the key is never recorded).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    metavar="SECONDS",
    help="Give up on a connection or a stream silent this long.",
)
@click.option(
    "--label",
    "label_values",
    multiple=True,
    metavar="KEY=VALUE",
    help="A header label (dialect, note, bug). Repeatable.",
)
@click.option(
    "--proxy",
    metavar="[HOST:]PORT",
    help="Run a recording reverse proxy here (host defaults to 127.0.0.1).",
)
@click.option("--upstream", metavar="URL", help="The server the proxy forwards to.")
@json_option
def record(
    endpoint: str | None,
    prompt: str | None,
    system: str | None,
    tools_file: Path | None,
    model: str | None,
    params: tuple[str, ...],
    request_file: Path | None,
    api: str | None,
    count: int,
    out: Path | None,
    headers: tuple[str, ...],
    api_key_env: str | None,
    timeout: float,
    label_values: tuple[str, ...],
    proxy: str | None,
    upstream: str | None,
    as_json: bool,
) -> None:
    """Record streaming responses from a live backend: send requests to --endpoint,
    or run a transparent proxy (--proxy, --upstream) that records every stream
    its clients receive. Every body read is kept with its arrival time."""
    try:
        labels = parse_labels(label_values)
        if proxy is not None or upstream is not None:
            building = [
                name
                for name, value in (
                    ("--endpoint", endpoint),
                    ("--prompt", prompt),
                    ("--system", system),
                    ("--tools", tools_file),
                    ("--model", model),
                    ("--request", request_file),
                    ("--param", params or None),
                    ("--header", headers or None),
                    ("--api-key-env", api_key_env),
                )
                if value is not None
            ]
            if building:
                raise click.UsageError(f"{', '.join(building)}: not used with --proxy")
            if proxy is None or upstream is None:
                raise click.UsageError("a proxy needs both --proxy [HOST:]PORT and --upstream URL")
            _proxy(proxy, upstream, out or DEFAULT_OUT, timeout, labels, as_json)
            return
        if endpoint is None:
            raise click.UsageError("give --endpoint URL (or --proxy and --upstream)")
        body = _request_body(endpoint, api, prompt, system, tools_file, model, params, request_file)
        send = _headers(headers, api_key_env)
    except click.UsageError as error:
        fail("record", error)
    except TcrError as error:
        fail("record", error)
    _endpoint(endpoint, body, send, api, count, out or DEFAULT_OUT, timeout, labels, as_json)


def _request_body(
    endpoint: str,
    api: str | None,
    prompt: str | None,
    system: str | None,
    tools_file: Path | None,
    model: str | None,
    params: tuple[str, ...],
    request_file: Path | None,
) -> dict[str, Any]:
    from tcr.recorder import RecordError, build_request, detect_api, load_tools, parse_param
    from tcr.recorder.request import load_json_file, with_params

    parsed = [parse_param(param) for param in params]
    if request_file is not None:
        building = (("--prompt", prompt), ("--system", system), ("--tools", tools_file))
        given = [name for name, value in building if value is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)}: not used with --request (edit the file)")
        body = load_json_file(request_file, "--request")
        if not isinstance(body, dict):
            raise RecordError(f"--request {request_file}: expected a JSON object")
        body.setdefault("stream", True)
        if model is not None:
            parsed.insert(0, ("model", model))
        return with_params(body, parsed)
    if prompt is None:
        raise click.UsageError("give --prompt TEXT or --request FILE.json")
    api = api or detect_api(endpoint)
    if api is None:
        raise RecordError(
            f"{endpoint}: cannot tell the API from the path (expected …/chat/completions, "
            "…/completion or …/api/chat): give --api"
        )
    tools = load_tools(tools_file) if tools_file is not None else None
    return build_request(api, prompt=prompt, system=system, tools=tools, model=model, params=parsed)


def _headers(values: tuple[str, ...], api_key_env: str | None) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition(":")
        if not sep or not name.strip():
            raise click.UsageError(f"--header {value!r}: expected NAME:VALUE")
        headers[name.strip()] = text.strip()
    if api_key_env is not None:
        key = os.environ.get(api_key_env)
        if not key:
            raise click.UsageError(f"--api-key-env {api_key_env}: the variable is not set")
        headers["Authorization"] = f"Bearer {key}"
    return headers


def _targets(out: Path, count: int) -> Callable[[int], Path]:
    from tcr.recorder import new_recording_path

    if out.suffix == ".msgpack" and not out.is_dir():
        if count == 1:
            return lambda index: out
        return lambda index: out.with_name(f"{out.stem}-{index + 1:03d}{out.suffix}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(
            f"--out {out}: cannot create the directory: {exc.strerror}"
        ) from None
    return lambda index: new_recording_path(out)


def _endpoint(
    endpoint: str,
    body: dict[str, Any],
    headers: Mapping[str, str],
    api: str | None,
    count: int,
    out: Path,
    timeout: float,
    labels: dict[str, str],
    as_json: bool,
) -> None:
    from tcr.recorder import RecordError, record, redact_url

    console = Console(highlight=False)
    try:
        target = _targets(out, count)
    except click.UsageError as error:
        fail("record", error)
    done: list[Summary] = []
    for index in range(count):
        path = target(index)
        try:
            recorded = run_interruptible(
                record(
                    endpoint, body, path, headers=headers, timeout=timeout, labels=labels, api=api
                )
            )
        except RecordError as error:
            _report(console, done, as_json)
            fail("record", error)
        except asyncio.CancelledError as stop:
            _report(console, done, as_json)
            reason = stop.args[0] if stop.args else "cancelled"
            kept = f"; what arrived is kept in {path} (incomplete)" if path.exists() else ""
            _stop(f"{redact_url(endpoint)}: interrupted by {reason}{kept}")
        done.append(_summary(recorded))
        if not recorded.complete:
            _report(console, done, as_json)
            frames = _count(recorded.frame_count, "frame")
            size = _count(recorded.byte_count, "byte")
            _stop(
                f"{recorded.endpoint}: {recorded.error}; "
                f"kept {frames} ({size}) in {recorded.path} (incomplete)"
            )
    _report(console, done, as_json)


def _stop(message: str) -> NoReturn:
    click.echo(f"tcr record: {' '.join(message.split())}", err=True)
    raise SystemExit(2)


def _summary(recorded: Recorded) -> Summary:
    from tcr.recorder import summarize

    return summarize(recorded.path, ttfb_ns=recorded.ttfb_ns, duration_ns=recorded.duration_ns)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _ms(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:.1f} ms" if value < 10_000 else f"{value / 1000:.1f} s"


def render_summary(console: Console, summary: Summary) -> None:
    """One recording in three lines: verdict and file, numbers, content preview."""
    mark = "[green]✓[/]" if summary.complete else "[red]✗[/]"
    console.print(f"{mark} [bold]{escape(summary.path)}[/]")
    status = f"HTTP {summary.status} · " if summary.status is not None else ""
    console.print(
        f"  {status}{summary.kind} · {_count(summary.frames, 'frame')} · "
        f"{_count(summary.bytes, 'byte')} · "
        f"TTFB {_ms(summary.ttfb_ms)} · duration {_ms(summary.duration_ms)}"
    )
    extra = [f"{summary.chars:,} chars"] if summary.chars else []
    if summary.calls:
        extra.append(f"tool calls: {', '.join(summary.calls)}")
    tail = f"  [dim]({'; '.join(extra)})[/]" if extra else ""
    console.print(f"  content: {escape(summary.preview) or '[dim](none)[/]'}{tail}")
    if not summary.complete:
        console.print(f"  [red]incomplete: {escape(summary.error or '')}[/]")


def _report(console: Console, summaries: list[Summary], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in summaries], indent=2, ensure_ascii=False))
        return
    for summary in summaries:
        render_summary(console, summary)


def _listen_address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") if sep else ""
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise click.UsageError(f"--proxy {value!r}: expected [HOST:]PORT, e.g. 127.0.0.1:9000")
    return host or "127.0.0.1", int(port)


def _proxy(
    listen: str,
    upstream: str,
    out: Path,
    timeout: float,
    labels: dict[str, str],
    as_json: bool,
) -> None:
    from tcr.recorder import serve_proxy

    host, port = _listen_address(listen)
    console = Console(highlight=False, stderr=as_json)
    made: list[Recorded] = []

    def started(proxy: RecordingProxy) -> None:
        console.print(
            f"tcr record: proxying [bold]{proxy.url}[/] → {escape(str(proxy.upstream))}, "
            f"recording streams into {escape(str(out))}/ (Ctrl-C stops)"
        )

    def recorded(result: Recorded) -> None:
        # One cheap line while serving: decoding a preview would stall the streams.
        made.append(result)
        if not as_json:
            console.print(_line(result))

    serving = serve_proxy(
        host,
        port,
        upstream,
        out,
        timeout=timeout,
        labels=labels,
        on_started=started,
        on_recorded=recorded,
    )
    try:
        run_interruptible(serving)
    except asyncio.CancelledError:
        pass  # Ctrl-C is how a proxy is stopped
    except TcrError as error:
        fail("record", error)
    if as_json:
        _report(console, [_summary(result) for result in made], as_json=True)
    else:
        complete = sum(result.complete for result in made)
        console.print(f"tcr record: proxy stopped; {len(made)} recordings ({complete} complete)")


def _line(result: Recorded) -> str:
    """A recording the proxy made, in one line."""
    mark = "[green]✓[/]" if result.complete else "[red]✗[/]"
    ttfb = None if result.ttfb_ns is None else result.ttfb_ns / 1e6
    line = (
        f"{mark} {escape(str(result.path))} · HTTP {result.status} · {result.kind} · "
        f"{_count(result.frame_count, 'frame')} · {_count(result.byte_count, 'byte')} · "
        f"TTFB {_ms(ttfb)} · duration {_ms(result.duration_ns / 1e6)}"
    )
    return line if result.complete else f"{line} · [red]{escape(result.error or '')}[/]"
