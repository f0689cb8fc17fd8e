"""An asyncio service (``start()`` / ``close()`` coroutines) run on its own event loop in
a background thread, for synchronous code: tests, scripts, the pytest plugin."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TypeVar

__all__ = ["AsyncService", "in_background"]

A = TypeVar("A", bound="AsyncService")


class AsyncService:
    """``async with service:`` starts it and closes it, however the block ends."""

    async def start(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self: A) -> A:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


@contextmanager
def in_background(service: A, *, name: str = "tcr-service") -> Iterator[A]:
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
