"""A real llama-server with a real model for the live tests (ARCHITECTURE.md §9).

When the server cannot be started the tests fail and say why: a live test that
silently skips would let a missing install step through.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_server import LlamaUnavailable, Server, llama_server


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
