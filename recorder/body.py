"""A response body read by read, as aiohttp's HTTP parser delivered it.

A *read* is one transfer chunk (or, without chunked encoding, one socket read).
Reads are never merged, however far the reader falls behind: aiohttp's
``iter_any()`` joins everything buffered into one piece, ``readchunk()`` does
not. :meth:`BodyReader.take` waits for the next read and takes every read that
has already arrived with it, so a recorder that lags catches up in one step
(one write to the client, one flush to the file) and still keeps each read.

Each wait for a read is bounded by the reader's own ``timeout``, whatever aiohttp
does: its ``sock_read`` timeout does not fire when its HTTP parser stalls on a
malformed chunk-size line (aiohttp 3.14: ``zz\r\n`` after a valid chunk left
``tcr record --timeout 3`` waiting forever).
"""

from __future__ import annotations

import asyncio
import collections

import aiohttp

__all__ = ["BodyReader"]


class BodyReader:
    """Takes the reads of one aiohttp response body."""

    def __init__(self, content: aiohttp.StreamReader, timeout: float | None = None) -> None:
        self.content = content
        self.timeout = timeout  # seconds without a read before TimeoutError; None: no bound
        self.consumed = 0
        self._failure: BaseException | None = None

    async def take(self) -> list[bytes]:
        """Wait for the next read, then take those already buffered too (without
        waiting). ``[]`` at the end of the body. A failure of the stream (a
        disconnect, ``timeout`` seconds without a read) is raised once no read taken
        before it is left."""
        if self._failure is not None:
            raise self._failure
        reads: list[bytes] = []
        try:
            while True:
                async with asyncio.timeout(self.timeout):
                    data, end_of_chunk = await self.content.readchunk()
                if data:
                    reads.append(data)
                    self.consumed += len(data)
                elif not end_of_chunk:
                    return reads
                if reads and self.content.total_bytes <= self.consumed:
                    return reads
        except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
            if not reads:
                raise
            self._failure = exc
            return reads

    def stranded(self) -> list[bytes]:
        """Reads aiohttp still held when the stream failed.

        They did arrive, but once a stream has failed every public read method
        raises the failure first and never hands them out; a recorder that must
        keep every byte received takes them from the buffer (empty unless the
        reader lagged).
        """
        buffer = getattr(self.content, "_buffer", None)
        offset = getattr(self.content, "_buffer_offset", 0)
        if not isinstance(buffer, collections.deque) or not isinstance(offset, int):
            return []
        pieces = [bytes(piece) for piece in buffer]
        buffer.clear()
        if pieces:
            pieces[0] = pieces[0][offset:]
        return [piece for piece in pieces if piece]
