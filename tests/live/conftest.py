"""A real llama-server with a real model for the live tests (ARCHITECTURE.md §9).

When the server cannot be started the tests fail and say why: a live test that
silently skips would let a missing install step through.

Under xdist each worker starts its own servers, each on a free port. What they share
is the cache (the model fetched once, the library links made once): it is made ready
by one worker at a time before any server starts.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator

import pytest
from llama_server import CACHE, LlamaUnavailable, Server, llama_server, model_path, server_binary


@pytest.fixture(scope="session", autouse=True)
def _cache_ready() -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "prepare.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        try:
            server_binary()
            model_path()
        except LlamaUnavailable as error:
            pytest.fail(f"the live llama-server could not be started: {error}", pytrace=False)


def _start(**kwargs: object) -> Iterator[Server]:
    try:
        with llama_server(**kwargs) as server:  # type: ignore[arg-type]
            yield server
    except LlamaUnavailable as error:
        pytest.fail(f"the live llama-server could not be started: {error}", pytrace=False)


@pytest.fixture(scope="session")
def llama() -> Iterator[Server]:
    """llama-server with SmolLM2 and its own chat template (tool markup arrives as content)."""
    yield from _start()


@pytest.fixture(scope="session")
def llama_native() -> Iterator[Server]:
    """llama-server with a Hermes template: it parses <tool_call> and streams tool_calls deltas."""
    yield from _start(template="hermes.jinja")
