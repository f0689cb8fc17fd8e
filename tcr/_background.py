"""An asyncio service (``start()`` / ``close()`` coroutines) run on its own event loop in
a background thread, for synchronous code: tests, scripts, the pytest plugin."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

__all__ = ["Service", "in_background"]


class Service(Protocol):
    def start(self) -> Coroutine[Any, Any, None]: ...

    def close(self) -> Coroutine[Any, Any, None]: ...


S = TypeVar("S", bound=Service)


@contextmanager
def in_background(service: S, *, name: str = "tcr-service") -> Iterator[S]:
    """``with in_background(server) as server:`` started on entry, closed on exit."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=name, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(service.start(), loop).result(timeout=30)
        try:
            yield service
        finally:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(service.close(), loop).result(timeout=30)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()
