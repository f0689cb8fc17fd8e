"""``tcr record``: record live streams, from an endpoint or through a recording proxy."""

from __future__ import annotations

from pathlib import Path

import click

from tcr.commands.options import Choice, fail, json_option, run_interruptible
from tcr.errors import TcrError

__all__ = ["record"]

EPILOG = """\b
Exit status: 0 every recording is complete; 2 bad options, an endpoint that
cannot be reached, an error status, a response that is not a stream, or a
stream cut short (disconnect, timeout, Ctrl-C). On a terminal a live line
counts frames and bytes; a stream still running after a minute gets one
warning on stderr. Whatever arrived is kept,
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
    type=Choice(["openai", "llamacpp", "ollama"]),
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
    help="A directory for time-stamped recordings, or a .msgpack file (default: recordings/).",
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
    help="Send 'Authorization: Bearer $VAR' (the key is never recorded). It wins over "
    "a user:pass in the URL, which is otherwise sent as 'Authorization: Basic'.",
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
    "--max-tokens",
    type=click.IntRange(min=0),
    default=1024,
    show_default=True,
    metavar="N",
    help="Bound the answer's length when the request sets no limit of its own "
    "(max_tokens, n_predict or options.num_predict, by API); 0 sends the request as it is.",
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
    max_tokens: int,
    label_values: tuple[str, ...],
    proxy: str | None,
    upstream: str | None,
    as_json: bool,
) -> None:
    """Record streaming responses from a live backend: send requests to --endpoint,
    or run a transparent proxy (--proxy, --upstream) that records every stream
    its clients receive. Every body read is kept with its arrival time."""
    from tcr.recorder import RecordOptions, record_session  # aiohttp: only when recording

    options = RecordOptions(
        endpoint=endpoint,
        prompt=prompt,
        system=system,
        tools_file=tools_file,
        model=model,
        params=params,
        request_file=request_file,
        api=api,
        count=count,
        out=out,
        headers=headers,
        api_key_env=api_key_env,
        timeout=timeout,
        max_tokens=max_tokens,
        labels=label_values,
        proxy=proxy,
        upstream=upstream,
        as_json=as_json,
    )
    try:
        record_session(options, run=run_interruptible)
    except TcrError as error:
        fail("record", error)
