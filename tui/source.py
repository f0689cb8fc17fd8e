"""What is being debugged: the content, read incrementally, and its chunkings.

A recording is read and decoded frame by frame (the same decoder as
``tcr.stream.decode``), so the debugger can show the first steps of a 1 MB
recording before the rest is read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tcr.claims import EVERYTHING, Claim
from tcr.corpus import Frame, Recording, RecordingReader
from tcr.errors import DecodeError, TcrError
from tcr.rechunk import parse_strategy
from tcr.stream import Delta, StreamDecoder

__all__ = [
    "Source",
    "check_strategy",
    "chunking",
    "deadline_passed",
    "load_source",
    "source_from_chunks",
]

# Strategies that make many chunkings; ``random`` is one (its run 0 for the seed).
_MANY = {"exhaustive": "every 2-way split", "boundary": "every split around each marker"}


def deadline_passed(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


class Source:
    """The content under test: its chunks (as recorded, or as given), tools, expectation.

    A recording is read and decoded incrementally (``load``): the debugger shows
    the first steps of a 1 MB recording before the rest is read. ``load_source``
    reads for a short budget, so a small or broken file is read (or refused)
    whole before anything is shown; a defect found later is kept in ``error``
    and the content ends there.
    """

    def __init__(
        self,
        label: str,
        *,
        tools: Sequence[str] | None = None,
        expect: Mapping[str, Any] | None = None,
        path: Path | None = None,
        tool_specs: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        self.label = label  # what titles show: the file name, or "chunks"
        self.path = path
        self.tools: tuple[str, ...] | None = None if tools is None else tuple(tools)
        # The request's OpenAI tools, for a factory that takes tool_specs (tcr.tool_specs).
        self.tool_specs = None if tool_specs is None else tuple(tool_specs)
        self.expect = expect
        self.chunks: list[str] = []  # non-empty content chunks, in order, so far
        self.length = 0
        self.done = True
        self.error: str | None = None  # a defect found after loading began
        self._text = ""
        self._joined = 0  # chunks in _text
        self._reader: RecordingReader | None = None
        self._frames: Iterator[Frame] | None = None
        self._decoder: StreamDecoder | None = None
        self._frame = 0
        self._declared_tools = tools is not None

    @property
    def text(self) -> str:
        """The content loaded so far (joined as it grows: a copy, not a re-join)."""
        if len(self._text) != self.length:
            self._text += "".join(self.chunks[self._joined :])
            self._joined = len(self.chunks)
        return self._text

    def _add(self, deltas: Iterable[Delta]) -> None:
        for delta in deltas:
            if delta.content:
                self.chunks.append(delta.content)
                self.length += len(delta.content)

    def load(
        self, *, seconds: float | None = None, chunks: int | None = None, strict: bool = False
    ) -> bool:
        """Read and decode frames for about ``seconds``, or until there are ``chunks``
        content chunks (neither: to the end); True when done.

        ``strict``: a defect raises ``TcrError``; otherwise it ends the content
        and is kept in ``error``.
        """
        if chunks is not None and len(self.chunks) >= chunks:
            return self.done
        if self.done:
            return True
        assert self._frames is not None and self._decoder is not None
        assert self._reader is not None
        deadline = None if seconds is None else time.perf_counter() + seconds
        where = self._reader.path
        try:
            for frame in self._frames:
                try:
                    self._add(self._decoder.feed(frame.data))
                except DecodeError as exc:
                    raise DecodeError(f"{where}, frame {self._frame}: {exc}") from exc
                self._frame += 1
                if (chunks is not None and len(self.chunks) >= chunks) or (
                    self._frame % 64 == 0 and deadline_passed(deadline)
                ):
                    self.text  # noqa: B018  (joined here, in the background, not per key)
                    return False
            try:
                self._add(self._decoder.finish())
            except DecodeError as exc:
                raise DecodeError(f"{where}, end of stream: {exc}") from exc
            self.expect = self._reader.expect
        except TcrError as error:
            self._close()
            if strict:
                raise
            self.error = str(error)
            return True
        self._close()
        return True

    def load_all(self, *, strict: bool = False) -> None:
        self.load(strict=strict)

    def _close(self) -> None:
        self.done = True
        self.text  # noqa: B018  (whole from now on: readers never join)
        if self._reader is not None:
            self._reader.close()
        self._frames = self._decoder = None


def load_source(
    path: str | Path, *, tools: Sequence[str] | None = None, seconds: float | None = None
) -> Source:
    """Open a recording and read it for ``seconds`` (None: all of it).

    What goes wrong in that time raises ``TcrError`` naming the file (and frame).
    """
    where = Path(path)
    if where.is_dir():
        raise TcrError(f"{where}: is a directory; tcr tui opens one recording")
    reader = RecordingReader(where)
    declared = tools if tools is not None else reader.header.get("tools")
    try:
        specs = Recording(reader.header, [], None, None, where).tool_specs
    except TcrError:
        reader.close()
        raise
    source = Source(where.name, tools=declared, path=where, tool_specs=specs)
    try:
        source._decoder = StreamDecoder(str(reader.header["kind"]))
    except DecodeError as exc:
        reader.close()
        raise DecodeError(f"{where}: {exc}") from exc
    source._reader, source._frames, source.done = reader, reader.frames(), False
    source.load(seconds=seconds, strict=True)
    return source


def source_from_chunks(
    chunks: Sequence[str],
    *,
    label: str = "chunks",
    tools: Sequence[str] | None = None,
    expect: Mapping[str, Any] | None = None,
    tool_specs: Sequence[Mapping[str, Any]] | None = None,
) -> Source:
    """A source made of given chunks (a shrunk failure, a test's input)."""
    for index, chunk in enumerate(chunks):
        if not isinstance(chunk, str):
            raise TcrError(f"chunk {index} is {type(chunk).__name__}, not str")
    source = Source(label, tools=tools, expect=expect, tool_specs=tool_specs)
    for chunk in chunks:
        if chunk:
            source.chunks.append(chunk)
            source.length += len(chunk)
    return source


def check_strategy(spec: str, text: str | None = None) -> str:
    """The canonical spec of a strategy the debugger can step through, or ``TcrError``.

    With ``text``, a ``splits:`` spec is checked against it too.
    """
    strategy = parse_strategy(spec)
    if strategy.transport:
        raise TcrError(
            f"rechunk strategy {strategy.spec!r} re-splits transport bytes; the debugger "
            "steps the detector over content chunks (try tcr show for transport chunkings)"
        )
    if strategy.kind in _MANY:
        raise TcrError(
            f"rechunk strategy {strategy.spec!r} makes many chunkings "
            f"({_MANY[strategy.kind]}); step through one of them with splits:A,B,..."
        )
    if text is not None:
        strategy.chunkings(text, runs=1)  # splits: offsets outside the text fail here
    return strategy.spec


def chunking(spec: str, source: Source, seed: int = 0, claim: Claim = EVERYTHING) -> Sequence[str]:
    """The one chunking ``spec`` makes of the source's content.

    ``original`` is the source's own chunk list, which grows while the source
    loads; any other strategy needs the whole text, so it loads the rest first.
    ``claim`` is the detector's: one whose special tokens reach it whole sees none cut.
    """
    if spec == "original" and not claim.tokens_whole:
        return source.chunks
    source.load_all()
    strategy = parse_strategy(spec)
    made = strategy.chunkings(source.text, original=source.chunks, runs=1, seed=seed, claim=claim)
    return next(made).chunks
