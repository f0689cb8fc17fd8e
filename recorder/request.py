"""The streaming request to send: which API an endpoint speaks, and its JSON body.

Three APIs, told apart by the URL path (``--api`` overrides):

``openai``
    ``…/v1/chat/completions`` (OpenAI, llama-server, vLLM, Ollama's ``/v1``):
    ``messages``, optional ``tools``, ``"stream": true``.
``llamacpp``
    llama.cpp's native ``…/completion``: a raw ``prompt`` (no roles, no tools).
``ollama``
    Ollama's native ``…/api/chat``: ``model`` (required), ``messages``, ``tools``.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from yarl import URL

from tcr.recorder.errors import RecordError

__all__ = [
    "APIS",
    "build_request",
    "detect_api",
    "load_json_file",
    "load_tools",
    "parse_param",
    "request_headers",
    "tool_names",
    "url_credentials",
    "with_params",
    "with_token_limit",
]

APIS: Final = ("openai", "llamacpp", "ollama")

_PATHS: Final = (
    ("/chat/completions", "openai"),
    ("/api/chat", "ollama"),
    ("/completion", "llamacpp"),
)


def detect_api(endpoint: str | URL) -> str | None:
    """The API an endpoint's path names, or ``None`` when the path does not say."""
    path = (endpoint if isinstance(endpoint, URL) else URL(endpoint)).path.rstrip("/")
    return next((api for suffix, api in _PATHS if path.endswith(suffix)), None)


def parse_param(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as JSON when it is JSON (``0.2``, ``true``,
    ``["\\n"]``), else as a string. Dots in the key nest (``options.temperature``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise RecordError(f"--param {text!r}: expected KEY=VALUE (e.g. temperature=0.2)")
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    return key, value


def with_params(body: Mapping[str, Any], params: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A copy of ``body`` with each ``(dotted.key, value)`` set, nested maps made as needed."""
    result: dict[str, Any] = json.loads(json.dumps(body))
    for key, value in params:
        *parents, leaf = key.split(".")
        target = result
        for part in parents:
            child = target.setdefault(part, {})
            if not isinstance(child, dict):
                raise RecordError(f"--param {key}: {part!r} is already set to a non-object")
            target = child
        target[leaf] = value
    return result


def load_json_file(path: str | Path, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(f"{what} {path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RecordError(f"{what} {path}: not JSON: {exc}") from None
    except RecursionError:  # json's C scanner recurses once per bracket
        raise RecordError(f"{what} {path}: not JSON: nested too deeply") from None


def load_tools(path: str | Path) -> list[dict[str, Any]]:
    """Tool declarations from a JSON file: a list of OpenAI tools
    (``{"type": "function", "function": {...}}``), bare function specs
    (``{"name", "parameters"}``, wrapped), or either under a ``"tools"`` key."""
    data = load_json_file(path, "--tools")
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise RecordError(f"--tools {path}: expected a JSON list of tool declarations")
    tools: list[dict[str, Any]] = []
    for index, tool in enumerate(data):
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            tools.append(tool)
        elif isinstance(tool, dict) and isinstance(tool.get("name"), str):
            tools.append({"type": "function", "function": tool})
        else:
            raise RecordError(
                f"--tools {path}: tool {index} has neither a 'function' object nor a 'name'"
            )
    return tools


def tool_names(body: Mapping[str, Any]) -> list[str] | None:
    """The names of the tools a request declares, or ``None`` if it declares none."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return None
    names = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        name = (function if isinstance(function, dict) else tool).get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def build_request(
    api: str,
    *,
    prompt: str,
    system: str | None = None,
    tools: list[dict[str, Any]] | None = None,
    model: str | None = None,
    params: Iterable[tuple[str, Any]] = (),
) -> dict[str, Any]:
    """The JSON body of a streaming request to ``api``; ``params`` are set last."""
    if api not in APIS:
        raise RecordError(f"unknown API {api!r}: expected one of {', '.join(APIS)}")
    body: dict[str, Any]
    if api == "llamacpp":
        for given, option in ((system, "--system"), (tools, "--tools")):
            if given is not None:
                raise RecordError(
                    f"{option} needs a chat API: llama.cpp's /completion takes a raw prompt "
                    "(use /v1/chat/completions)"
                )
        body = {"prompt": prompt, "stream": True}
    else:
        if api == "ollama" and model is None:
            raise RecordError("Ollama's /api/chat needs --model")
        messages = [{"role": "system", "content": system}] if system is not None else []
        messages.append({"role": "user", "content": prompt})
        body = {"messages": messages, "stream": True}
        if tools is not None:
            body["tools"] = tools
    if model is not None:
        body = {"model": model, **body}
    return with_params(body, params)


def url_credentials(url: URL) -> tuple[URL, str | None]:
    """The URL without its ``user:pass``, and the ``Authorization: Basic`` value it
    stands for (``None`` without one). Sent as a header, it can give way to an
    explicit ``Authorization`` (aiohttp refuses a request that has both)."""
    if url.user is None and url.password is None:
        return url, None
    pair = f"{url.user or ''}:{url.password or ''}".encode()
    return url.with_user(None), f"Basic {base64.b64encode(pair).decode('ascii')}"


def request_headers(values: Iterable[str], api_key_env: str | None = None) -> dict[str, str]:
    """Headers from ``NAME:VALUE`` strings, and ``Authorization: Bearer`` with the key
    in the environment variable ``api_key_env`` (redaction keeps it off the disk;
    it wins over a ``user:pass`` in the endpoint's URL)."""
    headers: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition(":")
        if not sep or not name.strip():
            raise RecordError(f"--header {value!r}: expected NAME:VALUE")
        headers[name.strip()] = text.strip()
    if api_key_env is not None:
        key = os.environ.get(api_key_env)
        if not key:
            raise RecordError(f"--api-key-env {api_key_env}: the variable is not set")
        headers["Authorization"] = f"Bearer {key}"
    return headers


# The fields that bound a response's length, per API: the first is the one set.
_TOKEN_LIMITS: Final = {
    "openai": ("max_tokens", "max_completion_tokens"),
    "llamacpp": ("n_predict",),
    "ollama": ("options.num_predict",),
}


def with_token_limit(body: Mapping[str, Any], api: str | None, limit: int) -> dict[str, Any]:
    """``body`` with a bound on the answer's length when it sets none (``limit`` 0: as is).

    A request without one can stream for minutes: a small model asked for a
    required tool call wrote 1.1 MB in 157 s. An unknown API is left alone.
    """
    fields = _TOKEN_LIMITS.get(api or "")
    if not limit or fields is None or any(_has(body, field) for field in fields):
        return dict(body)
    return with_params(body, [(fields[0], limit)])


def _has(body: Mapping[str, Any], dotted: str) -> bool:
    node: Any = body
    for key in dotted.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return True
